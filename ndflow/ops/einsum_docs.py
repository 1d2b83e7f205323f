"""The docstrings of einsum.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "einsum": """Einstein summation: contracts tensors as an equation describes.

    For example 'ij,jk->ik' is matmul and 'ii->' the trace.

    Args:
      equation: the subscripts of each input and of the output, e.g. 'ij,jk->ik'.
      *inputs: the tensors.
      **kwargs: `name` and `optimize` (the contraction order strategy, 'greedy' by default).

    Returns:
      The result tensor.

    Raises:
      ValueError or InvalidArgumentError: if the equation does not fit the inputs.

    Example:
      >>> tf.einsum('ij,j->i', [[1, 2], [3, 4]], [1, 1]).numpy()
      array([3, 7], dtype=int32)
    """,
}
