"""The docstrings of image_resize.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

_CENTERS = """
      half_pixel_centers: if True, pixels are sampled at their centers (as TF2's resize)."""

DOCS = {
    "resize": """Resizes images to `size` with the given method.

    Uses half-pixel centers, as TensorFlow 2 does; the result is float32 except for nearest-
    neighbor resizing, which keeps the dtype.

    Args:
      images: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].
      size: the new [height, width], two ints.
      method: a `tf.image.ResizeMethod` or its name: "bilinear", "nearest", "bicubic", "area",
        "lanczos3", "lanczos5", "gaussian" or "mitchellcubic".
      preserve_aspect_ratio: if True, the result fits inside `size` with the input's aspect
        ratio.
      antialias: whether to use an anti-aliasing filter when downsampling.
      name: optional name for the operation.

    Returns:
      A tensor of images' rank with the new height and width.

    Raises:
      ValueError: for an unknown method or an input rank other than 3 or 4.

    Example:
      >>> x = tf.reshape(tf.range(4.0), [2, 2, 1])
      >>> tf.image.resize(x, [4, 4], method='nearest')[:, :, 0].numpy()
      array([[0., 0., 1., 1.],
             [0., 0., 1., 1.],
             [2., 2., 3., 3.],
             [2., 2., 3., 3.]], dtype=float32)
    """,
    "resize_with_pad": """Resizes images to fit a target size, keeping the aspect ratio, then pads.

    The padding is zeros, split evenly on both sides.

    Args:
      image: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].
      target_height: the output height.
      target_width: the output width.
      method: the resize method (see `tf.image.resize`).
      antialias: whether to anti-alias when downsampling.

    Returns:
      A float tensor [..., target_height, target_width, channels].

    Example:
      >>> tf.image.resize_with_pad(tf.ones([2, 4, 1]), 4, 4)[:, :, 0].numpy()
      array([[0., 0., 0., 0.],
             [1., 1., 1., 1.],
             [1., 1., 1., 1.],
             [0., 0., 0., 0.]], dtype=float32)
    """,
    "resize_images": """Resizes images with TF1's resize (legacy pixel centers, `align_corners`).

    Args:
      images: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].
      size: the new [height, width], two ints.
      method: a `tf.compat.v1.image.ResizeMethod` value (0 bilinear, 1 nearest, 2 bicubic, 3
        area).
      align_corners: if True, the corner pixels of input and output are aligned (TF1
        semantics).
      preserve_aspect_ratio: if True, the result fits inside `size` keeping the aspect ratio.
      name: optional name for the operation.

    Returns:
      A tensor of images' rank with the new height and width.

    Raises:
      ValueError: for an unknown method or rank.

    Example:
      >>> tf.compat.v1.image.resize(tf.ones([2, 2, 1]), [4, 4]).shape
      TensorShape([4, 4, 1])
    """,
    "resize_image_with_pad": """Resizes images to fit a target size, then pads (TF1 resizing).

    The aspect ratio is kept; the padding is zeros.

    Args:
      image: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].
      target_height: the output height.
      target_width: the output width.
      method: a `tf.compat.v1.image.ResizeMethod` value.
      align_corners: if True, the corner pixels of input and output are aligned (TF1
        semantics).

    Returns:
      A float tensor [..., target_height, target_width, channels].

    Example:
      >>> tf.compat.v1.image.resize_image_with_pad(tf.ones([2, 4, 1]), 4, 4).shape
      TensorShape([4, 4, 1])
    """,
    **{f"resize_{kind}": f"""{title} of a batch of images (the {op}).
{details}
    Args:
      images: a 4-D tensor [batch, height, width, channels].
      size: the new [height, width], two ints.
      align_corners: if True, the corner pixels of input and output are aligned (TF1
        semantics).
      name: optional name for the operation.{centers}

    Returns:
      A {dtype} [batch, new_height, new_width, channels].

    Example:
      >>> x = tf.ones([1, 2, 2, 1])
      >>> tf.compat.v1.image.resize_{kind}(x, [{n}, {n}]).shape
      TensorShape([1, {n}, {n}, 1])
    """ for kind, title, op, details, centers, dtype, n in (
        ("bilinear", "Bilinear resizing", "ResizeBilinear op", "", _CENTERS, "float32 tensor", 4),
        ("bicubic", "Bicubic resizing", "ResizeBicubic op", "", _CENTERS, "float32 tensor", 4),
        ("nearest_neighbor", "Nearest-neighbor resizing", "raw op", "", _CENTERS,
         "tensor of images' dtype", 4),
        ("area", "Area resizing", "ResizeArea op",
         "\n    Each output pixel averages the input pixels it covers.\n", "", "float32 tensor",
         1))},
    "ResizeMethod": """The resize methods `tf.image.resize` accepts, as constants.

    Attributes:
      BILINEAR: "bilinear", linear interpolation in both dimensions (the default).
      NEAREST_NEIGHBOR: "nearest", the nearest input pixel (keeps the dtype).
      BICUBIC: "bicubic", cubic interpolation.
      AREA: "area", the average of the covered input pixels.
      LANCZOS3: "lanczos3", a Lanczos kernel of radius 3.
      LANCZOS5: "lanczos5", a Lanczos kernel of radius 5.
      GAUSSIAN: "gaussian", a Gaussian kernel of radius 3.
      MITCHELLCUBIC: "mitchellcubic", the Mitchell-Netravali cubic filter.

    Example:
      >>> tf.image.resize(tf.ones([2, 2, 1]), [4, 4], tf.image.ResizeMethod.BICUBIC).shape
      TensorShape([4, 4, 1])
    """,
    "ResizeMethodV1": """TF1's resize methods (`tf.compat.v1.image.ResizeMethod`), as ints.

    Attributes:
      BILINEAR: 0.
      NEAREST_NEIGHBOR: 1.
      BICUBIC: 2.
      AREA: 3.

    Example:
      >>> tf.compat.v1.image.ResizeMethod.NEAREST_NEIGHBOR
      1
    """,
}
