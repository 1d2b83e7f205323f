"""Docstrings of keras.ops' elementwise arithmetic, powers, logs, trigonometry and rounding
(numpy_math.py; the comparisons, logic and bitwise ops: numpy_logic_docs.py). Attached by
`ndflow.keras.docstrings.attach`; the examples run as doctests."""

from __future__ import annotations

from ndflow.keras.docstrings import sections, unary

_WEAK = """
      Python scalars are weak: they take the tensor's dtype (`int8 tensor + 2` stays int8);
      two tensors promote to their Keras result dtype."""


def _binary(summary: str, x1: str, x2: str, returns: str, example: str = "",
            raises: str = "") -> str:
    doc = f"""{summary}

    Args:
      x1: {x1}
      x2: {x2}

    Returns:
      {returns}
    """
    return sections(doc, raises, example)


_OPERAND = "a tensor, array-like or Python scalar."
_BROADCAST = "A tensor of the broadcast shape of `x1` and `x2`, in their promoted dtype." + _WEAK

DOCS = {
    "add": _binary(
        "Elementwise sum `x1 + x2`, broadcasting the two shapes.", _OPERAND, _OPERAND,
        _BROADCAST,
        ">>> tf.keras.ops.add([1, 2], 3).numpy()\n    array([4, 5], dtype=int32)"),
    "subtract": _binary(
        "Elementwise difference `x1 - x2`, broadcasting the two shapes.", _OPERAND, _OPERAND,
        _BROADCAST,
        ">>> tf.keras.ops.subtract([5.0, 7.0], [1.0, 2.0]).numpy()\n"
        "    array([4., 5.], dtype=float32)"),
    "multiply": _binary(
        "Elementwise product `x1 * x2`, broadcasting the two shapes.", _OPERAND, _OPERAND,
        _BROADCAST,
        ">>> tf.keras.ops.multiply([1, 2, 3], 2).numpy()\n    array([2, 4, 6], dtype=int32)"),
    "divide": _binary(
        "Elementwise true division `x1 / x2` (the result is always floating point).",
        "the dividend: a tensor, array-like or Python scalar.",
        "the divisor: a tensor, array-like or Python scalar.",
        "A float tensor of the broadcast shape: ints and bools divide in floatx (float32 by "
        "default), floats keep their promoted dtype. Division by zero gives inf or NaN.",
        ">>> tf.keras.ops.divide([3, 4], 2).numpy()\n    array([1.5, 2. ], dtype=float32)"),
    "true_divide": _binary(
        "Elementwise true division `x1 / x2`; the same op as `keras.ops.divide`.",
        "the dividend: a tensor, array-like or Python scalar.",
        "the divisor: a tensor, array-like or Python scalar.",
        "A float tensor of the broadcast shape (ints and bools divide in floatx)."),
    "divide_no_nan": _binary(
        "Elementwise `x1 / x2` that gives 0 wherever the divisor is 0 (not inf or NaN).",
        "the dividend: a tensor, array-like or Python scalar.",
        "the divisor: a tensor, array-like or Python scalar.",
        "A float tensor of the broadcast shape (ints and bools divide in floatx).",
        ">>> tf.keras.ops.divide_no_nan([1.0, 2.0], [0.0, 4.0]).numpy()\n"
        "    array([0. , 0.5], dtype=float32)"),
    "floor_divide": _binary(
        "Elementwise floor division `x1 // x2` (rounds toward negative infinity).",
        "the dividend: a tensor, array-like or Python scalar.",
        "the divisor: a tensor, array-like or Python scalar.",
        _BROADCAST + " Integer division by zero is an error of the kernel.",
        ">>> tf.keras.ops.floor_divide([7, -7], 2).numpy()\n    array([ 3, -4], dtype=int32)"),
    "mod": _binary(
        "Elementwise remainder of floor division, with the sign of the divisor (Python's `%`).",
        "the dividend: a tensor, array-like or scalar (converted before promotion: a Python "
        "int is int32, a float float32).",
        "the divisor, likewise.",
        "A tensor of the broadcast shape in the promoted dtype.",
        ">>> tf.keras.ops.mod([5, -5], 3).numpy()\n    array([2, 1], dtype=int32)",
        "TypeError: the operands are bool."),
    "fmod": _binary(
        "Elementwise remainder of truncated division, with the sign of the dividend (C's fmod).",
        "the dividend: a tensor, array-like or scalar (a Python int converts to int32, a "
        "float to float32).",
        "the divisor, likewise.",
        "A tensor of the broadcast shape in the promoted dtype.",
        ">>> tf.keras.ops.fmod([5, -5], 3).numpy()\n    array([ 2, -2], dtype=int32)",
        "TypeError: the operands are bool."),
    "power": _binary(
        "Elementwise `x1 ** x2`.",
        "the base: a tensor, array-like or Python scalar.",
        "the exponent: a tensor, array-like or Python scalar.",
        _BROADCAST,
        ">>> tf.keras.ops.power([2, 3], 2).numpy()\n    array([4, 9], dtype=int32)",
        "TypeError: the operands are bool."),
    "maximum": _binary(
        "Elementwise larger of `x1` and `x2` (a NaN in either gives NaN).", _OPERAND, _OPERAND,
        _BROADCAST,
        ">>> tf.keras.ops.maximum([1, 5], [3, 2]).numpy()\n    array([3, 5], dtype=int32)"),
    "minimum": _binary(
        "Elementwise smaller of `x1` and `x2` (a NaN in either gives NaN).", _OPERAND, _OPERAND,
        _BROADCAST,
        ">>> tf.keras.ops.minimum([1, 5], [3, 2]).numpy()\n    array([1, 2], dtype=int32)"),
    "fmax": _binary(
        "Elementwise larger of `x1` and `x2`, ignoring NaNs: a NaN loses to a number.",
        _OPERAND, _OPERAND,
        _BROADCAST + " NaN only where both are NaN.",
        ">>> tf.keras.ops.fmax([1.0, float('nan')], [0.0, 2.0]).numpy()\n"
        "    array([1., 2.], dtype=float32)"),
    "fmin": _binary(
        "Elementwise smaller of `x1` and `x2`, ignoring NaNs: a NaN loses to a number.",
        _OPERAND, _OPERAND,
        _BROADCAST + " NaN only where both are NaN.",
        ">>> tf.keras.ops.fmin([1.0, float('nan')], [0.0, 2.0]).numpy()\n"
        "    array([0., 2.], dtype=float32)"),
    "negative": """Elementwise negation `-x`.

    Args:
      x: a tensor or array-like of a signed numeric dtype.

    Returns:
      A tensor of `x`'s shape and dtype.

    Raises:
      TypeError: `x` is bool or uint8.

    Example:

    >>> tf.keras.ops.negative([1, -2]).numpy()
    array([-1,  2], dtype=int32)
    """,
    "reciprocal": """Elementwise `1 / x`.

    Args:
      x: a float or complex tensor or array-like (a Python float list is float32).

    Returns:
      A tensor of `x`'s shape and dtype; 0 gives inf.

    Raises:
      TypeError: `x` is not float or complex (ints are refused, not converted).

    Example:

    >>> tf.keras.ops.reciprocal([2.0, 4.0]).numpy()
    array([0.5 , 0.25], dtype=float32)
    """,
    "square": """Elementwise `x * x`.

    Args:
      x: a tensor or array-like; bools are squared as int32.

    Returns:
      A tensor of `x`'s shape, in its dtype (int32 for bools).

    Example:

    >>> tf.keras.ops.square([2, -3]).numpy()
    array([4, 9], dtype=int32)
    """,
    "sqrt": unary("Elementwise square root (NaN for negative inputs).", example=(
        ">>> tf.keras.ops.sqrt([4, 9]).numpy()\n    array([2., 3.], dtype=float32)")),
    "rsqrt": """Elementwise reciprocal square root `1 / sqrt(x)`.

    Args:
      x: a float tensor or array-like (converted as it is, no float promotion: pass floats).

    Returns:
      A tensor of `x`'s shape and dtype; 0 gives inf, negatives NaN.

    Example:

    >>> tf.keras.ops.rsqrt([4.0, 16.0]).numpy()
    array([0.5 , 0.25], dtype=float32)
    """,
    "cbrt": unary("Elementwise cube root, real for negative inputs too (`cbrt(-8) == -2`).",
                  int64="float64"),
    "abs": """Elementwise absolute value.

    Args:
      x: a tensor or array-like. Bools and unsigned ints are returned unchanged; complex
        inputs give their magnitude (a float tensor).

    Returns:
      A tensor of `x`'s shape, in its dtype (the real dtype for complex inputs).

    Example:

    >>> tf.keras.ops.abs([-1, 2]).numpy()
    array([1, 2], dtype=int32)
    """,
    "absolute": """Elementwise absolute value; the same op as `keras.ops.abs`.

    Args:
      x: a tensor or array-like.

    Returns:
      A tensor of `x`'s shape and dtype.
    """,
    "fabs": unary("Elementwise absolute value, always as floating point (unlike `abs`).",
                  example=">>> tf.keras.ops.fabs([-1, 2]).numpy()\n"
                          "    array([1., 2.], dtype=float32)"),
    "sign": """Elementwise sign: -1, 0 or 1 (NaN stays NaN).

    Args:
      x: a tensor or array-like; unsigned ints give 0 or 1.

    Returns:
      A tensor of `x`'s shape and dtype.

    Example:

    >>> tf.keras.ops.sign([-3.0, 0.0, 2.0]).numpy()
    array([-1.,  0.,  1.], dtype=float32)
    """,
    "signbit": """Elementwise test of the sign bit: True for negatives, -0.0 included.

    Args:
      x: a tensor or array-like (bools and unsigned ints are never negative).

    Returns:
      A bool tensor of `x`'s shape.

    Example:

    >>> tf.keras.ops.signbit([-1.0, -0.0, 0.0, 2.0]).numpy()
    array([ True,  True, False, False])
    """,
    "exp": unary("Elementwise natural exponential `e ** x`.", example=(
        ">>> tf.keras.ops.exp([0.0, 1.0]).numpy()\n"
        "    array([1.       , 2.7182817], dtype=float32)")),
    "expm1": unary("Elementwise `exp(x) - 1`, accurate for `x` near 0."),
    "exp2": unary("Elementwise `2 ** x`.", example=(
        ">>> tf.keras.ops.exp2([0, 3]).numpy()\n    array([1., 8.], dtype=float32)")),
    "log": unary("Elementwise natural logarithm (`log(0)` is -inf, negatives give NaN).",
                 example=">>> tf.keras.ops.log([1.0]).numpy()\n"
                         "    array([0.], dtype=float32)"),
    "log1p": unary("Elementwise `log(1 + x)`, accurate for `x` near 0 (-1 gives -inf)."),
    "log2": unary("Elementwise base-2 logarithm.", example=(
        ">>> tf.keras.ops.log2([1, 8]).numpy()\n    array([0., 3.], dtype=float32)")),
    "log10": unary("Elementwise base-10 logarithm.", example=(
        ">>> tf.keras.ops.log10([1, 100]).numpy()\n    array([0., 2.], dtype=float32)")),
    "sin": unary("Elementwise sine of `x` in radians."),
    "cos": unary("Elementwise cosine of `x` in radians.", example=(
        ">>> tf.keras.ops.cos([0.0]).numpy()\n    array([1.], dtype=float32)")),
    "tan": unary("Elementwise tangent of `x` in radians."),
    "arcsin": unary("Elementwise inverse sine, in radians within [-pi/2, pi/2].",
                    domain=" Values outside [-1, 1] give NaN."),
    "arccos": unary("Elementwise inverse cosine, in radians within [0, pi].",
                    domain=" Values outside [-1, 1] give NaN."),
    "arctan": unary("Elementwise inverse tangent, in radians within (-pi/2, pi/2)."),
    "sinh": unary("Elementwise hyperbolic sine."),
    "cosh": unary("Elementwise hyperbolic cosine."),
    "tanh": unary("Elementwise hyperbolic tangent, within (-1, 1).", example=(
        ">>> tf.keras.ops.tanh([0.0]).numpy()\n    array([0.], dtype=float32)")),
    "arcsinh": unary("Elementwise inverse hyperbolic sine."),
    "arccosh": unary("Elementwise inverse hyperbolic cosine.",
                     domain=" Values below 1 give NaN."),
    "arctanh": unary("Elementwise inverse hyperbolic tangent.",
                     domain=" Values outside [-1, 1] give NaN (+-1 give +-inf)."),
    "ceil": unary("Elementwise ceiling: the smallest integer value not below `x`, as a float.",
                  example=">>> tf.keras.ops.ceil([1.2, -1.2]).numpy()\n"
                          "    array([ 2., -1.], dtype=float32)"),
    "floor": unary("Elementwise floor: the largest integer value not above `x`, as a float.",
                   example=">>> tf.keras.ops.floor([1.7, -1.2]).numpy()\n"
                           "    array([ 1., -2.], dtype=float32)"),
    "sinc": unary("Elementwise normalized sinc `sin(pi * x) / (pi * x)`, 1 at 0.", example=(
        ">>> tf.keras.ops.sinc([0.0, 1.0]).numpy().round(6)\n"
        "    array([ 1., -0.], dtype=float32)")),
    "deg2rad": unary("Elementwise conversion of degrees to radians.", int64="float64"),
    "rad2deg": unary("Elementwise conversion of radians to degrees.", int64="float64"),
    "i0": unary("Elementwise modified Bessel function of the first kind, order 0.",
                int64="float64"),
    "trunc": """Elementwise truncation toward zero (the fractional part dropped).

    Args:
      x: a tensor or array-like; ints and bools are returned unchanged.

    Returns:
      A tensor of `x`'s shape and dtype.

    Example:

    >>> tf.keras.ops.trunc([1.7, -1.7]).numpy()
    array([ 1., -1.], dtype=float32)
    """,
    "round": """Elementwise rounding to `decimals` decimal places, halves to even.

    Args:
      x: a tensor or array-like.
      decimals: number of decimals to keep (an int). Negative rounds to tens, hundreds...;
        integer inputs with `decimals >= 0` are returned unchanged.

    Returns:
      A tensor of `x`'s shape and dtype.

    Example:

    >>> tf.keras.ops.round([0.5, 1.5, 2.25]).numpy()
    array([0., 2., 2.], dtype=float32)
    >>> tf.keras.ops.round([1234], decimals=-2).numpy()
    array([1200], dtype=int32)
    """,
    "arctan2": _binary(
        "Elementwise angle of the point `(x2, x1)`: `arctan(x1 / x2)` in the right quadrant.",
        "the y coordinates: a tensor, array-like or scalar.",
        "the x coordinates, broadcastable with `x1`.",
        "A float tensor (ints compute in floatx) of radians within [-pi, pi].",
        ">>> tf.keras.ops.arctan2([1.0], [1.0]).numpy()\n"
        "    array([0.7853982], dtype=float32)"),
    "hypot": _binary(
        "Elementwise hypotenuse `sqrt(x1**2 + x2**2)`.",
        "a tensor, array-like or scalar.", "likewise, broadcastable with `x1`.",
        "A float tensor of the broadcast shape (ints compute in floatx, int64 in float64).",
        ">>> tf.keras.ops.hypot([3], [4]).numpy()\n    array([5.], dtype=float32)",
        "TypeError: the operands are bool."),
    "heaviside": _binary(
        "Elementwise Heaviside step: 0 where `x1 < 0`, 1 where `x1 > 0`, `x2` where it is 0.",
        "the input values.", "the values to use where `x1` is 0 (broadcast against `x1`).",
        "A float tensor of the broadcast shape (ints compute in floatx, int64 in float64).",
        ">>> tf.keras.ops.heaviside([-1.0, 0.0, 2.0], 0.5).numpy()\n"
        "    array([0. , 0.5, 1. ], dtype=float32)",
        "TypeError: the operands are bool."),
    "logaddexp": _binary(
        "Elementwise `log(exp(x1) + exp(x2))`, computed without overflow.",
        "a tensor, array-like or scalar.", "likewise, broadcastable with `x1`.",
        "A float tensor of the broadcast shape (ints compute in floatx).",
        ">>> tf.keras.ops.logaddexp([0.0], [0.0]).numpy()\n"
        "    array([0.6931472], dtype=float32)"),
    "logaddexp2": _binary(
        "Elementwise `log2(2**x1 + 2**x2)`, computed without overflow.",
        "a tensor, array-like or scalar.", "likewise, broadcastable with `x1`.",
        "A float tensor of the broadcast shape (ints compute in floatx).",
        ">>> tf.keras.ops.logaddexp2([1.0], [1.0]).numpy()\n    array([2.], dtype=float32)"),
    "nextafter": _binary(
        "Elementwise next representable floating-point value after `x1` toward `x2`.",
        "the starting values.", "the direction values, broadcastable with `x1`.",
        "A float tensor of the promoted dtype (float16/bfloat16 step in float32 and are "
        "cast back)."),
    "ldexp": _binary(
        "Elementwise `x1 * 2 ** x2`.",
        "the mantissas: a tensor or array-like.",
        "the exponents: an integer tensor or array-like.",
        "A float tensor of the broadcast shape.",
        ">>> tf.keras.ops.ldexp([1.0, 3.0], [2, 1]).numpy()\n"
        "    array([4., 6.], dtype=float32)",
        "TypeError: `x2` is not of an integer dtype."),
}
