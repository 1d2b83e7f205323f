"""The docstrings of arithmetic.py's public functions (attached at its end; see
core/doc_tables.py)."""

from __future__ import annotations

_NAME = "      name: optional name for the operation.\n"


def _binary(summary: str, example: str, result: str, details: str = "",
            x: str = "a numeric tensor.", ret: str = "") -> str:
    call, out = example.split(" -> ")
    return f"""{summary}
{details}
    Args:
      x: {x}
      y: a tensor of x's dtype, broadcastable against `x`.
{_NAME}
    Returns:
      {ret or "A tensor of the broadcast shape and x's dtype."}

    Example:
      >>> {call}.numpy()
      {result}
    """


DOCS = {
    "add": _binary("Elementwise `x + y` (for strings, concatenation).",
                   "tf.add([1, 2], [10, 20]) -> ", "array([11, 22], dtype=int32)",
                   x="a numeric or string tensor."),
    "subtract": _binary("Elementwise `x - y`.", "tf.subtract([5, 7], 2) -> ",
                        "array([3, 5], dtype=int32)"),
    "multiply": _binary("Elementwise `x * y`.", "tf.multiply([1, 2, 3], 2) -> ",
                        "array([2, 4, 6], dtype=int32)"),
    "real_div": _binary("Elementwise `x / y` for real types; integer division truncates.",
                        "tf.realdiv([7.0, -7.0], 2.0) -> ",
                        "array([ 3.5, -3.5], dtype=float32)"),
    "floormod": _binary("Elementwise remainder of floor division: the result has the sign of "
                        "`y`.", "tf.math.floormod([7, -7], 3) -> ", "array([1, 2], dtype=int32)",
                        "\n    `floordiv(x, y) * y + floormod(x, y) == x`.\n"),
    "pow": _binary("Elementwise `x ** y`.", "tf.pow([2, 3], 2) -> ",
                   "array([4, 9], dtype=int32)"),
    "maximum": _binary("Elementwise maximum of `x` and `y` (NaN if either is NaN).",
                       "tf.maximum([1, 5], [3, 2]) -> ", "array([3, 5], dtype=int32)"),
    "minimum": _binary("Elementwise minimum of `x` and `y` (NaN if either is NaN).",
                       "tf.minimum([1, 5], [3, 2]) -> ", "array([1, 2], dtype=int32)"),
    "squared_difference": _binary("Elementwise `(x - y) ** 2`.",
                                  "tf.math.squared_difference([1, 5], 3) -> ",
                                  "array([4, 4], dtype=int32)"),
    "truncatediv": _binary("Elementwise integer division rounding toward zero (C semantics).",
                           "tf.truncatediv([7, -7], 2) -> ", "array([ 3, -3], dtype=int32)",
                           x="an integer (or float) tensor."),
    "truncatemod": _binary("Elementwise remainder of truncated division: the sign of `x` "
                           "(C's fmod).", "tf.truncatemod([7, -7], 3) -> ",
                           "array([ 1, -1], dtype=int32)"),
    "floor_div_v1": _binary("Elementwise floor division `x // y`, rounding toward minus "
                            "infinity (the FloorDiv op).", "tf.compat.v1.floor_div([7, -7], 2) -> ",
                            "array([ 3, -4], dtype=int32)"),
    "truediv": _binary("Elementwise true division `x / y`; integers are divided as floats.",
                       "tf.math.truediv([1, 4], [2, 8]) -> ", "array([0.5, 0.5])",
                       "\n    int8/int16/uint8/uint16 are cast to float32 first, int32/int64 to "
                       "float64.\n", ret="A floating tensor of the broadcast shape.")
    .replace("a tensor of x's dtype,", "a tensor of x's dtype (converted to it),"),
    "divide": _binary("Elementwise `x / y` with Python 3 semantics (true division).",
                      "tf.divide([1, 4], 2) -> ", "array([0.5, 2. ])",
                      ret="A tensor of the broadcast shape; floating for integer inputs."),
    "div": _binary("Elementwise `x / y` with Python 2 semantics: floor division for integers.",
                   "tf.compat.v1.div([7, -7], 2) -> ", "array([ 3, -4], dtype=int32)"),
    "div_no_nan": _binary("Elementwise `x / y`, with 0 wherever `y` is 0.",
                          "tf.math.divide_no_nan([1.0, 1.0], [2.0, 0.0]) -> ",
                          "array([0.5, 0. ], dtype=float32)", x="a float or complex tensor."),
    "multiply_no_nan": _binary("Elementwise `x * y`, with 0 wherever `y` is 0 (even if `x` is "
                               "inf or NaN).",
                               "tf.math.multiply_no_nan([float('inf'), 2.0], [0.0, 3.0]) -> ",
                               "array([0., 6.], dtype=float32)", x="a float or complex tensor."),
}

