"""`keras.ops` elementwise math (ops.numpy): arithmetic, powers and logs, trigonometry,
rounding, comparisons, logical and bitwise ops, with Keras 3's dtype rules (TensorFlow
backend): Python scalars are weak in the arithmetic ops (`int8 + 2` stays int8), ints and
bools compute float ops in floatx (int64 too), float16/bfloat16 stay as they are."""

from __future__ import annotations

import numpy as np

from ndflow.keras import docstrings, global_config
from ndflow.keras.ops import dtype_rules as rules
from ndflow.keras.ops import numpy_logic_docs, numpy_math_docs
from ndflow.keras.ops.symbolic import keras_op
from ndflow.ops import arithmetic, array_fill, bitwise, comparison, math, math_special, math_trig
from ndflow.ops.cast import cast


def _np(name):
    return keras_op(name, "numpy")


def _weak_pair(x1, x2, extra=()):
    """Keras' arithmetic operands: Python scalars weak, the rest converted first."""
    return rules.promote(x1, x2, extra=extra)


def _weak_binary(name: str, fn):
    """keras.ops.<name>(x1, x2): `fn` of the operands, Python scalars weak (the arithmetic
    ops and the comparisons)."""
    def op(x1, x2):
        x1, x2 = _weak_pair(x1, x2)
        return fn(x1, x2)
    op.__name__ = op.__qualname__ = name
    return _np(name)(op)


def _strong_pair(x1, x2, extra=()):
    """Both converted to tensors first (Python ints -> int32, floats -> float32)."""
    return rules.promote(rules.to_tensor(x1), rules.to_tensor(x2), extra=extra)


# -- arithmetic ------------------------------------------------------------------------------
add = _weak_binary("add", arithmetic.add)
subtract = _weak_binary("subtract", arithmetic.subtract)
multiply = _weak_binary("multiply", arithmetic.multiply)


@_np("divide")
def divide(x1, x2):
    x1, x2 = _weak_pair(x1, x2, extra=(float,))
    return arithmetic.truediv(x1, x2)


@_np("true_divide")
def true_divide(x1, x2):
    return divide(x1, x2)


@_np("divide_no_nan")
def divide_no_nan(x1, x2):
    x1, x2 = _weak_pair(x1, x2, extra=(float,))
    return arithmetic.div_no_nan(x1, x2)


floor_divide = _weak_binary("floor_divide", arithmetic.floor_div)


def _in_int32(fn, x1, x2):
    """`fn` on small ints computed in int32 (ndflow's kernels for it start there)."""
    dtype = x1.dtype.name
    if dtype == "bool":
        raise TypeError("mod, fmod and power do not take bool tensors")
    if dtype in ("int8", "int16", "uint8"):
        return cast(fn(cast(x1, "int32"), cast(x2, "int32")), dtype)
    return fn(x1, x2)


@_np("mod")
def mod(x1, x2):
    x1, x2 = _strong_pair(x1, x2)
    return _in_int32(arithmetic.floormod, x1, x2)


@_np("fmod")
def fmod(x1, x2):
    x1, x2 = _strong_pair(x1, x2)
    return _in_int32(arithmetic.truncatemod, x1, x2)


@_np("power")
def power(x1, x2):
    x1, x2 = _weak_pair(x1, x2)
    return _in_int32(arithmetic.pow, x1, x2)


maximum = _weak_binary("maximum", arithmetic.maximum)
minimum = _weak_binary("minimum", arithmetic.minimum)


def _nan_ignoring(fn):
    """NumPy's fmax/fmin from maximum/minimum `fn`: a NaN operand gives the other one."""
    def op(x1, x2):
        if not x1.dtype.is_floating:
            return fn(x1, x2)
        return arithmetic.where(comparison.is_nan(x1), x2, arithmetic.where(
            comparison.is_nan(x2), x1, fn(x1, x2)))
    return op


fmax = _weak_binary("fmax", _nan_ignoring(arithmetic.maximum))
fmin = _weak_binary("fmin", _nan_ignoring(arithmetic.minimum))


@_np("negative")
def negative(x):
    x = rules.to_tensor(x)
    if x.dtype.name in ("bool", "uint8"):
        raise TypeError(f"negative does not take {x.dtype.name} tensors")
    return arithmetic.negative(x)


