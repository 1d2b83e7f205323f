"""`tf.keras.backend`'s configuration and session functions Keras programs call: floatx,
epsilon, image_data_format (and their setters), clear_session (which also restarts Keras'
automatic layer names), is_keras_tensor, int_shape, count_params, get_value/set_value."""

from __future__ import annotations

import gc
import random

import numpy as np

from ndflow.autodiff.gradient_wrappers import recompute_grad
from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.keras import global_config, keras_tensor
from ndflow.keras.layers import base_layer
from ndflow.ops import random_seed

_CONFIG = global_config.SETTINGS


@keras_export("keras.backend.floatx", "keras.config.floatx")
def floatx() -> str:
    return _CONFIG["floatx"]


@keras_export("keras.backend.set_floatx", "keras.config.set_floatx")
def set_floatx(value) -> None:
    name = dtypes.as_dtype(value).name
    if name not in ("bfloat16", "float16", "float32", "float64"):
        raise ValueError(f"Unknown `floatx` value: {value}. Expected one of {{'bfloat16', "
                         "'float16', 'float32', 'float64'}")
    _CONFIG["floatx"] = name


@keras_export("keras.backend.epsilon", "keras.config.epsilon")
def epsilon() -> float:
    return _CONFIG["epsilon"]


@keras_export("keras.backend.set_epsilon", "keras.config.set_epsilon")
def set_epsilon(value) -> None:
    _CONFIG["epsilon"] = float(value)


@keras_export("keras.backend.image_data_format", "keras.config.image_data_format")
def image_data_format() -> str:
    return _CONFIG["image_data_format"]


@keras_export("keras.backend.set_image_data_format", "keras.config.set_image_data_format")
def set_image_data_format(data_format) -> None:
    value = str(data_format).lower()
    if value not in ("channels_first", "channels_last"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    _CONFIG["image_data_format"] = value


@keras_export("keras.backend.clear_session", "keras.utils.clear_session")
def clear_session(free_memory=True) -> None:
    """Resets Keras' global state: automatic names start again at `dense`, `dense_1`, ..."""
    base_layer.reset_names()
    if free_memory:
        gc.collect()


@keras_export("keras.backend.is_keras_tensor", "keras.utils.is_keras_tensor")
def is_keras_tensor(x) -> bool:
    return keras_tensor.is_keras_tensor(x)


@keras_export("keras.backend.int_shape")
def int_shape(x):
    shape = x.shape
    return tuple(shape) if isinstance(shape, tuple) else (
        None if shape.rank is None else tuple(shape.as_list()))


@keras_export("keras.backend.count_params")
def count_params(x) -> int:
    return int(np.prod(x.shape.as_list(), dtype=np.int64))


@keras_export("keras.backend.get_value")
def get_value(x):
    return np.asarray(x.numpy()) if hasattr(x, "numpy") else np.asarray(x)


@keras_export("keras.backend.set_value")
def set_value(x, value) -> None:
    x.assign(np.asarray(value, dtype=x.dtype.np_dtype))


@keras_export("keras.utils.set_random_seed")
def set_random_seed(seed) -> None:
    """Seeds Python's `random`, NumPy and ndflow (`tf.random.set_seed`) at once."""
    if not isinstance(seed, int):
        raise ValueError("Expected `seed` argument to be an integer. Received: "
                         f"seed={seed} (of type {type(seed)})")
    random.seed(seed)
    np.random.seed(seed)
    random_seed.set_seed(seed)


@keras_export("keras.remat")
def remat(f):
    """`keras.remat(f)`: `f` with its activations recomputed in the backward pass instead of
    kept (TF backend: `tf.recompute_grad`)."""
    return recompute_grad(f)
