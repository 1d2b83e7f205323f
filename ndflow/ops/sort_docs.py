"""The docstrings of sort.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

_APPROX_TAIL = """      reduction_input_size_override: accepted for compatibility.
      aggregate_to_topk: accepted for compatibility.
      name: optional name for the operation.

    Returns:
      A tuple `(values, indices)`.

    Example:
      >>> tf."""

DOCS = {
    "sort": """Sorts a tensor along an axis.

    Args:
      values: a numeric tensor.
      axis: the axis to sort along (-1: the last).
      direction: "ASCENDING" or "DESCENDING".
      name: optional name for the operation.

    Returns:
      A tensor of values' shape and dtype.

    Raises:
      ValueError: for another direction.

    Example:
      >>> tf.sort([3, 1, 2], direction='DESCENDING').numpy()
      array([3, 2, 1], dtype=int32)
    """,
    "argsort": """The indices that sort a tensor along an axis.

    The sort is always stable (equal elements keep their order).

    Args:
      values: a numeric tensor.
      axis: the axis to sort along (-1: the last).
      direction: "ASCENDING" or "DESCENDING".
      stable: accepted; the sort is stable either way.
      name: optional name for the operation.

    Returns:
      An int32 tensor of values' shape.

    Raises:
      ValueError: for another direction.

    Example:
      >>> tf.argsort([3, 1, 2]).numpy()
      array([1, 2, 0], dtype=int32)
    """,
    "top_k": """The `k` largest entries along the last axis, and their indices.

    Ties go to the lower index.

    Args:
      input: a numeric tensor of rank >= 1 whose last dimension is at least k.
      k: the number of entries to keep.
      sorted: whether the result is sorted in descending order.
      index_type: int32 or int64, the dtype of the indices.
      name: optional name for the operation.

    Returns:
      A named tuple `(values, indices)`, each of input's shape with the last dimension k.

    Raises:
      InvalidArgumentError: if k is negative or larger than the last dimension.

    Example:
      >>> tf.math.top_k([1, 5, 3], k=2).values.numpy()
      array([5, 3], dtype=int32)
    """,
    "in_top_k": """Whether each target class is among the `k` highest predictions of its row.

    Args:
      targets: an int vector of class indices, one per row.
      predictions: a float32 tensor of shape [batch, classes].
      k: the number of top entries to consider.
      name: optional name for the operation.

    Returns:
      A boolean vector of shape [batch].

    Example:
      >>> tf.math.in_top_k([1, 0], [[0.1, 0.9], [0.8, 0.2]], 1).numpy()
      array([ True,  True])
    """,
    "in_top_k_v1": """Whether each target is among its row's `k` highest predictions (TF1 order).

    Args:
      predictions: a float32 tensor of shape [batch, classes].
      targets: an int vector of class indices, one per row.
      k: the number of top entries to consider.
      name: optional name for the operation.

    Returns:
      A boolean vector of shape [batch].

    Example:
      >>> tf.compat.v1.math.in_top_k([[0.1, 0.9]], [0], 1).numpy()
      array([False])
    """,
    **{f"approx_{m}_k": f"""The `k` {which} entries along an axis and their indices.

    TensorFlow computes these approximately on TPUs; here they are exact.

    Args:
      operand: a numeric tensor.
      k: the number of entries to keep.
      reduction_dimension: the axis to search.
      recall_target: accepted for compatibility; the result is exact here.
{_APPROX_TAIL}math.approx_{m}_k([1.0, 5.0, 3.0], 2)[0].numpy()
      array({out}, dtype=float32)
    """ for m, which, out in (("max", "largest", "[5., 3.]"), ("min", "smallest", "[1., 3.]"))},
    "approx_top_k": f"""The `k` largest (or smallest) entries along an axis and their indices.

    The approx_max_k / approx_min_k of TensorFlow's raw op; exact here.

    Args:
      input: a numeric tensor.
      k: the number of entries to keep.
      reduction_dimension: the axis to search.
      recall_target: accepted for compatibility.
      is_max_k: True for the largest entries, False for the smallest.
{_APPROX_TAIL}approx_top_k([1.0, 5.0, 3.0], 2)[0].numpy()
      array([5., 3.], dtype=float32)
    """,
}
