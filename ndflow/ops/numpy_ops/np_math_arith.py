"""TF-NumPy's elementwise arithmetic: the binary functions under NumPy's promotion (add,
divide, power, maximum, clip ...) and the helpers the other np_math modules share."""

from __future__ import annotations

import numbers

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops import np_dtypes
from ndflow.ops.numpy_ops.np_arrays import (
    asarray,
    cast,
    promote_dtype,
    promote_dtype_binary,
    to_default_float,
)

_FLOATS = (dtypes.bfloat16, dtypes.float16, dtypes.float32, dtypes.float64)


def _export(name):
    return tf_export(f"experimental.numpy.{name}", v1=[])


def bin_op(fn, a, b):
    a, b = promote_dtype_binary(a, b)
    return fn(a, b)


def _scalar(fn, x, promote_to_float=False):
    x = asarray(x)
    if promote_to_float:
        x = to_default_float(x)
    return fn(x)


def _bool_or(bool_fn, fn):
    return lambda a, b: bool_fn(a, b) if a.dtype == dtypes.bool else fn(a, b)


def _bool_as_int8(fn):
    def f(a, b):
        if a.dtype == dtypes.bool:
            a, b = cast(a, dtypes.int8), cast(b, dtypes.int8)
        return fn(a, b)
    return f


@_export("add")
def add(x1, x2):
    """Elementwise `x1 + x2` under NumPy's type promotion.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2` (for booleans it is
      the logical or).

    Example:
      >>> tnp.add([1, 2], [10, 20]).numpy()
      array([11, 22])
    """
    return bin_op(_bool_or(tfo.logical_or, tfo.add), x1, x2)


@_export("subtract")
def subtract(x1, x2):
    """Elementwise `x1 - x2` under NumPy's type promotion.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2`.

    Example:
      >>> tnp.subtract([5, 7], 2).numpy()
      array([3, 5])
    """
    return bin_op(tfo.subtract, x1, x2)


@_export("multiply")
def multiply(x1, x2):
    """Elementwise `x1 * x2` under NumPy's type promotion.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2` (for booleans it is
      the logical and).

    Example:
      >>> tnp.multiply([1, 2, 3], 2).numpy()
      array([2, 4, 6])
    """
    return bin_op(_bool_or(tfo.logical_and, tfo.multiply), x1, x2)


@_export("true_divide")
def true_divide(x1, x2):
    """Elementwise true division `x1 / x2`; integer and boolean inputs give floats.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2` widened to a float:
      booleans to the default float, int32/int64 to float64 (float32 when float64 is not allowed).

    Example:
      >>> tnp.true_divide([1, 2], 2).numpy()
      array([0.5, 1. ])
    """
    def f(a, b):
        if a.dtype == dtypes.bool:
            float_ = np_dtypes.result_type(float)
            a, b = cast(a, float_), cast(b, float_)
        if not np_dtypes.is_allow_float64() and a.dtype in (dtypes.int32, dtypes.int64):
            a, b = cast(a, dtypes.float32), cast(b, dtypes.float32)
        return tfo.truediv(a, b)
    return bin_op(f, x1, x2)


@_export("divide")
def divide(x1, x2):
    """Elementwise true division `x1 / x2` (the same as `tnp.true_divide`).

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2`.

    Example:
      >>> float(tnp.divide(3., 2.))
      1.5
    """
    return true_divide(x1, x2)


@_export("floor_divide")
def floor_divide(x1, x2):
    """Elementwise floor division `x1 // x2`, rounding toward minus infinity.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2` (booleans are
      divided as int8).

    Example:
      >>> tnp.floor_divide([7, -7], 2).numpy()
      array([ 3, -4])
    """
    return bin_op(_bool_as_int8(tfo.floordiv), x1, x2)


@_export("mod")
def mod(x1, x2):
    """Elementwise remainder of floor division; the result has the sign of `x2`.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2` (booleans are
      computed as int8).

    Example:
      >>> tnp.mod([7, -7], 3).numpy()
      array([1, 2])
    """
    return bin_op(_bool_as_int8(tfo.floormod), x1, x2)


@_export("remainder")
def remainder(x1, x2):
    """Elementwise remainder of floor division (the same as `tnp.mod`).

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2`.

    Example:
      >>> int(tnp.remainder(-1, 4))
      3
    """
    return mod(x1, x2)


@_export("divmod")
def divmod(x1, x2):  # noqa: A001 - NumPy's name
    """Elementwise floor quotient and remainder in one call.

    Args:
      x1: array_like dividend.
      x2: array_like divisor, broadcastable against `x1`.

    Returns:
      A tuple `(tnp.floor_divide(x1, x2), tnp.mod(x1, x2))`.

    Example:
      >>> q, r = tnp.divmod(7, 3)
      >>> int(q), int(r)
      (2, 1)
    """
    return floor_divide(x1, x2), mod(x1, x2)


