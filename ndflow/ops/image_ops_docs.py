"""The docstrings of image_ops.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "flip_left_right": """Mirrors images horizontally (reverses the width axis).

    Args:
      image: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].

    Returns:
      A tensor of image's shape and dtype.

    Raises:
      ValueError: if the rank is not 3 or 4.

    Example:
      >>> img = tf.reshape(tf.range(4.0), [2, 2, 1])
      >>> tf.image.flip_left_right(img)[:, :, 0].numpy()
      array([[1., 0.],
             [3., 2.]], dtype=float32)
    """,
    "flip_up_down": """Mirrors images vertically (reverses the height axis).

    Args:
      image: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].

    Returns:
      A tensor of image's shape and dtype.

    Raises:
      ValueError: if the rank is not 3 or 4.

    Example:
      >>> img = tf.reshape(tf.range(4.0), [2, 2, 1])
      >>> tf.image.flip_up_down(img)[:, :, 0].numpy()
      array([[2., 3.],
             [0., 1.]], dtype=float32)
    """,
    "random_flip_left_right": """Mirrors each image horizontally with probability 1/2.

    Args:
      image: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].
      seed: optional int seed.

    Returns:
      A tensor of image's shape and dtype.

    Example:
      >>> img = tf.reshape(tf.range(4.0), [2, 2, 1])
      >>> tf.image.random_flip_left_right(img, seed=1).shape
      TensorShape([2, 2, 1])
    """,
    "random_flip_up_down": """Mirrors each image vertically with probability 1/2.

    Args:
      image: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].
      seed: optional int seed.

    Returns:
      A tensor of image's shape and dtype.

    Example:
      >>> img = tf.reshape(tf.range(4.0), [2, 2, 1])
      >>> tf.image.random_flip_up_down(img, seed=1).shape
      TensorShape([2, 2, 1])
    """,
    "stateless_random_flip_left_right": """Mirrors each image horizontally with probability 1/2.

    The flips are determined by `seed`.

    Args:
      image: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].
      seed: a shape-[2] int tensor; the same seed gives the same result.

    Returns:
      A tensor of image's shape and dtype.

    Example:
      >>> img = tf.reshape(tf.range(4.0), [2, 2, 1])
      >>> tf.image.stateless_random_flip_left_right(img, seed=[1, 2]).shape
      TensorShape([2, 2, 1])
    """,
    "stateless_random_flip_up_down": """Mirrors each image vertically with probability 1/2.

    The flips are determined by `seed`.

    Args:
      image: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].
      seed: a shape-[2] int tensor; the same seed gives the same result.

    Returns:
      A tensor of image's shape and dtype.

    Example:
      >>> img = tf.reshape(tf.range(4.0), [2, 2, 1])
      >>> tf.image.stateless_random_flip_up_down(img, seed=[1, 2]).shape
      TensorShape([2, 2, 1])
    """,
    "central_crop": """Keeps the central part of images: `central_fraction` of the height and width.

    Args:
      image: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].
      central_fraction: a float in (0, 1].

    Returns:
      A tensor of image's rank and dtype.

    Raises:
      ValueError: if central_fraction is not in (0, 1].

    Example:
      >>> tf.image.central_crop(tf.ones([4, 4, 1]), 0.5).shape
      TensorShape([2, 2, 1])
    """,
    "crop_to_bounding_box": """Crops images to a box.

    Args:
      image: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].
      offset_height: the top row of the box.
      offset_width: the left column of the box.
      target_height: the box height.
      target_width: the box width.

    Returns:
      A tensor [..., target_height, target_width, channels].

    Raises:
      ValueError: if the box does not fit in the image (static shapes).

    Example:
      >>> tf.image.crop_to_bounding_box(tf.ones([4, 4, 1]), 1, 1, 2, 3).shape
      TensorShape([2, 3, 1])
    """,
    "pad_to_bounding_box": """Pads images with zeros to a target size, placing them at an offset.

    Args:
      image: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].
      offset_height: rows of zeros above the image.
      offset_width: columns of zeros left of it.
      target_height: the output height.
      target_width: the output width.

    Returns:
      A tensor [..., target_height, target_width, channels].

    Raises:
      ValueError: if the image does not fit (static shapes).

    Example:
      >>> tf.image.pad_to_bounding_box(tf.ones([2, 2, 1]), 1, 1, 4, 4)[:, :, 0].numpy()
      array([[0., 0., 0., 0.],
             [0., 1., 1., 0.],
             [0., 1., 1., 0.],
             [0., 0., 0., 0.]], dtype=float32)
    """,
    "resize_with_crop_or_pad": """Center-crops and/or zero-pads images to a target size.

    Args:
      image: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].
      target_height: the output height.
      target_width: the output width.

    Returns:
      A tensor [..., target_height, target_width, channels].

    Example:
      >>> tf.image.resize_with_crop_or_pad(tf.ones([2, 6, 1]), 4, 4).shape
      TensorShape([4, 4, 1])
    """,
    "per_image_standardization": """Scales each image to mean 0 and variance 1.

    Computes (x - mean) / max(stddev, 1 / sqrt(num_elements)) over each image.

    Args:
      image: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].

    Returns:
      A float tensor of image's shape (integer images become float32).

    Example:
      >>> tf.image.per_image_standardization([[[1.0], [3.0]]])[:, :, 0].numpy()
      array([[-1.,  1.]], dtype=float32)
    """,
    "random_crop": """Crops a tensor to `size` at a uniformly random offset.

    Args:
      value: the tensor to crop.
      size: the crop size, one entry per dimension (each <= value's).
      seed: optional int seed.
      name: optional name.

    Returns:
      A tensor of shape `size`.

    Raises:
      InvalidArgumentError: if size exceeds value's shape.

    Example:
      >>> tf.image.random_crop(tf.ones([4, 4, 3]), [2, 2, 3], seed=1).shape
      TensorShape([2, 2, 3])
    """,
    "stateless_random_crop": """Crops a tensor to `size` at a random offset that `seed` determines.

    Args:
      value: the tensor to crop.
      size: the crop size, one entry per dimension.
      seed: a shape-[2] int tensor; the same seed gives the same result.
      name: optional name.

    Returns:
      A tensor of shape `size`.

    Raises:
      InvalidArgumentError: if size exceeds value's shape.

    Example:
      >>> tf.image.stateless_random_crop(tf.ones([4, 4, 3]), [2, 2, 3], seed=[1, 2]).shape
      TensorShape([2, 2, 3])
    """,
}