@_np("reciprocal")
def reciprocal(x):
    x = rules.to_tensor(x)
    if not (x.dtype.is_floating or x.dtype.is_complex):
        raise TypeError(f"reciprocal takes float or complex tensors; received {x.dtype.name}")
    return arithmetic.reciprocal(x)


@_np("square")
def square(x):
    x = rules.to_tensor(x)
    if x.dtype.name == "bool":
        x = cast(x, "int32")
    return math.square(x)


@_np("sqrt")
def sqrt(x):
    return math.sqrt(rules.to_float(x))


@keras_op("rsqrt")
def rsqrt(x):
    return math.rsqrt(rules.to_tensor(x))


@_np("cbrt")
def cbrt(x):
    x = _float64_for_int64(x)
    return math.sign(x) * arithmetic.pow(math.abs(x), cast(1.0 / 3.0, x.dtype))


@_np("abs")
def abs(x):  # noqa: A001 - Keras' name
    x = rules.to_tensor(x)
    return x if x.dtype.name == "bool" or x.dtype.name.startswith("uint") else math.abs(x)


@_np("absolute")
def absolute(x):
    return abs(x)


@_np("fabs")
def fabs(x):
    return math.abs(rules.to_float(x))


@_np("sign")
def sign(x):
    x = rules.to_tensor(x)
    if x.dtype.name.startswith("uint"):
        return cast(comparison.greater(x, cast(0, x.dtype)), x.dtype)
    return math.sign(x)


@_np("signbit")
def signbit(x):
    x = rules.to_tensor(x)
    if x.dtype.name == "bool":
        return comparison.logical_and(x, False)
    if x.dtype.is_floating:
        # -0.0 and -NaN have the bit: 1/x is -inf for -0.0
        neg = comparison.less(x, cast(0, x.dtype))
        zero = comparison.equal(x, cast(0, x.dtype))
        return comparison.logical_or(neg, comparison.logical_and(
            zero, comparison.less(arithmetic.truediv(cast(1, x.dtype), x), cast(0, x.dtype))))
    return comparison.less(x, cast(0, x.dtype))


def _float64_for_int64(x):
    x = rules.to_tensor(x)
    if x.dtype.name == "int64":
        return cast(x, "float64")
    return rules.to_float(x)


def _declare_float_unary():
    table = {
        "exp": math.exp, "expm1": math.expm1, "log": arithmetic.log, "log1p": math.log1p,
        "sin": math_trig.sin, "cos": math_trig.cos, "tan": math_trig.tan,
        "arcsin": math_trig.asin, "arccos": math_trig.acos, "arctan": math_trig.atan,
        "sinh": math_trig.sinh, "cosh": math_trig.cosh, "tanh": math.tanh,
        "arcsinh": math_trig.asinh, "arccosh": math_trig.acosh, "arctanh": math_trig.atanh,
        "ceil": math.ceil, "floor": math.floor,
        "log2": lambda x: arithmetic.log(x) / cast(np.log(2.0), x.dtype),
        "log10": lambda x: arithmetic.log(x) / cast(np.log(10.0), x.dtype),
        "exp2": lambda x: arithmetic.pow(cast(2.0, x.dtype), x),
    }
    def make(name, fn):
        def op(x):
            return fn(rules.to_float(x))
        op.__name__ = op.__qualname__ = name
        return _np(name)(op)
    return {name: make(name, fn) for name, fn in table.items()}


globals().update(_declare_float_unary())


@_np("sinc")
def sinc(x):
    x = rules.to_float(x)
    pix = x * cast(np.pi, x.dtype)
    safe = arithmetic.where(comparison.equal(x, cast(0, x.dtype)), cast(1, x.dtype), pix)
    return arithmetic.where(comparison.equal(x, cast(0, x.dtype)), cast(1, x.dtype),
                            math_trig.sin(safe) / safe)


@_np("deg2rad")
def deg2rad(x):
    x = _float64_for_int64(x)
    return x * cast(np.pi / 180.0, x.dtype)


@_np("rad2deg")
def rad2deg(x):
    x = _float64_for_int64(x)
    return x * cast(180.0 / np.pi, x.dtype)


