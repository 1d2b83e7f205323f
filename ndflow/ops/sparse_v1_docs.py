"""The docstrings of sparse_v1.py's public functions (attached at its end; see
core/doc_tables.py); the reductions and the segment functions each from one template."""

from __future__ import annotations

from ndflow.core.doc_tables import family, note

DOCS = {
    "add_v1": """Adds two tensors, at least one sparse (TF1 signature, with `thresh`).

    See `tf.sparse.add`; `thresh` is the old name of `threshold`.

    Args:
      a: a SparseTensor or dense tensor.
      b: a SparseTensor or dense tensor.
      threshold: sums smaller in magnitude are dropped (sparse + sparse only).
      thresh: deprecated alias of `threshold`.

    Returns:
      A SparseTensor, or a dense tensor when either input is dense.

    Example:
      >>> x = tf.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
      >>> tf.compat.v1.sparse.add(x, x).values.numpy()
      array([2., 4.], dtype=float32)
    """,
    "concat_v1": """Joins SparseTensors along a dimension (TF1 signature).

    See `tf.sparse.concat`; `concat_dim` and `expand_nonconcat_dim` are the old names.

    Args:
      axis: the dimension to join along.
      sp_inputs: a list of SparseTensors.
      name: optional name for the operation.
      expand_nonconcat_dim: let the other dimensions grow to the largest input's.
      concat_dim: deprecated alias of `axis`.
      expand_nonconcat_dims: the same as `expand_nonconcat_dim`.

    Returns:
      A SparseTensor.

    Example:
      >>> x = tf.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
      >>> tf.compat.v1.sparse.concat(1, [x, x]).dense_shape.numpy()
      array([2, 4])
    """,
    "split_v1": """Splits a SparseTensor into `num_split` pieces along an axis (TF1).

    Keyword arguments only. See `tf.sparse.split`; `split_dim` is the old name of `axis`.

    Args:
      keyword_required: guards against positional arguments.
      sp_input: a SparseTensor.
      num_split: the number of pieces.
      axis: the dimension to split.
      name: optional name for the operation.
      split_dim: deprecated alias of `axis`.

    Returns:
      A list of SparseTensors.

    Raises:
      ValueError: if arguments are passed positionally.

    Example:
      >>> x = tf.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
      >>> len(tf.compat.v1.sparse.split(sp_input=x, num_split=2, axis=0))
      2
    """,
    "sparse_to_dense": """A dense tensor with given values at given indices and a default elsewhere.

    Args:
      sparse_indices: an int tensor [n, rank] (or [n], or a scalar) of indices.
      output_shape: the dense shape.
      sparse_values: a scalar (used everywhere) or a vector of n values.
      default_value: the value elsewhere.
      validate_indices: whether indices must also be in row-major order and unique (when
        False, repeated indices are written in turn, the last one winning).
      name: optional name for the operation.

    Returns:
      A tensor of `output_shape` and the values' dtype.

    Raises:
      InvalidArgumentError: for an index outside `output_shape`, or with
        `validate_indices` an index out of order or repeated.

    Example:
      >>> tf.compat.v1.sparse_to_dense([[0, 1]], [2, 2], [5]).numpy()
      array([[0, 5],
             [0, 0]], dtype=int32)
    """,
    "merge": """Combines a SparseTensor of ids and one of values into a SparseTensor indexed by id.

    The output has a new last dimension of size `vocab_size`: entry [..., id] holds the
    value paired with that id.

    Args:
      sp_ids: a SparseTensor of int64 ids (or a list of them).
      sp_values: a SparseTensor of values with sp_ids' indices.
      vocab_size: the size of the id dimension (or a list, one per sp_ids).
      name: optional name for the operation.
      already_sorted: whether the ids are sorted within each row.

    Returns:
      A SparseTensor.

    Example:
      >>> ids = tf.sparse.SparseTensor([[0, 0], [0, 1]], tf.constant([1, 3], tf.int64), [1, 2])
      >>> vals = tf.sparse.SparseTensor([[0, 0], [0, 1]], [0.5, 0.7], [1, 2])
      >>> tf.compat.v1.sparse.merge(ids, vals, 4).indices.numpy()
      array([[0, 1],
             [0, 3]])
    """,
    "placeholder": """A SparseTensor of placeholders, fed in `Session.run` (TF1 graphs).

    Feed it a `tf.compat.v1.SparseTensorValue` (or a SparseTensor value).

    Args:
      dtype: the values' dtype.
      shape: optional dense shape (None: any).
      name: optional name for the operation.

    Returns:
      A SparseTensor whose indices, values and dense shape are placeholders.

    Raises:
      RuntimeError: when executing eagerly.
    """,
} | family("""The {what} of a SparseTensor's values over axes{result}.
{note}
    Args:
      sp_input: a `tf.SparseTensor`.
      axis: the axes to reduce; None reduces every axis.
      keepdims: if True, the reduced dimensions stay as size 1.
      reduction_axes: deprecated alias of `axis`.
      keep_dims: deprecated alias of `keepdims`.

    Returns:
      A {kind} of the reduced shape.

    Example:
      >>> x = tf.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
      >>> {example}
      {out}
    """, {
    "reduce_sum_v1": dict(what="sum", example="float(tf.compat.v1.sparse.reduce_sum(x))",
                          out="3.0"),
    "reduce_max_v1": dict(
        what="maximum", out="array([1., 2.], dtype=float32)",
        note=note("Positions without values do not count (an all-empty slice gives the "
                  "dtype's lowest\n    value)."),
        example="tf.compat.v1.sparse.reduce_max(x, reduction_axes=1).numpy()"),
    "reduce_sum_sparse_v1": dict(what="sum", result=", as a SparseTensor", kind="SparseTensor",
                                 example="tf.compat.v1.sparse.reduce_sum_sparse(x, 1).values"
                                         ".numpy()", out="array([1., 2.], dtype=float32)"),
    "reduce_max_sparse_v1": dict(what="maximum", result=" (sparse result)", kind="SparseTensor",
                                 example="tf.compat.v1.sparse.reduce_max_sparse(x, 1).values"
                                         ".numpy()", out="array([1., 2.], dtype=float32)"),
}, result=", as a dense tensor", kind="dense tensor") | family(
    """{what} by sorted segment ids ({order}).

    Args:
      data: a tensor whose first dimension is indexed by `indices`.
      indices: a 1-D int tensor selecting rows of `data`.
      segment_ids: a 1-D sorted int tensor: the segment of each selected row.
      name: optional name for the operation.
      num_segments: optional number of output segments.
      sparse_gradient: accepted for compatibility.

    Returns:
      A tensor with one row per segment.

    Example:
      >>> tf.compat.v1.sparse.{public}({data}, [0, 1], [0, 0]).numpy()
      {out}
    """, {
    "segment_sum_v1": dict(what="Sums the rows `data[indices]`", order="TF1 argument order",
                           public="segment_sum", out="array([[4., 6.]], dtype=float32)"),
    "segment_mean_v1": dict(what="Averages the rows `data[indices]`", public="segment_mean",
                            out="array([[2., 3.]], dtype=float32)"),
    "segment_sqrt_n_v1": dict(what="Sums `data[indices]` per segment over sqrt(row count)",
                              public="segment_sqrt_n", data="[[1.0], [3.0]]",
                              out="array([[2.828427]], dtype=float32)"),
}, order="TF1 order", data="[[1.0, 2.0], [3.0, 4.0]]")
