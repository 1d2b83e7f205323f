"""Keras 3's RandomGaussianBlur, RandomPerspective and RandomErasing: each image of a batch
blurred (keras.ops' gaussian_blur), warped by moving its four corners (perspective_transform)
or given a random rectangle of fill, with a probability drawn in `factor`. Their
transformations are Keras' dicts, so a drawn transformation replays through
`transform_images`; they are the identity when `training` is false. (Bounding boxes are not
transformed yet.)"""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.keras.layers import image_blur_perspective_docs
from ndflow.keras.layers.image_augmentation import _batch, _shape
from ndflow.keras.layers.image_preprocessing import ImagePreprocessingLayer, bounded_pair
from ndflow.keras.ops import image_functions
from ndflow.ops import arithmetic, array_core, array_fill, array_range, comparison, math
from ndflow.ops import random as random_ops
from ndflow.ops.cast import cast


def _rank_checked_batch(images):
    if images.shape.rank not in (3, 4):
        raise ValueError("Expected the input image to be rank 3 or 4. Received "
                         f"inputs.shape={tuple(images.shape.as_list())}")
    return _batch(images)


def _applied(layer, batch):
    """Per image whether to transform it: a threshold below a probability in `factor`."""
    probability = random_ops.random_uniform(_shape(batch), layer.factor[0], layer.factor[1],
                                            seed=layer.seed)
    threshold = random_ops.random_uniform(_shape(batch), 0.0, 1.0, seed=layer.seed)
    return comparison.less(threshold, probability)


def _per_image(flags):
    return array_core.reshape(flags, [-1, 1, 1, 1])


@keras_export("keras.layers.RandomGaussianBlur")
class RandomGaussianBlur(ImagePreprocessingLayer):
    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor=1.0, kernel_size=3, sigma=1.0, value_range=(0, 255),
                 data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self.kernel_size = self._odd_pair(kernel_size, "kernel_size")
        self.sigma = bounded_pair(sigma, self._FACTOR_BOUNDS, "sigma")
        self.value_range = value_range
        self.seed = seed

    @staticmethod
    def _odd_pair(value, name):
        message = f"{name} must be an odd number. Received: {name}={value}"
        if isinstance(value, (tuple, list)):
            if len(value) != 2:
                raise ValueError(f"The `{name}` argument should be a number (or a list of two "
                                 f"numbers) Received: {name}={value}")
            if value[0] % 2 == 0 or value[1] % 2 == 0:
                raise ValueError(message)
            return value[0], value[1]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if value % 2 == 0:
                raise ValueError(message)
            return value, value
        raise ValueError(message)

    def get_random_transformation(self, images, training=True, seed=None):
        if not training:
            return None
        apply = _applied(self, _rank_checked_batch(images))
        sigma = random_ops.random_uniform(_shape(2), self.sigma[0], self.sigma[1],
                                          dtype=self.compute_dtype, seed=self.seed) + 1e-6
        return {"should_apply_blur": apply, "blur_factor": sigma}

    def transform_images(self, images, transformation, training=True):
        images = cast(images, self.compute_dtype)
        if not training or transformation is None:
            return images
        blurred = image_functions.gaussian_blur(images, kernel_size=self.kernel_size,
                                                sigma=transformation["blur_factor"],
                                                data_format=self.data_format)
        out = arithmetic.where(_per_image(transformation["should_apply_blur"]), blurred,
                               images)
        out = math.clip_by_value(out, self.value_range[0], self.value_range[1])
        return cast(out, self.compute_dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor,
                "kernel_size": self.kernel_size, "sigma": self.sigma,
                "value_range": self.value_range, "seed": self.seed}


@keras_export("keras.layers.RandomPerspective")
class RandomPerspective(ImagePreprocessingLayer):
    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)
    _SUPPORTED_INTERPOLATION = ("nearest", "bilinear")

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear", fill_value=0.0,
                 seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self.scale, self.fill_value = scale, fill_value
        self.interpolation, self.seed = interpolation, seed
        if scale < 0.0 or scale > 1.0:
            raise ValueError("The `scale` argument should be a number in the range [0,1]. "
                             f"Received: scale={scale}")
        if interpolation not in self._SUPPORTED_INTERPOLATION:
            raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Expected of "
                                      f"one {self._SUPPORTED_INTERPOLATION}.")
        first = self.data_format == "channels_first"
        self.height_axis, self.width_axis = (-2, -1) if first else (-3, -2)

    def get_random_transformation(self, images, training=True, seed=None):
        if not training:
            return None
        batch = _rank_checked_batch(images)
        height, width = images.shape[self.height_axis], images.shape[self.width_axis]
        apply = _applied(self, batch)
        factor = random_ops.random_uniform(_shape(batch, 4, 2), -0.5 * self.scale,
                                           0.5 * self.scale, dtype=self.compute_dtype,
                                           seed=self.seed)
        corners = cast([[[0.0, 0.0], [width - 1, 0.0], [0.0, height - 1],
                         [width - 1, height - 1]]], self.compute_dtype)
        start = array_fill.tile(corners, _shape(batch, 1, 1))
        return {"apply_perspective": apply, "start_points": start,
                "end_points": start + start * factor}

    def transform_images(self, images, transformation, training=True):
        if not training or transformation is None:
            return images
        single = images.shape.rank == 3
        batch = array_core.expand_dims(images, 0) if single else images
        warped = image_functions.perspective_transform(
            batch, transformation["start_points"], transformation["end_points"],
            interpolation=self.interpolation, fill_value=self.fill_value,
            data_format=self.data_format)
        out = arithmetic.where(_per_image(transformation["apply_perspective"]), warped,
                               batch)
        return array_core.squeeze(out, axis=[0]) if single else out

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "scale": self.scale,
                "interpolation": self.interpolation, "fill_value": self.fill_value,
                "seed": self.seed}


