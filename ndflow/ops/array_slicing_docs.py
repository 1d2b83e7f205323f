"""The docstrings of array_slicing.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "concat": """Joins tensors along an existing dimension.

    Args:
      values: a list of tensors of one dtype and rank, equal in every dimension but `axis`.
      axis: the dimension to join along (negative counts from the end).
      name: optional name for the operation.

    Returns:
      A tensor of the values' dtype; its `axis` dimension is the sum of theirs.

    Raises:
      ValueError or InvalidArgumentError: if the ranks or other dimensions differ.

    Example:
      >>> tf.concat([[[1, 2]], [[3, 4]]], axis=0).numpy()
      array([[1, 2],
             [3, 4]], dtype=int32)
    """,
}
