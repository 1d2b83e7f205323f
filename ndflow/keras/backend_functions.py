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
    """The default float dtype Keras creates weights and casts inputs in ("float32" unless
    changed by `set_floatx`).

    Returns:
      A dtype name: "float16", "bfloat16", "float32" or "float64".

    Example:

    >>> tf.keras.backend.floatx()
    'float32'
    """
    return _CONFIG["floatx"]


@keras_export("keras.backend.set_floatx", "keras.config.set_floatx")
def set_floatx(value) -> None:
    """Sets the default float dtype (what `floatx()` returns) for layers and ops created
    afterwards. For mixed precision use `keras.mixed_precision.set_global_policy` instead.

    Args:
      value: "float16", "bfloat16", "float32" or "float64" (or the `tf.DType`).

    Raises:
      ValueError: another dtype.
    """
    name = dtypes.as_dtype(value).name
    if name not in ("bfloat16", "float16", "float32", "float64"):
        raise ValueError(f"Unknown `floatx` value: {value}. Expected one of {{'bfloat16', "
                         "'float16', 'float32', 'float64'}")
    _CONFIG["floatx"] = name


@keras_export("keras.backend.epsilon", "keras.config.epsilon")
def epsilon() -> float:
    """The fuzz factor Keras adds to avoid division by zero and log(0) (1e-7 unless changed
    by `set_epsilon`).

    Returns:
      A float.
    """
    return _CONFIG["epsilon"]


@keras_export("keras.backend.set_epsilon", "keras.config.set_epsilon")
def set_epsilon(value) -> None:
    """Sets the fuzz factor `epsilon()` returns.

    Args:
      value: a float (e.g. 1e-5).
    """
    _CONFIG["epsilon"] = float(value)


@keras_export("keras.backend.image_data_format", "keras.config.image_data_format")
def image_data_format() -> str:
    """The default layout of image data: "channels_last" ((batch, height, width, channels);
    the default) or "channels_first".

    Returns:
      A string.
    """
    return _CONFIG["image_data_format"]


@keras_export("keras.backend.set_image_data_format", "keras.config.set_image_data_format")
def set_image_data_format(data_format) -> None:
    """Sets the default image layout that convolution, pooling and image layers use.

    Args:
      data_format: "channels_last" or "channels_first" (any case).

    Raises:
      ValueError: another value.
    """
    value = str(data_format).lower()
    if value not in ("channels_first", "channels_last"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    _CONFIG["image_data_format"] = value


@keras_export("keras.backend.clear_session", "keras.utils.clear_session")
def clear_session(free_memory=True) -> None:
    """Resets Keras' global state between experiments: automatic layer names start again
    (`dense`, `dense_1`, ...).

    Args:
      free_memory: whether to also run Python's garbage collector.
    """
    base_layer.reset_names()
    if free_memory:
        gc.collect()


@keras_export("keras.backend.is_keras_tensor", "keras.utils.is_keras_tensor")
def is_keras_tensor(x) -> bool:
    """Whether `x` is a KerasTensor: a symbolic input or output of a functional model (not
    a tensor holding values).

    Args:
      x: any value.

    Returns:
      A bool.

    Example:

    >>> tf.keras.backend.is_keras_tensor(tf.keras.Input((3,)))
    True
    """
    return keras_tensor.is_keras_tensor(x)


@keras_export("keras.backend.int_shape")
def int_shape(x):
    """The static shape of `x` as a tuple of ints (None for unknown dimensions).

    Args:
      x: a tensor, variable, KerasTensor or NumPy array.

    Returns:
      A tuple, or None when even the rank is unknown.

    Example:

    >>> tf.keras.backend.int_shape(tf.zeros((2, 3)))
    (2, 3)
    """
    shape = x.shape
    return tuple(shape) if isinstance(shape, tuple) else (
        None if shape.rank is None else tuple(shape.as_list()))


@keras_export("keras.backend.count_params")
def count_params(x) -> int:
    """The number of elements of a variable or tensor (of a fully known shape).

    Args:
      x: a variable or tensor.

    Returns:
      An int.
    """
    return int(np.prod(x.shape.as_list(), dtype=np.int64))


@keras_export("keras.backend.get_value")
def get_value(x):
    """The value of a variable or tensor as a NumPy array.

    Args:
      x: a variable, tensor or array-like.

    Returns:
      A NumPy array.
    """
    return np.asarray(x.numpy()) if hasattr(x, "numpy") else np.asarray(x)


@keras_export("keras.backend.set_value")
def set_value(x, value) -> None:
    """Assigns a new value to a variable.

    Args:
      x: a `tf.Variable`.
      value: an array-like of the variable's shape (converted to its dtype).
    """
    x.assign(np.asarray(value, dtype=x.dtype.np_dtype))


@keras_export("keras.utils.set_random_seed")
def set_random_seed(seed) -> None:
    """Seeds Python's `random`, NumPy's global generator and ndflow's
    (`tf.random.set_seed`) at once, for reproducible runs.

    Args:
      seed: an int.

    Raises:
      ValueError: `seed` is not an int.
    """
    if not isinstance(seed, int):
        raise ValueError("Expected `seed` argument to be an integer. Received: "
                         f"seed={seed} (of type {type(seed)})")
    random.seed(seed)
    np.random.seed(seed)
    random_seed.set_seed(seed)


@keras_export("keras.remat")
def remat(f):
    """Rematerialization: `f` wrapped so that its intermediate activations are recomputed
    during the backward pass instead of kept in memory (`tf.recompute_grad`), trading
    compute for memory.

    Args:
      f: a callable on tensors (e.g. a layer's call or a block of layers).

    Returns:
      A callable computing the same values and gradients.
    """
    return recompute_grad(f)