_UNARY = """{summary}

    Args:
      x: {x}
""" + _NAME + """
    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> {call}.numpy()
      {result}
    """

DOCS.update({
    "negative": _UNARY.format(summary="Elementwise negation `-x`.", x="a numeric tensor.",
                              call="tf.negative([1, -2])", result="array([-1,  2], dtype=int32)"),
    "log": _UNARY.format(summary="Elementwise natural logarithm (-inf at 0, NaN below).",
                         x="a float or complex tensor.", call="tf.math.log([1.0, 100.0])",
                         result="array([0.       , 4.6051702], dtype=float32)"),
    "reciprocal": _UNARY.format(summary="Elementwise `1 / x`.", x="a numeric tensor.",
                                call="tf.math.reciprocal([2.0, 4.0])",
                                result="array([0.5 , 0.25], dtype=float32)"),
    "reciprocal_no_nan": _UNARY.format(summary="Elementwise `1 / x`, with 0 wherever `x` is 0.",
                                       x="a float or complex tensor.",
                                       call="tf.math.reciprocal_no_nan([2.0, 0.0])",
                                       result="array([0.5, 0. ], dtype=float32)"),
    "add_n": """Adds a list of tensors elementwise.

    Args:
      inputs: a non-empty list of tensors (or IndexedSlices) of one dtype and shape.
      name: optional name for the operation.

    Returns:
      A tensor of the inputs' shape and dtype.

    Raises:
      ValueError: if `inputs` is empty or the shapes differ.

    Example:
      >>> tf.add_n([[1, 2], [3, 4], [5, 6]]).numpy()
      array([ 9, 12], dtype=int32)
    """,
    "accumulate_n": """Adds a list of tensors elementwise (`add_n` after TF's extra checks).

    Args:
      inputs: a non-empty list of tensors of one dtype and compatible shapes.
      shape: optional expected shape of the inputs.
      tensor_dtype: optional expected dtype of the inputs.
      name: optional name for the operation.

    Returns:
      A tensor of the inputs' shape and dtype.

    Raises:
      ValueError: if `inputs` is empty, the shapes are incompatible, or the dtype or shape
        differs from the one given.

    Example:
      >>> tf.math.accumulate_n([[1, 2], [3, 4]]).numpy()
      array([4, 6], dtype=int32)
    """,
    "where": """Picks from `x` or `y` by `condition`, or gives the indices where it is true.

    Args:
      condition: a boolean tensor.
      x: values where `condition` is True; `condition`, `x` and `y` broadcast together.
      y: values where it is False (give both `x` and `y`, or neither).
      name: optional name for the operation.

    Returns:
      With `x` and `y`: a tensor of the broadcast shape and x's dtype. Without them: an
      int64 tensor of shape [num_true, rank(condition)], the coordinates of the True
      elements in row-major order.

    Raises:
      ValueError: if only one of `x` and `y` is given.

    Example:
      >>> tf.where([True, False], [1, 2], [10, 20]).numpy()
      array([ 1, 20], dtype=int32)
      >>> tf.where([True, False, True]).numpy()
      array([[0],
             [2]])
    """,
    "where_v1": """TF1's `where`: picks from `x` or `y` without broadcasting, or gives the indices.

    Args:
      condition: a boolean tensor of x's shape, or a vector picking whole rows of `x`/`y`.
      x: values where `condition` is True.
      y: values where it is False, of x's shape (give both `x` and `y`, or neither).
      name: optional name for the operation.

    Returns:
      With `x` and `y`: a tensor of x's shape and dtype. Without them: an int64 tensor of
      the coordinates of the True elements.

    Raises:
      ValueError: if only one of `x` and `y` is given.

    Example:
      >>> tf.compat.v1.where([True, False], [1, 2], [10, 20]).numpy()
      array([ 1, 20], dtype=int32)
    """,
})
