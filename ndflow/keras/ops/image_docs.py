"""Docstrings of keras.ops.image's functions (image_functions.py, image_scale_translate.py,
rearrange_elastic.py). Attached by `ndflow.keras.docstrings.attach`; the examples run as
doctests."""

from __future__ import annotations

_IMAGES = """images: a 3-D image (height, width, channels) or 4-D batch (batch, height,
        width, channels); channels come first instead with "channels_first"."""
_FORMAT = """data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`)."""
_RANK_RAISES = "ValueError: `images` is not 3-D or 4-D, or a bad `data_format`."


def _pad_or_crop(verb: str, noun: str, example: str) -> str:
    return f"""{verb.capitalize()}s images to a target size at given offsets.

    Of `top_{noun}`, `bottom_{noun}` and `target_height`, exactly two must be given (the
    third follows); likewise `left_{noun}`, `right_{noun}` and `target_width`.

    Args:
      {_IMAGES}
      top_{noun}: rows {verb}ped at the top.
      left_{noun}: columns {verb}ped at the left.
      bottom_{noun}: rows {verb}ped at the bottom.
      right_{noun}: columns {verb}ped at the right.
      target_height: the height after {noun}.
      target_width: the width after {noun}.
      {_FORMAT}

    Returns:
      The {verb}ped images, in `images`' dtype.

    Raises:
      ValueError: not exactly two of a trio given, a negative result, or {_RANK_RAISES[12:]}

    Example:

    {example}
    """


def _hsv(src: str, dst: str) -> str:
    return f"""Converts {src} images to {dst} (each channel in [0, 1]; hue as a fraction
    of the full turn).

    Args:
      images: float images, 3-D or 4-D, with 3 channels.
      {_FORMAT}

    Returns:
      A tensor of `images`' shape and dtype.

    Raises:
      ValueError: `images` is not of a float dtype, or not 3-D or 4-D.
    """