@keras_export("keras.layers.RandomErasing")
class RandomErasing(ImagePreprocessingLayer):
    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor=1.0, scale=(0.02, 0.33), fill_value=None, value_range=(0, 255),
                 seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self.scale = bounded_pair(scale, self._FACTOR_BOUNDS, "scale")
        self.fill_value, self.value_range, self.seed = fill_value, value_range, seed
        first = self.data_format == "channels_first"
        self.height_axis, self.width_axis, self.channel_axis = \
            (-2, -1, -3) if first else (-3, -2, -1)

    def _bounds(self, batch, length, ratio):
        size = cast(ratio * length, self.compute_dtype)
        start = random_ops.random_uniform(_shape(batch), 0, 1, dtype=self.compute_dtype,
                                          seed=self.seed) * (length - size)
        return start, start + size

    def _fill(self, images):
        shape = array_core.shape(images)
        fill = self.fill_value
        if fill is None:
            fill = random_ops.random_normal(shape, dtype=self.compute_dtype,
                                            seed=self.seed) * self.value_range[1]
        elif isinstance(fill, (tuple, list)) and len(fill) == 3:
            fill = array_fill.fill(shape, cast(0, self.compute_dtype)) + cast(
                fill, self.compute_dtype)
        elif isinstance(fill, (int, float)) and not isinstance(fill, bool):
            fill = array_fill.ones(shape, dtype=self.compute_dtype) * fill
        else:
            raise ValueError("The `fill_value` argument should be a number (or a list of three "
                             "numbers) ")
        return math.clip_by_value(fill, self.value_range[0], self.value_range[1])

    def get_random_transformation(self, images, training=True, seed=None):
        if not training:
            return None
        batch = _rank_checked_batch(images)
        height, width = images.shape[self.height_axis], images.shape[self.width_axis]
        weights = math.sqrt(random_ops.random_uniform(
            _shape(batch, 2), self.scale[0], self.scale[1], dtype=self.compute_dtype,
            seed=self.seed))
        x0, x1 = self._bounds(batch, width, weights[:, 0])
        y0, y1 = self._bounds(batch, height, weights[:, 1])
        rows = array_core.reshape(cast(array_range.range(height), self.compute_dtype),
                                  [1, height, 1, 1] if self.channel_axis == -1
                                  else [1, 1, height, 1])
        cols = array_core.reshape(cast(array_range.range(width), self.compute_dtype),
                                  [1, 1, width, 1] if self.channel_axis == -1
                                  else [1, 1, 1, width])
        x0, x1, y0, y1 = (array_core.reshape(v, [-1, 1, 1, 1]) for v in (x0, x1, y0, y1))
        masks = _all_of(comparison.greater_equal(cols, x0), comparison.less(cols, x1),
                             comparison.greater_equal(rows, y0), comparison.less(rows, y1))
        channels = images.shape[self.channel_axis]
        multiples = [1, 1, 1, channels] if self.channel_axis == -1 else [1, channels, 1, 1]
        masks = array_fill.tile(masks, multiples)
        return {"apply_erasing": _applied(self, batch), "batch_masks": masks,
                "fill_value": self._fill(images)}

    def transform_images(self, images, transformation, training=True):
        images = cast(images, self.compute_dtype)
        if training and transformation is not None:
            erased = arithmetic.where(transformation["batch_masks"],
                                      cast(transformation["fill_value"], images.dtype), images)
            images = arithmetic.where(_per_image(transformation["apply_erasing"]), erased,
                                      images)
        return cast(images, self.compute_dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "scale": self.scale,
                "fill_value": self.fill_value, "value_range": self.value_range,
                "seed": self.seed}


def _all_of(*conditions):
    out = conditions[0]
    for c in conditions[1:]:
        out = comparison.logical_and(out, c)
    return out


attach(globals(), image_blur_perspective_docs.DOCS)
