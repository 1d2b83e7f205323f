"""TF-NumPy's comparisons, closeness tests, gcd/lcm, and the logical and bitwise functions."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.doc_tables import attach
from ndflow.core.tensor import EagerTensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops import np_dtypes, np_math_docs
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
    binary,
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


gcd = binary("gcd", bin_op, _tf_gcd)


@_export("lcm")
def lcm(x1, x2):
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


bitwise_and = binary("bitwise_and", _bitwise, tfo.bitwise_and)
bitwise_or = binary("bitwise_or", _bitwise, tfo.bitwise_or)
bitwise_xor = binary("bitwise_xor", _bitwise, tfo.bitwise_xor)


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


equal = binary("equal", _comparison, tfo.equal)
not_equal = binary("not_equal", _comparison, tfo.not_equal)
def _ordering(fn, x1, x2):
    """`_comparison` of an ordering (greater, less, ...): booleans compare as integers."""
    return _comparison(fn, x1, x2, True)


greater = binary("greater", _ordering, tfo.greater)
greater_equal = binary("greater_equal", _ordering, tfo.greater_equal)
less = binary("less", _ordering, tfo.less)
less_equal = binary("less_equal", _ordering, tfo.less_equal)


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


logical_and = binary("logical_and", _logical, tfo.logical_and)
logical_or = binary("logical_or", _logical, tfo.logical_or)
logical_xor = binary("logical_xor", _logical, tfo.logical_xor)


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


attach(globals(), np_math_docs.COMPARE)
