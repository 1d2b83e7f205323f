"""The docstrings of array_misc.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "broadcast_dynamic_shape": """The broadcast of two shapes given as 1-D int tensors.

    Args:
      shape_x: a 1-D int tensor, a shape.
      shape_y: a 1-D int tensor, a shape.

    Returns:
      A 1-D int tensor, the broadcast shape.

    Raises:
      InvalidArgumentError: if the shapes are incompatible.

    Example:
      >>> tf.broadcast_dynamic_shape([1, 3], [2, 1]).numpy()
      array([2, 3], dtype=int32)
    """,
    "broadcast_static_shape": """The broadcast of two `tf.TensorShape`s.

    Unknown dimensions are allowed.

    Args:
      shape_x: a `tf.TensorShape`.
      shape_y: a `tf.TensorShape`.

    Returns:
      A `tf.TensorShape`.

    Raises:
      ValueError: if the shapes are incompatible.

    Example:
      >>> tf.broadcast_static_shape(tf.TensorShape([1, 3]), tf.TensorShape([2, 1]))
      TensorShape([2, 3])
    """,
    "guarantee_const": """Returns `input`, marked as constant for the runtime.

    Deprecated in TensorFlow.

    Args:
      input: a tensor.
      name: optional name for the operation.

    Returns:
      A tensor equal to `input`.

    Example:
      >>> tf.guarantee_const([1, 2]).numpy()
      array([1, 2], dtype=int32)
    """,
    "parallel_stack": """Stacks same-shaped tensors along a new first axis.

    The same result as `tf.stack(values)`, built in a graph; the shapes must be fully known.

    Args:
      values: a list of tensors of one shape and dtype.
      name: optional name for the operation.

    Returns:
      A tensor of shape [len(values)] + values[0].shape.

    Raises:
      RuntimeError: when executing eagerly (as in TensorFlow).
      ValueError: if a shape is not fully known.

    Example:
      >>> g = tf.Graph()
      >>> with g.as_default(): s = tf.parallel_stack([[1, 2], [3, 4]])
      >>> s.shape
      TensorShape([2, 2])
    """,
    "unravel_index": """Converts flat indices into coordinates of an array of shape `dims`.

    The flat indices count in row-major order.

    Args:
      indices: an int tensor of flat indices.
      dims: a 1-D int tensor, the array's shape.
      name: optional name for the operation.

    Returns:
      An int tensor [len(dims)] + indices.shape of coordinates.

    Raises:
      InvalidArgumentError: for an index outside the array.

    Example:
      >>> tf.unravel_index([5], [2, 3]).numpy()
      array([[1],
             [2]], dtype=int32)
    """,
}