@_export("maximum")
def maximum(x1, x2):
    """Elementwise maximum of `x1` and `x2`; a NaN in either input propagates.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2` (for booleans it is
      the logical or; `maximum(x, 0)` of a tensor keeps x's dtype).

    Example:
      >>> tnp.maximum([1, 5], [3, 2]).numpy()
      array([3, 5])
    """
    if isinstance(x2, numbers.Real) and not isinstance(x2, bool) and x2 == 0 \
            and isinstance(x1, Tensor) and x1.dtype != dtypes.bool:
        return tfo.relu(x1)  # TF-NumPy's fast path: max(x, 0) keeps x's dtype
    return bin_op(_bool_or(tfo.logical_or, tfo.maximum), x1, x2)


@_export("minimum")
def minimum(x1, x2):
    """Elementwise minimum of `x1` and `x2`; a NaN in either input propagates.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2` (for booleans it is
      the logical and).

    Example:
      >>> tnp.minimum([1, 5], [3, 2]).numpy()
      array([1, 2])
    """
    return bin_op(_bool_or(tfo.logical_and, tfo.minimum), x1, x2)


def _broadcast(*args):
    if len(args) <= 1:
        return list(args)
    shape = tfo.shape(args[0])
    for a in args[1:]:
        shape = tfo.broadcast_dynamic_shape(shape, tfo.shape(a))
    return [tfo.broadcast_to(a, shape) for a in args]


@_export("clip")
def clip(a, a_min, a_max):
    """Limits the values of `a` to the interval `[a_min, a_max]`.

    Args:
      a: array_like input.
      a_min: lower bound (scalar or broadcastable array), or None for no lower bound.
      a_max: upper bound (scalar or broadcastable array), or None for no upper bound.

    Returns:
      A tensor of the broadcast shape of the three arguments in their promoted dtype.

    Raises:
      ValueError: if both `a_min` and `a_max` are None.

    Example:
      >>> tnp.clip([1, 5, 9], 2, 6).numpy()
      array([2, 5, 6])
    """
    if a_min is None and a_max is None:
        raise ValueError("Not more than one of `a_min` and `a_max` may be `None`.")
    if a_min is None:
        return minimum(a, a_max)
    if a_max is None:
        return maximum(a, a_min)
    a, a_min, a_max = promote_dtype(a, a_min, a_max)
    return tfo.clip_by_value(*_broadcast(a, a_min, a_max))


@_export("power")
def power(x1, x2):
    """Elementwise `x1 ** x2`.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2`.

    Example:
      >>> tnp.power([2, 3], 2).numpy()
      array([4, 9])
    """
    return bin_op(tfo.pow_, x1, x2)


@_export("float_power")
def float_power(x1, x2):
    """Elementwise `x1 ** x2` (the same as `tnp.power`; no widening to float64).

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2`.

    Example:
      >>> float(tnp.float_power(2., 3.))
      8.0
    """
    return power(x1, x2)


@_export("arctan2")
def arctan2(x1, x2):
    """Elementwise arc tangent of `x1 / x2` choosing the quadrant from both signs.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2`, in radians in [-pi,
      pi].

    Example:
      >>> float(tnp.arctan2(1., -1.))
      2.356194490192345
    """
    return bin_op(tfo.atan2, x1, x2)


@_export("nextafter")
def nextafter(x1, x2):
    """The next representable floating-point value after `x1` toward `x2`.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2` (floats only).

    Example:
      >>> float(tnp.nextafter(1., 2.)) > 1.
      True
    """
    return bin_op(tfo.nextafter, x1, x2)


@_export("heaviside")
def heaviside(x1, x2):
    """The Heaviside step function: 0 where `x1 < 0`, 1 where `x1 > 0`, `x2` where `x1 == 0`.

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      A tensor of the broadcast shape in the NumPy result type of `x1` and `x2`, integers widened to
      the default float.

    Example:
      >>> tnp.heaviside([-1., 0., 2.], 0.5).numpy()
      array([0. , 0.5, 1. ])
    """
    def f(a, b):
        zero, one = tfo.constant(0, b.dtype), tfo.constant(1, b.dtype)
        return tfo.where(tfo.less(a, tfo.zeros_like(a)), zero,
                         tfo.where(tfo.greater(a, tfo.zeros_like(a)), one, b))
    return to_default_float(bin_op(f, x1, x2))
