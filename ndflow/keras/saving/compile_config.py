"""A model's `compile()` arguments in Keras 3's `compile_config` (saved in a `.keras` file's
config.json) and back: the optimizer, loss, loss weights, metrics and flags. Losses and
metrics are names, or Keras configs of known classes and functions (or of `custom_objects`);
nothing in the config is ever run as code."""

from __future__ import annotations

import inspect
import types
import warnings

from ndflow.keras import loss_functions, serialization_lib
from ndflow.keras.metrics import metric_lookup
from ndflow.keras.metrics.base_metric import Metric
from ndflow.keras.mixed_precision.loss_scale_optimizer import LossScaleOptimizer
from ndflow.keras.optimizers import serialization as optimizers
from ndflow.keras.trainer import Trainer
from ndflow.train.init_scope import init_scope


def _is_object_config(value) -> bool:
    return isinstance(value, dict) and "class_name" in value and "config" in value


def _function_config(fn, module: str) -> dict:
    """Keras' record of a loss or metric function: a built-in one by its name in `module`,
    a user's one as `builtins.function` with its (registered) name."""
    if not getattr(fn, "__module__", "").startswith("ndflow."):
        return serialization_lib.function_config(fn)
    name = fn.__name__
    return {"module": module, "class_name": "function", "config": name,
            "registered_name": name}


def _serialize_loss(loss):
    if loss is None or isinstance(loss, (str, int, float, bool)):
        return loss
    if isinstance(loss, dict):
        return {k: _serialize_loss(v) for k, v in loss.items()}
    if isinstance(loss, (list, tuple)):
        return [_serialize_loss(v) for v in loss]
    if isinstance(loss, loss_functions.Loss):
        return loss_functions.serialize(loss)
    if isinstance(loss, type):
        return loss.__name__
    if isinstance(loss, types.FunctionType):
        return _function_config(loss, "keras.losses")
    raise TypeError(f"Cannot serialize the loss {loss!r}.")


def _serialize_metrics(metrics):
    if metrics is None or isinstance(metrics, str):
        return metrics
    if isinstance(metrics, dict):
        return {k: _serialize_metrics(v) for k, v in metrics.items()}
    if isinstance(metrics, (list, tuple)):
        return [_serialize_metrics(v) for v in metrics]
    if isinstance(metrics, Metric):
        return metric_lookup.serialize(metrics)
    if isinstance(metrics, type):
        return metrics.__name__
    if isinstance(metrics, types.FunctionType):
        return _function_config(metrics, "keras.metrics")
    raise TypeError(f"Cannot serialize the metric {metrics!r}.")


def get_compile_config(model) -> dict:
    """Keras 3's `model.get_compile_config()`: {} for a model that was never compiled."""
    if not getattr(model, "compiled", False):
        return {}
    optimizer = model.optimizer
    # Keras saves the optimizer compile was given: a LossScaleOptimizer the user passed, but
    # not the one compile wrapped around it under mixed_float16 (compile wraps again on load)
    if getattr(optimizer, "_wrapped_by_compile", False):
        optimizer = optimizer.inner_optimizer
    compile_loss, compile_metrics = model._compile_loss, model._compile_metrics
    metrics, weighted = compile_metrics._specs if compile_metrics is not None else (None, None)
    try:
        return {"optimizer": optimizers.serialize(optimizer),
                "loss": _serialize_loss(getattr(model, "loss", None)),
                "loss_weights": (compile_loss._weights_spec if compile_loss is not None
                                 else None),
                "metrics": _serialize_metrics(metrics),
                "weighted_metrics": _serialize_metrics(weighted),
                "run_eagerly": bool(model.run_eagerly),
                "steps_per_execution": model.steps_per_execution,
                "jit_compile": bool(model.jit_compile)}
    except TypeError as e:
        warnings.warn(f"The model's compile() arguments are not serializable ({e}); the saved "
                      "model will load uncompiled.", stacklevel=3)
        return {}


def _deserialize_optimizer(config, custom_objects):
    if isinstance(config, dict) and config.get("class_name") == "LossScaleOptimizer":
        inner = config["config"]
        return LossScaleOptimizer(_deserialize_optimizer(inner["inner_optimizer"],
                                                         custom_objects),
                                  initial_scale=inner.get("initial_scale"),
                                  dynamic_growth_steps=inner.get("dynamic_growth_steps"),
                                  name=inner.get("name"))
    if isinstance(config, dict):
        return optimizers.deserialize(config, custom_objects)
    return config


def _function_name(config: dict) -> str:
    name = config.get("config")
    if not isinstance(name, str):
        raise TypeError(f"Could not interpret serialized function: {config}")
    return name


def _deserialize_loss(value, custom_objects):
    if _is_object_config(value):
        if value["class_name"] == "function":
            return loss_functions.deserialize(_function_name(value), custom_objects)
        return loss_functions.deserialize(value, custom_objects)
    if isinstance(value, dict):
        return {k: _deserialize_loss(v, custom_objects) for k, v in value.items()}
    if isinstance(value, list):
        return [_deserialize_loss(v, custom_objects) for v in value]
    if isinstance(value, str) and custom_objects and value in custom_objects:
        return custom_objects[value]
    return value


def _deserialize_metrics(value, custom_objects):
    if _is_object_config(value):
        if value["class_name"] == "function":
            return metric_lookup.deserialize(_function_name(value), custom_objects)
        return metric_lookup.deserialize(value, custom_objects)
    if isinstance(value, dict):
        return {k: _deserialize_metrics(v, custom_objects) for k, v in value.items()}
    if isinstance(value, list):
        return [_deserialize_metrics(v, custom_objects) for v in value]
    if isinstance(value, str) and custom_objects and value in custom_objects:
        return custom_objects[value]
    return value


def compile_from_config(model, config: dict, custom_objects=None) -> None:
    """Keras 3's `model.compile_from_config`: compiles with the saved arguments, then builds
    the optimizer's variables so that the saved optimizer state can be loaded into them."""
    if type(model).compile is not Trainer.compile:
        warnings.warn("`compile()` was not called as part of model loading because the model's "
                      "`compile()` method is custom. All subclassed Models that have "
                      "`compile()` overridden should also override `get_compile_config()` and "
                      "`compile_from_config(config)`. Alternatively, you can call `compile()` "
                      "manually after loading.", stacklevel=3)
        return
    known = inspect.signature(Trainer.compile).parameters
    kwargs = {k: v for k, v in config.items() if k in known and k != "self"}
    if "optimizer" in kwargs:
        kwargs["optimizer"] = _deserialize_optimizer(kwargs["optimizer"], custom_objects)
    for key in ("loss",):
        if key in kwargs:
            kwargs[key] = _deserialize_loss(kwargs[key], custom_objects)
    for key in ("metrics", "weighted_metrics"):
        if key in kwargs:
            kwargs[key] = _deserialize_metrics(kwargs[key], custom_objects)
    model.compile(**kwargs)
    if model.optimizer is not None and model.built:
        with init_scope():
            model.optimizer.build(model.trainable_variables)
