"""The docstrings of image_color.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "adjust_hue": """Rotates the hue of RGB images by `delta`.

    Args:
      image: an RGB image [..., height, width, 3]; float in [0, 1] or an integer dtype.
      delta: the rotation as a fraction of the color circle, in [-1, 1].
      name: optional name for the operation.

    Returns:
      A tensor of image's shape and dtype.

    Example:
      >>> tf.image.adjust_hue([[[1.0, 0.0, 0.0]]], 1 / 3).numpy()
      array([[[0., 1., 0.]]], dtype=float32)
    """,
    "adjust_saturation": """Multiplies the saturation of RGB images by a factor.

    Args:
      image: an RGB image [..., height, width, 3]; float in [0, 1] or an integer dtype.
      saturation_factor: the factor (>= 0); the saturation is clipped to [0, 1].
      name: optional name for the operation.

    Returns:
      A tensor of image's shape and dtype.

    Example:
      >>> tf.image.adjust_saturation([[[1.0, 0.5, 0.5]]], 0.0).numpy()
      array([[[1., 1., 1.]]], dtype=float32)
    """,
    "rgb_to_hsv": """Converts RGB images to HSV (hue, saturation, value, each in [0, 1]).

    Args:
      images: a tensor [..., 3] of RGB (or HSV) float values in [0, 1].
      name: optional name for the operation.

    Returns:
      A tensor of images' shape and dtype.

    Example:
      >>> tf.image.rgb_to_hsv([[[1.0, 0.0, 0.0]]]).numpy()
      array([[[0., 1., 1.]]], dtype=float32)
    """,
    "hsv_to_rgb": """Converts HSV images back to RGB (the inverse of rgb_to_hsv).

    Args:
      images: a tensor [..., 3] of RGB (or HSV) float values in [0, 1].
      name: optional name for the operation.

    Returns:
      A tensor of images' shape and dtype.

    Example:
      >>> tf.image.hsv_to_rgb([[[0.0, 1.0, 1.0]]]).numpy()
      array([[[1., 0., 0.]]], dtype=float32)
    """,
    "random_hue": """Rotates an image's hue by a random delta from [-max_delta, max_delta).

    Args:
      image: an RGB image [..., height, width, 3]; float in [0, 1] or an integer dtype.
      max_delta: a float in [0, 0.5].
      seed: optional int seed.

    Returns:
      A tensor of image's shape and dtype.

    Raises:
      ValueError: if max_delta is outside [0, 0.5].

    Example:
      >>> tf.image.random_hue(tf.zeros([2, 2, 3]), 0.1, seed=1).shape
      TensorShape([2, 2, 3])
    """,
    "random_saturation": """Scales an image's saturation by a random factor from [lower, upper).

    Args:
      image: an RGB image [..., height, width, 3]; float in [0, 1] or an integer dtype.
      lower: the lowest factor (>= 0).
      upper: the bound above the highest factor.
      seed: optional int seed.

    Returns:
      A tensor of image's shape and dtype.

    Raises:
      ValueError: unless 0 <= lower < upper.

    Example:
      >>> tf.image.random_saturation(tf.zeros([2, 2, 3]), 0.5, 1.5, seed=1).shape
      TensorShape([2, 2, 3])
    """,
    "stateless_random_hue": """Rotates the hue by a delta in [-max_delta, max_delta) by `seed`.

    Args:
      image: an RGB image [..., height, width, 3]; float in [0, 1] or an integer dtype.
      max_delta: a float in [0, 0.5].
      seed: a shape-[2] int32/int64 tensor; the same seed gives the same values.

    Returns:
      A tensor of image's shape and dtype.

    Example:
      >>> tf.image.stateless_random_hue(tf.zeros([2, 2, 3]), 0.1, [1, 2]).shape
      TensorShape([2, 2, 3])
    """,
    "stateless_random_saturation": """Scales saturation by a factor in [lower, upper) by `seed`.

    Args:
      image: an RGB image [..., height, width, 3]; float in [0, 1] or an integer dtype.
      lower: the lowest factor.
      upper: the bound above the highest factor.
      seed: a shape-[2] int32/int64 tensor; the same seed gives the same values.

    Returns:
      A tensor of image's shape and dtype.

    Example:
      >>> tf.image.stateless_random_saturation(tf.zeros([2, 2, 3]), 0.5, 1.5, [1, 2]).shape
      TensorShape([2, 2, 3])
    """,
}
