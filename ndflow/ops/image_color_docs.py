"""The docstrings of image_color.py's public functions (attached at its end; see
core/doc_tables.py), and the template of the random image adjustments (`random_pair`), which
image_adjust_docs.py uses too."""

from __future__ import annotations

from ndflow.core.doc_tables import family

_ADJUST = """{title}

    Args:
      image: an RGB image [..., height, width, 3]; float in [0, 1] or an integer dtype.
      {arg}
      name: optional name for the operation.

    Returns:
      A tensor of image's shape and dtype.

    Example:
      >>> tf.image.{name}([[[{pixel}]]], {value}).numpy()
      array([[[{out}]]], dtype=float32)
    """

_CONVERT = """Converts {what}.

    Args:
      images: a tensor [..., 3] of RGB (or HSV) float values in [0, 1].
      name: optional name for the operation.

    Returns:
      A tensor of images' shape and dtype.

    Example:
      >>> tf.image.{name}([[[{pixel}]]]).numpy()
      array([[[{out}]]], dtype=float32)
    """

_RANDOM = """{title}

    Args:
      image: an RGB image [..., height, width, 3]; float in [0, 1] or an integer dtype.
      {bounds}
      seed: {seed}

    Returns:
      A tensor of image's shape and dtype.
{raises}
    Example:
      >>> tf.image.{name}(tf.zeros([2, 2, 3]), {args}).shape
      TensorShape([2, 2, 3])
    """


def factors(lowest: str = "") -> str:
    """The `lower`/`upper` arguments of a random adjustment by a factor."""
    return f"lower: the lowest factor{lowest}.\n      upper: the bound above the highest factor."


def random_pair(kind: str, titles: tuple[str, str], bounds: str, args: str, raises: str,
                stateless_bounds: str | None = None) -> dict[str, str]:
    """The docstrings of random_<kind> (an op seed; `raises` on bad bounds) and
    stateless_random_<kind> (a [2] seed tensor), whose examples pass `args`."""
    return family(_RANDOM, {
        f"random_{kind}": dict(title=titles[0], bounds=bounds, seed="optional int seed.",
                               args=f"{args}, seed=1",
                               raises=f"\n    Raises:\n      ValueError: {raises}\n"),
        f"stateless_random_{kind}": dict(
            title=titles[1], bounds=bounds if stateless_bounds is None else stateless_bounds,
            seed="a shape-[2] int32/int64 tensor; the same seed gives the same values.",
            args=f"{args}, [1, 2]", raises=""),
    })


DOCS = family(_ADJUST, {
    "adjust_hue": dict(title="Rotates the hue of RGB images by `delta`.",
                       arg="delta: the rotation as a fraction of the color circle, in [-1, 1].",
                       pixel="1.0, 0.0, 0.0", value="1 / 3", out="0., 1., 0."),
    "adjust_saturation": dict(
        title="Multiplies the saturation of RGB images by a factor.",
        arg="saturation_factor: the factor (>= 0); the saturation is clipped to [0, 1].",
        pixel="1.0, 0.5, 0.5", value="0.0", out="1., 1., 1."),
}) | family(_CONVERT, {
    "rgb_to_hsv": dict(what="RGB images to HSV (hue, saturation, value, each in [0, 1])",
                       pixel="1.0, 0.0, 0.0", out="0., 1., 1."),
    "hsv_to_rgb": dict(what="HSV images back to RGB (the inverse of rgb_to_hsv)",
                       pixel="0.0, 1.0, 1.0", out="1., 0., 0."),
}) | random_pair(
    "hue", ("Rotates an image's hue by a random delta from [-max_delta, max_delta).",
            "Rotates the hue by a delta in [-max_delta, max_delta) by `seed`."),
    "max_delta: a float in [0, 0.5].", "0.1", "if max_delta is outside [0, 0.5].",
) | random_pair(
    "saturation", ("Scales an image's saturation by a random factor from [lower, upper).",
                   "Scales saturation by a factor in [lower, upper) by `seed`."),
    factors(" (>= 0)"), "0.5, 1.5", "unless 0 <= lower < upper.", stateless_bounds=factors(),
)
