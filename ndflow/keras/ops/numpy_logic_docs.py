"""Docstrings of keras.ops' elementwise comparisons, logical and bitwise ops, float tests and
gcd/lcm (numpy_math.py). Attached by `ndflow.keras.docstrings.attach`; the examples run as
doctests."""

from __future__ import annotations

from ndflow.keras.docstrings import sections


def _compare(relation: str, example: str) -> str:
    return f"""Elementwise `x1 {relation} x2`, broadcasting the two shapes.

    Args:
      x1: a tensor, array-like or Python scalar.
      x2: likewise. Python scalars take the other operand's dtype; two tensors are
        promoted to their common dtype before comparing.

    Returns:
      A bool tensor of the broadcast shape.

    Example:

    {example}
    """


def _logical(word: str, example: str) -> str:
    return f"""Elementwise logical {word} of `x1` and `x2`, broadcasting the two shapes.

    Args:
      x1: a tensor or array-like; nonzero values are True.
      x2: likewise.

    Returns:
      A bool tensor of the broadcast shape.

    Example:

    {example}
    """


def _bitwise(what: str, example: str = "") -> str:
    doc = f"""Elementwise {what} of two integer tensors.

    Args:
      x: an integer (or bool) tensor, array-like or scalar (a Python int is int32).
      y: likewise, broadcastable with `x`.

    Returns:
      A tensor of the broadcast shape in the operands' promoted integer dtype.
    """
    return sections(doc, example=example)


def _float_test(what: str, example: str = "") -> str:
    doc = f"""Elementwise test for {what}.

    Args:
      x: a tensor or array-like. Integer and bool values are always finite numbers.

    Returns:
      A bool tensor of `x`'s shape.
    """
    return sections(doc, example=example)


_SHIFT = ("the shift counts must lie in [0, bits of the dtype); other counts give "
          "values that depend on the kernel.")

