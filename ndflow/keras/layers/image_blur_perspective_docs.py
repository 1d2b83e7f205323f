"""The docstrings of RandomGaussianBlur, RandomPerspective and RandomErasing."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "value_range": "the (min, max) range of the pixel values (default (0, 255)).",
    "seed": "an int for reproducible draws.",
    "data_format": '"channels_last" or "channels_first" (default\n'
                   "        `keras.config.image_data_format()`).",
    "**kwargs": "Layer arguments (name, dtype, ...).",
}


DOCS = docs_with_args(_ARGS, {
    "RandomGaussianBlur": (
        "Blurs images with a Gaussian kernel whose standard deviation is drawn per image.\n"
        "\n"
        "    Random only in training; at inference the images pass through unchanged.",
        ["factor: the probability bound of blurring an image (a float or pair in [0, 1]).",
         "kernel_size: the (odd) kernel size.",
         "sigma: the largest standard deviation (a float) or a (min, max) pair.", "value_range",
         "seed", "data_format", "**kwargs"],
        ""),
    "RandomPerspective": (
        "Random perspective warps: each image's four corners move by up to `scale` / 2 of its\n"
        "    size, and the image is warped to match.\n"
        "\n"
        "    Random only in training; at inference the images pass through unchanged.",
        ["factor: the probability bound of warping an image (a float or pair in [0, 1]).",
         "scale: the distortion's size, in (0, 1].",
         'interpolation: "bilinear" (the default) or "nearest".',
         "fill_value: the value of pixels mapped from outside the image.", "seed", "data_format",
         "**kwargs"],
        ""),
    "RandomErasing": (
        "Random erasing: replaces a random rectangle of each image, with a probability drawn\n"
        "    from `factor`, by `fill_value`; the rectangle's area is a random fraction in `scale` "
        "of\n"
        "    the image's.\n"
        "\n"
        "    Random only in training; at inference the images pass through unchanged.",
        ["factor: the probability bound of erasing (a float or pair in [0, 1]).",
         "scale: the (min, max) fraction of the image's area erased.",
         "fill_value: a number, one per channel (three numbers), or None (Gaussian noise\n"
         "        times `value_range[1]`), clipped to `value_range`.",
         "value_range", "seed", "data_format", "**kwargs"],
        ""),
})
