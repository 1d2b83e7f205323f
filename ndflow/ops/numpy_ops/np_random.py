"""`tnp.random`: NumPy's random API on TF's stateful random ops (the global seed applies)."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops import np_dtypes
from ndflow.ops.numpy_ops.np_arrays import asarray


def _export(name):
    return tf_export(f"experimental.numpy.random.{name}", v1=[])


def _is_scalar(size) -> bool:
    if isinstance(size, Tensor):
        return size.shape.rank == 0
    return np.isscalar(size)


@_export("seed")
def seed(s):
    """Sets the global seed (tf.random.set_seed)."""
    try:
        s = int(s)
    except TypeError:
        raise ValueError(f"Argument `s` got an invalid value {s}. Only integers are "
                         "supported.") from None
    tfo.set_seed(s)


@_export("standard_normal")
def standard_normal(size=None):
    """Samples from the standard normal distribution (mean 0, stddev 1).

    Args:
      size: the output shape: None for a scalar, an int or a tuple of ints.

    Returns:
      A tensor of the default float type (float64 unless float32 is preferred).

    Example:
      >>> tnp.random.standard_normal(size=(2, 3)).shape
      TensorShape([2, 3])
    """
    if size is None:
        size = ()
    elif _is_scalar(size):
        size = (size,)
    return tfo.random_normal(size, dtype=np_dtypes.result_type(float))


@_export("randn")
def randn(*args):
    """Samples from the standard normal distribution; the shape is given positionally.

    Args:
      *args: the dimensions of the output (none for a scalar).

    Returns:
      A tensor of the default float type.

    Example:
      >>> tnp.random.randn(2, 3).shape
      TensorShape([2, 3])
    """
    return standard_normal(size=args)


@_export("uniform")
def uniform(low=0.0, high=1.0, size=None):
    """Samples uniformly from the half-open interval [low, high).

    Args:
      low: lower bound (a scalar or an array).
      high: upper bound (a scalar or an array).
      size: the output shape: None for a scalar, an int or a tuple of ints. None gives the broadcast
        shape of `low` and `high`.

    Returns:
      A tensor of the default float type.

    Example:
      >>> bool(tnp.all(tnp.random.uniform(1., 2., size=5) >= 1.))
      True
    """
    dtype = np_dtypes.result_type(float)
    low, high = asarray(low, dtype=dtype), asarray(high, dtype=dtype)
    if size is None:
        size = tfo.broadcast_dynamic_shape(tfo.shape(low), tfo.shape(high))
    return tfo.random_uniform(size, minval=low, maxval=high, dtype=dtype)


@_export("random")
def random(size=None):
    """Samples uniformly from [0, 1).

    Args:
      size: the output shape: None for a scalar, an int or a tuple of ints.

    Returns:
      A tensor of the default float type.

    Example:
      >>> tnp.random.random((2,)).shape
      TensorShape([2])
    """
    return uniform(0.0, 1.0, size)


@_export("rand")
def rand(*size):
    """Samples uniformly from [0, 1); the shape is given positionally.

    Args:
      *size: the dimensions of the output (none for a scalar).

    Returns:
      A tensor of the default float type.

    Example:
      >>> tnp.random.rand(2, 3).shape
      TensorShape([2, 3])
    """
    return uniform(0.0, 1.0, size)


@_export("poisson")
def poisson(lam=1.0, size=None):
    """Samples from a Poisson distribution with rate `lam`.

    Args:
      lam: the expected number of events (a float or an array of rates).
      size: the output shape: None for a scalar, an int or a tuple of ints. The rates' shape is
        appended.

    Returns:
      An int64 tensor (NumPy's default int).

    Example:
      >>> tnp.random.poisson(2.0, size=3).shape
      TensorShape([3])
    """
    if size is None:
        size = ()
    elif _is_scalar(size):
        size = (size,)
    return tfo.random_poisson(size, lam=lam, dtype=np_dtypes.int_)


@_export("randint")
def randint(low, high=None, size=None, dtype=np.int64):
    """Samples integers uniformly from the half-open interval [low, high).

    Args:
      low: the lowest value, or the exclusive upper bound when `high` is None (then low is 0).
      high: the exclusive upper bound.
      size: the output shape: None for a scalar, an int or a tuple of ints.
      dtype: int32 or int64 (or a type convertible to them).

    Returns:
      A tensor of `dtype`.

    Raises:
      ValueError: for another `dtype`.

    Example:
      >>> int(tnp.random.randint(5, 6))
      5
    """
    low = int(low)
    if high is None:
        low, high = 0, low
    if size is None:
        size = ()
    elif isinstance(size, int):
        size = (size,)
    dtype_orig = dtype
    dtype = np_dtypes.result_type(dtype)
    if dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"Argument `dtype` got an invalid value {dtype_orig}. Only those "
                         f"convertible to {(np.int32, np.int64)} are supported.")
    return tfo.random_uniform(size, minval=low, maxval=high, dtype=dtype)
