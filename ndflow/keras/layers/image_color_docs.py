"""Docstrings of the color and mixing augmentation layers (image_color_augmentation.py and
image_color_random.py). Attached by `ndflow.keras.docstrings.attach`; the examples run as
doctests (tests/keras/test_keras_docstrings.py)."""

from __future__ import annotations

from ndflow.keras.docstrings import sections

_TRAINING = """Random only in training (`layer(images, training=True)`, as `fit` calls it); at
    inference the images pass through unchanged. Works on a 3-D image or a 4-D batch
    (each image gets its own draw)."""
_VALUE_RANGE = """      value_range: the (min, max) range of the pixel values (default (0, 255))."""
_TAIL = """      seed: an int for reproducible draws.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      **kwargs: Layer arguments (name, dtype, ...)."""


def _color(summary: str, factor: str, extra: str = "", example: str = "") -> str:
    doc = f"""{summary}

    {_TRAINING}

    Args:
      factor: {factor}
{_VALUE_RANGE}{extra}
{_TAIL}
    """
    return sections(doc, example=example)


AUGMENTATION_DOCS = {
    "AutoContrast": f"""Stretches each image's channels linearly so their values span the
    whole `value_range` (deterministic: the same in training and inference).

    Args:
{_VALUE_RANGE}
      **kwargs: Layer arguments (name, dtype, data_format, ...).

    Example:

    >>> tf.keras.layers.AutoContrast()(tf.constant([[[[50.0], [100.0]]]])).numpy().ravel()
    array([  0., 255.], dtype=float32)
    """,
    "Solarization": f"""Solarizes images: adds a random amount (`addition_factor` x 255),
    clips to [0, 255], then inverts the values at or above a random threshold
    (`threshold_factor` x 255).

    {_TRAINING}

    Args:
      addition_factor: a float f in [0, 1] (amounts in [0, f]) or a pair.
      threshold_factor: a float f in [0, 1] (thresholds in [0, f]) or a pair.
{_VALUE_RANGE}
      seed: an int for reproducible draws.
      **kwargs: Layer arguments (name, dtype, data_format, ...).
    """,
    "RandomGrayscale": f"""Turns each image grey (ITU-R 601 luma, kept as 3 channels) with
    probability `factor`.

    {_TRAINING}

    Args:
      factor: the probability, in [0, 1] (default 0.5).
{_TAIL}
    """,
    "RandomInvert": _color(
        "Replaces each image by `value_range[1] - image`, with a probability drawn from\n"
        "    `factor`.",
        "a float p (probabilities in [0, p]) or a pair, in [0, 1]."),
    "RandomSharpness": _color(
        "Sharpens or blurs each image: blends it with a 3x3 smoothed copy by a random\n"
        "    f from `factor`, `image + (1 - 2f) * (smoothed - image)` (f above 0.5 sharpens),\n"
        "    clipped to `value_range`.",
        "a float f (the range [0, f]) or a pair, in [0, 1]."),
    "MixUp": f"""MixUp augmentation: mixes each image with another of the batch (a random
    permutation) by a weight w drawn from Beta(alpha, alpha): `w * image + (1 - w) *
    other`.

    Given Keras' dict `{{"images": ..., "labels": ...}}`, the labels (one-hot or soft) are
    mixed with the same weights and partners. `get_random_transformation(data)` (the
    images or that dict) returns Keras' `{{"mix_weight", "permutation_order"}}`.

    {_TRAINING}

    Args:
      alpha: the Beta distribution's parameter (small values mix less).
{_TAIL}
    """,
    "CutMix": f"""CutMix augmentation: pastes a random box from another image of the batch (a
    random permutation) into each image, the box covering 1 - w of the area with
    w ~ Beta(a, a), a drawn from `factor`; labels (in a dict input) mix by the box's
    actual area. Unbatched images pass through.

    {_TRAINING}

    Args:
      factor: a float or pair for the Beta parameter a (default 1.0).
{_TAIL}
    """,
}

RANDOM_DOCS = {
    "RandomHue": _color(
        "Rotates each image's hue by a random amount, up to `factor` / 2 of the colour\n"
        "    circle either way.",
        "a float f in [0, 1] (shifts within f / 2 of a turn) or a pair."),
    "RandomSaturation": _color(
        "Scales each image's saturation by f / (1 - f) for a random f from `factor`\n"
        "    (0.5 keeps it, 0 makes the image grey, 1 saturates it fully).",
        "a float or pair in [0, 1]."),
    "RandomColorDegeneration": _color(
        "Blends each image towards its greyscale version by a random fraction from\n"
        "    `factor`.",
        "a float f in [0, 1] (fractions in [0, f]) or a pair."),
    "RandomPosterization": _color(
        "Posterizes images: keeps the top k bits of each 8-bit channel value, k drawn per\n"
        "    image from `factor` (1 to 8).",
        "an int or pair of ints in [1, 8]: the bits kept."),
    "RandomColorJitter": f"""Random brightness, contrast, saturation and hue changes, in that
    order, each applied where its factor is given (the four layers composed, as Keras).

    {_TRAINING}

    Args:
{_VALUE_RANGE}
      brightness_factor: `RandomBrightness`' factor, or None to skip it.
      contrast_factor: `RandomContrast`' factor, or None.
      saturation_factor: `RandomSaturation`'s factor, or None.
      hue_factor: `RandomHue`'s factor, or None.
{_TAIL}
    """,
}
