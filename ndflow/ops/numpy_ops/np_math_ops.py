"""TF-NumPy's elementwise math: unary functions (integers promoted to the default float
where NumPy gives a float), binary functions under NumPy's promotion, comparisons, logical
and bitwise functions (TF's np_math_ops)."""

from __future__ import annotations

import numbers

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import EagerTensor, Tensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops import np_dtypes
from ndflow.ops.numpy_ops.np_arrays import (
    array,
    asarray,
    astype,
    cast,
    is_inexact,
    promote_dtype,
    promote_dtype_binary,
    to_default_float,
)

pi, e, inf, newaxis = np.pi, np.e, np.inf, np.newaxis
for _name in ("pi", "e", "inf", "newaxis"):
    tf_export(f"experimental.numpy.{_name}", v1=[])(globals()[_name])

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
    return bin_op(_bool_or(tfo.logical_or, tfo.add), x1, x2)


@_export("subtract")
def subtract(x1, x2):
    return bin_op(tfo.subtract, x1, x2)


@_export("multiply")
def multiply(x1, x2):
    return bin_op(_bool_or(tfo.logical_and, tfo.multiply), x1, x2)


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


@_export("floor_divide")
def floor_divide(x1, x2):
    return bin_op(_bool_as_int8(tfo.floordiv), x1, x2)


@_export("mod")
def mod(x1, x2):
    return bin_op(_bool_as_int8(tfo.floormod), x1, x2)


@_export("remainder")
def remainder(x1, x2):
    return mod(x1, x2)


@_export("divmod")
def divmod(x1, x2):  # noqa: A001 - NumPy's name
    return floor_divide(x1, x2), mod(x1, x2)


@_export("maximum")
def maximum(x1, x2):
    if isinstance(x2, numbers.Real) and not isinstance(x2, bool) and x2 == 0 \
            and isinstance(x1, Tensor) and x1.dtype != dtypes.bool:
        return tfo.relu(x1)  # TF-NumPy's fast path: max(x, 0) keeps x's dtype
    return bin_op(_bool_or(tfo.logical_or, tfo.maximum), x1, x2)


@_export("minimum")
def minimum(x1, x2):
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
    return bin_op(tfo.pow_, x1, x2)


@_export("float_power")
def float_power(x1, x2):
    return power(x1, x2)


@_export("arctan2")
def arctan2(x1, x2):
    return bin_op(tfo.atan2, x1, x2)


@_export("nextafter")
def nextafter(x1, x2):
    return bin_op(tfo.nextafter, x1, x2)


@_export("heaviside")
def heaviside(x1, x2):
    def f(a, b):
        zero, one = tfo.constant(0, b.dtype), tfo.constant(1, b.dtype)
        return tfo.where(tfo.less(a, tfo.zeros_like(a)), zero,
                         tfo.where(tfo.greater(a, tfo.zeros_like(a)), one, b))
    return to_default_float(bin_op(f, x1, x2))


# These use the tensor operators, as TF-NumPy does: without NumPy behavior they take the
# left operand's dtype (and reject mixed dtypes), with it they promote as NumPy.
@_export("hypot")
def hypot(x1, x2):
    return sqrt(square(x1) + square(x2))


@_export("logaddexp")
def logaddexp(x1, x2):
    amax = maximum(x1, x2)
    delta = x1 - x2
    return where_(isnan(delta), x1 + x2, amax + log1p(exp(-absolute(delta))))


@_export("logaddexp2")
def logaddexp2(x1, x2):
    amax = maximum(x1, x2)
    delta = x1 - x2
    return where_(isnan(delta), x1 + x2,
                  amax + log1p(exp2(-absolute(delta))) / np.log(2))


def where_(condition, x, y):
    condition = asarray(condition, dtype=np.bool_)
    x, y = promote_dtype(x, y)
    return tfo.where(condition, x, y)


@_export("isclose")
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
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
    return bin_op(_tf_gcd, x1, x2)


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


@_export("bitwise_and")
def bitwise_and(x1, x2):
    return _bitwise(tfo.bitwise_and, x1, x2)


@_export("bitwise_or")
def bitwise_or(x1, x2):
    return _bitwise(tfo.bitwise_or, x1, x2)