@_np("i0")
def i0(x):
    return math_special.bessel_i0(_float64_for_int64(x))


@_np("trunc")
def trunc(x):
    x = rules.to_tensor(x)
    if not x.dtype.is_floating:
        return x
    return math.sign(x) * math.floor(math.abs(x))


@_np("round")
def round(x, decimals=0):  # noqa: A001 - Keras' name
    x = rules.to_tensor(x)
    if decimals == 0:
        return math.round(x)
    if x.dtype.is_floating:
        factor = cast(10.0 ** decimals, x.dtype)
        return math.round(x * factor) / factor
    if decimals > 0:
        return x
    factor = cast(10.0 ** -decimals, "float32")
    return cast(math.round(cast(x, "float32") / factor) * factor, x.dtype)


@_np("arctan2")
def arctan2(x1, x2):
    x1, x2 = _strong_pair(x1, x2, extra=(float,))
    return math_trig.atan2(x1, x2)


def _float_of_int_pair(x1, x2):
    x1, x2 = _strong_pair(x1, x2)
    name = x1.dtype.name
    if name == "bool":
        raise TypeError("hypot and heaviside do not take bool tensors")
    dtype = "float64" if name == "int64" else (
        global_config.floatx() if not x1.dtype.is_floating else name)
    return cast(x1, dtype), cast(x2, dtype)


@_np("hypot")
def hypot(x1, x2):
    x1, x2 = _float_of_int_pair(x1, x2)
    return math.sqrt(math.square(x1) + math.square(x2))


@_np("heaviside")
def heaviside(x1, x2):
    x1, x2 = _float_of_int_pair(x1, x2)
    zero = cast(0, x1.dtype)
    return arithmetic.where(comparison.less(x1, zero), zero, arithmetic.where(
        comparison.greater(x1, zero), cast(1, x1.dtype), x2))


@_np("logaddexp")
def logaddexp(x1, x2):
    x1, x2 = _strong_pair(x1, x2, extra=(float,))
    big = arithmetic.maximum(x1, x2)
    out = big + math.log1p(math.exp(-math.abs(x1 - x2)))
    return arithmetic.where(comparison.equal(x1, x2), x1 + cast(np.log(2.0), x1.dtype), out)


@_np("logaddexp2")
def logaddexp2(x1, x2):
    x1, x2 = _strong_pair(x1, x2, extra=(float,))
    ln2 = cast(np.log(2.0), x1.dtype)
    return logaddexp(x1 * ln2, x2 * ln2) / ln2


@_np("nextafter")
def nextafter(x1, x2):
    x1, x2 = _strong_pair(x1, x2, extra=(float,))
    if x1.dtype.name in ("float32", "float64"):
        return math_special.nextafter(x1, x2)
    dtype = x1.dtype
    return cast(math_special.nextafter(cast(x1, "float32"), cast(x2, "float32")), dtype)


@_np("ldexp")
def ldexp(x1, x2):
    x1, x2 = rules.to_tensor(x1), rules.to_tensor(x2)
    if x2.dtype.name not in rules.INT_TYPES:
        raise TypeError(f"ldexp exponent must be an integer type. Received: x2={x2.dtype.name}")
    dtype = rules.result_type(x1.dtype.name, x2.dtype.name, float)
    x1 = cast(x1, dtype)
    return x1 * arithmetic.pow(cast(2.0, dtype), cast(x2, dtype))


# -- comparisons and logic -------------------------------------------------------------------
equal = _weak_binary("equal", comparison.equal)
not_equal = _weak_binary("not_equal", comparison.not_equal)
less = _weak_binary("less", comparison.less)
less_equal = _weak_binary("less_equal", comparison.less_equal)
greater = _weak_binary("greater", comparison.greater)
greater_equal = _weak_binary("greater_equal", comparison.greater_equal)


def _logical(name, fn):
    def op(x1, x2):
        return fn(rules.to_tensor(x1, "bool"), rules.to_tensor(x2, "bool"))
    op.__name__ = op.__qualname__ = name
    return _np(name)(op)


logical_and = _logical("logical_and", comparison.logical_and)
logical_or = _logical("logical_or", comparison.logical_or)
logical_xor = _logical("logical_xor", comparison.logical_xor)


