"""`keras.layers.RandAugment` (Cubuk et al. 2019) and `AugMix` (Hendrycks et al. 2020),
compositions of Keras' augmentations (shear, translation, rotation, brightness, color
degeneration, contrast, sharpness, posterization, solarization, auto-contrast,
equalization) built at strength `factor` as Keras 3.15 builds them. RandAugment: `num_ops`
times per batch one augmentation drawn at random (the drawn indices pick, per op, which result
replaces the images). AugMix: chains of randomly chosen augmentations mixed with Dirichlet
weights, blended with the original by a Beta weight."""

from __future__ import annotations

import random as pyrandom

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.keras.layers import image_rand_augment_docs
from ndflow.keras.layers.image_augmentation import (
    RandomBrightness,
    RandomContrast,
    RandomRotation,
    RandomShear,
    RandomTranslation,
)
from ndflow.keras.layers.image_color_augmentation import (
    AutoContrast,
    RandomSharpness,
    Solarization,
)
from ndflow.keras.layers.image_color_random import RandomColorDegeneration, RandomPosterization
from ndflow.keras.layers.image_equalization import Equalization
from ndflow.keras.layers.image_preprocessing import ImagePreprocessingLayer
from ndflow.ops import arithmetic, array_fill, comparison, math, random_gamma_poisson, reduction
from ndflow.ops import random as random_ops
from ndflow.ops.cast import cast


def _augmentations(factor, value_range, interpolation, seed, data_format,
                   colour_ops: bool) -> dict:
    """The augmentation layers both compositions use, by attribute name, at strength
    `factor` as Keras builds them (the four colour ones only with `colour_ops`)."""
    fmt = {"data_format": data_format}
    colour = {"value_range": value_range, "seed": seed, **fmt}
    layers = {
        "random_shear": RandomShear(x_factor=factor, y_factor=factor,
                                    interpolation=interpolation, seed=seed, **fmt),
        "random_translation": RandomTranslation(height_factor=factor, width_factor=factor,
                                                interpolation=interpolation, seed=seed, **fmt),
        "random_rotation": RandomRotation(factor=factor, interpolation=interpolation,
                                          seed=seed, **fmt),
        "solarization": Solarization(addition_factor=factor, threshold_factor=factor,
                                     **colour),
        "random_posterization": RandomPosterization(factor=max(1, int(8 * factor[1])),
                                                    **colour),
        "auto_contrast": AutoContrast(value_range=value_range, **fmt),
        "equalization": Equalization(value_range=value_range, **fmt),
    }
    if colour_ops:
        layers.update(
            random_brightness=RandomBrightness(factor=factor, **colour),
            random_color_degeneration=RandomColorDegeneration(factor=factor, **colour),
            random_contrast=RandomContrast(factor=factor, **colour),
            random_sharpness=RandomSharpness(factor=factor, **colour))
    return layers