@_export("bitwise_xor")
def bitwise_xor(x1, x2):
    return _bitwise(tfo.bitwise_xor, x1, x2)


@_export("bitwise_not")
def bitwise_not(x):
    return _scalar(lambda t: tfo.logical_not(t) if t.dtype == dtypes.bool else tfo.invert(t), x)


def _unary(name, fn, to_float):
    def f(x):
        return _scalar(fn, x, to_float)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"NumPy's `{name}` on tensors."
    return _export(name)(f)


def _neg(t):
    return tfo.less(t, tfo.zeros_like(t))


def _signed(t, magnitude):
    return tfo.where(_neg(t), tfo.negative(magnitude), magnitude)


# (name, TF function, whether integers and booleans become the default float first)
log = _unary("log", tfo.log, True)
exp = _unary("exp", tfo.exp, True)
sqrt = _unary("sqrt", tfo.sqrt, True)
abs = _unary("abs", tfo.abs_, False)  # noqa: A001 - NumPy's name
ceil = _unary("ceil", tfo.ceil, True)
floor = _unary("floor", tfo.floor, True)
conj = _unary("conj", tfo.conj, False)
conjugate = _unary("conjugate", tfo.conj, False)
negative = _unary("negative", tfo.negative, False)
reciprocal = _unary("reciprocal", tfo.reciprocal, False)
sin = _unary("sin", tfo.sin, True)
cos = _unary("cos", tfo.cos, True)
tan = _unary("tan", tfo.tan, True)
sinh = _unary("sinh", tfo.sinh, True)
cosh = _unary("cosh", tfo.cosh, True)
tanh = _unary("tanh", tfo.tanh, True)
arcsin = _unary("arcsin", tfo.asin, True)
arccos = _unary("arccos", tfo.acos, True)
arctan = _unary("arctan", tfo.atan, True)
arcsinh = _unary("arcsinh", tfo.asinh, True)
arccosh = _unary("arccosh", tfo.acosh, True)
arctanh = _unary("arctanh", tfo.atanh, True)
expm1 = _unary("expm1", tfo.expm1, True)
log1p = _unary("log1p", tfo.log1p, True)
isnan = _unary("isnan", tfo.is_nan, True)
isfinite = _unary("isfinite", tfo.is_finite, True)
square = _unary("square", tfo.square, False)
positive = _unary("positive", lambda t: t, False)
deg2rad = _unary("deg2rad", lambda t: tfo.multiply(t, tfo.constant(np.pi / 180.0, t.dtype)),
                 True)
exp2 = _unary("exp2", lambda t: tfo.pow_(tfo.constant(2, t.dtype), t), True)
cbrt = _unary("cbrt", lambda t: _signed(
    t, tfo.pow_(tfo.abs_(t), tfo.constant(1.0 / 3, t.dtype))), True)
fix = _unary("fix", lambda t: tfo.where(_neg(t), tfo.ceil(t), tfo.floor(t)), True)


@_export("absolute")
def absolute(x):
    return abs(x)


@_export("fabs")
def fabs(x):
    return abs(x)


@_export("rad2deg")
def rad2deg(x):
    return x * (180.0 / np.pi)


@_export("signbit")
def signbit(x):
    return _scalar(lambda t: tfo.fill(tfo.shape(t), False) if t.dtype == dtypes.bool
                   else _neg(t), x)


@_export("sinc")
def sinc(x):
    def f(t):
        pi_t = tfo.multiply(t, tfo.constant(np.pi, t.dtype))
        zero = tfo.equal(t, tfo.zeros_like(t))
        safe = tfo.where(zero, tfo.ones_like(pi_t), pi_t)
        return tfo.where(zero, tfo.ones_like(t), tfo.truediv(tfo.sin(safe), safe))
    return _scalar(f, x, True)


@_export("angle")
def angle(z, deg=False):
    def f(t):
        if t.dtype in _FLOATS:  # TF-NumPy's constants make this float32 for every float
            return tfo.where(_neg(t), tfo.constant(np.pi, dtypes.float32),
                             tfo.constant(0.0, dtypes.float32))
        return tfo.angle(t)
    y = _scalar(f, z, True)
    return rad2deg(y) if deg else y


@_export("log2")
def log2(x):
    return log(x) / np.log(2)


@_export("log10")
def log10(x):
    return log(x) / np.log(10)


