"""Keras 3's value-changing image layers: AutoContrast, Solarization, RandomGrayscale,
RandomInvert, RandomSharpness and MixUp, with Keras 3.15's arguments, formulas and configs.

Colour layers work in [0, 255] internally: `value_range` inputs are mapped there and back (as
Keras' _transform_value_range). Random ones draw per image and are the identity (cast to the
compute dtype where Keras casts) when `training` is false.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.keras import docstrings
from ndflow.keras.layers import image_color_docs
from ndflow.keras.layers.image_augmentation import _batch, _shape, factor_pair, symmetric
from ndflow.keras.layers.image_preprocessing import (
    ImagePreprocessingLayer,
    dims,
    saturate_cast,
)
from ndflow.ops import (
    arithmetic,
    array_core,
    array_fill,
    array_gather,
    array_range,
    array_transpose,
    comparison,
    math,
    nn_conv,
    random_gamma_poisson,
    reduction,
)
from ndflow.ops import random as random_ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast

_VALUE_RANGE_ERROR = "The `value_range` argument should be a list of two numbers. "


def _value_range(value_range) -> list:
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
        raise ValueError(_VALUE_RANGE_ERROR + f"Received: value_range={value_range}")
    return sorted(value_range)


def transform_value_range(images, original, target, dtype):
    """Affinely maps [original] onto [target] in `dtype` (unchanged when they are equal)."""
    if original[0] == target[0] and original[1] == target[1]:
        return images
    images = cast(images, dtype)
    o_lo, o_hi = cast(original[0], dtype), cast(original[1], dtype)
    t_lo, t_hi = cast(target[0], dtype), cast(target[1], dtype)
    return (images - o_lo) / (o_hi - o_lo) * (t_hi - t_lo) + t_lo


def _back_to_input_dtype(results, images_dtype):
    if results.dtype == images_dtype:
        return results
    if images_dtype.is_integer:
        results = math.round(results)
    return saturate_cast(results, images_dtype)


def _unbatched(fn, images, *args):
    """Runs a batch-only transform on a rank-3 image (as Keras' transform_single_image)."""
    if images.shape.rank == 3:
        return array_core.squeeze(fn(array_core.expand_dims(images, 0), *args), axis=[0])
    return fn(images, *args)


@keras_export("keras.layers.AutoContrast")
class AutoContrast(ImagePreprocessingLayer):
    _USE_BASE_FACTOR = False

    def __init__(self, value_range=(0, 255), **kwargs):
        super().__init__(**kwargs)
        self.value_range = _value_range(value_range)

    def transform_images(self, images, transformation=None, training=True):
        return _unbatched(self._auto_contrast, images)

    def _auto_contrast(self, original):
        images = cast(transform_value_range(original, self.value_range, (0, 255),
                                            self.compute_dtype), self.compute_dtype)
        low = reduction.reduce_min(images, axis=[1, 2], keepdims=True)
        high = reduction.reduce_max(images, axis=[1, 2], keepdims=True)
        scale = 255.0 / (high - low)
        results = math.clip_by_value(images * scale - low * scale, 0.0, 255.0)
        results = transform_value_range(results, (0, 255), self.value_range, self.compute_dtype)
        results = arithmetic.where(comparison.is_nan(results), cast(original, results.dtype),
                                   results)
        return _back_to_input_dtype(results, images.dtype)  # float: Keras compares the cast

    def get_config(self) -> dict:
        return {**super().get_config(), "value_range": self.value_range}


def _unit_factor(factor, name, signed):
    """Solarization's/RandomShear's [0, 1] factors as (lower, upper)."""
    msg = (f"The `{'addition_factor` and `threshold_factor' if not signed else 'factor'}` "
           "argument" + ("s" if not signed else "") + " should be a number (or a list of two "
           "numbers) in the range [0, 1" + (".0" if signed else "") + "]. ")
    return factor_pair(factor, name, msg, lambda v: not (v > 1.0 or v < 0),
                       symmetric if signed else (lambda f: (0, f)))


@keras_export("keras.layers.Solarization")
class Solarization(ImagePreprocessingLayer):
    _USE_BASE_FACTOR = False

    def __init__(self, addition_factor=0.0, threshold_factor=0.0, value_range=(0, 255),
                 seed=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self.addition_factor = _unit_factor(addition_factor, "addition_factor", False)
        self.threshold_factor = _unit_factor(threshold_factor, "threshold_factor", False)
        self.value_range = _value_range(value_range)

    def get_random_transformation(self, images, training=True, seed=None):
        if not training:
            return None
        shape = _shape(_batch(images), 1, 1, 1) if images.shape.rank == 4 else [1, 1, 1]

        def draw(f):
            return random_ops.random_uniform(shape, f[0], f[1] * 255, dtype=self.compute_dtype,
                                             seed=self.seed)
        return draw(self.addition_factor), draw(self.threshold_factor)

    def transform_images(self, images, transformation, training=True):
        images = cast(images, self.compute_dtype)
        if not training or transformation is None:
            return images
        additions, thresholds = transformation
        x = transform_value_range(images, self.value_range, (0, 255), self.compute_dtype)
        x = math.clip_by_value(x + additions, 0.0, 255.0)
        x = arithmetic.where(comparison.less(x, thresholds), x, 255.0 - x)
        x = transform_value_range(x, (0, 255), self.value_range, self.compute_dtype)
        return _back_to_input_dtype(x, images.dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "value_range": self.value_range,
                "addition_factor": self.addition_factor,
                "threshold_factor": self.threshold_factor, "seed": self.seed}


@keras_export("keras.layers.RandomGrayscale")
class RandomGrayscale(ImagePreprocessingLayer):
    _USE_BASE_FACTOR = False

    def __init__(self, factor=0.5, data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        if factor < 0 or factor > 1:
            raise ValueError(f"`factor` should be between 0 and 1. Received: factor={factor}")
        self.factor = factor
        self.seed = seed

    def get_random_transformation(self, images, training=True, seed=None):
        values = random_ops.random_uniform(_shape(_batch(images)), seed=self.seed)
        apply = comparison.less(values, self.factor)
        shape = [-1, 1, 1, 1] if images.shape.rank == 4 else [1, 1, 1]
        return array_core.reshape(apply, shape)

    def transform_images(self, images, transformation, training=True):
        if not training:
            return images
        axis = images.shape.rank - (3 if self.data_format == "channels_first" else 1)
        compute = images.dtype if images.dtype.is_floating else dtypes.float32
        weights = np.array([0.2989, 0.5870, 0.1140], np.float64)
        shape = [1] * images.shape.rank
        shape[axis] = 3
        w = cast(array_core.reshape(weights.astype(compute.as_numpy_dtype), shape), compute)
        gray = reduction.reduce_sum(cast(images, compute) * w, axis=axis, keepdims=True)
        return arithmetic.where(transformation, cast(gray, images.dtype), images)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor}


@keras_export("keras.layers.RandomInvert")
class RandomInvert(ImagePreprocessingLayer):
    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor=1.0, value_range=(0, 255), seed=None, data_format=None,
                 **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self.value_range = value_range
        self.seed = seed

    def get_random_transformation(self, images, training=True, seed=None):
        if not training:
            return None
        shape = _shape(_batch(images))
        probability = random_ops.random_uniform(shape, self.factor[0], self.factor[1],
                                                seed=self.seed)
        threshold = random_ops.random_uniform(shape, seed=self.seed)
        return comparison.less(threshold, probability)

    def transform_images(self, images, transformation, training=True):
        if not training or transformation is None:
            return images
        images = cast(images, self.compute_dtype)
        apply = array_core.reshape(transformation, [-1, 1, 1, 1])
        if images.shape.rank == 3:
            apply = array_core.reshape(transformation, [1, 1, 1])
        return arithmetic.where(apply, cast(self.value_range[1], images.dtype) - images, images)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor,
                "value_range": self.value_range, "seed": self.seed}


@keras_export("keras.layers.RandomSharpness")
class RandomSharpness(ImagePreprocessingLayer):
    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self.value_range = _value_range(value_range)
        self.seed = seed

    def get_random_transformation(self, images, training=True, seed=None):
        return random_ops.random_uniform(_shape(_batch(images)), self.factor[0],
                                         self.factor[1], seed=self.seed)

    def transform_images(self, images, transformation=None, training=True):
        images = cast(images, self.compute_dtype)
        if not training:
            return images
        return _unbatched(self._sharpen, images, transformation)

    def _sharpen(self, images, factor):
        first = self.data_format == "channels_first"
        if first:
            images = array_transpose.transpose(images, [0, 2, 3, 1])
        factor = array_core.reshape(cast(factor * 2, self.compute_dtype), [-1, 1, 1, 1])
        channels = images.shape.as_list()[-1]
        a, b = 1.0 / 13.0, 5.0 / 13.0
        kernel = np.array([[a, a, a], [a, b, a], [a, a, a]], np.float64).reshape(3, 3, 1, 1)
        kernel = cast(np.tile(kernel, (1, 1, channels, 1)), self.compute_dtype)
        smoothed = nn_conv.depthwise_conv2d(images, kernel, [1, 1, 1, 1], "SAME")
        images = images + (1.0 - factor) * (smoothed - images)
        images = math.clip_by_value(images, self.value_range[0], self.value_range[1])
        return array_transpose.transpose(images, [0, 3, 1, 2]) if first else images

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor,
                "value_range": self.value_range, "seed": self.seed}


