"""The docstrings of the element-wise asserts check_ops makes in loops (`assert_equal`,
`assert_less`, ..., `assert_positive`, ...), in their TF2 and TF1 signatures."""

from __future__ import annotations

# kind -> (the comparison, an example pair that holds)
BINARY = {
    "equal": ("==", "[1, 2], [1, 2]"),
    "none_equal": ("!=", "[1, 2], [3, 4]"),
    "less": ("<", "[1, 2], [3, 4]"),
    "less_equal": ("<=", "[1, 2], [1, 4]"),
    "greater": (">", "[3, 4], [1, 2]"),
    "greater_equal": (">=", "[3, 4], [3, 2]"),
}
UNARY = {"positive": (">", "[1, 2]"), "negative": ("<", "[-1, -2]"),
         "non_negative": (">=", "[0, 2]"), "non_positive": ("<=", "[0, -2]")}

_V1_ARGS = """      data: optional list of tensors printed if the check fails at run time.
      summarize: how many entries of each tensor to print.
      message: text prefixed to the error message.
"""
_V2_ARGS = """      message: text prefixed to the error message.
      summarize: how many entries of each tensor to print.
"""
_TAIL = """      name: optional name scope.

    Returns:
      None when executing eagerly (the check has passed); in a graph, the `Assert` op to
      run or depend on.

    Raises:
      InvalidArgumentError: when executing eagerly, or in a graph whose values are constant,
        if some element fails the check.

    Example:
      >>> tf.{path}({example})
    """


def binary_doc(kind: str, v1: bool) -> str:
    """The docstring of `assert_{kind}` (`v1`: TF1's signature)."""
    op, example = BINARY[kind]
    path = f"compat.v1.assert_{kind}" if v1 else f"debugging.assert_{kind}"
    return (f"""Checks `x {op} y` for every element (after broadcasting).

    Args:
      x: a numeric tensor.
      y: a tensor of x's dtype, broadcastable against `x`.
""" + (_V1_ARGS if v1 else _V2_ARGS) + _TAIL).format(path=path, example=example)


def unary_doc(text: str, v1: bool) -> str:
    """The docstring of `assert_{text}` (`v1`: TF1's signature)."""
    op, example = UNARY[text]
    path = f"compat.v1.assert_{text}" if v1 else f"debugging.assert_{text}"
    return (f"""Checks `x {op} 0` for every element.

    Args:
      x: a numeric tensor.
""" + (_V1_ARGS if v1 else _V2_ARGS) + _TAIL).format(path=path, example=example)
