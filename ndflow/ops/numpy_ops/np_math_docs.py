"""The docstrings of TF-NumPy's unary functions (np_math_unary makes them in a loop): for each,
a summary, an example argument and what the example prints; and of the functions of two
arrays in np_math_arith and np_math_compare (attached at their ends), from `binary_doc`."""

from __future__ import annotations

UNARY = {
    "log": ("Elementwise natural logarithm.", "[1., np.e]", "array([0., 1.])"),
    "exp": ("Elementwise exponential `e ** x`.", "[0., 1.]",
            "array([1.        , 2.71828183])"),
    "sqrt": ("Elementwise non-negative square root.", "[4., 9.]", "array([2., 3.])"),
    "abs": ("Elementwise absolute value (|z| for complex input, in the real dtype).",
            "[-2, 3]", "array([2, 3])"),
    "absolute": ("Elementwise absolute value (the same as `tnp.abs`); |z| for complex input.",
                 "[-2, 3]", "array([2, 3])"),
    "fabs": ("Elementwise absolute value (the same as `tnp.abs`).", "[-1.5, 2.0]",
             "array([1.5, 2. ])"),
    "ceil": ("Elementwise ceiling: the smallest integer value not below x.", "[1.2, -1.5]",
             "array([ 2., -1.])"),
    "floor": ("Elementwise floor: the largest integer value not above x.", "[1.7, -1.5]",
              "array([ 1., -2.])"),
    "conj": ("Elementwise complex conjugate (real input is returned as it is).", "[1 + 2j]",
             "array([1.-2.j])"),
    "conjugate": ("Elementwise complex conjugate (the same as `tnp.conj`).", "[1 + 2j]",
                  "array([1.-2.j])"),
    "negative": ("Elementwise negation `-x`.", "[1, -2]", "array([-1,  2])"),
    "reciprocal": ("Elementwise `1 / x` (integer division for integer input).", "[2., 4.]",
                   "array([0.5 , 0.25])"),
    "sin": ("Elementwise sine of angles in radians.", "[0., np.pi / 2]", "array([0., 1.])"),
    "cos": ("Elementwise cosine of angles in radians.", "[0., np.pi]", "array([ 1., -1.])"),
    "tan": ("Elementwise tangent of angles in radians.", "[0., np.pi / 4]",
            "array([0., 1.])"),
    "sinh": ("Elementwise hyperbolic sine.", "[0.]", "array([0.])"),
    "cosh": ("Elementwise hyperbolic cosine.", "[0.]", "array([1.])"),
    "tanh": ("Elementwise hyperbolic tangent.", "[0.]", "array([0.])"),
    "arcsin": ("Elementwise inverse sine, in radians in [-pi/2, pi/2].", "[0., 1.]",
               "array([0.        , 1.57079633])"),
    "arccos": ("Elementwise inverse cosine, in radians in [0, pi].", "[1., 0.]",
               "array([0.        , 1.57079633])"),
    "arctan": ("Elementwise inverse tangent, in radians in (-pi/2, pi/2).", "[0., 1.]",
               "array([0.        , 0.78539816])"),
    "arcsinh": ("Elementwise inverse hyperbolic sine.", "[0.]", "array([0.])"),
    "arccosh": ("Elementwise inverse hyperbolic cosine (NaN below 1).", "[1.]",
                "array([0.])"),
    "arctanh": ("Elementwise inverse hyperbolic tangent (NaN outside [-1, 1]).", "[0.]",
                "array([0.])"),
    "expm1": ("Elementwise `exp(x) - 1`, accurate for small x.", "[0.]", "array([0.])"),
    "log1p": ("Elementwise `log(1 + x)`, accurate for small x.", "[0.]", "array([0.])"),
    "isnan": ("Elementwise test for NaN; a boolean tensor.", "[1., np.nan]",
              "array([False,  True])"),
    "isfinite": ("Elementwise test for a finite value (not infinite, not NaN); a boolean "
                 "tensor.", "[1., np.inf]", "array([ True, False])"),
    "square": ("Elementwise `x * x`.", "[2, -3]", "array([4, 9])"),
    "positive": ("Elementwise `+x`: the values unchanged.", "[1, -2]", "array([ 1, -2])"),
    "deg2rad": ("Converts angles from degrees to radians (`x * pi / 180`).", "[180.]",
                "array([3.14159265])"),
    "exp2": ("Elementwise `2 ** x`.", "[3.]", "array([8.])"),
    "cbrt": ("Elementwise real cube root (negative for negative x).", "[27., -8.]",
             "array([ 3., -2.])"),
    "fix": ("Rounds toward zero to integer values (in the float dtype).", "[2.7, -2.7]",
            "array([ 2., -2.])"),
}