@_np("logical_not")
def logical_not(x):
    return comparison.logical_not(rules.to_tensor(x, "bool"))


def _float_test(name, fn):
    def op(x):
        x = rules.to_tensor(x)
        if not x.dtype.is_floating:   # integers are finite numbers
            fill = array_fill.ones_like if name == "isfinite" else array_fill.zeros_like
            return fill(x, dtype="bool")
        return fn(x)
    op.__name__ = op.__qualname__ = name
    return _np(name)(op)


isfinite = _float_test("isfinite", comparison.is_finite)
isnan = _float_test("isnan", comparison.is_nan)
isinf = _float_test("isinf", comparison.is_inf)
isposinf = _float_test("isposinf", lambda x: comparison.equal(x, cast(np.inf, x.dtype)))
isneginf = _float_test("isneginf", lambda x: comparison.equal(x, cast(-np.inf, x.dtype)))


@_np("isclose")
def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    x1, x2 = _weak_pair(x1, x2)
    if not x1.dtype.is_floating:
        x1, x2 = cast(x1, global_config.floatx()), cast(x2, global_config.floatx())
    diff = math.abs(x1 - x2)
    close = comparison.less_equal(diff, cast(atol, x1.dtype) + cast(rtol, x1.dtype)
                                  * math.abs(x2))
    close = comparison.logical_or(close, comparison.equal(x1, x2))   # equal infinities
    if equal_nan:
        close = comparison.logical_or(close, comparison.logical_and(
            comparison.is_nan(x1), comparison.is_nan(x2)))
    return close


def _bitwise(name, fn):
    def op(x, y):
        x, y = _strong_pair(x, y)
        return fn(x, y)
    op.__name__ = op.__qualname__ = name
    return _np(name)(op)


bitwise_and = _bitwise("bitwise_and", bitwise.bitwise_and)
bitwise_or = _bitwise("bitwise_or", bitwise.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", bitwise.bitwise_xor)
bitwise_left_shift = _bitwise("bitwise_left_shift", bitwise.left_shift)
bitwise_right_shift = _bitwise("bitwise_right_shift", bitwise.right_shift)
left_shift = _bitwise("left_shift", bitwise.left_shift)
right_shift = _bitwise("right_shift", bitwise.right_shift)


@_np("bitwise_invert")
def bitwise_invert(x):
    return bitwise.invert(rules.to_tensor(x))


@_np("bitwise_not")
def bitwise_not(x):
    return bitwise.invert(rules.to_tensor(x))


def _gcd_loop(x1, x2):
    """Euclid's algorithm elementwise, a fixed number of steps (enough for 64-bit ints)."""
    a, b = (x1, x2) if x1.dtype.name == "uint8" else (math.abs(x1), math.abs(x2))
    for _ in range(92):
        nonzero = comparison.not_equal(b, cast(0, b.dtype))
        safe_b = arithmetic.where(nonzero, b, cast(1, b.dtype))
        a, b = arithmetic.where(nonzero, b, a), arithmetic.where(
            nonzero, arithmetic.floormod(a, safe_b), b)
    return a


def _check_integers(name, *xs):
    for x in xs:
        x = rules.to_tensor(x)
        if not x.dtype.is_integer or x.dtype.name == "bool":
            raise TypeError(f"Arguments to {name} must be integers. Received: "
                            f"{x.dtype.name}")


@_np("gcd")
def gcd(x1, x2):
    x1, x2 = _strong_pair(x1, x2)
    _check_integers("gcd", x1)
    return _gcd_loop(x1, x2)


@_np("lcm")
def lcm(x1, x2):
    _check_integers("lcm", x1, x2)
    x1, x2 = _strong_pair(x1, x2)
    g = _gcd_loop(x1, x2)
    zero = comparison.equal(g, cast(0, g.dtype))
    out = x1 * arithmetic.floor_div(x2, arithmetic.where(zero, cast(1, g.dtype), g))
    out = out if out.dtype.name == "uint8" else math.abs(out)
    return arithmetic.where(zero, cast(0, g.dtype), out)


docstrings.attach(globals(), numpy_math_docs.DOCS)
docstrings.attach(globals(), numpy_logic_docs.DOCS)
