"""TF-NumPy's comparisons, closeness tests, gcd/lcm, and the logical and bitwise functions."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.tensor import EagerTensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops import np_dtypes
from ndflow.ops.numpy_ops.np_arrays import (
    array,
    cast,
    is_inexact,
)
from ndflow.ops.numpy_ops.np_math_arith import (
    _broadcast,
    _export,
    _scalar,
    bin_op,
)


@_export("isclose")
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise test `|a - b| <= atol + rtol * |b|`.

    Args:
      a: array_like input.
      b: array_like input, broadcastable against `a`.
      rtol: relative tolerance (used only for inexact dtypes).
      atol: absolute tolerance (used only for inexact dtypes).
      equal_nan: if True, two NaNs compare as close.

    Returns:
      A boolean tensor of the broadcast shape; for integer inputs this is exact equality.

    Example:
      >>> tnp.isclose([1.0, 1.1], [1.0, 1.0]).numpy()
      array([ True, False])
    """
    def f(a, b):
        if not is_inexact(a):
            return tfo.equal(a, b)
        real = a.dtype.real_dtype
        rtol_ = tfo.convert_to_tensor(rtol, real)
        atol_ = tfo.convert_to_tensor(atol, real)
        result = tfo.less_equal(tfo.abs_(tfo.subtract(a, b)),
                                tfo.add(atol_, tfo.multiply(rtol_, tfo.abs_(b))))
        if equal_nan:
            result = tfo.logical_or(result, tfo.logical_and(tfo.is_nan(a), tfo.is_nan(b)))
        return result
    return bin_op(f, a, b)


