"""Keras optimizers by name or config: `tf.keras.optimizers.get`, `serialize`, `deserialize`."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.keras.optimizers.adadelta import Adadelta
from ndflow.keras.optimizers.adafactor import Adafactor
from ndflow.keras.optimizers.adagrad import Adagrad
from ndflow.keras.optimizers.adam import Adam
from ndflow.keras.optimizers.adamax import Adamax
from ndflow.keras.optimizers.adamw import AdamW
from ndflow.keras.optimizers.base_optimizer import Optimizer
from ndflow.keras.optimizers.ftrl import Ftrl
from ndflow.keras.optimizers.lamb import Lamb
from ndflow.keras.optimizers.lion import Lion
from ndflow.keras.optimizers.muon import Muon
from ndflow.keras.optimizers.nadam import Nadam
from ndflow.keras.optimizers.rmsprop import RMSprop
from ndflow.keras.optimizers.schedule_free_adamw import ScheduleFreeAdamW
from ndflow.keras.optimizers.sgd import SGD

_CLASSES = {c.__name__: c for c in (SGD, Adam, RMSprop, AdamW, Adadelta, Adafactor, Adagrad,
                                    Adamax, Ftrl, Lamb, Lion, Muon, Nadam, ScheduleFreeAdamW)}
_BY_NAME = {name.lower(): c for name, c in _CLASSES.items()}


@tf_export("keras.optimizers.serialize", "optimizers.serialize",
           v1=["keras.optimizers.serialize"])
def serialize(optimizer: Optimizer) -> dict:
    """An optimizer's config as Keras 3 saves it (what `deserialize` reads back).

    Args:
      optimizer: a Keras optimizer.

    Returns:
      A dict with "module", "class_name", "config" and "registered_name".

    Example:

    >>> tf.keras.optimizers.serialize(tf.keras.optimizers.SGD())["class_name"]
    'SGD'
    """
    return {"module": "keras.optimizers", "class_name": type(optimizer).__name__,
            "config": optimizer.get_config(), "registered_name": None}


@tf_export("keras.optimizers.deserialize", "optimizers.deserialize",
           v1=["keras.optimizers.deserialize"])
def deserialize(config: dict, custom_objects: dict | None = None) -> Optimizer:
    """An optimizer from its saved config (the inverse of `serialize`).

    Args:
      config: a dict with "class_name" (e.g. "Adam", or a lowercase name such as "adam")
        and "config" (the optimizer's `get_config()`).
      custom_objects: optional dict of names to user optimizer classes, looked up first.

    Returns:
      A new optimizer.

    Raises:
      ValueError: the class name names no known optimizer.

    Example:

    >>> opt = tf.keras.optimizers.deserialize(
    ...     {"class_name": "SGD", "config": {"learning_rate": 0.5}})
    >>> type(opt).__name__, float(opt.learning_rate)
    ('SGD', 0.5)
    """
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or _CLASSES.get(name) or _BY_NAME.get(name.lower())
    if cls is None:
        raise ValueError(f"Could not interpret optimizer identifier: {config}")
    return cls.from_config(config["config"], custom_objects)


@tf_export("keras.optimizers.get", "optimizers.get", v1=["keras.optimizers.get"])
def get(identifier) -> Optimizer:
    """The optimizer an identifier stands for (what `compile(optimizer=...)` accepts).

    Args:
      identifier: an optimizer (returned as it is), a name such as "adam" (a new one
        with default arguments) or a dict from `serialize`.

    Returns:
      An optimizer.

    Raises:
      ValueError: an identifier that names no known optimizer.

    Example:

    >>> type(tf.keras.optimizers.get("adam")).__name__
    'Adam'
    """
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier}")
