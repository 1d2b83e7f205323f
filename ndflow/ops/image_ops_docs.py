"""The docstrings of image_ops.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

from ndflow.core.doc_tables import family, note

_FLIP = """Mirrors {what}.
{note}
    Args:
      image: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].{seed}

    Returns:
      A tensor of image's shape and dtype.
{raises}
    Example:
      >>> img = tf.reshape(tf.range(4.0), [2, 2, 1])
      >>> tf.image.{name}(img{call}
      {out}
    """

def _box(title: str, top: str, left: str, size: str, raises: str, call: str, out: str) -> str:
    """The docstring of crop_to_bounding_box / pad_to_bounding_box."""
    return f"""{title}

    Args:
      image: a 3-D image [height, width, channels] or a 4-D batch [batch, height, width,
        channels].
      offset_height: {top}
      offset_width: {left}
      target_height: {size} height.
      target_width: {size} width.

    Returns:
      A tensor [..., target_height, target_width, channels].

    Raises:
      ValueError: {raises}

    Example:
      >>> tf.image.{call}
      {out}
    """


_RANDOM = dict(seed="\n      seed: optional int seed.", call=", seed=1).shape")
_STATELESS = dict(seed="\n      seed: a shape-[2] int tensor; the same seed gives the same result.",
                  call=", seed=[1, 2]).shape", note=note("The flips are determined by `seed`."))
_FLIPS = {  # direction: (how, the axis reversed, the flipped image)
    "left_right": ("horizontally", "width", "[[1., 0.],\n             [3., 2.]]"),
    "up_down": ("vertically", "height", "[[2., 3.],\n             [0., 1.]]"),
}

DOCS = family(_FLIP, {
    f"{kind}flip_{direction}": (
        dict(what=f"images {how} (reverses the {axis} axis)", seed="", call=")[:, :, 0].numpy()",
             raises="\n    Raises:\n      ValueError: if the rank is not 3 or 4.\n",
             out=f"array({image}, dtype=float32)") if not kind else
        dict(words, what=f"each image {how} with probability 1/2"))
    for direction, (how, axis, image) in _FLIPS.items()
    for kind, words in (("", {}), ("random_", _RANDOM), ("stateless_random_", _STATELESS))
}, raises="", out="TensorShape([2, 2, 1])") | {
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
    "crop_to_bounding_box": _box(
        "Crops images to a box.", "the top row of the box.", "the left column of the box.",
        "the box", "if the box does not fit in the image (static shapes).",
        "crop_to_bounding_box(tf.ones([4, 4, 1]), 1, 1, 2, 3).shape", "TensorShape([2, 3, 1])"),
    "pad_to_bounding_box": _box(
        "Pads images with zeros to a target size, placing them at an offset.",
        "rows of zeros above the image.", "columns of zeros left of it.", "the output",
        "if the image does not fit (static shapes).",
        "pad_to_bounding_box(tf.ones([2, 2, 1]), 1, 1, 4, 4)[:, :, 0].numpy()",
        "array([[0., 0., 0., 0.],\n             [0., 1., 1., 0.],\n             "
        "[0., 1., 1., 0.],\n             [0., 0., 0., 0.]], dtype=float32)"),
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
    **{f"{kind}random_crop": f"""Crops a tensor to `size` at {offset}.

    Args:
      value: the tensor to crop.
      size: the crop size, one entry per dimension{each}.
      seed: {seed}
      name: optional name.

    Returns:
      A tensor of shape `size`.

    Raises:
      InvalidArgumentError: if size exceeds value's shape.

    Example:
      >>> tf.image.{kind}random_crop(tf.ones([4, 4, 3]), [2, 2, 3], seed={example_seed}).shape
      TensorShape([2, 2, 3])
    """ for kind, offset, each, seed, example_seed in (
        ("", "a uniformly random offset", " (each <= value's)", "optional int seed.", 1),
        ("stateless_", "a random offset that `seed` determines", "",
         "a shape-[2] int tensor; the same seed gives the same result.", [1, 2]))},
}
