"""Keras 3's serialized form of objects (`{"module", "class_name", "config",
"registered_name"}`) and the lookup of a class by name in a table of known classes plus the
user's `custom_objects`. Deserializing only ever instantiates known classes from plain
configs: no code is loaded from a config."""

from __future__ import annotations

import threading

from ndflow.core.api_export import keras_export, tf_export
from ndflow.ops import init_ops

# None: each load's own `safe_mode` decides; False: enable_unsafe_deserialization() was called.
_GLOBAL_SAFE_MODE: dict = {"value": None}


@keras_export("keras.config.enable_unsafe_deserialization")
def enable_unsafe_deserialization():
    """Turns safe mode off for the rest of the process: later loads may deserialize Python
    lambdas (arbitrary code) whatever their own `safe_mode` argument says, as in Keras 3.
    Only for files you trust.
    """
    _GLOBAL_SAFE_MODE["value"] = False


def in_safe_mode():
    """The global safe mode: None unless enable_unsafe_deserialization() was called."""
    return _GLOBAL_SAFE_MODE["value"]


def serialize_object(obj, module: str) -> dict:
    """Keras' record of a Keras object; a user's plain function (no `get_config`) is
    recorded by its (registered) name."""
    if callable(obj) and not hasattr(obj, "get_config"):
        return function_config(obj)
    return {"module": module, "class_name": type(obj).__name__, "config": obj.get_config(),
            "registered_name": None}


# tf.keras.saving (v2 only: TF 2.21 has no tf.compat.v1.keras.saving) re-exports these.
# Keras' custom objects: registered for the process (register_keras_serializable,
# get_custom_objects()) or for a `with custom_object_scope(...)` block (per thread).
_GLOBAL_CUSTOM_OBJECTS: dict = {}
_SCOPES = threading.local()


@keras_export("keras.utils.get_custom_objects")
@tf_export("keras.saving.get_custom_objects", v1=[])
def get_custom_objects() -> dict:
    """The process-wide dict of custom objects (name -> class or function) that loading
    consults; adding an entry registers an object (see also
    `register_keras_serializable`).

    Returns:
      The dict itself (changes to it take effect).
    """
    return _GLOBAL_CUSTOM_OBJECTS


