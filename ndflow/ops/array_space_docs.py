"""The docstrings of array_space.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    **{name: f"""Moves {what}.

    [b, h, w, c] becomes [b, {shape}].

    Args:
      input: a 4-D tensor (NHWC, or NCHW).
      block_size: the block edge, >= 2; {multiple}.
      data_format: "NHWC" or "NCHW".
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype.

    Raises:
      InvalidArgumentError: if {raises}.

    Example:
      >>> {example}
    """ for name, what, shape, multiple, raises, example in (
        ("space_to_depth", "spatial blocks into the channel dimension",
         "h / bs, w / bs, c * bs**2", "h and w must be multiples of it",
         "h or w is not divisible by block_size",
         "x = tf.reshape(tf.range(16), [1, 4, 4, 1])\n      >>> "
         "tf.nn.space_to_depth(x, 2).shape\n      TensorShape([1, 2, 2, 4])"),
        ("depth_to_space",
         "channel data into spatial blocks (the inverse of space_to_depth)",
         "h * bs, w * bs, c / bs**2", "c must be a multiple of its square",
         "c is not divisible by block_size**2",
         "tf.nn.depth_to_space(tf.ones([1, 1, 1, 4]), 2).shape\n"
         "      TensorShape([1, 2, 2, 1])"))},
    **{f"{name}_v1": f"""Moves {what} (TF1 argument order).

    See `tf.nn.{name}`.

    Args:
      input: a 4-D tensor.
      block_size: the block edge.
      name: optional name for the operation.
      data_format: "NHWC" or "NCHW".

    Returns:
      A tensor of input's dtype.

    Example:
      >>> {example}
    """ for name, what, example in (
        ("space_to_depth", "spatial blocks into the channel dimension",
         "x = tf.reshape(tf.range(16), [1, 4, 4, 1])\n      >>> "
         "tf.compat.v1.space_to_depth(x, 2).shape\n      TensorShape([1, 2, 2, 4])"),
        ("depth_to_space", "channel data into spatial blocks",
         "tf.compat.v1.depth_to_space(tf.ones([1, 1, 1, 4]), 2).shape\n"
         "      TensorShape([1, 2, 2, 1])"))},
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
    **{f"{name}_v1": f"""{title} (TF1 signature).

    Args:
      input: {tensor}
      {pads}: an int tensor [2, 2].
      block_size: the block edge.
      name: optional name for the operation.
      block_shape: the same as block_size.

    Returns:
      A tensor of input's dtype.

    Example:
      >>> {example}
    """ for name, title, tensor, pads, example in (
        ("space_to_batch", "Moves square spatial blocks into the batch",
         "a 4-D tensor [batch, height, width, depth].", "paddings",
         "x = tf.reshape(tf.range(16), [1, 4, 4, 1])\n      >>> "
         "tf.compat.v1.space_to_batch(x, [[0, 0], [0, 0]], 2).shape\n"
         "      TensorShape([4, 2, 2, 1])"),
        ("batch_to_space", "Moves batch blocks back into 2 spatial dimensions", "a 4-D tensor.",
         "crops", "tf.compat.v1.batch_to_space(tf.ones([4, 2, 2, 1]), [[0, 0], [0, 0]], 2)"
         ".shape\n      TensorShape([1, 4, 4, 1])"))},
}
