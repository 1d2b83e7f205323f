"""The docstrings of TF-NumPy's unary functions (np_math_unary makes them in a loop): for each,
a summary, an example argument and what the example prints."""

from __future__ import annotations

UNARY = {
    "log": ("Elementwise natural logarithm.", "[1., np.e]", "array([0., 1.])"),
    "exp": ("Elementwise exponential `e ** x`.", "[0., 1.]",
            "array([1.        , 2.71828183])"),
    "sqrt": ("Elementwise non-negative square root.", "[4., 9.]", "array([2., 3.])"),
    "abs": ("Elementwise absolute value (|z| for complex input, in the real dtype).",
            "[-2, 3]", "array([2, 3])"),
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
