"""Keras 3's automatic config: an Operation or layer whose class does not define
`get_config()` is serialized as its name and the arguments its constructor was called with,
when they are all plain Python values (Keras' rule), so `cls(**config)` rebuilds it."""

from __future__ import annotations

import inspect

_SIMPLE = (str, int, float, bool, type(None))

_EXAMPLE = """
class CustomLayer(keras.layers.Layer):
    def __init__(self, arg1, arg2, **kwargs):
        super().__init__(**kwargs)
        self.arg1 = arg1
        self.arg2 = arg2

    def get_config(self):
        config = super().get_config()
        config.update({
            "arg1": self.arg1,
            "arg2": self.arg2,
        })
        return config"""


def default(method):
    """Marks a base class's `get_config` as the default one (Keras' `python_utils.default`):
    a class still using it gets the automatic config."""
    method._is_default = True
    return method


def uses_default_get_config(obj_or_class) -> bool:
    cls = obj_or_class if isinstance(obj_or_class, type) else type(obj_or_class)
    return getattr(cls.get_config, "_is_default", False)


def _flat(value):
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _flat(v)]
    return [value]


def constructor_config(cls, args, kwargs):
    """The constructor arguments (with defaults) as a config, when they are all plain Python
    values; None otherwise, with the flag telling whether positional-only or variadic
    arguments were why."""
    signature = inspect.signature(cls.__init__)
    try:
        bound = signature.bind(None, *args, **kwargs)
    except TypeError:
        return None, False
    params = list(signature.parameters.values())[1:]
    if any(p.kind == p.POSITIONAL_ONLY for p in params):
        return None, True
    bound.apply_defaults()
    values = dict(bound.arguments)
    values.pop(next(iter(signature.parameters)))
    for p in params:
        if p.kind == p.VAR_KEYWORD:
            values.update(values.pop(p.name, {}))
        elif p.kind == p.VAR_POSITIONAL and values.pop(p.name, ()):
            return None, True
    values.pop("name", None)
    if not all(isinstance(v, _SIMPLE) for v in _flat(values)):
        return None, False
    return values, False


def automatic_config(obj) -> dict:
    """`obj`'s name and recorded constructor arguments (`name` left out where the
    constructor cannot take it back); NotImplementedError, as Keras, when none were
    recorded."""
    config = {"name": obj.name}
    recorded = obj.__dict__.get("_auto_config")
    if recorded is not None:
        config.update(recorded)
        params = inspect.signature(obj.__init__).parameters
        if "name" not in params and not any(p.kind == p.VAR_KEYWORD for p in params.values()):
            config.pop("name")
        return config
    # Keras' text, with its line breaks
    why = ("positional only or variadic positional arguments (e.g.,\n`*args`) to "
           "`__init__()`, which is not supported by the\nautomatic config generation. "
           "Please remove all positional\nonly and variadic arguments from `__init__()`\n"
           "or override `get_config()` and `from_config()` to make\nthe object "
           "serializatble." if obj.__dict__.get("_auto_config_error_args") else
           "non-serializable argument values in `__init__()`,\nand therefore the object "
           "must override `get_config()` in\norder to be serializable. Please implement "
           "`get_config()`.")
    raise NotImplementedError(f"\nObject {type(obj).__name__} was created by passing\n{why}"
                              f"\n\nExample:\n\n{_EXAMPLE}\n")