DOCS = {
    "resize": f"""Resizes images to `size` (height, width).

    Args:
      {_IMAGES}
      size: a pair (height, width).
      interpolation: "bilinear", "nearest", "bicubic", "area", "lanczos3" or
        "lanczos5".
      antialias: whether to low-pass filter when downsampling.
      crop_to_aspect_ratio: whether to crop the central region of the target's aspect
        ratio first (no distortion; the image sizes must be known statically).
      pad_to_aspect_ratio: whether to pad with `fill_value` to the target's aspect
        ratio first instead.
      fill_mode: must be "constant".
      fill_value: the padding value for `pad_to_aspect_ratio`.
      {_FORMAT}

    Returns:
      The resized images, in `images`' dtype (integer images are rounded and clamped).

    Raises:
      ValueError: an unknown `interpolation` or `fill_mode`, both aspect-ratio options,
        a `size` that is not a pair, or {_RANK_RAISES[12:]}

    Example:

    >>> tf.keras.ops.image.resize(tf.zeros((2, 8, 8, 3)), (4, 6)).shape
    TensorShape([2, 4, 6, 3])
    """,
    "affine_transform": f"""Applies projective transforms to images: each output pixel (x, y)
    samples the input at `((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)`,
    `k = c0 x + c1 y + 1`.

    Args:
      {_IMAGES}
      transform: 8 floats `[a0, a1, a2, b0, b1, b2, c0, c1]`, or (batch, 8) for one
        transform per image (output-to-input mapping).
      interpolation: "nearest" or "bilinear".
      fill_mode: how points outside the input are filled: "constant" (`fill_value`),
        "nearest" (edge pixel), "wrap" (tiling) or "reflect" (mirroring).
      fill_value: the value for "constant".
      {_FORMAT}

    Returns:
      The transformed images, of `images`' shape.

    Raises:
      ValueError: an unknown `interpolation` or `fill_mode`, a transform that is not 1-D
        or 2-D, or {_RANK_RAISES[12:]}

    Example:

    >>> shift = [1.0, 0.0, -1.0, 0.0, 1.0, 0.0, 0.0, 0.0]   # x_in = x_out - 1
    >>> out = tf.keras.ops.image.affine_transform(tf.ones((3, 3, 1)), shift)
    >>> out[..., 0].numpy()
    array([[0., 1., 1.],
           [0., 1., 1.],
           [0., 1., 1.]], dtype=float32)
    """,
    "perspective_transform": f"""Warps images so that the four `start_points` move to the
    four `end_points` (a projective transform; outside points are `fill_value`).

    Args:
      {_IMAGES}
      start_points: (4, 2) or (batch, 4, 2) (x, y) corner coordinates in the input.
      end_points: the matching coordinates in the output, same shape.
      interpolation: "nearest" or "bilinear".
      fill_value: the value of pixels mapped from outside the input.
      {_FORMAT}

    Returns:
      The warped images, of `images`' shape.
    """,
    "extract_patches": f"""Non-overlapping (or strided) patches of 2-D images, each flattened
    onto the channels axis.

    Args:
      {_IMAGES}
      size: the patch size, an int or (height, width); a 3-tuple extracts 3-D patches
        from volumes (as `extract_patches_3d`).
      strides: the step between patches (default `size`: no overlap).
      dilation_rate: spacing between the sampled pixels of a patch.
      padding: "valid" or "same".
      {_FORMAT}

    Returns:
      A tensor (batch, rows, cols, size_h * size_w * channels) (no batch axis for one
      image).

    Raises:
      TypeError: `size` is neither an int nor a pair.

    Example:

    >>> tf.keras.ops.image.extract_patches(tf.zeros((1, 4, 4, 3)), 2).shape
    TensorShape([1, 2, 2, 12])
    """,
    "extract_patches_3d": f"""Patches of 3-D volumes, each flattened onto the channels axis.

    Args:
      volumes: a 4-D volume (depth, height, width, channels) or 5-D batch of them.
      size: the patch size, an int or a 3-tuple.
      strides: the step between patches (default `size`).
      dilation_rate: spacing between the sampled voxels of a patch.
      padding: "valid" or "same".
      {_FORMAT}

    Returns:
      A tensor (batch, d, h, w, size_d * size_h * size_w * channels).

    Raises:
      TypeError: `size` is neither an int nor a 3-tuple.
    """,
    "pad_images": _pad_or_crop(
        "pad", "padding",
        ">>> tf.keras.ops.image.pad_images(tf.ones((2, 2, 1)), 1, 1, target_height=4,\n"
        "    ...                                target_width=4).shape\n"
        "    TensorShape([4, 4, 1])"),
    "crop_images": _pad_or_crop(
        "crop", "cropping",
        ">>> tf.keras.ops.image.crop_images(tf.ones((4, 4, 1)), 1, 1, target_height=2,\n"
        "    ...                                 target_width=2).shape\n"
        "    TensorShape([2, 2, 1])"),
    "rgb_to_grayscale": f"""Converts RGB images to grayscale with the ITU-R 601 luma weights
    (0.2989 R + 0.5870 G + 0.1140 B); one-channel images are returned as they are.

    Args:
      images: 3-D or 4-D images with 3 (or 1) channels.
      {_FORMAT}

    Returns:
      Images with one channel, in `images`' dtype.

    Raises:
      ValueError: a channel count other than 1 or 3, or {_RANK_RAISES[12:]}
    """,
    "rgb_to_hsv": _hsv("RGB", "HSV"),
    "hsv_to_rgb": _hsv("HSV", "RGB"),
    "gaussian_blur": f"""Blurs images with a Gaussian kernel (separately per channel, zero
    padding at the edges, so the output keeps the size).

    Args:
      {_IMAGES}
      kernel_size: (height, width) of the kernel.
      sigma: (sigma_y, sigma_x), the Gaussian's standard deviations.
      {_FORMAT}

    Returns:
      The blurred images, in `images`' dtype.

    Raises:
      {_RANK_RAISES}
    """,
    "scale_and_translate": """Resamples images along `spatial_dims`: output coordinate o reads
    the input at `(o + 0.5 - translation) / scale - 0.5` (JAX's `scale_and_translate`).

    Args:
      images: a float tensor.
      output_shape: the full output shape.
      scale: one scale factor per spatial dim.
      translation: one translation per spatial dim.
      spatial_dims: the axes to resample.
      method: "linear"/"bilinear"/"trilinear", "cubic"/"bicubic"/"tricubic",
        "lanczos3" or "lanczos5".
      antialias: whether to widen the kernel when downsampling.

    Returns:
      A tensor of `output_shape`.

    Raises:
      ValueError: an unknown `method`.
    """,
    "elastic_transform": f"""Randomly distorts images with a smooth displacement field (a
    Gaussian-blurred noise field scaled by `alpha`).

    Args:
      {_IMAGES}
      alpha: the strength of the displacement (in pixels, before blurring).
      sigma: the blur's standard deviation: larger is smoother.
      interpolation: "nearest" or "bilinear".
      fill_mode: "constant", "nearest", "wrap" or "reflect".
      fill_value: the value for "constant".
      seed: an int, a `keras.random.SeedGenerator`, or None for a fresh draw.
      {_FORMAT}

    Returns:
      The distorted images, of `images`' shape and dtype.

    Raises:
      ValueError: an unknown `interpolation` or `fill_mode`, or {_RANK_RAISES[12:]}
    """,
}

