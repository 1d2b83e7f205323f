"""The docstrings of array_builders.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "eye": """An identity matrix, or a batch of them.

    Args:
      num_rows: the number of rows.
      num_columns: the number of columns (None: num_rows).
      batch_shape: optional leading batch dimensions.
      dtype: the element dtype.
      name: optional name for the operation.

    Returns:
      A tensor [*batch_shape, num_rows, num_columns] with ones on the diagonal.

    Example:
      >>> tf.eye(2, 3).numpy()
      array([[1., 0., 0.],
             [0., 1., 0.]], dtype=float32)
    """,
    "linspace": """`num` evenly spaced values from `start` to `stop`, both included.

    With tensor bounds, one sequence per element, along `axis`.

    Args:
      start: a float scalar or tensor, the first value.
      stop: a tensor of start's dtype and shape, the last value.
      num: the number of values (an int or int scalar tensor).
      name: optional name for the operation.
      axis: where the new axis goes for tensor bounds.

    Returns:
      A tensor of start's dtype.

    Example:
      >>> tf.linspace(0.0, 1.0, 5).numpy()
      array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """,
    "meshgrid": """Coordinate grids spanned by 1-D coordinate vectors.

    Args:
      *args: rank-1 tensors, one per grid axis.
      **kwargs: `indexing`: "xy" (Cartesian: the first two outputs' axes are swapped, the
        default) or "ij" (matrix); `name`.

    Returns:
      A list of tensors, one per input, each of the full grid shape.

    Raises:
      TypeError: for another keyword argument.

    Example:
      >>> [t.shape for t in tf.meshgrid([1, 2], [3, 4, 5])]
      [TensorShape([3, 2]), TensorShape([3, 2])]
    """,
    "repeat": """Repeats each element (or slice along `axis`) of a tensor.

    Args:
      input: a tensor.
      repeats: an int, or a 1-D int tensor with one count per slice along `axis`.
      axis: the axis to repeat along; None works on the flattened input.
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype.

    Raises:
      InvalidArgumentError: if repeats does not match the axis size.

    Example:
      >>> tf.repeat([1, 2], 2).numpy()
      array([1, 1, 2, 2], dtype=int32)
    """,
    "sequence_mask": """A mask of the first `lengths[i]` positions of each row.

    mask[i..., j] = j < lengths[i...].

    Args:
      lengths: an int tensor of lengths.
      maxlen: the size of the last dimension (None: max(lengths)).
      dtype: the mask dtype (bool by default).
      name: optional name for the operation.

    Returns:
      A tensor of shape lengths.shape + [maxlen].

    Example:
      >>> tf.sequence_mask([1, 3], 4).numpy()
      array([[ True, False, False, False],
             [ True,  True,  True, False]])
    """,
}