DOCS = {
    "equal": _compare("==", ">>> tf.keras.ops.equal([1, 2], [1, 3]).numpy()\n"
                            "    array([ True, False])"),
    "not_equal": _compare("!=", ">>> tf.keras.ops.not_equal([1, 2], 2).numpy()\n"
                                "    array([ True, False])"),
    "less": _compare("<", ">>> tf.keras.ops.less([1, 2, 3], 2).numpy()\n"
                          "    array([ True, False, False])"),
    "less_equal": _compare("<=", ">>> tf.keras.ops.less_equal([1, 2, 3], 2).numpy()\n"
                                 "    array([ True,  True, False])"),
    "greater": _compare(">", ">>> tf.keras.ops.greater([1, 2, 3], 2).numpy()\n"
                             "    array([False, False,  True])"),
    "greater_equal": _compare(">=", ">>> tf.keras.ops.greater_equal([1, 2, 3], 2).numpy()\n"
                                    "    array([False,  True,  True])"),
    "logical_and": _logical("AND", ">>> tf.keras.ops.logical_and([True, True], [True, False])"
                                   ".numpy()\n    array([ True, False])"),
    "logical_or": _logical("OR", ">>> tf.keras.ops.logical_or([0, 1], [0, 0]).numpy()\n"
                                 "    array([False,  True])"),
    "logical_xor": _logical("XOR (exactly one is true)",
                            ">>> tf.keras.ops.logical_xor([True, True], [True, False])"
                            ".numpy()\n    array([False,  True])"),
    "logical_not": """Elementwise logical NOT.

    Args:
      x: a tensor or array-like; nonzero values are True.

    Returns:
      A bool tensor of `x`'s shape.

    Example:

    >>> tf.keras.ops.logical_not([0, 2]).numpy()
    array([ True, False])
    """,
    "isfinite": _float_test("finite values (neither inf nor NaN)",
                            ">>> tf.keras.ops.isfinite([1.0, float('inf'), float('nan')])"
                            ".numpy()\n    array([ True, False, False])"),
    "isnan": _float_test("NaN", ">>> tf.keras.ops.isnan([1.0, float('nan')]).numpy()\n"
                                "    array([False,  True])"),
    "isinf": _float_test("positive or negative infinity"),
    "isposinf": _float_test("positive infinity"),
    "isneginf": _float_test("negative infinity"),
    "isclose": """Elementwise test that `x1` and `x2` are equal within a tolerance.

    `x1` is close to `x2` where `|x1 - x2| <= atol + rtol * |x2|` (not symmetric in the
    two), or where they are equal (so equal infinities are close).

    Args:
      x1: a tensor, array-like or scalar.
      x2: likewise, broadcastable with `x1`. Ints compare in floatx.
      rtol: relative tolerance (a float).
      atol: absolute tolerance (a float).
      equal_nan: whether two NaNs count as close.

    Returns:
      A bool tensor of the broadcast shape.

    Example:

    >>> tf.keras.ops.isclose([1.0, 1.1], [1.0 + 1e-7, 1.0]).numpy()
    array([ True, False])
    """,
    "bitwise_and": _bitwise("bitwise AND", ">>> tf.keras.ops.bitwise_and([12], [10]).numpy()\n"
                                           "    array([8], dtype=int32)"),
    "bitwise_or": _bitwise("bitwise OR", ">>> tf.keras.ops.bitwise_or([12], [10]).numpy()\n"
                                         "    array([14], dtype=int32)"),
    "bitwise_xor": _bitwise("bitwise XOR", ">>> tf.keras.ops.bitwise_xor([12], [10]).numpy()\n"
                                           "    array([6], dtype=int32)"),
    "bitwise_left_shift": _bitwise(
        "left shift `x << y`; " + _SHIFT,
        ">>> tf.keras.ops.bitwise_left_shift([1, 3], 2).numpy()\n"
        "    array([ 4, 12], dtype=int32)"),
    "left_shift": _bitwise("left shift `x << y` (the same op as `bitwise_left_shift`); "
                           + _SHIFT),
    "bitwise_right_shift": _bitwise(
        "right shift `x >> y` (arithmetic for signed dtypes); " + _SHIFT,
        ">>> tf.keras.ops.bitwise_right_shift([16, -16], 2).numpy()\n"
        "    array([ 4, -4], dtype=int32)"),
    "right_shift": _bitwise("right shift `x >> y` (the same op as `bitwise_right_shift`); "
                            + _SHIFT),
    "bitwise_invert": """Elementwise bitwise NOT (`~x`): every bit flipped.

    Args:
      x: an integer or bool tensor or array-like.

    Returns:
      A tensor of `x`'s shape and dtype.

    Example:

    >>> tf.keras.ops.bitwise_invert([0, 5]).numpy()
    array([-1, -6], dtype=int32)
    """,
    "bitwise_not": """Elementwise bitwise NOT (`~x`); the same op as `bitwise_invert`.

    Args:
      x: an integer or bool tensor or array-like.

    Returns:
      A tensor of `x`'s shape and dtype.
    """,
    **{name: f"""Elementwise {what} of `|x1|` and `|x2|` ({zero}).

    Args:
      x1: an integer tensor, array-like or scalar.
      x2: likewise, broadcastable with `x1`.

    Returns:
      A non-negative tensor of the broadcast shape in the promoted integer dtype.

    Raises:
      TypeError: an operand is not of an integer dtype (bools included).

    Example:

    >>> tf.keras.ops.{name}({x1}, {x2}).numpy()
    array({out}, dtype=int32)
    """ for name, what, zero, x1, x2, out in (
        ("gcd", "greatest common divisor", "`gcd(0, 0)` is 0", [12, 7], [18, 0], "[6, 7]"),
        ("lcm", "least common multiple", "0 if either is 0", [4, 3], [6, 0], "[12,  0]"))},
}