def unary_doc(name: str, to_float: bool) -> str:
    """The docstring of TF-NumPy's unary function `name`."""
    summary, arg, out = UNARY[name]
    if to_float:
        what = ("array_like input. Integers and booleans are first converted to the default\n"
                "        float, which needs `tnp.experimental_enable_numpy_behavior()` (without "
                "it,\n        TensorFlow's AttributeError).")
        ret = ("A boolean tensor of x's shape." if name.startswith("is")
               else "A floating tensor of x's shape.")
    else:
        what = "array_like input."
        ret = "A tensor of x's shape and dtype."
    return f"""{summary}

    Args:
      x: {what}

    Returns:
      {ret}

    Example:
      >>> tnp.{name}({arg}).numpy()
      {out}
    """


_RESULT = "A tensor of the broadcast shape in the NumPy result type of `x1` and `x2` "
_BOOLEAN = "A boolean tensor of the broadcast shape of `x1` and `x2`."


def binary_doc(summary: str, example: str, out: str, returns: str = _RESULT.rstrip() + ".",
               raises: str = "") -> str:
    """The docstring of a TF-NumPy function of two array_likes x1 and x2."""
    raises = f"\n\n    Raises:\n      {raises}" if raises else ""
    return f"""{summary}

    Args:
      x1: array_like; converted with `tnp.asarray`.
      x2: array_like broadcastable against `x1`.

    Returns:
      {returns}{raises}

    Example:
      >>> {example}
      {out}
    """


# np_math_arith.py's functions of two arrays (attached at its end)
ARITH = {
    "add": binary_doc(
        "Elementwise `x1 + x2` under NumPy's type promotion.",
        "tnp.add([1, 2], [10, 20]).numpy()",
        "array([11, 22])",
        returns=_RESULT + "(for booleans it is\n      the logical or)."),
    "subtract": binary_doc(
        "Elementwise `x1 - x2` under NumPy's type promotion.",
        "tnp.subtract([5, 7], 2).numpy()",
        "array([3, 5])"),
    "multiply": binary_doc(
        "Elementwise `x1 * x2` under NumPy's type promotion.",
        "tnp.multiply([1, 2, 3], 2).numpy()",
        "array([2, 4, 6])",
        returns=_RESULT + "(for booleans it is\n      the logical and)."),
    "true_divide": binary_doc(
        "Elementwise true division `x1 / x2`; integer and boolean inputs give floats.",
        "tnp.true_divide([1, 2], 2).numpy()",
        "array([0.5, 1. ])",
        returns=_RESULT + "widened to a float:\n      booleans to the default float, int32/int64 "
                          "to float64 (float32 when float64 is not allowed)."),
    "divide": binary_doc(
        "Elementwise true division `x1 / x2` (the same as `tnp.true_divide`).",
        "float(tnp.divide(3., 2.))",
        "1.5"),
    "floor_divide": binary_doc(
        "Elementwise floor division `x1 // x2`, rounding toward minus infinity.",
        "tnp.floor_divide([7, -7], 2).numpy()",
        "array([ 3, -4])",
        returns=_RESULT + "(booleans are\n      divided as int8)."),
    "mod": binary_doc(
        "Elementwise remainder of floor division; the result has the sign of `x2`.",
        "tnp.mod([7, -7], 3).numpy()",
        "array([1, 2])",
        returns=_RESULT + "(booleans are\n      computed as int8)."),
    "remainder": binary_doc(
        "Elementwise remainder of floor division (the same as `tnp.mod`).",
        "int(tnp.remainder(-1, 4))",
        "3"),
    "maximum": binary_doc(
        "Elementwise maximum of `x1` and `x2`; a NaN in either input propagates.",
        "tnp.maximum([1, 5], [3, 2]).numpy()",
        "array([3, 5])",
        returns=_RESULT + "(for booleans it is\n      the logical or; `maximum(x, 0)` of a "
                          "tensor keeps x's dtype)."),
    "minimum": binary_doc(
        "Elementwise minimum of `x1` and `x2`; a NaN in either input propagates.",
        "tnp.minimum([1, 5], [3, 2]).numpy()",
        "array([1, 2])",
        returns=_RESULT + "(for booleans it is\n      the logical and)."),
    "power": binary_doc(
        "Elementwise `x1 ** x2`.",
        "tnp.power([2, 3], 2).numpy()",
        "array([4, 9])"),
    "float_power": binary_doc(
        "Elementwise `x1 ** x2` (the same as `tnp.power`; no widening to float64).",
        "float(tnp.float_power(2., 3.))",
        "8.0"),
    "arctan2": binary_doc(
        "Elementwise arc tangent of `x1 / x2` choosing the quadrant from both signs.",
        "float(tnp.arctan2(1., -1.))",
        "2.356194490192345",
        returns="A tensor of the broadcast shape in the NumPy result type of `x1` and `x2`, in "
                "radians in [-pi,\n      pi]."),
    "nextafter": binary_doc(
        "The next representable floating-point value after `x1` toward `x2`.",
        "float(tnp.nextafter(1., 2.)) > 1.",
        "True",
        returns=_RESULT + "(floats only)."),
    "heaviside": binary_doc(
        "The Heaviside step function: 0 where `x1 < 0`, 1 where `x1 > 0`, `x2` where `x1 == 0`.",
        "tnp.heaviside([-1., 0., 2.], 0.5).numpy()",
        "array([0. , 0.5, 1. ])",
        returns="A tensor of the broadcast shape in the NumPy result type of `x1` and `x2`, "
                "integers widened to\n      the default float."),
}

