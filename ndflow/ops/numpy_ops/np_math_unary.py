"""TF-NumPy's unary math (integers promoted to the default float where NumPy gives a float),
the predicates on values and dtypes, rounding, and the functions composed of them (hypot,
logaddexp)."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.doc_tables import attach
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops import np_dtypes, np_math_docs
from ndflow.ops.numpy_ops.np_arrays import (
    array,
    asarray,
    astype,
    cast,
    promote_dtype,
    promote_dtype_binary,
    to_default_float,
)
from ndflow.ops.numpy_ops.np_math_arith import (
    _FLOATS,
    _export,
    _scalar,
    maximum,
)
from ndflow.ops.numpy_ops.np_math_docs import unary_doc


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



def _unary(name, fn, to_float):
    def f(x):
        return _scalar(fn, x, to_float)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = unary_doc(name, to_float)
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
absolute = _unary("absolute", tfo.abs_, False)
fabs = _unary("fabs", tfo.abs_, False)
fix = _unary("fix", lambda t: tfo.where(_neg(t), tfo.ceil(t), tfo.floor(t)), True)


@_export("rad2deg")
def rad2deg(x):
    """Converts angles from radians to degrees (`x * 180 / pi`).

    Args:
      x: array_like input.

    Returns:
      `x` times 180/pi: a tensor for a tensor, a Python float for a Python number.

    Example:
      >>> round(float(tnp.rad2deg(tnp.pi)), 6)
      180.0
    """
    return x * (180.0 / np.pi)


@_export("signbit")
def signbit(x):
    """Elementwise test for a negative value.

    Args:
      x: array_like input.

    Returns:
      A boolean tensor of x's shape, True where x < 0 (all False for booleans).

    Example:
      >>> tnp.signbit([-1., 0., 2.]).numpy()
      array([ True, False, False])
    """
    return _scalar(lambda t: tfo.fill(tfo.shape(t), False) if t.dtype == dtypes.bool
                   else _neg(t), x)


@_export("sinc")
def sinc(x):
    """The normalized sinc function `sin(pi x) / (pi x)`, with sinc(0) = 1.

    Args:
      x: array_like input.

    Returns:
      A floating tensor of x's shape (integers widened to the default float).

    Example:
      >>> float(tnp.sinc(0.))
      1.0
    """
    def f(t):
        pi_t = tfo.multiply(t, tfo.constant(np.pi, t.dtype))
        zero = tfo.equal(t, tfo.zeros_like(t))
        safe = tfo.where(zero, tfo.ones_like(pi_t), pi_t)
        return tfo.where(zero, tfo.ones_like(t), tfo.truediv(tfo.sin(safe), safe))
    return _scalar(f, x, True)


@_export("angle")
def angle(z, deg=False):
    """The counterclockwise angle of each complex number from the positive real axis.

    Args:
      z: array_like, complex or real (a real value has angle 0, or pi when negative).
      deg: if True, return degrees instead of radians.

    Returns:
      A tensor of z's shape: the real dtype of complex input, float32 for real floats.

    Example:
      >>> tnp.angle([1j, -1.0]).numpy()
      array([1.57079633, 3.14159265])
    """
    def f(t):
        if t.dtype in _FLOATS:  # TF-NumPy's constants make this float32 for every float
            return tfo.where(_neg(t), tfo.constant(np.pi, dtypes.float32),
                             tfo.constant(0.0, dtypes.float32))
        return tfo.angle(t)
    y = _scalar(f, z, True)
    return rad2deg(y) if deg else y


def _log_base(base: int, arg: str, out: str):
    def f(x):
        return log(x) / np.log(base)
    f.__name__ = f.__qualname__ = f"log{base}"
    f.__doc__ = f"""Elementwise base-{base} logarithm.

    Args:
      x: array_like input.

    Returns:
      A floating tensor of x's shape.

    Example:
      >>> tnp.log{base}({arg}).numpy()
      {out}
    """
    return _export(f"log{base}")(f)


log2 = _log_base(2, "[1., 8.]", "array([0., 3.])")
log10 = _log_base(10, "[1., 100.]", "array([0., 2.])")


@_export("isinf")
def isinf(x):
    """Elementwise test for positive or negative infinity.

    Args:
      x: array_like input.

    Returns:
      A boolean tensor of x's shape for floating input; the Python value False for any other dtype.

    Example:
      >>> tnp.isinf([1., tnp.inf, -tnp.inf]).numpy()
      array([False,  True,  True])
    """
    x = asarray(x)
    return _scalar(tfo.is_inf, x, True) if x.dtype.is_floating else False


@_export("isneginf")
def isneginf(x):
    """Elementwise test for negative infinity.

    Args:
      x: array_like input.

    Returns:
      A boolean tensor of x's shape for floating input; False for other dtypes.

    Example:
      >>> tnp.isneginf([1., -tnp.inf]).numpy()
      array([False,  True])
    """
    x = asarray(x)
    return tfo.equal(x, tfo.fill(tfo.shape(x), tfo.constant(-np.inf, x.dtype))) \
        if x.dtype.is_floating else False


@_export("isposinf")
def isposinf(x):
    """Elementwise test for positive infinity.

    Args:
      x: array_like input.

    Returns:
      A boolean tensor of x's shape for floating input; False for other dtypes.

    Example:
      >>> tnp.isposinf([1., tnp.inf]).numpy()
      array([False,  True])
    """
    x = asarray(x)
    return tfo.equal(x, tfo.fill(tfo.shape(x), tfo.constant(np.inf, x.dtype))) \
        if x.dtype.is_floating else False


@_export("real")
def real(val):
    """The real part of each element.

    Args:
      val: array_like input.

    Returns:
      A tensor of val's shape in the real dtype (val itself for real input).

    Example:
      >>> tnp.real([1 + 2j]).numpy()
      array([1.])
    """
    return tfo.real(asarray(val))


@_export("imag")
def imag(val):
    """The imaginary part of each element.

    Args:
      val: array_like input.

    Returns:
      A tensor of val's shape in the real dtype (zeros for real input).

    Example:
      >>> tnp.imag([1 + 2j]).numpy()
      array([2.])
    """
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
    """Elementwise test for a nonzero imaginary part.

    Args:
      x: array_like input.

    Returns:
      A boolean tensor of x's shape.

    Example:
      >>> tnp.iscomplex([1 + 1j, 2 + 0j]).numpy()
      array([ True, False])
    """
    return _operator_compare(tfo.not_equal, imag(x), 0)


@_export("isreal")
def isreal(x):
    """Elementwise test for a zero imaginary part.

    Args:
      x: array_like input.

    Returns:
      A boolean tensor of x's shape (all True for real input).

    Example:
      >>> tnp.isreal([1 + 1j, 2 + 0j]).numpy()
      array([False,  True])
    """
    return _operator_compare(tfo.equal, imag(x), 0)


@_export("iscomplexobj")
def iscomplexobj(x):
    """Whether `x` has a complex dtype (the values are not inspected).

    Args:
      x: array_like input.

    Returns:
      A Python bool.

    Example:
      >>> tnp.iscomplexobj([1 + 0j])
      True
    """
    return np.issubdtype(np.dtype(array(x).dtype.as_numpy_dtype), np.complexfloating)


@_export("isrealobj")
def isrealobj(x):
    """Whether `x` has a non-complex dtype (the values are not inspected).

    Args:
      x: array_like input.

    Returns:
      A Python bool.

    Example:
      >>> tnp.isrealobj([1.0])
      True
    """
    return not iscomplexobj(x)


@_export("sign")
def sign(x, out=None, where=None, **kwargs):
    """Elementwise sign: -1, 0 or 1 (`z / |z|` for complex input).

    Args:
      x: array_like input.
      out: unsupported; must be None.
      where: unsupported; must be None.
      **kwargs: no other NumPy ufunc keyword is supported.

    Returns:
      A tensor of x's shape and dtype.

    Raises:
      ValueError: if `out`, `where` or any other keyword is given.

    Example:
      >>> tnp.sign([-2, 0, 3]).numpy()
      array([-1,  0,  1])
    """
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
    """Rounds to the given number of decimals, halves to the nearest even value.

    Args:
      a: array_like input.
      decimals: number of decimal places (negative rounds to tens, hundreds, ...).

    Returns:
      A tensor of a's shape and dtype. Without NumPy behavior (see
      `tnp.experimental_enable_numpy_behavior`) the final cast back to a's dtype raises
      AttributeError, as in TensorFlow.
    """
    a = asarray(a)
    dtype = a.dtype
    a = to_default_float(a)
    # tf.cast of a Python float goes through a float32 tensor (TF-NumPy casts the factor so)
    factor = cast(tfo.constant(10.0 ** decimals, dtypes.float32), a.dtype)
    scaled = tfo.round_(tfo.multiply(a, factor))
    return astype(tfo.truediv(scaled, factor), dtype)


@_export("round")
def round(a, decimals=0):  # noqa: A001 - NumPy's name
    """Rounds to the given number of decimals (the same as `tnp.around`).

    Args:
      a: array_like input.
      decimals: number of decimal places.

    Returns:
      A tensor of a's shape and dtype (see `tnp.around` for the NumPy-behavior requirement).
    """
    return around(a, decimals=decimals)


attach(globals(), np_math_docs.UNARY_MODULE)
