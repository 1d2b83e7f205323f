"""Keras 3's generic object (de)serialization in `tf.keras.utils`:
`serialize_keras_object` (layers and models, optimizers, losses, metrics, initializers,
regularizers, constraints, functions, NumPy arrays, nested Python values) and
`deserialize_keras_object` (back, through each kind's own deserializer: only known or
registered classes are ever instantiated), `get_registered_name`/`get_registered_object`,
plus `get_source_inputs` and the interactive logging switch."""

from __future__ import annotations

import types

import numpy as np

from ndflow.core.api_export import keras_export, tf_export
from ndflow.core.tensor import Tensor
from ndflow.keras import (
    activation_functions,
    constraint_functions,
    loss_functions,
    regularizer_functions,
    serialization_lib,
)
from ndflow.keras.keras_tensor import KerasTensor
from ndflow.keras.layers import base_layer, layer_serialization
from ndflow.keras.metrics import metric_lookup
from ndflow.keras.metrics.base_metric import Metric
from ndflow.keras.optimizers import schedule_serialization
from ndflow.keras.optimizers import serialization as optimizer_serialization
from ndflow.keras.optimizers.base_optimizer import Optimizer
from ndflow.keras.saving import keras_archive
from ndflow.ops import init_ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.train import learning_rate_schedule

_KINDS = (  # (base class, module Keras writes, serializer, deserializer)
    (Optimizer, "keras.optimizers", optimizer_serialization.serialize,
     optimizer_serialization.deserialize),
    (loss_functions.Loss, "keras.losses", loss_functions.serialize,
     loss_functions.deserialize),
    (Metric, "keras.metrics", metric_lookup.serialize, metric_lookup.deserialize),
    (init_ops.Initializer, "keras.initializers", init_ops.serialize, init_ops.deserialize),
    (regularizer_functions.Regularizer, "keras.regularizers", regularizer_functions.serialize,
     regularizer_functions.deserialize),
    (constraint_functions.Constraint, "keras.constraints", constraint_functions.serialize,
     constraint_functions.deserialize),
    (learning_rate_schedule.LearningRateSchedule, "keras.optimizers.schedules",
     schedule_serialization.serialize, schedule_serialization.deserialize),
)


@keras_export("keras.utils.serialize_keras_object")
@tf_export("keras.saving.serialize_keras_object", v1=[])
def serialize_keras_object(obj):
    """A JSON-able record of a Keras object, as Keras 3 writes configs.

    Objects with `get_config` (layers, losses, optimizers, user classes) become
    `{"module", "class_name", "config", "registered_name"}`; NumPy arrays and tensors
    become `__numpy__`/`__tensor__` records; lists, tuples and dicts are serialized item by
    item; Python scalars and strings are returned as they are.

    Args:
      obj: the object.

    Returns:
      A plain value or dict (what `deserialize_keras_object` reads back).

    Example:

    >>> tf.keras.saving.serialize_keras_object(tf.keras.layers.Dense(2))["class_name"]
    'Dense'
    """
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, (list, tuple)):
        return type(obj)(serialize_keras_object(x) for x in obj)
    if isinstance(obj, dict):
        return {k: serialize_keras_object(v) for k, v in obj.items()}
    if isinstance(obj, (np.ndarray, Tensor)):
        value = np.asarray(obj.numpy() if isinstance(obj, Tensor) else obj)
        return {"class_name": "__numpy__" if isinstance(obj, np.ndarray) else "__tensor__",
                "config": {"value": value.tolist(), "dtype": value.dtype.name}}
    if isinstance(obj, base_layer.Layer):
        kind = type(obj).__name__
        if kind in ("Functional", "Sequential"):
            out = keras_archive.serialize_model(obj)
            out.pop("compile_config", None)
            return out
        return layer_serialization.serialize(obj)
    for base, module, serialize, _ in _KINDS:
        if isinstance(obj, base):
            out = _user_class_record(obj) or serialize(obj)
            return {**out, "module": out.get("module", module)}
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
        return serialization_lib.function_config(obj)
    if hasattr(obj, "get_config"):
        return _user_class_record(obj) or serialization_lib.serialize_object(
            obj, type(obj).__module__)
    raise TypeError(f"Cannot serialize object {obj!r} of type {type(obj)}")


def _user_class_record(obj):
    cls = type(obj)
    if cls.__module__.startswith("ndflow."):
        return None
    return {"module": serialization_lib.user_module(cls), "class_name": cls.__name__,
            "config": serialize_keras_object(obj.get_config()),
            "registered_name": serialization_lib.registered_name(cls) or cls.__name__}


