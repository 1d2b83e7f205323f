"""The docstrings of image_adjust.py's public functions (attached at its end; see
core/doc_tables.py); the random adjustments' from image_color_docs' template."""

from __future__ import annotations

from ndflow.ops.image_color_docs import factors, random_pair

DOCS = {
    "adjust_brightness": """Adds `delta` to every pixel value.

    Integer images are converted to float, adjusted and converted back with saturation.

    Args:
      image: an RGB image [..., height, width, 3]; float in [0, 1] or an integer dtype.
      delta: the amount to add (in the [0, 1] float scale).

    Returns:
      A tensor of image's shape and dtype.

    Example:
      >>> tf.image.adjust_brightness([[[0.2, 0.4, 0.6]]], 0.1).numpy()
      array([[[0.3       , 0.5       , 0.70000005]]], dtype=float32)
    """,
    "adjust_contrast": """Scales each channel's deviation from its mean by `contrast_factor`.

    Per image and channel: (x - mean) * contrast_factor + mean.

    Args:
      images: a tensor [..., height, width, channels].
      contrast_factor: the scale factor.

    Returns:
      A tensor of images' shape and dtype.

    Example:
      >>> tf.image.adjust_contrast([[[1.0], [3.0]]], 2.0)[:, :, 0].numpy()
      array([[0., 4.]], dtype=float32)
    """,
    "rgb_to_grayscale": """Converts RGB images to grayscale with ITU-R 601 luma weights.

    0.2989 R + 0.5870 G + 0.1140 B.

    Args:
      images: a tensor [..., 3].
      name: optional name for the operation.

    Returns:
      A tensor [..., 1] of images' dtype.

    Example:
      >>> tf.image.rgb_to_grayscale([[[1.0, 1.0, 1.0]]]).numpy()
      array([[[0.99990004]]], dtype=float32)
    """,
    "grayscale_to_rgb": """Converts grayscale images to RGB by repeating the channel.

    Args:
      images: a tensor [..., 1].
      name: optional name for the operation.

    Returns:
      A tensor [..., 3].

    Example:
      >>> tf.image.grayscale_to_rgb([[[0.5]]]).numpy()
      array([[[0.5, 0.5, 0.5]]], dtype=float32)
    """,
    "convert_image_dtype": """Converts an image's dtype, rescaling between integer and float ranges.

    Floats are in [0, 1]; integers in [0, MAX] of their type. Float-to-float and int-to-int
    conversions cast (int-to-int rescales by the ranges).

    Args:
      image: an image tensor.
      dtype: the target dtype.
      saturate: if True, clip before casting to avoid overflow.
      name: optional name for the operation.

    Returns:
      A tensor of image's shape and `dtype`.

    Example:
      >>> tf.image.convert_image_dtype(tf.constant([0, 255], tf.uint8), tf.float32).numpy()
      array([0., 1.], dtype=float32)
    """,
} | random_pair(
    "brightness", ("Adds a random delta from [-max_delta, max_delta) to an image.",
                   "Adds a delta from [-max_delta, max_delta) chosen by `seed`."),
    "max_delta: a non-negative float.", "0.2", "if max_delta is negative.",
) | random_pair(
    "contrast", ("Adjusts an image's contrast by a random factor from [lower, upper).",
                 "Scales contrast by a factor in [lower, upper) by `seed`."),
    factors(" (>= 0)"), "0.5, 1.5", "unless 0 <= lower < upper.", stateless_bounds=factors(),
)
