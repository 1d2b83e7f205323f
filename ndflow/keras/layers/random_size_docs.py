"""The docstrings of RandomHeight and RandomWidth (random_size.py; attached at its end)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "factor": "a float f (the factor range [1 - f, 1 + f]) or a pair (lower, upper) of\n"
              "        offsets above -1 (the factor is 1 + offset).",
    "interpolation": 'the resize method ("bilinear", "nearest", "bicubic", "area",\n'
                     '        "lanczos3", "lanczos5").',
    "seed": "an int for reproducible draws.",
    "**kwargs": "Layer arguments (name, dtype, data_format, ...).",
}
_RAISES = """

    Raises:
      ValueError: an upper bound below the lower one, or bounds below -1."""


DOCS = docs_with_args(_ARGS, {
    "RandomHeight": (
        "Resizes a batch of images to a random height: the height is multiplied by a factor\n"
        "    drawn in [1 + lower, 1 + upper] (one draw per call); the width is kept.\n"
        "\n"
        "    Random only in training; at inference the images pass through unchanged.",
        ["factor", "interpolation", "seed", "**kwargs"],
        _RAISES),
    "RandomWidth": (
        "Resizes a batch of images to a random width: the width is multiplied by a factor\n"
        "    drawn in [1 + lower, 1 + upper] (one draw per call); the height is kept.\n"
        "\n"
        "    Random only in training; at inference the images pass through unchanged.",
        ["factor", "interpolation", "seed", "**kwargs"],
        _RAISES),
})
