"""Keras 3's serialized form of objects (`{"module", "class_name", "config",
"registered_name"}`) and the lookup of a class by name in a table of known classes plus the
user's `custom_objects`. Deserializing only ever instantiates known classes from plain
configs: no code is loaded from a config."""

from __future__ import annotations


def serialize_object(obj, module: str) -> dict:
    return {"module": module, "class_name": type(obj).__name__, "config": obj.get_config(),
            "registered_name": None}


def lookup_class(name: str, known: dict, custom_objects: dict | None, kind: str):
    cls = (custom_objects or {}).get(name) or known.get(name)
    if cls is None:
        raise TypeError(f"Could not locate {kind} '{name}'. Make sure custom classes are "
                        "decorated with `@keras.saving.register_keras_serializable()` or "
                        "passed in `custom_objects`.")
    return cls


def deserialize_object(config, known: dict, custom_objects: dict | None, kind: str):
    """A config dict (or a bare class name) -> an instance of a known class."""
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
