"""`tf.keras.optimizers.schedules.serialize` / `deserialize`: a learning-rate schedule's
Keras 3 form (`serialize_keras_object`'s), for optimizer configs and .keras files. The
schedules themselves are ndflow.train's, below Keras."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.keras import serialization_lib
from ndflow.train.learning_rate_schedule import SCHEDULES, LearningRateSchedule


@tf_export("keras.optimizers.schedules.serialize", "optimizers.schedules.serialize",
           v1=["keras.optimizers.schedules.serialize"])
def serialize(learning_rate_schedule: LearningRateSchedule) -> dict:
    """Keras 3's serialized form of a schedule (its `serialize_keras_object`): a built-in's
    module is `keras.optimizers.schedules`; a user's class is recorded by its module (None
    for `__main__`) and its registered name (`package>name`, else its class name).

    Args:
      learning_rate_schedule: a `keras.optimizers.schedules.LearningRateSchedule`.

    Returns:
      A dict with "module", "class_name", "config" and "registered_name".
    """
    cls = type(learning_rate_schedule)
    config = serialization_lib.serialize_config_values(learning_rate_schedule.get_config())
    if SCHEDULES.get(cls.__name__) is cls:
        return {"module": "keras.optimizers.schedules", "class_name": cls.__name__,
                "config": config, "registered_name": None}
    return {"module": serialization_lib.user_module(cls), "class_name": cls.__name__,
            "config": config,
            "registered_name": serialization_lib.registered_name(cls) or cls.__name__}


def _known() -> dict:
    return {**SCHEDULES, "LearningRateSchedule": LearningRateSchedule}


def _custom(name, custom_objects):
    """Keras' lookup of a custom object: the custom object scopes, the registry, then the
    caller's `custom_objects`."""
    if not isinstance(name, str):
        return None
    found = serialization_lib.custom_object(name)
    return found if found is not None else (custom_objects or {}).get(name)


def _instantiate(cls, config, custom_objects):
    with serialization_lib.CustomObjectScope(custom_objects or {}):
        return cls.from_config(config or {})


@tf_export("keras.optimizers.schedules.deserialize", "optimizers.schedules.deserialize",
           v1=["keras.optimizers.schedules.deserialize"])
def deserialize(config: dict, custom_objects: dict | None = None) -> LearningRateSchedule:
    """A schedule from its serialized form, as Keras 3: a class registered
    (`register_keras_serializable`) or in a custom object scope or `custom_objects` under the
    config's `registered_name` (its class name when it has none), else a built-in schedule.
    A config whose `module` is None names a user's class: unknown, it is Keras' TypeError.
    (Keras returns an unknown name itself for other configs; ndflow raises ValueError.)

    Args:
      config: a dict from `serialize`, a class name, or None (returned as it is).
      custom_objects: optional dict of names to user schedule classes.

    Returns:
      A new schedule (or the class a bare registered name stands for), or None.

    Raises:
      TypeError: a user class (module None) that is not registered.
      ValueError: a name that is no known schedule.

    Example:

    >>> schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, 100, 0.5)
    >>> config = tf.keras.optimizers.schedules.serialize(schedule)
    >>> type(tf.keras.optimizers.schedules.deserialize(config)).__name__
    'ExponentialDecay'
    """
    if config is None:
        return None
    if isinstance(config, str):
        cls = _custom(config, custom_objects)
        if cls is not None:
            return cls
        config = {"class_name": config, "config": {}}
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Unknown `config` as a `dict`, config={config}")
    name, inner = config["class_name"], config.get("config")
    if name == "function":
        return serialization_lib.deserialize_function(config, custom_objects)
    registered = config.get("registered_name", name)
    cls = _custom(registered, custom_objects)   # a built-in's (None) finds no custom class
    if cls is None:
        if config.get("module", "_") is None:
            raise TypeError(f"Cannot deserialize object of type `{name}`. If `{name}` is a "
                            "custom class, please register it using the "
                            "`@keras.saving.register_keras_serializable()` decorator.")
        cls = _known().get(name)
    if cls is None:
        raise ValueError(f"Unknown learning rate schedule: '{name}'.")
    return _instantiate(cls, inner, custom_objects)
