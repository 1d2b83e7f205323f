"""Keras 3's random colour layers of the HSV and bit-depth kind: RandomHue, RandomSaturation,
RandomColorDegeneration, RandomPosterization and RandomColorJitter (brightness, contrast,
saturation and hue in turn), with Keras 3.15's factors, formulas, configs
and transformations (a dict per batch, `{"factor": ...}` or `{"shift_factor": ...}`, so a
transformation drawn by `get_random_transformation` can be replayed by `transform_images`).
They are the identity when `training` is false."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.keras import docstrings
from ndflow.keras.layers import image_color_docs
from ndflow.keras.layers.image_augmentation import (
    RandomBrightness,
    RandomContrast,
    _batch,
    _shape,
)
from ndflow.keras.layers.image_color_augmentation import transform_value_range
from ndflow.keras.layers.image_preprocessing import ImagePreprocessingLayer
from ndflow.keras.ops import image_functions
from ndflow.ops import arithmetic, array_core, array_fill, bitwise, comparison, math
from ndflow.ops import random as random_ops
from ndflow.ops.cast import cast

_EPSILON = 1e-7   # keras.config.epsilon()
_VALUE_RANGE_ERROR = "The `value_range` argument should be a list of two numbers. "


def _checked_value_range(value_range) -> list:
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
        raise ValueError(_VALUE_RANGE_ERROR + f"Received: value_range={value_range}")
    return sorted(value_range)


def _batch_size(images):
    if images.shape.rank not in (3, 4):
        raise ValueError("Expected the input image to be rank 3 or 4. Received: "
                         f"inputs.shape={tuple(images.shape.as_list())}")
    return _batch(images)


def _channel(images, data_format: str, index: int):
    return images[:, index] if data_format == "channels_first" else images[..., index]


def _with_channel(images, data_format: str, index: int, value):
    """`images` with HSV channel `index` replaced by `value`."""
    parts = [value if i == index else _channel(images, data_format, i) for i in range(3)]
    return array_core.stack(parts, axis=1 if data_format == "channels_first" else -1)


class _RandomColorLayer(ImagePreprocessingLayer):
    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self.value_range = _checked_value_range(value_range)
        self.seed = seed

    def _uniform(self, shape):
        return random_ops.random_uniform(_shape(*shape), self.factor[0], self.factor[1],
                                         seed=self.seed)

    def transform_images(self, images, transformation, training=True):
        if not training or transformation is None:
            return images
        return self._transform(images, transformation)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor,
                "value_range": self.value_range, "seed": self.seed}


@keras_export("keras.layers.RandomHue")
class RandomHue(_RandomColorLayer):
    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(factor, value_range, data_format, seed, **kwargs)
        self.value_range = value_range   # Keras keeps it as given (unsorted, a tuple)

    def get_random_transformation(self, images, training=True, seed=None):
        batch = _batch_size(images)
        direction = random_ops.random_uniform(_shape(batch), seed=self.seed)
        ones = array_fill.ones_like(direction)
        direction = arithmetic.where(comparison.greater(direction, 0.5), -ones, ones)
        return {"factor": direction * self._uniform((batch,)) * 0.5}

    def _transform(self, images, transformation):
        images = cast(images, self.compute_dtype)
        images = transform_value_range(images, self.value_range, (0, 1), images.dtype)
        shift = cast(transformation["factor"], images.dtype)
        shift = array_core.expand_dims(array_core.expand_dims(shift, -1), -1)
        hsv = image_functions.rgb_to_hsv(images, data_format=self.data_format)
        hue = _channel(hsv, self.data_format, 0) + shift
        hue = arithmetic.where(comparison.greater(hue, 1.0), hue - 1.0, hue)
        hue = arithmetic.where(comparison.less(hue, 0.0), hue + 1.0, hue)
        rgb = image_functions.hsv_to_rgb(_with_channel(hsv, self.data_format, 0, hue),
                                         data_format=self.data_format)
        rgb = math.clip_by_value(rgb, 0.0, 1.0)
        return cast(transform_value_range(rgb, (0, 1), self.value_range, rgb.dtype),
                    self.compute_dtype)


@keras_export("keras.layers.RandomSaturation")
class RandomSaturation(_RandomColorLayer):
    _FACTOR_BOUNDS = (-1, 1)

    def get_random_transformation(self, images, training=True, seed=None):
        factor = self._uniform((_batch_size(images),))
        return {"factor": factor / (1 - factor + _EPSILON)}

    def _transform(self, images, transformation):
        scale = cast(transformation["factor"], self.compute_dtype)
        scale = array_core.expand_dims(array_core.expand_dims(scale, -1), -1)
        hsv = image_functions.rgb_to_hsv(images, data_format=self.data_format)
        saturation = math.clip_by_value(_channel(hsv, self.data_format, 1) * scale,
                                        self.value_range[0], self.value_range[1])
        return image_functions.hsv_to_rgb(_with_channel(hsv, self.data_format, 1, saturation),
                                          data_format=self.data_format)


@keras_export("keras.layers.RandomColorDegeneration")
class RandomColorDegeneration(_RandomColorLayer):
    _FACTOR_BOUNDS = (-1, 1)

    def get_random_transformation(self, images, training=True, seed=None):
        return {"factor": self._uniform((_batch_size(images), 1, 1, 1))}

    def _transform(self, images, transformation):
        images = cast(images, self.compute_dtype)
        factor = cast(transformation["factor"], self.compute_dtype)
        gray = image_functions.rgb_to_grayscale(images, data_format=self.data_format)
        out = images + factor * (gray - images)
        return cast(math.clip_by_value(out, self.value_range[0], self.value_range[1]),
                    self.compute_dtype)


@keras_export("keras.layers.RandomPosterization")
class RandomPosterization(_RandomColorLayer):
    _FACTOR_BOUNDS = (1, 8)
    _MAX_FACTOR = 8

    def get_random_transformation(self, images, training=True, seed=None):
        batch = _batch_size(images)
        if self.factor[0] != self.factor[1]:
            bits = random_ops.random_uniform(_shape(batch), int(self.factor[0]),
                                             int(self.factor[1]), dtype=dtypes.int32,
                                             seed=self.seed)
            bits = cast(bits, dtypes.uint8)
        else:
            bits = array_fill.fill(_shape(batch), cast(int(self.factor[0]), dtypes.uint8))
        return {"shift_factor": cast(self._MAX_FACTOR, dtypes.uint8) - bits}

    def _transform(self, images, transformation):
        shift = cast(transformation["shift_factor"], dtypes.uint8)
        shift = array_core.reshape(shift, [-1, 1, 1, 1])
        images = transform_value_range(images, self.value_range, (0, 255), self.compute_dtype)
        pixels = cast(images, dtypes.uint8)
        pixels = bitwise.left_shift(bitwise.right_shift(pixels, shift), shift)
        images = cast(pixels, self.compute_dtype)
        return transform_value_range(images, (0, 255), self.value_range, self.compute_dtype)


@keras_export("keras.layers.RandomColorJitter")
class RandomColorJitter(ImagePreprocessingLayer):
    _USE_BASE_FACTOR = False

    def __init__(self, value_range=(0, 255), brightness_factor=None, contrast_factor=None,
                 saturation_factor=None, hue_factor=None, seed=None, data_format=None,
                 **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range = value_range
        self.brightness_factor, self.contrast_factor = brightness_factor, contrast_factor
        self.saturation_factor, self.hue_factor = saturation_factor, hue_factor
        self.seed = seed
        self._steps = [cls(factor=f, value_range=value_range, seed=seed) for cls, f in (
            (RandomBrightness, brightness_factor), (RandomContrast, contrast_factor),
            (RandomSaturation, saturation_factor), (RandomHue, hue_factor)) if f is not None]

    def transform_images(self, images, transformation, training=True):
        if not training:
            return images
        images = cast(images, self.compute_dtype)
        for step in self._steps:
            images = step.transform_images(
                images, step.get_random_transformation(images, training=True))
        return cast(images, self.compute_dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "value_range": self.value_range,
                "brightness_factor": self.brightness_factor,
                "contrast_factor": self.contrast_factor,
                "saturation_factor": self.saturation_factor, "hue_factor": self.hue_factor,
                "seed": self.seed}


docstrings.attach(globals(), image_color_docs.RANDOM_DOCS)
