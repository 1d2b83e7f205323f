"""The docstrings of RandAugment and AugMix (attached at the end of image_rand_augment.py)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "value_range": "the (min, max) range of the pixel values (default (0, 255)).",
    "factor": "the augmentations' strength, in [0, 1].",
    "interpolation": "the resampling of the geometric augmentations.",
    "seed": "an int for reproducible draws.",
    "data_format": '"channels_last" or "channels_first" (default\n'
                   "        `keras.config.image_data_format()`).",
    "**kwargs": "Layer arguments (name, dtype, ...).",
}


DOCS = docs_with_args(_ARGS, {
    "RandAugment": (
        "RandAugment (Cubuk et al., 2020): applies `num_ops` augmentations chosen at random\n"
        "    (shear, translation, rotation, brightness, contrast, solarization, ...) at strength\n"
        "    `factor` to each batch.\n"
        "\n"
        "    Random only in training; at inference the images pass through unchanged.",
        ["value_range", "num_ops: how many augmentations are applied.", "factor", "interpolation",
         "seed", "data_format", "**kwargs"],
        ""),
    "AugMix": (
        "AugMix (Hendrycks et al., 2020): `num_chains` chains of up to `chain_depth` randomly\n"
        "    chosen augmentations, mixed with Dirichlet(alpha) weights, then blended with the\n"
        "    original image by a Beta(alpha, alpha) weight and clipped to `value_range`.\n"
        "\n"
        "    Random only in training; at inference the images pass through unchanged.",
        ["value_range", "num_chains: the number of augmentation chains.",
         "chain_depth: the most augmentations per chain (each chain's depth is random).", "factor",
         "alpha: the Dirichlet and Beta distributions' parameter.",
         "all_ops: whether to include the augmentations that overlap common test-time\n"
         "        corruptions (brightness, contrast, sharpness...).",
         "interpolation", "seed", "data_format", "**kwargs"],
        ""),
})
