"""Keras 3's RandomElasticTransform: with a probability drawn in `factor`, each image is
warped by a Gaussian-smoothed random displacement field (keras.ops.image.elastic_transform),
its strength and smoothness drawn in `scale` and proportional to the image size. Its draws
come from a `keras.random.SeedGenerator(seed)` in Keras' order, so a seeded layer gives
Keras' images; labels pass through, segmentation masks are warped with nearest sampling
(with the next field, as Keras does); the identity when `training` is false."""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.api_export import keras_export
from ndflow.keras import random_functions
from ndflow.keras.layers.image_preprocessing import ImagePreprocessingLayer, bounded_pair
from ndflow.keras.ops import rearrange_elastic
from ndflow.ops import arithmetic, array_core, comparison, math, script_ops
from ndflow.ops.cast import cast


class _FixedSeed(random_functions.SeedGenerator):
    """A seed already drawn (an int32 pair), handed to the warp as a generator would be."""

    def __init__(self, pair):   # no state variable: nothing advances
        self.pair = pair

    def next(self, ordered=True):
        return self.pair


@keras_export("keras.layers.RandomElasticTransform")
class RandomElasticTransform(ImagePreprocessingLayer):
    """Random elastic deformations: images are warped by a smooth random displacement
    field (alpha = 0.1 * scale * max(h, w), sigma = 0.05 * scale * min(h, w)), results
    clipped to `value_range`.

    Random only in training; at inference the images pass through unchanged.

    Args:
      factor: the probability bound of warping an image (a float or pair in [0, 1]).
      scale: the distortion's strength, in [0, 1].
      interpolation: "bilinear" (the default) or "nearest".
      fill_mode: "reflect" (the default), "wrap", "constant" or "nearest".
      fill_value: the value for "constant".
      value_range: the (min, max) range of the pixel values (default (0, 255)).
      seed: an int for reproducible draws.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      **kwargs: Layer arguments (name, dtype, ...).
    """

    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)
    _SUPPORTED_INTERPOLATION = ("nearest", "bilinear")
    _SUPPORTED_FILL_MODES = {"constant", "nearest", "wrap", "mirror", "reflect"}

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear", fill_mode="reflect",
                 fill_value=0.0, value_range=(0, 255), seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self.scale = bounded_pair(scale, self._FACTOR_BOUNDS, "scale")
        self.interpolation = interpolation
        self.fill_mode = fill_mode
        self.fill_value = fill_value
        self.value_range = value_range
        self.seed = seed
        self.generator = random_functions.SeedGenerator(seed)
        if interpolation not in self._SUPPORTED_INTERPOLATION:
            raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Expected of "
                                      f"one {self._SUPPORTED_INTERPOLATION}.")
        if fill_mode not in self._SUPPORTED_FILL_MODES:
            raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Expected of one "
                                      f"{self._SUPPORTED_FILL_MODES}.")
        first = self.data_format == "channels_first"
        self.height_axis, self.width_axis, self.channel_axis = \
            (-2, -1, -3) if first else (-3, -2, -1)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training or self.scale[1] == 0 or self.factor[1] == 0:
            return None
        images = data["images"] if isinstance(data, dict) else data
        shape = images.shape.as_list()
        batch = 1 if len(shape) == 3 else (shape[0] if shape[0] is not None
                                           else array_core.shape(images)[0])
        seed = seed or self.generator
        uniform = random_functions.uniform
        probability = uniform((batch,), self.factor[0], self.factor[1], seed=seed)
        threshold = uniform((batch,), 0.0, 1.0, seed=seed)
        distortion = uniform((), self.scale[0], self.scale[1], seed=seed,
                             dtype=self.compute_dtype)
        return {"apply_transform": comparison.less(threshold, probability),
                "distortion_factor": distortion, "seed": seed}

    def get_elastic_transform_params(self, height, width, factor):
        return max(height, width) * (0.1 * factor), min(height, width) * (0.05 * factor)

    def transform_images(self, images, transformation, training=True):
        images = cast(images, self.compute_dtype)
        if training:
            images = self._transform(images, transformation, self.interpolation)
        return images

    def transform_segmentation_masks(self, masks, transformation, training=True):
        if training:
            masks = self._transform(masks, transformation, "nearest")
        return masks

    def _transform(self, images, transformation, interpolation):
        if transformation is None:
            return images
        single = images.shape.rank == 3
        batch = array_core.expand_dims(images, 0) if single else images
        height, width = batch.shape[self.height_axis], batch.shape[self.width_axis]
        alpha, sigma = self.get_elastic_transform_params(
            height, width, transformation["distortion_factor"])
        seed = transformation["seed"]

        def warp(images, alpha, sigma, seed):
            return rearrange_elastic.elastic_transform(
                images, alpha=alpha, sigma=sigma, interpolation=interpolation,
                fill_mode=self.fill_mode, fill_value=self.fill_value, seed=seed,
                data_format=self.data_format)

        if context.executing_eagerly():
            warped = warp(batch, alpha, sigma, seed)
        else:
            # the blur's kernel size follows the drawn sigma: a graph runs the warp eagerly
            # (py_function) with the seed pair the generator gives now, as eagerly
            pair = random_functions.draw_seed(seed)
            warped = script_ops.py_function(
                lambda images, a, s, p: warp(images, a, s, _FixedSeed(p)),
                [batch, alpha, sigma, pair], Tout=batch.dtype)
            warped = array_core.ensure_shape(warped, batch.shape)
        apply = array_core.reshape(transformation["apply_transform"], [-1, 1, 1, 1])
        out = arithmetic.where(apply, warped, batch)
        out = math.clip_by_value(out, cast(self.value_range[0], out.dtype),
                                 cast(self.value_range[1], out.dtype))
        out = cast(out, self.compute_dtype)
        return array_core.squeeze(out, axis=[0]) if single else out

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "scale": self.scale,
                "interpolation": self.interpolation, "fill_mode": self.fill_mode,
                "fill_value": self.fill_value, "value_range": self.value_range,
                "seed": self.seed}
