"""The docstrings of array_space.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "space_to_depth": """Moves spatial blocks into the channel dimension.

    [b, h, w, c] becomes [b, h / bs, w / bs, c * bs**2].

    Args:
      input: a 4-D tensor (NHWC, or NCHW).
      block_size: the block edge, >= 2; h and w must be multiples of it.
      data_format: "NHWC" or "NCHW".
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype.

    Raises:
      InvalidArgumentError: if h or w is not divisible by block_size.

    Example:
      >>> x = tf.reshape(tf.range(16), [1, 4, 4, 1])
      >>> tf.nn.space_to_depth(x, 2).shape
      TensorShape([1, 2, 2, 4])
    """,
    "depth_to_space": """Moves channel data into spatial blocks (the inverse of space_to_depth).

    [b, h, w, c] becomes [b, h * bs, w * bs, c / bs**2].

    Args:
      input: a 4-D tensor (NHWC, or NCHW).
      block_size: the block edge, >= 2; c must be a multiple of its square.
      data_format: "NHWC" or "NCHW".
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype.

    Raises:
      InvalidArgumentError: if c is not divisible by block_size**2.

    Example:
      >>> tf.nn.depth_to_space(tf.ones([1, 1, 1, 4]), 2).shape
      TensorShape([1, 2, 2, 1])
    """,
    "space_to_depth_v1": """Moves spatial blocks into the channel dimension (TF1 argument order).

    See `tf.nn.space_to_depth`.

    Args:
      input: a 4-D tensor.
      block_size: the block edge.
      name: optional name for the operation.
      data_format: "NHWC" or "NCHW".

    Returns:
      A tensor of input's dtype.

    Example:
      >>> x = tf.reshape(tf.range(16), [1, 4, 4, 1])
      >>> tf.compat.v1.space_to_depth(x, 2).shape
      TensorShape([1, 2, 2, 4])
    """,
    "depth_to_space_v1": """Moves channel data into spatial blocks (TF1 argument order).

    See `tf.nn.depth_to_space`.

    Args:
      input: a 4-D tensor.
      block_size: the block edge.
      name: optional name for the operation.
      data_format: "NHWC" or "NCHW".

    Returns:
      A tensor of input's dtype.

    Example:
      >>> tf.compat.v1.depth_to_space(tf.ones([1, 1, 1, 4]), 2).shape
      TensorShape([1, 2, 2, 1])
    """,
    "space_to_batch_nd": """Pads the spatial dimensions, then moves blocks of them to the batch.

    The batch grows by prod(block_shape); each spatial dimension shrinks by its block size.

    Args:
      input: a tensor [batch, spatial..., rest...].
      block_shape: a 1-D int tensor, one block size per spatial dimension.
      paddings: an int tensor [len(block_shape), 2]: the padding before and after each.
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype.

    Raises:
      InvalidArgumentError: if a padded dimension is not divisible by its block size.

    Example:
      >>> x = tf.reshape(tf.range(16), [1, 4, 4, 1])
      >>> tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]]).shape
      TensorShape([4, 2, 2, 1])
    """,
    "space_to_batch": """Moves blocks of the spatial dimensions into the batch (after zero-padding).

    The same as `tf.space_to_batch_nd`.

    Args:
      input: a tensor [batch, spatial..., rest...].
      block_shape: a 1-D int tensor of block sizes.
      paddings: an int tensor [len(block_shape), 2].
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype.

    Example:
      >>> x = tf.reshape(tf.range(16), [1, 4, 4, 1])
      >>> tf.space_to_batch(x, [2, 2], [[0, 0], [0, 0]]).shape
      TensorShape([4, 2, 2, 1])
    """,
    "space_to_batch_v1": """Moves square spatial blocks into the batch (TF1 signature).

    Args:
      input: a 4-D tensor [batch, height, width, depth].
      paddings: an int tensor [2, 2].
      block_size: the block edge.
      name: optional name for the operation.
      block_shape: the same as block_size.

    Returns:
      A tensor of input's dtype.

    Example:
      >>> x = tf.reshape(tf.range(16), [1, 4, 4, 1])
      >>> tf.compat.v1.space_to_batch(x, [[0, 0], [0, 0]], 2).shape
      TensorShape([4, 2, 2, 1])
    """,
    "batch_to_space_nd": """Moves blocks of the batch back into the spatial dimensions, then crops.

    The inverse of `tf.space_to_batch_nd`.

    Args:
      input: a tensor [batch, spatial..., rest...]; batch divisible by prod(block_shape).
      block_shape: a 1-D int tensor of block sizes.
      crops: an int tensor [len(block_shape), 2]: the amounts to crop from each spatial
        dimension.
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype.

    Example:
      >>> tf.compat.v1.batch_to_space_nd(tf.ones([4, 2, 2, 1]), [2, 2], [[0, 0], [0, 0]]).shape
      TensorShape([1, 4, 4, 1])
    """,
    "batch_to_space": """Moves blocks of the batch back into the spatial dimensions, then crops.

    The same as `batch_to_space_nd`; an int block_shape means square blocks.

    Args:
      input: a tensor [batch, spatial..., rest...].
      block_shape: a 1-D int tensor of block sizes, or an int.
      crops: an int tensor [len(block_shape), 2].
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype.

    Example:
      >>> tf.batch_to_space(tf.ones([4, 2, 2, 1]), [2, 2], [[0, 0], [0, 0]]).shape
      TensorShape([1, 4, 4, 1])
    """,
    "batch_to_space_v1": """Moves batch blocks back into 2 spatial dimensions (TF1 signature).

    Args:
      input: a 4-D tensor.
      crops: an int tensor [2, 2].
      block_size: the block edge.
      name: optional name for the operation.
      block_shape: the same as block_size.

    Returns:
      A tensor of input's dtype.

    Example:
      >>> tf.compat.v1.batch_to_space(tf.ones([4, 2, 2, 1]), [[0, 0], [0, 0]], 2).shape
      TensorShape([1, 4, 4, 1])
    """,
    "required_space_to_batch_paddings": """Paddings and crops that fit spatial sizes to block sizes.

    They make each padded spatial dimension divisible by its block size.

    Args:
      input_shape: the spatial shape, a 1-D int tensor.
      block_shape: a 1-D int tensor of block sizes.
      base_paddings: optional minimum paddings [n, 2] (zeros by default).
      name: optional name for the operation.

    Returns:
      A tuple `(paddings, crops)` of int tensors [n, 2].

    Example:
      >>> tf.required_space_to_batch_paddings([5, 4], [2, 2])[0].numpy()
      array([[0, 1],
             [0, 0]], dtype=int32)
    """,
}
