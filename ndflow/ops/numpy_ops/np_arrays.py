"""`tnp.ndarray` (= tf.Tensor), `tnp.array`/`asarray` and the promotion helpers every
TF-NumPy function converts its arguments with."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops import np_dtypes

ndarray = Tensor
tf_export("experimental.numpy.ndarray", v1=[])(ndarray)

_MAX_NDMIN = 32


def convert_to_tensor(value, dtype=None, dtype_hint=None):
    """tf.convert_to_tensor, with TF-NumPy's defaults for big Python ints and floats."""
    if dtype is None and isinstance(value, int) and not isinstance(value, bool) \
            and value >= 2 ** 63:
        dtype = dtypes.uint64
    elif dtype is None and dtype_hint is None and isinstance(value, float):
        dtype = dtypes.as_dtype(np_dtypes.default_float_type())
    return tfo.convert_to_tensor(value, dtype=dtype, dtype_hint=dtype_hint)


def cast(x, dtype):
    dtype = dtypes.as_dtype(dtype)
    return x if x.dtype == dtype else tfo.cast(x, dtype)


def _array_internal(val, dtype=None, copy=True, ndmin=0):
    result = val
    if not isinstance(result, Tensor):
        dtype = np_dtypes.result_type_unary(result, dtype)
        result = convert_to_tensor(result, dtype_hint=dtype)
        result = cast(result, dtype)
    elif dtype:
        result = cast(result, dtype)
    if copy:
        result = tfo.identity(result)
    if ndmin > _MAX_NDMIN:
        raise ValueError(f"ndmin bigger than allowable number of dimensions: {_MAX_NDMIN}.")
    rank = result.shape.rank
    if ndmin and rank is not None and ndmin > rank:
        ones = tfo.ones([ndmin - rank], dtypes.int32)
        result = tfo.reshape(result, tfo.concat([ones, tfo.shape(result)], 0))
    return result


@tf_export("experimental.numpy.array", v1=[])
def array(val, dtype=None, copy=True, ndmin=0):
    """An ndarray of `val` (a copy unless copy=False), NumPy's dtype inference."""
    if dtype:
        dtype = np_dtypes.result_type(dtype)
    return _array_internal(val, dtype, copy, ndmin)


@tf_export("experimental.numpy.asarray", v1=[])
def asarray(a, dtype=None):
    """Converts `a` to a tensor, returning `a` itself when it already is one of `dtype`.

    Args:
      a: array_like input (a tensor, a NumPy array, a Python scalar or nested sequence).
      dtype: optional NumPy or TF dtype to convert to.

    Returns:
      A tensor (no copy is made when none is needed).

    Example:
      >>> tnp.asarray([1, 2]).numpy()
      array([1, 2])
    """
    if dtype:
        dtype = np_dtypes.result_type(dtype)
    if isinstance(a, Tensor) and (not dtype or dtype == a.dtype):
        return a
    return array(a, dtype, copy=False)


@tf_export("experimental.numpy.asanyarray", v1=[])
def asanyarray(a, dtype=None):
    """Converts `a` to a tensor (the same as `tnp.asarray`; there are no array subclasses).

    Args:
      a: array_like input.
      dtype: optional dtype to convert to.

    Returns:
      A tensor.

    Example:
      >>> float(tnp.asanyarray(3.0))
      3.0
    """
    return asarray(a, dtype)


@tf_export("experimental.numpy.ascontiguousarray", v1=[])
def ascontiguousarray(a, dtype=None):
    """Converts `a` to a tensor of rank at least 1 (every tensor is contiguous).

    Args:
      a: array_like input.
      dtype: optional dtype to convert to.

    Returns:
      A new tensor; a scalar becomes shape (1,).

    Example:
      >>> tnp.ascontiguousarray(3).numpy()
      array([3])
    """
    return array(a, dtype, ndmin=1)


@tf_export("experimental.numpy.copy", v1=[])
def copy(a):
    """A copy of `a` as a tensor.

    Args:
      a: array_like input.

    Returns:
      A new tensor with a's values and NumPy dtype.

    Example:
      >>> tnp.copy([1, 2]).numpy()
      array([1, 2])
    """
    return array(a, copy=True)


def promote_dtype(*arrays):
    """`arrays` as ndarrays of their NumPy result type."""
    dtype = np_dtypes.result_type(*arrays)
    return [a if isinstance(a, Tensor) and a.dtype == dtype
            else _array_internal(a, dtype=dtype, copy=False) for a in arrays]


def promote_dtype_binary(t1, t2):
    dtype = np_dtypes.result_type_binary(t1, t2)
    if not (isinstance(t1, Tensor) and t1.dtype == dtype):
        t1 = _array_internal(t1, dtype=dtype, copy=False)
    if not (isinstance(t2, Tensor) and t2.dtype == dtype):
        t2 = _array_internal(t2, dtype=dtype, copy=False)
    return t1, t2


def is_inexact(x) -> bool:
    return np.issubdtype(np.dtype(x.dtype.as_numpy_dtype), np.inexact)


def astype(x, dtype):
    """`x.astype(dtype)` as TF-NumPy writes it: the method exists only once
    `experimental_enable_numpy_behavior` has added it, so before that this is TF's
    AttributeError (TF-NumPy's integer paths of log, sin, around, average, nansum ... raise it
    by default in TF 2.21)."""
    return x.astype(dtype)


def to_default_float(x):
    """x as the default float type unless it is already inexact (TF-NumPy's math)."""
    if is_inexact(x):
        return x
    return astype(x, np_dtypes.result_type(float))


def static_rank(x) -> int:
    rank = x.shape.rank
    if rank is None:
        raise ValueError(f"TF-NumPy needs a known rank here, got a tensor of shape {x.shape}")
    return rank
