"""The docstrings of state_scatter_nd.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "scatter_update": """Assigns `updates` to rows `indices` of the variable `ref`.

    With duplicate indices one of their updates is kept.

    Args:
      ref: a `tf.Variable`.
      indices: an int tensor of row indices into ref's first dimension.
      updates: a tensor of shape indices.shape + ref.shape[1:] (or a scalar).
      use_locking: accepted for compatibility.
      name: optional name for the operation.

    Returns:
      The variable's new value (in a graph, the op's output).

    Raises:
      InvalidArgumentError: for an index out of range.

    Example:
      >>> v = tf.Variable([1.0, 2.0, 3.0])
      >>> tf.compat.v1.scatter_update(v, [0, 2], [10.0, 30.0]).numpy()
      array([10.,  2., 30.], dtype=float32)
    """,
    "scatter_add": """Adds `updates` to rows `indices` of the variable `ref`.

    Updates at duplicate indices all apply.

    Args:
      ref: a `tf.Variable`.
      indices: an int tensor of row indices into ref's first dimension.
      updates: a tensor of shape indices.shape + ref.shape[1:] (or a scalar).
      use_locking: accepted for compatibility.
      name: optional name for the operation.

    Returns:
      The variable's new value (in a graph, the op's output).

    Raises:
      InvalidArgumentError: for an index out of range.

    Example:
      >>> v = tf.Variable([1.0, 2.0, 3.0])
      >>> tf.compat.v1.scatter_add(v, [0, 0], [1.0, 1.0]).numpy()
      array([3., 2., 3.], dtype=float32)
    """,
    "scatter_sub": """Subtracts `updates` from rows `indices` of the variable `ref`.

    Updates at duplicate indices all apply.

    Args:
      ref: a `tf.Variable`.
      indices: an int tensor of row indices into ref's first dimension.
      updates: a tensor of shape indices.shape + ref.shape[1:] (or a scalar).
      use_locking: accepted for compatibility.
      name: optional name for the operation.

    Returns:
      The variable's new value (in a graph, the op's output).

    Raises:
      InvalidArgumentError: for an index out of range.

    Example:
      >>> v = tf.Variable([1.0, 2.0, 3.0])
      >>> tf.compat.v1.scatter_sub(v, [1], [2.0]).numpy()
      array([1., 0., 3.], dtype=float32)
    """,
    "scatter_mul": """Multiplies by `updates` rows `indices` of the variable `ref`.

    Updates at duplicate indices all apply.

    Args:
      ref: a `tf.Variable`.
      indices: an int tensor of row indices into ref's first dimension.
      updates: a tensor of shape indices.shape + ref.shape[1:] (or a scalar).
      use_locking: accepted for compatibility.
      name: optional name for the operation.

    Returns:
      The variable's new value (in a graph, the op's output).

    Raises:
      InvalidArgumentError: for an index out of range.

    Example:
      >>> v = tf.Variable([1.0, 2.0, 3.0])
      >>> tf.compat.v1.scatter_mul(v, [2], [2.0]).numpy()
      array([1., 2., 6.], dtype=float32)
    """,
    "scatter_div": """Divides by `updates` rows `indices` of the variable `ref`.

    Updates at duplicate indices all apply.

    Args:
      ref: a `tf.Variable`.
      indices: an int tensor of row indices into ref's first dimension.
      updates: a tensor of shape indices.shape + ref.shape[1:] (or a scalar).
      use_locking: accepted for compatibility.
      name: optional name for the operation.

    Returns:
      The variable's new value (in a graph, the op's output).

    Raises:
      InvalidArgumentError: for an index out of range.

    Example:
      >>> v = tf.Variable([1.0, 2.0, 3.0])
      >>> tf.compat.v1.scatter_div(v, [1], [2.0]).numpy()
      array([1., 1., 3.], dtype=float32)
    """,
    "scatter_max": """Keeps the maximum with `updates` in rows `indices` of the variable `ref`.

    Updates at duplicate indices all apply.

    Args:
      ref: a `tf.Variable`.
      indices: an int tensor of row indices into ref's first dimension.
      updates: a tensor of shape indices.shape + ref.shape[1:] (or a scalar).
      use_locking: accepted for compatibility.
      name: optional name for the operation.

    Returns:
      The variable's new value (in a graph, the op's output).

    Raises:
      InvalidArgumentError: for an index out of range.

    Example:
      >>> v = tf.Variable([1.0, 2.0, 3.0])
      >>> tf.compat.v1.scatter_max(v, [0], [5.0]).numpy()
      array([5., 2., 3.], dtype=float32)
    """,
    "scatter_min": """Keeps the minimum with `updates` in rows `indices` of the variable `ref`.

    Updates at duplicate indices all apply.

    Args:
      ref: a `tf.Variable`.
      indices: an int tensor of row indices into ref's first dimension.
      updates: a tensor of shape indices.shape + ref.shape[1:] (or a scalar).
      use_locking: accepted for compatibility.
      name: optional name for the operation.

    Returns:
      The variable's new value (in a graph, the op's output).

    Raises:
      InvalidArgumentError: for an index out of range.

    Example:
      >>> v = tf.Variable([1.0, 2.0, 3.0])
      >>> tf.compat.v1.scatter_min(v, [2], [0.0]).numpy()
      array([1., 2., 0.], dtype=float32)
    """,
    "scatter_nd_update": """Assigns `updates` to the slices of the variable `ref` at N-D `indices`.

    Args:
      ref: a `tf.Variable`.
      indices: an int tensor [..., k] of index tuples into ref's first k dimensions.
      updates: a tensor of shape indices.shape[:-1] + ref.shape[k:].
      use_locking: accepted for compatibility.
      name: optional name for the operation.

    Returns:
      The variable's new value (in a graph, the op's output).

    Raises:
      InvalidArgumentError: for an index out of range.

    Example:
      >>> v = tf.Variable([1.0, 2.0, 3.0])
      >>> tf.compat.v1.scatter_nd_update(v, [[0], [2]], [10.0, 30.0]).numpy()
      array([10.,  2., 30.], dtype=float32)
    """,
    "scatter_nd_add": """Adds `updates` to the slices of the variable `ref` at N-D `indices`.

    Args:
      ref: a `tf.Variable`.
      indices: an int tensor [..., k] of index tuples into ref's first k dimensions.
      updates: a tensor of shape indices.shape[:-1] + ref.shape[k:].
      use_locking: accepted for compatibility.
      name: optional name for the operation.

    Returns:
      The variable's new value (in a graph, the op's output).

    Raises:
      InvalidArgumentError: for an index out of range.

    Example:
      >>> v = tf.Variable([1.0, 2.0, 3.0])
      >>> tf.compat.v1.scatter_nd_add(v, [[1]], [5.0]).numpy()
      array([1., 7., 3.], dtype=float32)
    """,
    "scatter_nd_sub": """Subtracts `updates` from the slices of the variable `ref` at N-D `indices`.

    Args:
      ref: a `tf.Variable`.
      indices: an int tensor [..., k] of index tuples into ref's first k dimensions.
      updates: a tensor of shape indices.shape[:-1] + ref.shape[k:].
      use_locking: accepted for compatibility.
      name: optional name for the operation.

    Returns:
      The variable's new value (in a graph, the op's output).

    Raises:
      InvalidArgumentError: for an index out of range.

    Example:
      >>> v = tf.Variable([1.0, 2.0, 3.0])
      >>> tf.compat.v1.scatter_nd_sub(v, [[1]], [1.0]).numpy()
      array([1., 1., 3.], dtype=float32)
    """,
}
