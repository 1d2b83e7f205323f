"""The docstrings of the Keras 2 image transforms (attached at the end of their module)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "x": "a 3-D NumPy image.",
    "col_axis": "the columns axis (default 2).",
    "cval": 'the value for "constant".',
    "row_axis": "the rows axis of `x` (default 1).",
    "channel_axis": "the channels axis (default 0: these legacy functions default to\n"
                    "        channels first).",
    "fill_mode": 'how points outside the image are filled: "constant" (`cval`),\n'
                 '        "nearest", "reflect" or "wrap".',
    "interpolation_order": "the spline order of the resampling (0 nearest, 1 linear).",
}
_SECTIONS_0 = """

    Returns:
      A NumPy array of `x`'s shape and dtype."""
_SECTIONS_1 = """

    Returns:
      A NumPy array of `x`'s shape."""


DOCS = docs_with_args(_ARGS, {
    "apply_affine_transform": (
        "A 3-D NumPy image transformed about its centre: rotated by `theta` degrees, shifted\n"
        "    by (tx, ty), sheared by `shear` degrees and zoomed by (zx, zy) (Keras' composition "
        "of\n"
        "    the matrices, resampled with SciPy-style splines).",
        ["x", "theta: the rotation in degrees.",
         "tx: the shift along the columns (width), in pixels: the content moves by -tx.",
         "ty: the shift along the rows (height), in pixels: the content moves by -ty.",
         "shear: the shear angle in degrees.",
         "zx: the zoom along the columns (below 1 zooms in).", "zy: the zoom along the rows.",
         "row_axis: the rows axis (default 1).", "col_axis",
         "channel_axis: the channels axis (default 0: channels first, as Keras 2).",
         'fill_mode: "constant" (`cval`), "nearest" (the default), "reflect" or "wrap".', "cval",
         "order: the spline order (0 nearest, 1 linear)."],
        """

    Returns:
      A NumPy array of `x`'s shape and dtype.

    Raises:
      ValueError: an unknown `fill_mode`."""),
    "random_rotation": (
        "A 3-D NumPy image rotated by a random angle drawn uniformly from [-rg, rg] degrees\n"
        "    (NumPy's global generator).",
        ["x", "rg: the largest rotation in degrees.", "row_axis", "col_axis", "channel_axis",
         "fill_mode", "cval", "interpolation_order"],
        _SECTIONS_0),
    "random_shift": (
        "A 3-D NumPy image shifted by random amounts drawn uniformly in both directions: as\n"
        "    Keras computes them, up to `hrg` x height along the columns (`tx`) and `wrg` x "
        "width\n"
        "    along the rows (`ty`) (the same as fractions of each side for square images).",
        ["x", "wrg: the largest shift as a fraction of the width.",
         "hrg: the largest shift as a fraction of the height.", "row_axis", "col_axis",
         "channel_axis", "fill_mode", "cval", "interpolation_order"],
        _SECTIONS_0),
    "random_shear": (
        "A 3-D NumPy image sheared by a random angle drawn uniformly from\n"
        "    [-intensity, intensity] degrees.",
        ["x", "intensity: the largest shear angle in degrees.", "row_axis", "col_axis",
         "channel_axis", "fill_mode", "cval", "interpolation_order"],
        _SECTIONS_0),
    "random_zoom": (
        "A 3-D NumPy image zoomed by random factors drawn uniformly from `zoom_range`,\n"
        "    independently for the two axes (factors below 1 zoom in).",
        ["x", "zoom_range: a pair (lower, upper) of zoom factors; (1, 1) leaves `x` unchanged.",
         "row_axis", "col_axis", "channel_axis", "fill_mode", "cval", "interpolation_order"],
        """

    Returns:
      A NumPy array of `x`'s shape and dtype.

    Raises:
      ValueError: `zoom_range` is not a pair."""),
    "apply_channel_shift": (
        "A NumPy image with `intensity` added to every channel, the values kept within the\n"
        "    image's original [min, max].",
        ["x", "intensity: the amount added.", "channel_axis: the channels axis (default 0)."],
        _SECTIONS_1),
    "random_channel_shift": (
        "A NumPy image with one random value, drawn uniformly from\n"
        "    [-intensity_range, intensity_range], added to every channel (kept within the "
        "image's\n"
        "    original [min, max]).",
        ["x", "intensity_range: the largest shift.",
         "channel_axis: the channels axis (default 0)."],
        _SECTIONS_1),
    "apply_brightness_shift": (
        "A NumPy image with its brightness multiplied by `brightness`, through PIL's\n"
        "    ImageEnhance (as Keras; needs Pillow). Values outside [0, 255] are scaled into it\n"
        "    first and, unless `scale`, mapped back after.",
        ["x: a 3-D NumPy image (height, width, channels).",
         "brightness: the factor (1.0 keeps the brightness, 0 gives black).",
         "scale: whether the result stays in [0, 255]."],
        """

    Returns:
      A float NumPy array of `x`'s shape."""),
    "random_brightness": (
        "A NumPy image with its brightness multiplied by a random factor drawn uniformly from\n"
        "    `brightness_range` (through PIL's ImageEnhance, as Keras; needs Pillow).",
        ["x: a 3-D NumPy image (height, width, channels).",
         "brightness_range: a pair (lower, upper) of factors (1.0 keeps the brightness).",
         "scale: whether the result stays scaled to [0, 255] (else values that were outside\n"
         "        that range are mapped back to the original range)."],
        """

    Returns:
      A float NumPy array of `x`'s shape.

    Raises:
      ValueError: `brightness_range` is not a pair."""),
})
