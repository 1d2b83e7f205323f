"""The docstrings of array_mask.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "boolean_mask": """Keeps the slices of a tensor where a boolean mask is true.

    Args:
      tensor: a tensor.
      mask: a boolean tensor whose shape matches tensor's dimensions [axis, axis +
        rank(mask)).
      axis: the first dimension the mask applies to (default 0).
      name: optional name for the operation.

    Returns:
      A tensor whose masked dimensions are flattened into one of size count(mask).

    Raises:
      ValueError: if the mask's shape does not fit.

    Example:
      >>> tf.boolean_mask([1, 2, 3], [True, False, True]).numpy()
      array([1, 3], dtype=int32)
    """,
}
