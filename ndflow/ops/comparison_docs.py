"""The docstrings of comparison.py's public functions (attached at its end; see
core/doc_tables.py)."""

from __future__ import annotations


def _cmp(op: str, call: str, result: str, x: str = "a numeric tensor.") -> str:
    return f"""Elementwise `x {op} y`, broadcasting the two shapes.

    Args:
      x: {x}
      y: a tensor of x's dtype, broadcastable against `x`.
      name: optional name for the operation.

    Returns:
      A boolean tensor of the broadcast shape.

    Example:
      >>> {call}.numpy()
      {result}
    """


def _logical(summary: str, call: str, result: str, unary: bool = False) -> str:
    y = "" if unary else "      y: a boolean tensor, broadcastable against `x`.\n"
    shape = "x's shape" if unary else "the broadcast shape"
    return f"""{summary}

    Args:
      x: a boolean tensor.
{y}      name: optional name for the operation.

    Returns:
      A boolean tensor of {shape}.

    Example:
      >>> {call}.numpy()
      {result}
    """


def _test(what: str, call: str, result: str) -> str:
    return f"""Elementwise test for {what}.

    Args:
      x: a float tensor (bfloat16, half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A boolean tensor of x's shape.

    Example:
      >>> {call}.numpy()
      {result}
    """


_ANY = "a tensor of any dtype (strings and booleans included)."
DOCS = {
    "equal": _cmp("==", "tf.math.equal([1, 2], 2)", "array([False,  True])", _ANY),
    "not_equal": _cmp("!=", "tf.math.not_equal([1, 2], 2)", "array([ True, False])", _ANY),
    "less": _cmp("<", "tf.math.less([1, 3], 2)", "array([ True, False])"),
    "less_equal": _cmp("<=", "tf.math.less_equal([1, 3], 1)", "array([ True, False])"),
    "greater": _cmp(">", "tf.math.greater([1, 3], 2)", "array([False,  True])"),
    "greater_equal": _cmp(">=", "tf.math.greater_equal([1, 2], 2)", "array([False,  True])"),
    "logical_and": _logical("Elementwise logical and, broadcasting the two shapes.",
                            "tf.math.logical_and([True, True], [True, False])",
                            "array([ True, False])"),
    "logical_or": _logical("Elementwise logical or, broadcasting the two shapes.",
                           "tf.math.logical_or([True, False], False)", "array([ True, False])"),
    "logical_xor": _logical("Elementwise logical exclusive or, broadcasting the two shapes.",
                            "tf.math.logical_xor([True, True], [True, False])",
                            "array([False,  True])"),
    "logical_not": _logical("Elementwise logical not.", "tf.math.logical_not([True, False])",
                            "array([False,  True])", unary=True),
    "is_finite": _test("a finite value (neither infinite nor NaN)",
                       "tf.math.is_finite([1.0, float('inf'), float('nan')])",
                       "array([ True, False, False])"),
    "is_nan": _test("NaN", "tf.math.is_nan([1.0, float('nan')])", "array([False,  True])"),
    "is_inf": _test("positive or negative infinity", "tf.math.is_inf([1.0, float('-inf')])",
                    "array([False,  True])"),
}
