"""TF-NumPy's elementwise arithmetic: the binary functions under NumPy's promotion (add,
divide, power, maximum, clip ...) and the helpers the other np_math modules share."""

from __future__ import annotations

import numbers

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.tensor import Tensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops import np_dtypes, np_math_docs
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


def binary(name: str, apply, fn):
    """tnp.<name>(x1, x2): `apply(fn, x1, x2)` (np_math_docs documents it)."""
    def function(x1, x2):
        return apply(fn, x1, x2)
    function.__name__ = function.__qualname__ = name
    return _export(name)(function)


def _bool_or(bool_fn, fn):
    return lambda a, b: bool_fn(a, b) if a.dtype == dtypes.bool else fn(a, b)


def _bool_as_int8(fn):
    def f(a, b):
        if a.dtype == dtypes.bool:
            a, b = cast(a, dtypes.int8), cast(b, dtypes.int8)
        return fn(a, b)
    return f


add = binary("add", bin_op, _bool_or(tfo.logical_or, tfo.add))
subtract = binary("subtract", bin_op, tfo.subtract)
multiply = binary("multiply", bin_op, _bool_or(tfo.logical_and, tfo.multiply))


@_export("true_divide")
def true_divide(x1, x2):
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
    return true_divide(x1, x2)


floor_divide = binary("floor_divide", bin_op, _bool_as_int8(tfo.floordiv))
mod = binary("mod", bin_op, _bool_as_int8(tfo.floormod))


@_export("remainder")
def remainder(x1, x2):
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
    if isinstance(x2, numbers.Real) and not isinstance(x2, bool) and x2 == 0 \
            and isinstance(x1, Tensor) and x1.dtype != dtypes.bool:
        return tfo.relu(x1)  # TF-NumPy's fast path: max(x, 0) keeps x's dtype
    return bin_op(_bool_or(tfo.logical_or, tfo.maximum), x1, x2)


minimum = binary("minimum", bin_op, _bool_or(tfo.logical_and, tfo.minimum))


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


power = binary("power", bin_op, tfo.pow_)


@_export("float_power")
def float_power(x1, x2):
    return power(x1, x2)


arctan2 = binary("arctan2", bin_op, tfo.atan2)
nextafter = binary("nextafter", bin_op, tfo.nextafter)


@_export("heaviside")
def heaviside(x1, x2):
    def f(a, b):
        zero, one = tfo.constant(0, b.dtype), tfo.constant(1, b.dtype)
        return tfo.where(tfo.less(a, tfo.zeros_like(a)), zero,
                         tfo.where(tfo.greater(a, tfo.zeros_like(a)), one, b))
    return to_default_float(bin_op(f, x1, x2))


attach(globals(), np_math_docs.ARITH)