serialization_lib.set_nested_serializer(serialize_keras_object)


@keras_export("keras.utils.deserialize_keras_object")
@tf_export("keras.saving.deserialize_keras_object", v1=[])
def deserialize_keras_object(config, custom_objects=None, safe_mode=True, **kwargs):
    """The object a `serialize_keras_object` record describes.

    Args:
      config: the record (a dict); strings and plain values are returned as they are,
        lists item by item.
      custom_objects: optional dict of names to user classes and functions, looked up
        before the built-in ones.
      safe_mode: whether to refuse deserializing Python lambdas.
      **kwargs: accepted for Keras' signature.

    Returns:
      The rebuilt object.

    Raises:
      TypeError: a config that is not a plain value, list or dict, or (from the class
        lookup) a class name that is neither built in nor registered.
    """
    if config is None or isinstance(config, (bool, int, float, str)):
        return config
    if isinstance(config, (list, tuple)):
        return [deserialize_keras_object(c, custom_objects, safe_mode) for c in config]
    if not isinstance(config, dict):
        raise TypeError(f"Could not parse config: {config}")
    if "class_name" not in config or "config" not in config:
        return {k: deserialize_keras_object(v, custom_objects, safe_mode)
                for k, v in config.items()}
    name, inner = config["class_name"], config["config"]
    if name in ("__numpy__", "__tensor__"):
        value = np.array(inner["value"], dtype=inner["dtype"])
        return value if name == "__numpy__" else convert_to_tensor(value)
    if name == "__tuple__":
        return tuple(deserialize_keras_object(v, custom_objects, safe_mode)
                     for v in inner["value"])
    if name == "function":
        fn = get_registered_object(inner, custom_objects)
        if fn is not None:
            return fn
        try:
            return activation_functions.deserialize(inner, custom_objects)
        except ValueError:
            return loss_functions.deserialize(inner, custom_objects)
    module = config.get("module")
    if module in ("keras.src.models.functional", "keras.models", "keras") or \
            name in ("Functional", "Sequential"):
        return keras_archive.deserialize_model(config, custom_objects, safe_mode,
                                               compile=False)
    user_cls = get_registered_object(config.get("registered_name") or name, custom_objects)
    if user_cls is not None and not str(getattr(user_cls, "__module__", "")).startswith(
            "ndflow."):
        if isinstance(user_cls, type) and issubclass(user_cls, base_layer.Layer):
            return layer_serialization.deserialize(config, custom_objects)
        return user_cls.from_config(inner)
    for _, kind_module, _, deserialize in _KINDS:
        if module == kind_module:
            return deserialize(config, custom_objects)
    return layer_serialization.deserialize(config, custom_objects)


@keras_export("keras.utils.get_registered_name")
@tf_export("keras.saving.get_registered_name", v1=[])
def get_registered_name(obj):
    """The name an object is registered under for serialization ("package>name", see
    `register_keras_serializable`), else its own `__name__`.

    Args:
      obj: a class or function.

    Returns:
      A string.
    """
    return serialization_lib.registered_name(obj) or getattr(obj, "__name__", None)


@keras_export("keras.utils.get_registered_object")
@tf_export("keras.saving.get_registered_object", v1=[])
def get_registered_object(name, custom_objects=None, module_objects=None):
    """The class or function known as `name`: registered with
    `register_keras_serializable`, in an active `custom_object_scope`, or in the given
    dicts.

    Args:
      name: the registered or plain name.
      custom_objects: optional dict searched next.
      module_objects: optional dict searched last.

    Returns:
      The object, or None.
    """
    custom = serialization_lib.custom_object(name)
    if custom is not None:
        return custom
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if module_objects and name in module_objects:
        return module_objects[name]
    return None


@keras_export("keras.utils.get_source_inputs")
def get_source_inputs(tensor):
    """The `keras.Input` tensors a functional-API tensor is computed from.

    Args:
      tensor: a KerasTensor (anything else is returned in a list as it is).

    Returns:
      A list of the source KerasTensors.

    Example:

    >>> x = tf.keras.Input((3,))
    >>> y = tf.keras.layers.Dense(2)(x)
    >>> tf.keras.utils.get_source_inputs(y)[0] is x
    True
    """
    if not isinstance(tensor, KerasTensor) or tensor._keras_history is None:
        return [tensor]
    layer, node_index, _ = tensor._keras_history
    node = layer._inbound_nodes[node_index]
    if not node.input_tensors:  # an Input layer's own node
        return [tensor]
    sources = []
    for x in node.input_tensors:
        for source in get_source_inputs(x):
            if all(source is not s for s in sources):
                sources.append(source)
    return sources