# np_math_compare.py's functions of two arrays (attached at its end)
COMPARE = {
    "gcd": binary_doc(
        "Elementwise greatest common divisor of the absolute values of two integer arrays.",
        "tnp.gcd([12, 7], 18).numpy()",
        "array([6, 1])",
        returns="A tensor of the broadcast shape in the NumPy result type of `x1` and `x2`; "
                "gcd(0, 0) is 0.",
        raises="ValueError: if either argument is not of an integer dtype."),
    "lcm": binary_doc(
        "Elementwise least common multiple of two integer arrays (non-negative).",
        "tnp.lcm([4, 6], 10).numpy()",
        "array([20, 30])",
        returns="A tensor of the broadcast shape in the NumPy result type of `x1` and `x2`; "
                "lcm with 0 is 0.",
        raises="ValueError: if either argument is not of an integer dtype."),
    "bitwise_and": binary_doc(
        "Elementwise bitwise and of integer or boolean arrays.",
        "tnp.bitwise_and([12, 10], 6).numpy()",
        "array([4, 2])"),
    "bitwise_or": binary_doc(
        "Elementwise bitwise or of integer or boolean arrays.",
        "tnp.bitwise_or([12, 10], 1).numpy()",
        "array([13, 11])"),
    "bitwise_xor": binary_doc(
        "Elementwise bitwise exclusive or of integer or boolean arrays.",
        "tnp.bitwise_xor([12, 10], 6).numpy()",
        "array([10, 12])"),
    "equal": binary_doc(
        "Elementwise `x1 == x2` after promoting both to their NumPy result type.",
        "tnp.equal([1, 2], 2).numpy()",
        "array([False,  True])",
        returns=_BOOLEAN),
    "not_equal": binary_doc(
        "Elementwise `x1 != x2` after promoting both to their NumPy result type.",
        "tnp.not_equal([1, 2], 2).numpy()",
        "array([ True, False])",
        returns=_BOOLEAN),
    "greater": binary_doc(
        "Elementwise `x1 > x2` after promoting both to their NumPy result type.",
        "tnp.greater([1, 3], 2).numpy()",
        "array([False,  True])",
        returns=_BOOLEAN),
    "greater_equal": binary_doc(
        "Elementwise `x1 >= x2` after promoting both to their NumPy result type.",
        "tnp.greater_equal([1, 2], 2).numpy()",
        "array([False,  True])",
        returns=_BOOLEAN),
    "less": binary_doc(
        "Elementwise `x1 < x2` after promoting both to their NumPy result type.",
        "tnp.less([1, 3], 2).numpy()",
        "array([ True, False])",
        returns=_BOOLEAN),
    "less_equal": binary_doc(
        "Elementwise `x1 <= x2` after promoting both to their NumPy result type.",
        "tnp.less_equal([1, 3], 1).numpy()",
        "array([ True, False])",
        returns=_BOOLEAN),
    "logical_and": binary_doc(
        "Elementwise logical and; the inputs are converted to booleans first.",
        "tnp.logical_and([True, True], [True, False]).numpy()",
        "array([ True, False])",
        returns=_BOOLEAN),
    "logical_or": binary_doc(
        "Elementwise logical or; the inputs are converted to booleans first.",
        "tnp.logical_or([True, False], False).numpy()",
        "array([ True, False])",
        returns=_BOOLEAN),
    "logical_xor": binary_doc(
        "Elementwise logical exclusive or; the inputs are converted to booleans first.",
        "tnp.logical_xor([True, True], [True, False]).numpy()",
        "array([False,  True])",
        returns=_BOOLEAN),
}

# np_math_unary.py's functions of two arrays (attached at its end)
UNARY_MODULE = {
    "hypot": binary_doc(
        "Elementwise `sqrt(x1**2 + x2**2)`, the hypotenuse of a right triangle.",
        "float(tnp.hypot(3., 4.))", "5.0",
        returns=_RESULT.rstrip() + "; without NumPy\n      behavior mixed dtypes are rejected "
                "as by the tensor operators."),
    "logaddexp": binary_doc("Elementwise `log(exp(x1) + exp(x2))` computed without overflow.",
                            "round(float(tnp.logaddexp(0., 0.)), 6)", "0.693147"),
    "logaddexp2": binary_doc("Elementwise `log2(2**x1 + 2**x2)` computed without overflow.",
                             "float(tnp.logaddexp2(1., 1.))", "2.0"),
}
