"""The docstrings of gather_batch.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "gather": """Gathers slices of `params` along an axis at the given indices.

    Args:
      params: the tensor to gather from.
      indices: an int tensor of positions along `axis`.
      validate_indices: deprecated; ignored.
      axis: the axis to gather along (default batch_dims).
      batch_dims: the number of leading batch dimensions shared by params and indices.
      name: optional name for the operation.

    Returns:
      A tensor of shape params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis +
      1:].

    Raises:
      InvalidArgumentError: for an out-of-range index (on CPU).

    Example:
      >>> tf.gather([10, 20, 30], [2, 0]).numpy()
      array([30, 10], dtype=int32)
    """,
}