@keras_export("keras.utils.register_keras_serializable")
@tf_export("keras.saving.register_keras_serializable", v1=[])
def register_keras_serializable(package="Custom", name=None):
    """Decorator registering a class or function for serialization under
    "package>name": the `registered_name` Keras writes in configs and looks up when
    loading, so models using it load without `custom_objects`.

    Args:
      package: the namespace part of the name (default "Custom").
      name: the object's part (default its `__name__`).

    Returns:
      A decorator returning the object unchanged.

    Raises:
      ValueError: the decorated class has no `get_config` method.

    Example:

    >>> @tf.keras.saving.register_keras_serializable(package="demo")
    ... def twice(x):
    ...     return 2 * x
    >>> tf.keras.saving.get_registered_name(twice)
    'demo>twice'
    """
    def decorator(obj):
        key = f"{package}>{name or obj.__name__}"
        if isinstance(obj, type) and not hasattr(obj, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() method.")
        _GLOBAL_CUSTOM_OBJECTS[key] = obj
        _REGISTERED_NAMES[obj] = key
        return obj
    return decorator


_REGISTERED_NAMES: dict = {}


def registered_name(obj):
    """`package>name` for a registered class or function, else None."""
    return _REGISTERED_NAMES.get(obj)


@keras_export("keras.utils.CustomObjectScope", "keras.utils.custom_object_scope")
@tf_export("keras.saving.CustomObjectScope", "keras.saving.custom_object_scope", v1=[])
class CustomObjectScope:
    """A context manager making custom objects known by name to the deserialization inside
    it, as if passed as `custom_objects` (`custom_object_scope` is the same class).

    Args:
      custom_objects: a dict of names to classes or functions (None: empty).

    Example:

    >>> with tf.keras.saving.custom_object_scope({"MyLayer": tf.keras.layers.Dense}):
    ...     layer = tf.keras.layers.deserialize(
    ...         {"class_name": "MyLayer", "config": {"units": 2}})
    >>> type(layer).__name__
    'Dense'
    """

    def __init__(self, custom_objects):
        self.custom_objects = dict(custom_objects or {})

    def __enter__(self):
        stack = getattr(_SCOPES, "stack", None)
        if stack is None:
            stack = _SCOPES.stack = []
        stack.append(self.custom_objects)
        return self

    def __exit__(self, *exc):
        _SCOPES.stack.pop()


# Keras serializes the objects a user class's `get_config()` nests (layers, regularizers,
# arrays); the serializer that knows them all (utils_serialization) imports the layer
# classes, so it registers itself here for the layer base class to use.
_NESTED_SERIALIZER: dict = {"fn": None}


def set_nested_serializer(fn) -> None:
    _NESTED_SERIALIZER["fn"] = fn


def serialize_config_values(config: dict) -> dict:
    """`config` with the Keras objects in its values serialized, as Keras' serialize_dict."""
    fn = _NESTED_SERIALIZER["fn"]
    return config if fn is None else {k: fn(v) for k, v in config.items()}


def user_module(cls) -> str | None:
    """The module Keras writes for a user's class: its own, but None for `__main__`'s."""
    return None if cls.__module__ == "__main__" else cls.__module__


def function_config(fn) -> dict:
    """Keras' record of a user function: its registered name, else its own name."""
    name = registered_name(fn) or getattr(fn, "__name__", repr(fn))
    return {"module": "builtins", "class_name": "function", "config": name,
            "registered_name": "function"}


def active_custom_objects() -> dict:
    """The registry overlaid by the open custom object scopes (innermost last)."""
    merged = dict(_GLOBAL_CUSTOM_OBJECTS)
    for scope in getattr(_SCOPES, "stack", None) or []:
        merged.update(scope)
    return merged


def custom_object(name):
    """The object `name` from the innermost custom object scope or the global registry."""
    if not isinstance(name, str):
        return None
    for scope in reversed(getattr(_SCOPES, "stack", None) or []):
        if name in scope:
            return scope[name]
    return _GLOBAL_CUSTOM_OBJECTS.get(name)


def lookup_class(name: str, known: dict, custom_objects: dict | None, kind: str,
                 registered: str | None = None):
    """The class called `registered` (Keras' registered name, when the config has one) or
    `name`: from `custom_objects`, the custom object scopes and registry, then `known`."""
    cls = None
    for key in dict.fromkeys(k for k in (registered, name) if isinstance(k, str)):
        cls = (custom_objects or {}).get(key) or custom_object(key)
        if cls is not None:
            break
    cls = cls or known.get(name)
    if cls is None:
        raise TypeError(f"Could not locate {kind} '{name}'. Make sure custom classes are "
                        "decorated with `@keras.saving.register_keras_serializable()` or "
                        "passed in `custom_objects`.")
    return cls


def find_function(name, custom_objects: dict | None = None):
    """A user's function recorded by `function_config`: from `custom_objects`, the custom
    object scopes and the registry (its registered `package>name`); None when unknown."""
    return (custom_objects or {}).get(name) or custom_object(name)


def deserialize_function(config: dict, custom_objects: dict | None):
    fn = find_function(config.get("config"), custom_objects)
    if fn is None:
        raise TypeError(f"Could not locate function '{config.get('config')}'. Make sure custom "
                        "classes are decorated with `@keras.saving.register_keras_"
                        f"serializable()`. Full object config: {config}")
    return fn


def deserialize_object(config, known: dict, custom_objects: dict | None, kind: str):
    """A config dict (or a bare class name) -> an instance of a known class, or the user's
    function a `function` record names."""
    if isinstance(config, dict) and config.get("class_name") == "function":
        return deserialize_function(config, custom_objects)
    if isinstance(config, str):
        return lookup_class(config, known, custom_objects, kind)()
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret {kind} identifier: {config}")
    cls = lookup_class(config["class_name"], known, custom_objects, kind)
    return cls.from_config(config.get("config") or {})


def get_object(identifier, known: dict, kind: str):
    """Keras' `get`: None, a name, a config dict, a class (instantiated) or a callable."""
    if identifier is None:
        return None
    if isinstance(identifier, (dict, str)):
        try:
            return deserialize_object(identifier, known, None, kind)
        except TypeError:
            raise ValueError(f"Could not interpret {kind} identifier: {identifier}") from None
    if isinstance(identifier, type):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret {kind} identifier: {identifier}")


init_ops.set_user_functions(function_config, find_function)


_SERIALIZE_DOC = """A {kind}'s config as Keras saves it (None for None).

    Args:
      {kind}: a `keras.{plural}` object (or a user's function, recorded by its
        registered name).

    Returns:
      A dict with "module", "class_name", "config" and "registered_name", or None.
    """
_DESERIALIZE_DOC = """A {kind} from its saved config (the inverse of `serialize`).

    Args:
      config: a dict from `serialize`, or a class name such as "{cls}" (an
        instance with default arguments).
      custom_objects: optional dict of names to user classes or functions, looked up
        before the built-in ones.

    Returns:
      A new {kind} object.

    Raises:
      ValueError: the config names no known {kind}.

    Example:

    >>> type(tf.keras.{plural}.deserialize("{cls}")).__name__
    '{cls}'
    """
_GET_DOC = """The {kind} an identifier stands for (what layers' `*_{kind}` arguments accept).

    Args:
      identifier: None, a name ("{name}"), a dict from `serialize`, a class (then
        instantiated with defaults) or a callable (returned as it is).

    Returns:
      A {kind} object or callable, or None for None.

    Raises:
      ValueError: an identifier that names no known {kind}.

    Example:

    >>> type(tf.keras.{plural}.get("{name}")).__name__
    '{cls}'
    """


def serialize_doc(kind: str, plural: str) -> str:
    """The docstring of keras.<plural>.serialize, whose argument is named `kind`."""
    return _SERIALIZE_DOC.format(kind=kind, plural=plural)


def lookup_functions(kind: str, plural: str, known: dict, example: tuple[str, str]):
    """keras.<plural>.deserialize and get for the `kind` objects `known` names (constraints,
    regularizers); `example`: a name and the class it stands for."""
    name, cls = example
    words = dict(kind=kind, plural=plural, name=name, cls=cls)

    def deserialize(config, custom_objects=None):
        return deserialize_object(config, known, custom_objects, kind)

    def get(identifier):
        return get_object(identifier, known, kind)
    for fn, doc in ((deserialize, _DESERIALIZE_DOC), (get, _GET_DOC)):
        fn.__qualname__ = fn.__name__
        fn.__doc__ = doc.format(**words)
    return (keras_export(f"keras.{plural}.deserialize")(deserialize),
            keras_export(f"keras.{plural}.get")(get))