@_export("isinf")
def isinf(x):
    x = asarray(x)
    return _scalar(tfo.is_inf, x, True) if x.dtype.is_floating else False


@_export("isneginf")
def isneginf(x):
    x = asarray(x)
    return tfo.equal(x, tfo.fill(tfo.shape(x), tfo.constant(-np.inf, x.dtype))) \
        if x.dtype.is_floating else False


@_export("isposinf")
def isposinf(x):
    x = asarray(x)
    return tfo.equal(x, tfo.fill(tfo.shape(x), tfo.constant(np.inf, x.dtype))) \
        if x.dtype.is_floating else False


@_export("real")
def real(val):
    return tfo.real(asarray(val))


@_export("imag")
def imag(val):
    return tfo.imag(asarray(val))


def _operator_compare(fn, x, y):
    """`x == y` / `x != y` on a tensor as TF's operators do it: NumPy promotion once NumPy
    behavior is on, else `y` converted to x's dtype."""
    if np_dtypes.is_numpy_style_promotion():
        x, y = promote_dtype_binary(x, y)
        return fn(x, y)
    return fn(x, tfo.convert_to_tensor(y, x.dtype))


@_export("iscomplex")
def iscomplex(x):
    return _operator_compare(tfo.not_equal, imag(x), 0)


@_export("isreal")
def isreal(x):
    return _operator_compare(tfo.equal, imag(x), 0)


@_export("iscomplexobj")
def iscomplexobj(x):
    return np.issubdtype(np.dtype(array(x).dtype.as_numpy_dtype), np.complexfloating)


@_export("isrealobj")
def isrealobj(x):
    return not iscomplexobj(x)


@_export("sign")
def sign(x, out=None, where=None, **kwargs):
    if out:
        raise ValueError("tf.numpy doesnt support setting out.")
    if where:
        raise ValueError("tf.numpy doesnt support setting where.")
    if kwargs:
        raise ValueError(f"tf.numpy doesnt support setting {kwargs.keys()}")
    x = asarray(x)
    return tfo.sign(x)  # NumPy 2's sign of a complex z is z/|z|, as tf.sign's


@_export("around")
def around(a, decimals=0):
    a = asarray(a)
    dtype = a.dtype
    a = to_default_float(a)
    # tf.cast of a Python float goes through a float32 tensor (TF-NumPy casts the factor so)
    factor = cast(tfo.constant(10.0 ** decimals, dtypes.float32), a.dtype)
    scaled = tfo.round_(tfo.multiply(a, factor))
    return astype(tfo.truediv(scaled, factor), dtype)


@_export("round")
def round(a, decimals=0):  # noqa: A001 - NumPy's name
    return around(a, decimals=decimals)


def _comparison(fn, x1, x2, bool_as_int=False):
    dtype = np_dtypes.result_type(x1, x2)
    x1, x2 = array(x1, dtype=dtype, copy=False), array(x2, dtype=dtype, copy=False)
    if bool_as_int and x1.dtype == dtypes.bool:
        x1, x2 = cast(x1, dtypes.int32), cast(x2, dtypes.int32)
    return fn(x1, x2)


@_export("equal")
def equal(x1, x2):
    return _comparison(tfo.equal, x1, x2)


@_export("not_equal")
def not_equal(x1, x2):
    return _comparison(tfo.not_equal, x1, x2)


@_export("greater")
def greater(x1, x2):
    return _comparison(tfo.greater, x1, x2, True)


@_export("greater_equal")
def greater_equal(x1, x2):
    return _comparison(tfo.greater_equal, x1, x2, True)


@_export("less")
def less(x1, x2):
    return _comparison(tfo.less, x1, x2, True)


@_export("less_equal")
def less_equal(x1, x2):
    return _comparison(tfo.less_equal, x1, x2, True)


@_export("array_equal")
def array_equal(a1, a2):
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
    return _logical(tfo.logical_and, x1, x2)


@_export("logical_or")
def logical_or(x1, x2):
    return _logical(tfo.logical_or, x1, x2)


@_export("logical_xor")
def logical_xor(x1, x2):
    return _logical(tfo.logical_xor, x1, x2)


@_export("logical_not")
def logical_not(x):
    return tfo.logical_not(array(x, dtype=np.bool_, copy=False))