@keras_export("keras.layers.MixUp")
class MixUp(ImagePreprocessingLayer):
    _USE_BASE_FACTOR = False

    def __init__(self, alpha=0.2, data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.alpha = alpha
        self.seed = seed

    def get_random_transformation(self, data, training=True, seed=None):
        """Keras' draw for a batch (`data`: the images, or Keras' dict with "images"):
        {"mix_weight": one Beta(alpha, alpha) weight per image, "permutation_order": the
        partner of each image}."""
        images = data["images"] if isinstance(data, dict) else data
        n = _batch(convert_to_tensor(images))
        order = random_ops.random_shuffle(array_range.range(0, n, dtype=dtypes.int64),
                                          seed=self.seed)
        return {"mix_weight": _beta(_shape(n), self.alpha, dtypes.float32, self.seed),
                "permutation_order": order}

    def transform_images(self, images, transformation=None, training=True):
        if not training:
            return images
        return _unbatched(self._mix, cast(images, self.compute_dtype), transformation)

    def _mix(self, images, transformation):
        weight = cast(array_core.reshape(transformation["mix_weight"], [-1, 1, 1, 1]),
                      self.compute_dtype)
        other = array_gather.gather(images, transformation["permutation_order"], axis=0)
        return weight * images + (1.0 - weight) * other

    def transform_labels(self, labels, transformation, training=True):
        if not training or transformation is None:
            return labels
        return _mix_labels(convert_to_tensor(labels), transformation["mix_weight"],
                           transformation["permutation_order"], self.compute_dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "alpha": self.alpha, "seed": self.seed}


def _mix_labels(labels, weight, order, dtype):
    """`w * labels + (1 - w) * labels[order]` per example (one-hot or soft labels)."""
    labels = cast(labels, dtype)
    rank = labels.shape.rank or 1
    weight = cast(array_core.reshape(weight, [-1] + [1] * (rank - 1)), dtype)
    return weight * labels + (1.0 - weight) * array_gather.gather(labels, order, axis=0)


def _beta(shape, alpha, dtype, seed):
    """Beta(alpha, alpha) draws as G1 / (G1 + G2) of two Gamma(alpha) draws."""
    g1 = random_gamma_poisson.random_gamma(shape, alpha, dtype=dtype, seed=seed)
    g2 = random_gamma_poisson.random_gamma(shape, alpha, dtype=dtype, seed=seed)
    return g1 / (g1 + g2)


@keras_export("keras.layers.CutMix")
class CutMix(ImagePreprocessingLayer):
    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor=1.0, seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self.seed = seed

    def get_random_transformation(self, images, training=True, seed=None):
        if not training or images.shape.rank == 3:
            return None
        dtype = self.compute_dtype
        first = self.data_format == "channels_first"
        d = dims(images)
        n, h, w = d[0], *(d[2:4] if first else d[1:3])
        channels = d[1] if first else d[3]
        alpha = random_ops.random_uniform([], self.factor[0], self.factor[1], dtype=dtype,
                                          seed=self.seed) + 1e-6
        ratio = math.sqrt(1.0 - _beta(_shape(n), alpha, dtype, self.seed))

        def bounds(length):
            length = cast(length, dtype)
            crop = ratio * length
            start = random_ops.random_uniform(_shape(n), dtype=dtype, seed=self.seed) * (
                length - crop)
            return array_core.reshape(start, [-1, 1, 1, 1]), \
                array_core.reshape(start + crop, [-1, 1, 1, 1])
        x0, x1 = bounds(w)
        y0, y1 = bounds(h)
        gy = cast(array_range.range(0, h), dtype)
        gx = cast(array_range.range(0, w), dtype)
        gy = array_core.reshape(gy, [1, 1, -1, 1] if first else [1, -1, 1, 1])
        gx = array_core.reshape(gx, [1, 1, 1, -1] if first else [1, 1, -1, 1])
        inside = comparison.logical_and(
            comparison.logical_and(comparison.greater_equal(gx, x0), comparison.less(gx, x1)),
            comparison.logical_and(comparison.greater_equal(gy, y0), comparison.less(gy, y1)))
        reps = [1, channels, 1, 1] if first else [1, 1, 1, channels]
        mask = array_fill.tile(inside, _shape(*reps))
        area = cast(w, dtype) * cast(h, dtype)
        weight = array_core.reshape(1.0 - (x1 - x0) * (y1 - y0) / area, [-1])
        order = random_ops.random_shuffle(array_range.range(0, n, dtype=dtypes.int32),
                                          seed=self.seed)
        return mask, weight, order

    def transform_images(self, images, transformation=None, training=True):
        images = cast(images, self.compute_dtype)
        if not training or transformation is None:
            return images
        mask, _, order = transformation
        return arithmetic.where(mask, array_gather.gather(images, order, axis=0), images)

    def transform_labels(self, labels, transformation, training=True):
        if not training or transformation is None:
            return labels
        _, weight, order = transformation
        return _mix_labels(labels, weight, order, self.compute_dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "seed": self.seed}


docstrings.attach(globals(), image_color_docs.AUGMENTATION_DOCS)
