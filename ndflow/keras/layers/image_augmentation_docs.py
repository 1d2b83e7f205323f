"""Docstrings of the geometric and intensity augmentation layers (image_augmentation.py, which
stays a readable length without them). Attached by `ndflow.keras.docstrings.attach`; the
examples run as doctests (tests/keras/test_keras_docstrings.py)."""

from __future__ import annotations

from ndflow.keras.docstrings import sections

_TRAINING = """Random only in training (`layer(images, training=True)`, as `fit` calls it); at
    inference the images pass through unchanged. Works on a 3-D image or a 4-D batch
    (each image gets its own draw), in a model or in a `tf.data` pipeline."""
_FACTOR = """a float f (the range [-f, f]) or a pair (lower, upper)"""
_FILL = """      fill_mode: how points outside the input are filled: "reflect" (the default),
        "wrap", "constant" (`fill_value`) or "nearest".
      interpolation: "bilinear" (the default) or "nearest".
      seed: an int for reproducible draws.
      fill_value: the value for "constant".
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      **kwargs: Layer arguments (name, dtype, ...)."""
_VALUE_RANGE = """      value_range: the (min, max) range of the pixel values (default (0, 255));
        results are clipped to it."""


def _geometric(summary: str, args: str, example: str = "", raises: str = "") -> str:
    doc = f"""{summary}

    {_TRAINING}

    Args:
{args}
{_FILL}
    """
    return sections(doc, raises, example)


DOCS = {
    "RandomFlip": f"""Flips each image, with probability 1/2, horizontally, vertically, or both
    (one draw for both).

    {_TRAINING}

    Args:
      mode: "horizontal", "vertical" or "horizontal_and_vertical" (the default).
      seed: an int for reproducible draws.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      **kwargs: Layer arguments (name, dtype, ...).

    Example:

    >>> layer = tf.keras.layers.RandomFlip("horizontal", seed=1)
    >>> layer(tf.ones((2, 4, 4, 3)), training=True).shape
    TensorShape([2, 4, 4, 3])
    """,
    "RandomRotation": _geometric(
        "Rotates each image about its centre by a random angle: `factor` is a fraction of a\n"
        "    full turn (0.1 means up to 36 degrees).",
        f"""      factor: {_FACTOR}, fractions of 2 pi; positive values turn
        counter-clockwise.""",
        raises="ValueError: a bad `factor`, `fill_mode` or `interpolation`."),
    "RandomZoom": _geometric(
        "Zooms each image about its centre by random factors: a positive factor zooms out\n"
        "    (the image shrinks by up to that fraction), a negative one zooms in.",
        f"""      height_factor: {_FACTOR} in (-1, 1], the vertical zoom.
      width_factor: likewise for the horizontal zoom; None keeps the aspect ratio (the
        height's draw is used).""",
        raises="ValueError: factors outside (-1, 1], or a bad `fill_mode`."),
    "RandomTranslation": _geometric(
        "Shifts each image by random fractions of its height and width.",
        f"""      height_factor: {_FACTOR} in [-1, 1], fractions of the height (positive
        moves down).
      width_factor: likewise for the width (positive moves right).""",
        raises="ValueError: factors outside [-1, 1], or a bad `fill_mode`."),
    "RandomShear": _geometric(
        "Shears each image along x and y by random factors (about the top-left corner, as\n"
        "    Keras), each direction's sign flipped with probability 1/2.",
        """      x_factor: a float or pair in [0, 1]: the horizontal shear's size.
      y_factor: likewise for the vertical shear.""",
        raises="ValueError: factors outside [0, 1]."),
    "RandomCrop": """Crops each batch to a random (height, width) window (one offset per call,
    as Keras); an image not larger than the target is centre-cropped to the target's
    aspect ratio and resized instead.

    In training only: at inference the input passes through unchanged (Keras 3.15's
    behaviour, which TensorFlow 2.21 ships).

    Args:
      height: the crop's height.
      width: the crop's width.
      seed: an int for reproducible draws.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      name: the layer's name.
      **kwargs: other Layer arguments.

    Example:

    >>> layer = tf.keras.layers.RandomCrop(2, 3, seed=0)
    >>> layer(tf.ones((1, 5, 5, 3)), training=True).shape
    TensorShape([1, 2, 3, 3])
    """,
    "RandomContrast": f"""Scales each image's deviation from its per-channel mean by a random
    factor in [1 - lower, 1 + upper], then clips to `value_range`.

    {_TRAINING}

    Args:
      factor: a float f in [0, 1] (the factor range [1 - f, 1 + f]) or a pair
        (lower, upper).
{_VALUE_RANGE}
      seed: an int for reproducible draws.
      **kwargs: Layer arguments (name, dtype, data_format, ...).

    Raises:
      ValueError: a `factor` outside [0, 1].
    """,
    "RandomBrightness": f"""Adds a random delta to each image: `factor` times the width of
    `value_range`, then clips to `value_range`.

    {_TRAINING}

    Args:
      factor: a float f in [-1, 1] (deltas in [-f, f]) or a pair (lower, upper).
{_VALUE_RANGE}
      seed: an int for reproducible draws.
      **kwargs: Layer arguments (name, dtype, data_format, ...).

    Raises:
      ValueError: a bad `factor`, or a `value_range` that is not two numbers.
    """,
}