@_export("allclose")
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of `a` is close to the matching element of `b`.

    Args:
      a: array_like input.
      b: array_like input, broadcastable against `a`.
      rtol: relative tolerance.
      atol: absolute tolerance.
      equal_nan: if True, two NaNs compare as close.

    Returns:
      A scalar boolean tensor: `tnp.isclose(...)` reduced with logical and.

    Example:
      >>> bool(tnp.allclose([1.0, 2.0], [1.0, 2.0 + 1e-9]))
      True
    """
    return tfo.reduce_all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


# The Euclidean algorithm takes at most this many steps for a dtype (Fibonacci bound).
_GCD_STEPS = {8: 12, 16: 24, 32: 47, 64: 93}


def _tf_gcd(x1, x2):
    for x in (x1, x2):
        if not np.issubdtype(np.dtype(x.dtype.as_numpy_dtype), np.integer):
            raise ValueError("Arguments to gcd must be integers.")
    a, b = _broadcast(tfo.abs_(x1), tfo.abs_(x2))
    zero, one = tfo.constant(0, a.dtype), tfo.constant(1, a.dtype)
    for _ in range(_GCD_STEPS[np.dtype(a.dtype.as_numpy_dtype).itemsize * 8]):
        nonzero_b = tfo.not_equal(b, zero)
        if isinstance(nonzero_b, EagerTensor) and not nonzero_b.numpy().any():
            break  # eagerly, stop once every pair is done
        safe_b = tfo.where(nonzero_b, b, one)
        a, b = tfo.where(nonzero_b, b, a), tfo.where(nonzero_b, tfo.floormod(a, safe_b), zero)
    return a


@_export("gcd")
def gcd(x1, x2):
    """Elementwise greatest common divisor of the absolute values of two integer arrays.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2`; gcd(0, 0) is 0.

    Raises:
      ValueError: if either argument is not of an integer dtype.

    Example:
      >>> tnp.gcd([12, 7], 18).numpy()
      array([6, 1])
    """
    return bin_op(_tf_gcd, x1, x2)


@_export("lcm")
def lcm(x1, x2):
    """Elementwise least common multiple of two integer arrays (non-negative).

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2`; lcm with 0 is 0.

    Raises:
      ValueError: if either argument is not of an integer dtype.

    Example:
      >>> tnp.lcm([4, 6], 10).numpy()
      array([20, 30])
    """
    def f(a, b):
        d = _tf_gcd(a, b)
        zero = tfo.constant(0, d.dtype)
        is_zero = tfo.equal(d, zero)
        safe_d = tfo.where(is_zero, tfo.constant(1, d.dtype), d)
        return tfo.where(is_zero, zero,
                         tfo.multiply(tfo.abs_(a), tfo.floordiv(tfo.abs_(b), safe_d)))
    return bin_op(f, x1, x2)


def _bitwise(fn, x1, x2):
    def f(a, b):
        is_bool = a.dtype == dtypes.bool
        if is_bool:
            a, b = cast(a, dtypes.int8), cast(b, dtypes.int8)
        r = fn(a, b)
        return cast(r, dtypes.bool) if is_bool else r
    return bin_op(f, x1, x2)


@_export("bitwise_and")
def bitwise_and(x1, x2):
    """Elementwise bitwise and of integer or boolean arrays.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2`.

    Example:
      >>> tnp.bitwise_and([12, 10], 6).numpy()
      array([4, 2])
    """
    return _bitwise(tfo.bitwise_and, x1, x2)


@_export("bitwise_or")
def bitwise_or(x1, x2):
    """Elementwise bitwise or of integer or boolean arrays.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2`.

    Example:
      >>> tnp.bitwise_or([12, 10], 1).numpy()
      array([13, 11])
    """
    return _bitwise(tfo.bitwise_or, x1, x2)


@_export("bitwise_xor")
def bitwise_xor(x1, x2):
    """Elementwise bitwise exclusive or of integer or boolean arrays.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2`.

    Example:
      >>> tnp.bitwise_xor([12, 10], 6).numpy()
      array([10, 12])
    """
    return _bitwise(tfo.bitwise_xor, x1, x2)


@_export("bitwise_not")
def bitwise_not(x):
    """Elementwise bitwise inversion (`~x`); for booleans the logical not.

    Args:
      x: array_like of an integer or boolean dtype.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tnp.bitwise_not([0, 5]).numpy()
      array([-1, -6])
    """
    return _scalar(lambda t: tfo.logical_not(t) if t.dtype == dtypes.bool else tfo.invert(t), x)



def _comparison(fn, x1, x2, bool_as_int=False):
    dtype = np_dtypes.result_type(x1, x2)
    x1, x2 = array(x1, dtype=dtype, copy=False), array(x2, dtype=dtype, copy=False)
    if bool_as_int and x1.dtype == dtypes.bool:
        x1, x2 = cast(x1, dtypes.int32), cast(x2, dtypes.int32)
    return fn(x1, x2)


@_export("equal")
def equal(x1, x2):
    """Elementwise `x1 == x2` after promoting both to their NumPy result type.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A boolean tensor of the broadcast shape of `x1` and `x2`.

    Example:
      >>> tnp.equal([1, 2], 2).numpy()
      array([False,  True])
    """
    return _comparison(tfo.equal, x1, x2)


@_export("not_equal")
def not_equal(x1, x2):
    """Elementwise `x1 != x2` after promoting both to their NumPy result type.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A boolean tensor of the broadcast shape of `x1` and `x2`.

    Example:
      >>> tnp.not_equal([1, 2], 2).numpy()
      array([ True, False])
    """
    return _comparison(tfo.not_equal, x1, x2)


@_export("greater")
def greater(x1, x2):
    """Elementwise `x1 > x2` after promoting both to their NumPy result type.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A boolean tensor of the broadcast shape of `x1` and `x2`.

    Example:
      >>> tnp.greater([1, 3], 2).numpy()
      array([False,  True])
    """
    return _comparison(tfo.greater, x1, x2, True)


@_export("greater_equal")
def greater_equal(x1, x2):
    """Elementwise `x1 >= x2` after promoting both to their NumPy result type.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A boolean tensor of the broadcast shape of `x1` and `x2`.

    Example:
      >>> tnp.greater_equal([1, 2], 2).numpy()
      array([False,  True])
    """
    return _comparison(tfo.greater_equal, x1, x2, True)


@_export("less")
def less(x1, x2):
    """Elementwise `x1 < x2` after promoting both to their NumPy result type.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A boolean tensor of the broadcast shape of `x1` and `x2`.

    Example:
      >>> tnp.less([1, 3], 2).numpy()
      array([ True, False])
    """
    return _comparison(tfo.less, x1, x2, True)


@_export("less_equal")
def less_equal(x1, x2):
    """Elementwise `x1 <= x2` after promoting both to their NumPy result type.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A boolean tensor of the broadcast shape of `x1` and `x2`.

    Example:
      >>> tnp.less_equal([1, 3], 1).numpy()
      array([ True, False])
    """
    return _comparison(tfo.less_equal, x1, x2, True)


@_export("array_equal")
def array_equal(a1, a2):
    """Whether two arrays have the same shape and the same elements.

    Args:
      a1: array_like input.
      a2: array_like input.

    Returns:
      A scalar boolean tensor; False when the shapes differ.

    Raises:
      ValueError: if either shape is not fully known (inside a graph).

    Example:
      >>> bool(tnp.array_equal([1, 2], [1, 2]))
      True
    """
    def f(x1, x2):
        if x1.shape.is_fully_defined() and x2.shape.is_fully_defined():
            if x1.shape.as_list() != x2.shape.as_list():
                return tfo.constant(False)
            return tfo.reduce_all(tfo.equal(x1, x2))
        raise ValueError("array_equal needs static shapes in ndflow")
    return _comparison(f, a1, a2)


def _logical(fn, x1, x2):
    return fn(array(x1, dtype=np.bool_, copy=False), array(x2, dtype=np.bool_, copy=False))


@_export("logical_and")
def logical_and(x1, x2):
    """Elementwise logical and; the inputs are converted to booleans first.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A boolean tensor of the broadcast shape of `x1` and `x2`.

    Example:
      >>> tnp.logical_and([True, True], [True, False]).numpy()
      array([ True, False])
    """
    return _logical(tfo.logical_and, x1, x2)


@_export("logical_or")
def logical_or(x1, x2):
    """Elementwise logical or; the inputs are converted to booleans first.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A boolean tensor of the broadcast shape of `x1` and `x2`.

    Example:
      >>> tnp.logical_or([True, False], False).numpy()
      array([ True, False])
    """
    return _logical(tfo.logical_or, x1, x2)


@_export("logical_xor")
def logical_xor(x1, x2):
    """Elementwise logical exclusive or; the inputs are converted to booleans first.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A boolean tensor of the broadcast shape of `x1` and `x2`.

    Example:
      >>> tnp.logical_xor([True, True], [True, False]).numpy()
      array([False,  True])
    """
    return _logical(tfo.logical_xor, x1, x2)


@_export("logical_not")
def logical_not(x):
    """Elementwise logical not; the input is converted to booleans first.

    Args:
      x: array_like input.

    Returns:
      A boolean tensor of x's shape.

    Example:
      >>> tnp.logical_not([True, False]).numpy()
      array([False,  True])
    """
    return tfo.logical_not(array(x, dtype=np.bool_, copy=False))
