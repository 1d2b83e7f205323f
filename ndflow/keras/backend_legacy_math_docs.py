"""Docstrings of `tf.keras.backend`'s Keras 1/2 elementwise math, comparisons, products,
joins and dtype promotion (backend_legacy.py; the rest: backend_legacy_docs.py). Attached by
`ndflow.keras.docstrings.attach`; the examples run as doctests."""

from __future__ import annotations

from ndflow.keras.backend_legacy_docs import reduce_doc
from ndflow.keras.docstrings import sections


def _elementwise(what: str, example: str = "") -> str:
    doc = f"""Elementwise {what}.

    Args:
      x: a tensor or array-like.

    Returns:
      A tensor of `x`'s shape and dtype.
    """
    return sections(doc, example=example)


def _binary(what: str, result: str) -> str:
    return f"""Elementwise {what}, broadcasting the two shapes.

    Args:
      x: a tensor or array-like.
      y: a tensor or array-like of `x`'s dtype.

    Returns:
      A {result} of the broadcast shape.
    """


def _compared(relation: str) -> str:
    return _binary(f"`x {relation} y`", "bool tensor")


DOCS = {
    "abs": _elementwise("absolute value"),
    "exp": _elementwise("natural exponential `e ** x` (float inputs)"),
    "log": _elementwise("natural logarithm (float inputs; 0 gives -inf)"),
    "sqrt": _elementwise("square root (float inputs; negatives give NaN)"),
    "square": _elementwise("square `x * x`",
                           ">>> tf.keras.backend.square(tf.constant([2, -3])).numpy()\n"
                           "    array([4, 9], dtype=int32)"),
    "sign": _elementwise("sign: -1, 0 or 1"),
    "round": _elementwise("rounding to the nearest integer value, halves to even"),
    "sin": _elementwise("sine, in radians (float inputs)"),
    "cos": _elementwise("cosine, in radians (float inputs)"),
    "tanh": _elementwise("hyperbolic tangent (float inputs)"),
    "sigmoid": _elementwise("logistic sigmoid `1 / (1 + exp(-x))` (float inputs)"),
    "softsign": _elementwise("softsign `x / (1 + |x|)` (float inputs)"),
    "equal": _compared("=="),
    "not_equal": _compared("!="),
    "greater": _compared(">"),
    "greater_equal": _compared(">="),
    "less": _compared("<"),
    "less_equal": _compared("<="),
    "maximum": _binary("larger of `x` and `y`", "tensor"),
    "minimum": _binary("smaller of `x` and `y`", "tensor"),
    "clip": """`x` with every value limited to [min_value, max_value].

    Args:
      x: a tensor.
      min_value: the lower bound (None: no lower bound).
      max_value: the upper bound (None: none); a Python number below `min_value` is
        raised to it (Keras 2's rule).

    Returns:
      A tensor of `x`'s shape and dtype.

    Example:

    >>> tf.keras.backend.clip(tf.constant([-2.0, 0.5, 3.0]), 0.0, 1.0).numpy()
    array([0. , 0.5, 1. ], dtype=float32)
    """,
    "mean": reduce_doc("arithmetic mean", " Bools count as floatx 0/1."),
    "batch_flatten": """`x` reshaped to 2-D: the batch axis kept, every other axis merged.

    Args:
      x: a tensor of rank 2 or more, (batch, ...).

    Returns:
      A tensor of shape (batch, product of the other dimensions).

    Example:

    >>> tf.keras.backend.batch_flatten(tf.zeros((2, 3, 4))).shape
    TensorShape([2, 12])
    """,
    "concatenate": """Joins a list of tensors along `axis` (sparse tensors are densified).

    Args:
      tensors: a list of tensors (or `tf.SparseTensor`s) equal in every axis but `axis`.
      axis: the axis to join along (default the last).

    Returns:
      The joined tensor.
    """,
    "dot": """Keras' dot product: a sum over `x`'s last axis and `y`'s second-to-last (its
    only axis for 1-D), for tensors of any rank (NumPy's `dot` rule).

    Args:
      x: a tensor.
      y: a tensor.

    Returns:
      A tensor of shape `x.shape[:-1] + y.shape[:-2] + y.shape[-1:]`.

    Example:

    >>> tf.keras.backend.dot(tf.ones((2, 3)), tf.ones((4, 3, 5))).shape
    TensorShape([2, 4, 5])
    """,
    "batch_dot": """Per-sample dot products of two batches: `x[i]` and `y[i]` are contracted
    over `axes`, for each sample i.

    Args:
      x: a tensor of rank 2 or more, (batch, ...).
      y: a tensor of rank 2 or more with the same batch size.
      axes: an int (the same axis of both) or a pair `(axis_of_x, axis_of_y)`; default:
        `x`'s last axis with `y`'s last (for 2-D `y`) or second-to-last.

    Returns:
      A tensor of `x`'s remaining axes then `y`'s; two 2-D inputs give (batch, 1).

    Raises:
      ValueError: an input of rank below 2, or a contraction over the batch axis 0.

    Example:

    >>> tf.keras.backend.batch_dot(tf.ones((2, 3)), tf.ones((2, 3))).numpy()
    array([[3.],
           [3.]], dtype=float32)
    """,
    "result_type": """The dtype Keras' promotion rules give for a mix of dtypes.

    Any float wins over ints and bool (the widest float; float16 with bfloat16 gives
    float32); ints promote as NumPy's; Python `int`, `float` and `bool` are weak types that
    take the kind of the other operands (a lone Python float gives floatx).

    Args:
      *dtype_args: dtype names, `tf.DType`s, or the Python types int, float and bool.

    Returns:
      A dtype name.

    Example:

    >>> tf.keras.backend.result_type("int32", "float16")
    'float16'
    """,
    "repeat": """Repeats a 2-D tensor along a new middle axis: (batch, dim) to
    (batch, n, dim).

    Args:
      x: a tensor of shape (batch, dim).
      n: the number of repetitions.

    Returns:
      A tensor of shape (batch, n, dim).

    Raises:
      ValueError: `x` is not 2-D.
    """,
}
