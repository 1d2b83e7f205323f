"""The docstrings of array_nd.py's TF2 functions (attached at its end; see
core/doc_tables.py); the tensor_scatter_nd_* family from one template."""

from __future__ import annotations

from ndflow.core.doc_tables import family, note

_POLICY = """
      bad_indices_policy: "", "DEFAULT" or "ERROR": an out-of-range index is an error;
        "IGNORE": the updates at out-of-range indices are skipped."""
_ALL = "Updates at duplicate indices all apply."

DOCS = {
    "gather_nd": """Gathers slices of `params` addressed by index tuples.

    Args:
      params: the tensor to gather from.
      indices: an int32/int64 tensor [..., k] of index tuples into the first k dimensions.
      batch_dims: the number of leading batch dimensions shared by params and indices.
      name: optional name for the operation.
      bad_indices_policy: "", "DEFAULT" or "ERROR": an out-of-range index is an error;
        "IGNORE": an out-of-range index reads zeros (empty strings).

    Returns:
      A tensor of shape indices.shape[:-1] + params.shape[batch_dims + k:].

    Raises:
      InvalidArgumentError: for an out-of-range index.

    Example:
      >>> tf.gather_nd([[1, 2], [3, 4]], [[1, 0], [0, 1]]).numpy()
      array([3, 2], dtype=int32)
    """,
    "scatter_nd": """A tensor of zeros of `shape` with `updates` added at `indices`.

    Updates at duplicate indices are summed.

    Args:
      indices: an int32/int64 tensor [..., k] of index tuples into the first k dimensions.
      updates: a tensor of shape indices.shape[:-1] + shape[k:].
      shape: the output shape.
      bad_indices_policy: "", "DEFAULT" or "ERROR": an out-of-range index is an error;
        "IGNORE": the updates at out-of-range indices are skipped.
      name: optional name for the operation.

    Returns:
      A tensor of `shape` and updates' dtype.

    Raises:
      InvalidArgumentError: for an out-of-range index.

    Example:
      >>> tf.scatter_nd([[1], [3]], [9, 10], [4]).numpy()
      array([ 0,  9,  0, 10], dtype=int32)
    """,
} | family("""A copy of `tensor` with `updates` {what} at `indices`.
{note}
    Args:
      tensor: the tensor to update (it is not changed).
      indices: an int32/int64 tensor [..., k] of index tuples into the first k dimensions.
      updates: a tensor of shape indices.shape[:-1] + tensor.shape[k:].{policy}
      name: optional name for the operation.

    Returns:
      A tensor of tensor's shape and dtype.

    Raises:
      InvalidArgumentError: for an out-of-range index.

    Example:
      >>> t = tf.zeros([4], tf.int32)
      >>> tf.{name}(t, {args}).numpy()
      {out}
    """, {
    f"tensor_scatter_nd_{op}": dict(what=what, args=args, out=f"array({out}, dtype=int32)",
                                    policy="" if op == "update" else _POLICY,
                                    note=note(_ALL) if op == "add" else "")
    for op, (what, args, out) in {  # op: (what the updates are, example indices and updates)
        "update": ("written", "[[1], [3]], [9, 10]", "[ 0,  9,  0, 10]"),
        "add": ("added", "[[1], [1]], [9, 10]", "[ 0, 19,  0,  0]"),
        "sub": ("subtracted", "[[2]], [5]", "[ 0,  0, -5,  0]"),
        "max": ("combined by maximum", "[[0]], [-3]", "[0, 0, 0, 0]"),
        "min": ("combined by minimum", "[[0]], [-3]", "[-3,  0,  0,  0]"),
    }.items()
})