@keras_export("keras.layers.RandAugment")
class RandAugment(ImagePreprocessingLayer):
    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)
    _AUGMENT_LAYERS = ["random_shear", "random_translation", "random_rotation",
                       "random_brightness", "random_color_degeneration", "random_contrast",
                       "random_sharpness", "random_posterization", "solarization",
                       "auto_contrast", "equalization"]

    def __init__(self, value_range=(0, 255), num_ops=2, factor=0.5, interpolation="bilinear",
                 seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range, self.num_ops = value_range, num_ops
        self._set_factor(factor)
        self.interpolation, self.seed = interpolation, seed
        for name, layer in _augmentations(self.factor, value_range, interpolation, seed,
                                          data_format, colour_ops=True).items():
            setattr(self, name, layer)

    def get_random_transformation(self, images, training=True, seed=None):
        if not training:
            return None
        indices = random_ops.random_uniform([self.num_ops], 0, len(self._AUGMENT_LAYERS),
                                            dtype=dtypes.int32, seed=self.seed)
        transforms = {name: getattr(self, name).get_random_transformation(images,
                                                                          training=True)
                      for name in self._AUGMENT_LAYERS}
        return {"transforms": transforms, "layer_idxes": indices}

    def transform_images(self, images, transformation, training=True):
        if not training or transformation is None:
            return images
        images = cast(images, self.compute_dtype)
        indices = transformation["layer_idxes"]
        for i in range(self.num_ops):
            for idx, name in enumerate(self._AUGMENT_LAYERS):
                layer = getattr(self, name)
                out = cast(layer.transform_images(images, transformation["transforms"][name],
                                                  training=True), images.dtype)
                images = arithmetic.where(comparison.equal(indices[i], idx), out, images)
        return images

    def get_config(self) -> dict:
        return {**super().get_config(), "value_range": self.value_range,
                "num_ops": self.num_ops, "factor": self.factor,
                "interpolation": self.interpolation, "seed": self.seed}


_AUGMIX_LAYERS = ["random_shear", "random_translation", "random_rotation",
                  "random_posterization", "solarization", "auto_contrast", "equalization"]
_AUGMIX_LAYERS_ALL = _AUGMIX_LAYERS + ["random_brightness", "random_color_degeneration",
                                       "random_contrast", "random_sharpness"]


@keras_export("keras.layers.AugMix")
class AugMix(ImagePreprocessingLayer):
    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, value_range=(0, 255), num_chains=3, chain_depth=3, factor=0.3,
                 alpha=1.0, all_ops=True, interpolation="bilinear", seed=None,
                 data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range, self.num_chains, self.chain_depth = value_range, num_chains, \
            chain_depth
        self._set_factor(factor)
        self.alpha, self.all_ops, self.interpolation, self.seed = alpha, all_ops, \
            interpolation, seed
        self._augment_layers = _AUGMIX_LAYERS_ALL if all_ops else _AUGMIX_LAYERS
        self._rng = pyrandom.Random(seed)   # Keras picks each chain's ops in Python
        for name, layer in _augmentations(self.factor, value_range, interpolation, seed,
                                          data_format, colour_ops=all_ops).items():
            setattr(self, name, layer)

    def get_random_transformation(self, images, training=True, seed=None):
        if not training:
            return None
        gamma = random_gamma_poisson.random_gamma([self.num_chains], self.alpha,
                                                  seed=self.seed)
        weights = gamma / reduction.reduce_sum(gamma, axis=-1, keepdims=True)
        # Beta(a, a) as x / (x + y) of two Gamma(a) draws
        x = random_gamma_poisson.random_gamma([], self.alpha, seed=self.seed)
        y = random_gamma_poisson.random_gamma([], self.alpha, seed=self.seed)
        chains = []
        for _ in range(self.num_chains):
            steps = []
            for _ in range(self.chain_depth):
                name = self._rng.choice(self._augment_layers + [None])
                if name is not None:
                    steps.append({"layer_name": name,
                                  "transformation": getattr(self, name)
                                  .get_random_transformation(images, training=True)})
            chains.append(steps)
        return {"chain_mixing_weights": weights, "weight_sample": x / (x + y),
                "chain_transforms": chains}

    def transform_images(self, images, transformation, training=True):
        images = cast(images, self.compute_dtype)
        if not training or transformation is None:
            return images
        weights = cast(transformation["chain_mixing_weights"], images.dtype)
        sample = cast(transformation["weight_sample"], images.dtype)
        mixed = array_fill.zeros_like(images)
        for idx, steps in enumerate(transformation["chain_transforms"]):
            chain = images
            for step in steps:
                chain = cast(getattr(self, step["layer_name"]).transform_images(
                    chain, step["transformation"], training=True), images.dtype)
            mixed = mixed + chain * weights[idx]
        out = sample * images + (1 - sample) * mixed
        return cast(math.clip_by_value(out, self.value_range[0], self.value_range[1]),
                    self.compute_dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "value_range": self.value_range,
                "num_chains": self.num_chains, "chain_depth": self.chain_depth,
                "factor": self.factor, "alpha": self.alpha, "all_ops": self.all_ops,
                "interpolation": self.interpolation, "seed": self.seed}


attach(globals(), image_rand_augment_docs.DOCS)
