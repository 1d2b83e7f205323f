"""`keras.layers.RandAugment` (Cubuk et al. 2019): `num_ops` times per batch, one of eleven
augmentations drawn at random (shear, translation, rotation, brightness, color degeneration,
contrast, sharpness, posterization, solarization, auto-contrast, equalization), all at
strength `factor`, as Keras 3.15 builds them. Each augmentation draws its own
transformation; the drawn indices pick, per op, which result replaces the images."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
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
from ndflow.ops import arithmetic, comparison
from ndflow.ops import random as random_ops
from ndflow.ops.cast import cast


@keras_export("keras.layers.RandAugment")
class RandAugment(ImagePreprocessingLayer):
    """RandAugment with `num_ops` augmentations per batch at strength `factor`."""

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
        fmt = {"data_format": data_format}
        self.random_shear = RandomShear(x_factor=self.factor, y_factor=self.factor,
                                        interpolation=interpolation, seed=seed, **fmt)
        self.random_translation = RandomTranslation(
            height_factor=self.factor, width_factor=self.factor, interpolation=interpolation,
            seed=seed, **fmt)
        self.random_rotation = RandomRotation(factor=self.factor, interpolation=interpolation,
                                              seed=seed, **fmt)
        colour = {"value_range": value_range, "seed": seed, **fmt}
        self.random_brightness = RandomBrightness(factor=self.factor, **colour)
        self.random_color_degeneration = RandomColorDegeneration(factor=self.factor, **colour)
        self.random_contrast = RandomContrast(factor=self.factor, **colour)
        self.random_sharpness = RandomSharpness(factor=self.factor, **colour)
        self.random_posterization = RandomPosterization(
            factor=max(1, int(8 * self.factor[1])), **colour)
        self.solarization = Solarization(addition_factor=self.factor,
                                         threshold_factor=self.factor, **colour)
        self.auto_contrast = AutoContrast(value_range=value_range, **fmt)
        self.equalization = Equalization(value_range=value_range, **fmt)

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
