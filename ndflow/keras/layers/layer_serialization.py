"""`keras.layers.serialize` / `deserialize`: a layer as Keras 3's config dict (module, class
name, config, registered name, build config) and back; ndflow's own layers are found by
class name (base_layer's registry), a user's class by its registered name or
`custom_objects`."""

from __future__ import annotations

import inspect

from ndflow.core.api_export import keras_export
from ndflow.keras import serialization_lib
from ndflow.keras.layers.base_layer import _BUILTIN_LAYERS
from ndflow.keras.serialization_lib import lookup_class


@keras_export("keras.layers.serialize")
def serialize(layer) -> dict:
    """A layer's config as Keras saves it (what `keras.layers.deserialize` reads back).

    Args:
      layer: a `keras.layers.Layer` (built-in or a user's class, recorded by its registered
        name).

    Returns:
      A dict with "module", "class_name", "config" and "registered_name" (and
      "build_config" for a built layer that has one).

    Example:

    >>> tf.keras.layers.serialize(tf.keras.layers.Dense(3))["class_name"]
    'Dense'
    """
    cls = type(layer)
    if cls.__module__.startswith("ndflow."):
        # keras.ops nodes (saving/keras_operations.py) name their own module, as Keras does
        module = getattr(layer, "_keras_module", "keras.layers")
        registered = getattr(layer, "_keras_registered_name", None)
    else:   # a user's class, as Keras writes it: found again by its registered name
        registered = serialization_lib.registered_name(cls) or cls.__name__
        module = serialization_lib.user_module(cls)
    config = layer.get_config()
    if not cls.__module__.startswith("ndflow."):   # a user class: nested objects too
        config = serialization_lib.serialize_config_values(config)
    # (a class Keras saves under its exported name sets `_keras_class_name`)
    out = {"module": module, "class_name": getattr(cls, "_keras_class_name", cls.__name__),
           "config": config, "registered_name": registered}
    build_config = layer.get_build_config()
    if build_config is not None:
        out["build_config"] = build_config
    return out


@keras_export("keras.layers.deserialize")
def deserialize(config, custom_objects=None):
    """A layer from its serialized form (`keras.layers.serialize`): a new layer of the
    named class built from the config; only built-in layers, registered classes and
    `custom_objects` are looked up.

    Args:
      config: a dict with "class_name" and "config" (and optionally "build_config").
      custom_objects: optional dict of names to user layer classes.

    Returns:
      The layer (built when the record has a build config).

    Raises:
      ValueError: `config` is not such a dict.
      TypeError: the class name is unknown.

    Example:

    >>> tf.keras.layers.deserialize({"class_name": "Dense", "config": {"units": 2}}).units
    2
    """
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret serialized layer: {config}")
    cls = lookup_class(config["class_name"], _BUILTIN_LAYERS, custom_objects, "class",
                       registered=config.get("registered_name"))
    conf = config.get("config") or {}
    if "custom_objects" in inspect.signature(cls.from_config).parameters:
        layer = cls.from_config(conf, custom_objects=custom_objects)
    else:
        layer = cls.from_config(conf)
    if config.get("build_config"):
        layer.build_from_config(config["build_config"])
    return layer
