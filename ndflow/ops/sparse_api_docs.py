"""The docstrings of sparse_api.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "add": """Adds two tensors, at least one of them sparse.

    Two SparseTensors give a SparseTensor, dropping sums smaller in magnitude than
    `threshold`; a SparseTensor and a dense tensor give a dense tensor.

    Args:
      a: a `tf.SparseTensor` or dense tensor.
      b: a `tf.SparseTensor` or dense tensor of a's dense shape and dtype.
      threshold: the magnitude below which sparse sums are dropped.

    Returns:
      A SparseTensor, or a dense tensor when either input is dense.

    Example:
      >>> x = tf.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
      >>> tf.sparse.to_dense(tf.sparse.add(x, x)).numpy()
      array([[0., 2.],
             [4., 0.]], dtype=float32)
    """,
    "concat": """Joins SparseTensors along a dimension.

    Args:
      axis: the dimension to join along.
      sp_inputs: a list of SparseTensors of one rank and dtype.
      expand_nonconcat_dims: if True, the other dimensions grow to the largest input's instead
        of having to match.
      name: optional name for the operation.

    Returns:
      A SparseTensor.

    Raises:
      InvalidArgumentError: if the other dimensions differ (without `expand_nonconcat_dims`).

    Example:
      >>> x = tf.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
      >>> tf.sparse.concat(1, [x, x]).dense_shape.numpy()
      array([2, 4])
    """,
    "expand_dims": """Inserts a dimension of size 1 into a SparseTensor's shape.

    Args:
      sp_input: a `tf.SparseTensor`.
      axis: where the new dimension goes (negative counts from the end).
      name: optional name for the operation.

    Returns:
      A SparseTensor of rank + 1.

    Example:
      >>> x = tf.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
      >>> tf.sparse.expand_dims(x, 0).dense_shape.numpy()
      array([1, 2, 2])
    """,
    "eye": """The identity matrix as a SparseTensor.

    Args:
      num_rows: the number of rows.
      num_columns: the number of columns (None: num_rows).
      dtype: the value dtype.
      name: optional name for the operation.

    Returns:
      A SparseTensor of shape [num_rows, num_columns] with ones on the diagonal.

    Example:
      >>> tf.sparse.to_dense(tf.sparse.eye(2)).numpy()
      array([[1., 0.],
             [0., 1.]], dtype=float32)
    """,
    "fill_empty_rows": """Gives each empty row of a SparseTensor one entry at column 0.

    Args:
      sp_input: a `tf.SparseTensor` of rank >= 1.
      default_value: the value of the added entries.
      name: optional name for the operation.

    Returns:
      A tuple `(output, empty_row_indicator)`: the filled SparseTensor and a bool vector
      marking the rows that were empty.

    Example:
      >>> tf.sparse.fill_empty_rows(tf.sparse.SparseTensor([[0, 1]], [5], [2, 2]), 0)[1].numpy()
      array([False,  True])
    """,
    "from_dense": """The SparseTensor of the non-zero elements of a dense tensor.

    For strings, the non-empty elements.

    Args:
      tensor: a dense tensor.
      name: optional name for the operation.

    Returns:
      A SparseTensor of tensor's shape and dtype.

    Example:
      >>> tf.sparse.from_dense([[0, 3], [4, 0]]).values.numpy()
      array([3, 4], dtype=int32)
    """,
    "map_values": """Applies an elementwise op to the values of SparseTensors.

    The SparseTensor arguments must share their indices; other arguments are passed as they
    are.

    Args:
      op: a function on dense values, e.g. `tf.math.abs`.
      *args: its positional arguments, some of them SparseTensors.
      **kwargs: its keyword arguments.

    Returns:
      A SparseTensor with the shared indices and the op's results as values.

    Raises:
      ValueError: if no argument is a SparseTensor, or their indices differ.

    Example:
      >>> x = tf.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
      >>> tf.sparse.map_values(tf.math.negative, x).values.numpy()
      array([-1., -2.], dtype=float32)
    """,
    "mask": """Drops the slices of IndexedSlices whose index is in `mask_indices`.

    Args:
      a: a `tf.IndexedSlices`.
      mask_indices: a vector of indices to drop.
      name: optional name for the operation.

    Returns:
      An IndexedSlices without those slices.

    Example:
      >>> s = tf.IndexedSlices(tf.constant([[1.0], [2.0]]), tf.constant([0, 3]))
      >>> tf.sparse.mask(s, [3]).indices.numpy()
      array([0], dtype=int32)
    """,
    "reorder": """Puts the entries of a SparseTensor in canonical row-major order.

    Args:
      sp_input: a `tf.SparseTensor`.
      name: optional name for the operation.

    Returns:
      A SparseTensor with the same entries, sorted by index.

    Example:
      >>> tf.sparse.reorder(tf.sparse.SparseTensor([[1, 0], [0, 1]], [2, 1], [2, 2])).values.numpy()
      array([1, 2], dtype=int32)
    """,
    "reset_shape": """Changes the dense shape of a SparseTensor.

    Args:
      sp_input: a `tf.SparseTensor`.
      new_shape: the new dense shape, no smaller in any dimension; None: the tightest shape
        holding the entries.

    Returns:
      A SparseTensor with the same entries.

    Raises:
      ValueError: if new_shape is smaller than needed or has another rank.

    Example:
      >>> tf.sparse.reset_shape(tf.sparse.SparseTensor([[0, 1]], [1], [5, 5])).dense_shape.numpy()
      array([1, 2])
    """,
    "reshape": """Reshapes a SparseTensor, keeping its entries in row-major order.

    Args:
      sp_input: a `tf.SparseTensor`.
      shape: the new dense shape; one dimension may be -1 (inferred).
      name: optional name for the operation.

    Returns:
      A SparseTensor of the new shape.

    Raises:
      InvalidArgumentError: if the element counts differ.

    Example:
      >>> x = tf.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
      >>> tf.sparse.reshape(x, [4]).indices.numpy()
      array([[1],
             [2]])
    """,
    "retain": """Keeps the entries of a SparseTensor where a boolean vector is True.

    Args:
      sp_input: a `tf.SparseTensor`.
      to_retain: a bool vector with one entry per value.

    Returns:
      A SparseTensor with the kept entries.

    Raises:
      ValueError: if `to_retain` has the wrong length.

    Example:
      >>> x = tf.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
      >>> tf.sparse.retain(x, [True, False]).values.numpy()
      array([1.], dtype=float32)
    """,
    "slice": """The entries of a SparseTensor inside a box, re-based at its start.

    Args:
      sp_input: a `tf.SparseTensor`.
      start: the first index of the box in each dimension.
      size: the box's size in each dimension.
      name: optional name for the operation.

    Returns:
      A SparseTensor of shape `size` (clipped to the input).

    Example:
      >>> x = tf.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
      >>> tf.sparse.slice(x, [1, 0], [1, 2]).values.numpy()
      array([2.], dtype=float32)
    """,
    "sparse_dense_matmul": """The dense product of a rank-2 SparseTensor and a dense matrix.

    Either operand may be the sparse one.

    Args:
      sp_a: a rank-2 SparseTensor (or dense matrix).
      b: a dense matrix (or rank-2 SparseTensor).
      adjoint_a: whether to use the adjoint of `sp_a`.
      adjoint_b: whether to use the adjoint of `b`.
      name: optional name for the operation.

    Returns:
      A dense matrix.

    Example:
      >>> x = tf.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
      >>> tf.sparse.sparse_dense_matmul(x, [[1.0], [1.0]]).numpy()
      array([[1.],
             [2.]], dtype=float32)
    """,
    "split": """Splits a SparseTensor into `num_split` pieces along an axis.

    When the size is not divisible, the first size % num_split pieces are one larger.

    Args:
      sp_input: a `tf.SparseTensor`.
      num_split: the number of pieces.
      axis: the dimension to split.
      name: optional name for the operation.

    Returns:
      A list of SparseTensors.

    Example:
      >>> x = tf.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
      >>> [s.dense_shape.numpy().tolist() for s in tf.sparse.split(sp_input=x, num_split=2, axis=0)]
      [[1, 2], [1, 2]]
    """,
    "to_indicator": """A dense boolean indicator of the ids each row of a SparseTensor holds.

    Args:
      sp_input: a SparseTensor of int ids; its last dimension indexes the ids of a row.
      vocab_size: the number of possible ids (the output's last dimension).
      name: optional name for the operation.

    Returns:
      A bool tensor of shape dense_shape[:-1] + [vocab_size].

    Example:
      >>> ids = tf.sparse.SparseTensor([[0, 0], [0, 1]], [2, 0], [1, 2])
      >>> tf.sparse.to_indicator(ids, 3).numpy()
      array([[ True, False,  True]])
    """,
    "transpose": """Permutes the dimensions of a SparseTensor.

    Args:
      sp_input: a `tf.SparseTensor`.
      perm: the permutation; None reverses the dimensions.
      name: optional name for the operation.

    Returns:
      A SparseTensor in canonical order.

    Example:
      >>> x = tf.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
      >>> tf.sparse.to_dense(tf.sparse.transpose(x)).numpy()
      array([[0., 2.],
             [1., 0.]], dtype=float32)
    """,
}