DOCS.update({
    "map_coordinates": """Samples `inputs` at arbitrary (fractional) coordinates, as SciPy's
    `ndimage.map_coordinates`.

    Args:
      inputs: a tensor of any rank N.
      coordinates: a tensor of shape (N, ...): for each output point, its coordinate along
        every input axis.
      order: the interpolation: 0 (nearest) or 1 (linear).
      fill_mode: how points outside `inputs` are read: "constant" (`fill_value`),
        "nearest", "wrap", "mirror" or "reflect" (SciPy's modes).
      fill_value: the value for "constant".

    Returns:
      A tensor of shape `coordinates.shape[1:]` in `inputs`' dtype.

    Raises:
      ValueError: an unknown `fill_mode`, or a first `coordinates` dimension other than
        N.
      NotImplementedError: `order` above 1.

    Example:

    >>> tf.keras.ops.image.map_coordinates([10.0, 20.0], [[0.5]], order=1).numpy()
    array([15.], dtype=float32)
    """,
    "sobel_edges": f"""The vertical and horizontal Sobel gradients of each channel (3x3
    kernels, edges reflected), as `tf.image.sobel_edges`.

    Args:
      {_IMAGES}
      {_FORMAT}

    Returns:
      A tensor of `images`' shape with a new last axis of 2: (dy, dx).

    Raises:
      {_RANK_RAISES}
    """,
    "ssim": f"""The structural similarity index (SSIM) of two images: local means,
    variances and covariance under a Gaussian window, combined and averaged over the image
    (1.0 for identical images).

    Args:
      image1: 3-D or 4-D images.
      image2: images of the same shape.
      max_val: the dynamic range of the pixel values (1.0 for [0, 1], 255 for bytes).
      filter_size: the Gaussian window's size (only full windows are used).
      filter_sigma: the Gaussian's standard deviation.
      k1: the luminance stabilizer (`c1 = (k1 * max_val)**2`).
      k2: the contrast stabilizer (`c2 = (k2 * max_val)**2`).
      {_FORMAT}

    Returns:
      A float32 scalar per image: shape () for 3-D inputs, (batch,) for 4-D.

    Raises:
      {_RANK_RAISES}
    """,
})

# the two that live in their own modules
SCALE_TRANSLATE_DOCS = {"scale_and_translate": DOCS.pop("scale_and_translate")}
ELASTIC_DOCS = {"elastic_transform": DOCS.pop("elastic_transform")}
