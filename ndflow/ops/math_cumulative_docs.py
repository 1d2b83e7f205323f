"""The docstrings of math_cumulative.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "cumsum": """The running sums of a tensor along an axis.

    Args:
      x: a numeric tensor.
      axis: the axis to accumulate along.
      exclusive: if True, each output excludes its own element (the first is 0).
      reverse: if True, accumulate from the end.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.cumsum([1, 2, 3], exclusive=True).numpy()
      array([0, 1, 3], dtype=int32)
    """,
}
