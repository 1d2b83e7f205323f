"""Keras 3's random image augmentation layers: RandomFlip, RandomRotation, RandomZoom,
RandomTranslation, RandomCrop, RandomContrast and RandomBrightness, with Keras 3.15's
arguments, factor rules, configs and dtype behaviour.

Each draws its parameters per image with ndflow's stateful random ops (`seed` is the op seed)
and applies them to the whole batch; with `training` false (inference) they return the input
(cast to the compute dtype where Keras casts). Rotation, zoom and translation build Keras'
affine matrices in float32 and run them through `keras.ops.image.affine_transform` (the
ImageProjectiveTransformV3 op), as Keras does, so a given matrix samples exactly as TensorFlow
does.
"""

from __future__ import annotations

import math as pymath
import random as py_random

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.core.tensor import Tensor
from ndflow.keras import docstrings
from ndflow.keras.layers import image_augmentation_docs
from ndflow.keras.layers.image_preprocessing import (
    ImagePreprocessingLayer,
    dims,
    height_width,
    resize,
)
from ndflow.keras.ops import image_functions
from ndflow.ops import (
    arithmetic,
    array_core,
    array_fill,
    array_reorder,
    array_slicing,
    comparison,
    math,
    math_trig,
    reduction,
)
from ndflow.ops import random as random_ops
from ndflow.ops.cast import cast

_FILL_MODES = ("reflect", "wrap", "constant", "nearest")
_INTERPOLATIONS = ("nearest", "bilinear")


def _shape(*d):
    """A shape argument from ints and scalar tensors."""
    if any(isinstance(v, Tensor) for v in d):
        return array_core.stack([cast(v, dtypes.int32) for v in d])
    return list(d)


def _batch(images: Tensor):
    return dims(images)[0] if images.shape.rank == 4 else 1


def affine_matrix(angle, translate_x, translate_y, scale, shear_x, shear_y, height, width,
                  center_x=0.5, center_y=0.5) -> Tensor:
    """Keras' _compute_affine_matrix: scaling x shear x rotation about the centre (angles in
    degrees, [B] float32 tensors), as [B, 8] transform rows."""
    rad = pymath.pi / 180.0
    angle, shear_x, shear_y = angle * rad, shear_x * rad, shear_y * rad
    width, height = cast(width, angle.dtype), cast(height, angle.dtype)
    cx, cy = center_x * (width - 1), center_y * (height - 1)
    cos, sin = math_trig.cos(angle), math_trig.sin(angle)
    shx, shy = math_trig.tan(shear_x), math_trig.tan(shear_y)
    a0 = scale * (cos + shx * sin)
    a1 = scale * (-sin + shx * cos)
    a2 = translate_x + cx - cx * a0 - cy * a1
    b0 = scale * (shy * cos + sin)
    b1 = scale * (shy * -sin + cos)
    b2 = translate_y + cy - cx * b0 - cy * b1
    zeros = array_fill.zeros_like(angle)
    return array_core.stack([a0, a1, a2, b0, b1, b2, zeros, zeros], axis=1)


class _AffineLayer(ImagePreprocessingLayer):
    """Shared arguments and transform step of the layers that warp by an affine matrix."""

    def _init_affine(self, fill_mode, interpolation, seed, fill_value) -> None:
        if fill_mode not in _FILL_MODES:
            raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Expected of one "
                                      f"{_FILL_MODES}.")
        if interpolation not in _INTERPOLATIONS:
            raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Expected of "
                                      f"one {_INTERPOLATIONS}.")
        self.fill_mode, self.interpolation = fill_mode, interpolation
        self.seed, self.fill_value = seed, fill_value

    def transform_images(self, images, transformation, training=True):
        images = cast(images, self.compute_dtype)
        if not training or transformation is None:
            return images
        matrix = self.matrix(images, transformation)
        return image_functions.affine_transform(images, matrix, self.interpolation,
                                                self.fill_mode, self.fill_value,
                                                self.data_format)

    def transform_segmentation_masks(self, masks, transformation, training=True):
        if not training or transformation is None:
            return masks
        return image_functions.affine_transform(masks, self.matrix(masks, transformation),
                                                "nearest", self.fill_mode, self.fill_value,
                                                self.data_format)

    def _uniform(self, shape, low, high):
        return random_ops.random_uniform(shape, low, high, seed=self.seed)


@keras_export("keras.layers.RandomFlip")
class RandomFlip(ImagePreprocessingLayer):
    _USE_BASE_FACTOR = False

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.seed = seed
        self.mode = mode

    def get_random_transformation(self, images, training=True, seed=None):
        if not training:
            return None
        shape = (1, 1, 1) if images.shape.rank == 3 else (_batch(images), 1, 1, 1)
        return comparison.less_equal(
            random_ops.random_uniform(_shape(*shape), seed=self.seed), 0.5)

    def transform_images(self, images, transformation, training=True):
        images = cast(images, self.compute_dtype)
        if not training or transformation is None:
            return images
        rank = images.shape.rank
        w_axis = rank - (1 if self.data_format == "channels_first" else 2)
        out = images
        if self.mode in ("horizontal", "horizontal_and_vertical"):
            out = arithmetic.where(transformation, array_reorder.reverse(out, [w_axis]), out)
        if self.mode in ("vertical", "horizontal_and_vertical"):
            out = arithmetic.where(transformation, array_reorder.reverse(out, [w_axis - 1]),
                                   out)
        return out

    def transform_segmentation_masks(self, masks, transformation, training=True):
        if not training or transformation is None:
            return masks
        return self.transform_images(masks, transformation, training)

    def get_config(self) -> dict:
        return {**super().get_config(), "seed": self.seed, "mode": self.mode,
                "data_format": self.data_format}


@keras_export("keras.layers.RandomRotation")
class RandomRotation(_AffineLayer):
    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(factor=factor, data_format=data_format, **kwargs)
        self._init_affine(fill_mode, interpolation, seed, fill_value)

    def get_random_transformation(self, images, training=True, seed=None):
        if not training:
            return None
        return self._uniform(_shape(_batch(images)), self.factor[0] * 360.0,
                             self.factor[1] * 360.0)

    def matrix(self, images, angle):
        h, w = height_width(images, self.data_format)
        zeros, ones = array_fill.zeros_like(angle), array_fill.ones_like(angle)
        return affine_matrix(angle, zeros, zeros, ones, zeros, zeros, h, w)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "data_format": self.data_format,
                "fill_mode": self.fill_mode, "fill_value": self.fill_value,
                "interpolation": self.interpolation, "seed": self.seed}


def factor_pair(factor, name, message, in_range, single):
    """(lower, upper) of a layer's factor argument: a pair (sorted) or a number (`single` of
    it), each value `in_range`; else a ValueError of `message`."""
    def check(v):
        if not in_range(v):
            raise ValueError(message + f"Received: input_number={v}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(message + f"Received: {name}={factor}")
        check(factor[0])
        check(factor[1])
        return tuple(sorted(factor))
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        check(factor)
        return single(factor)
    raise ValueError(message + f"Received: {name}={factor}")


def symmetric(f):
    """The range (-|f|, |f|) of a single factor."""
    return -abs(f), abs(f)


def _pair_factor(factor, name, message, open_low):
    """(lower, upper) of a zoom/translation factor, each in [-1, 1] ((-1, 1] for zoom)."""
    return factor_pair(factor, name, message,
                       lambda v: not (v > 1.0 or (v <= -1.0 if open_low else v < -1.0)),
                       symmetric)


@keras_export("keras.layers.RandomZoom")
class RandomZoom(_AffineLayer):
    _USE_BASE_FACTOR = False
    _MESSAGE = ("The `height_factor` and `width_factor` arguments should be a number (or a "
                "list of two numbers) in the range (-1.0, 1.0]. ")

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_lower, self.height_upper = _pair_factor(
            height_factor, "height_factor", self._MESSAGE, True)
        if width_factor is not None:
            self.width_lower, self.width_upper = _pair_factor(
                width_factor, "width_factor", self._MESSAGE, True)
        self._init_affine(fill_mode, interpolation, seed, fill_value)

    def get_random_transformation(self, images, training=True, seed=None):
        if not training:
            return None
        shape = _shape(_batch(images), 1)
        height = self._uniform(shape, 1.0 + self.height_lower, 1.0 + self.height_upper)
        width = height if self.width_factor is None else self._uniform(
            shape, 1.0 + self.width_lower, 1.0 + self.width_upper)
        return array_slicing.concat([width, height], axis=1)

    def matrix(self, images, zooms):
        h, w = height_width(images, self.data_format)
        zx, zy = zooms[:, 0], zooms[:, 1]
        zeros = array_fill.zeros_like(zx)
        x_off = (cast(w, dtypes.float32) - 1.0) / 2.0 * (1.0 - zx)
        y_off = (cast(h, dtypes.float32) - 1.0) / 2.0 * (1.0 - zy)
        return array_core.stack([zx, zeros, x_off, zeros, zy, y_off, zeros, zeros], axis=1)

    def get_config(self) -> dict:
        return {**super().get_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor, "fill_mode": self.fill_mode,
                "interpolation": self.interpolation, "seed": self.seed,
                "fill_value": self.fill_value, "data_format": self.data_format}


@keras_export("keras.layers.RandomTranslation")
class RandomTranslation(_AffineLayer):
    _USE_BASE_FACTOR = False
    _MESSAGE = ("The `factor` argument should be a number (or a list of two numbers) in the "
                "range [-1.0, 1.0]. ")

    def __init__(self, height_factor, width_factor, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_lower, self.height_upper = _pair_factor(
            height_factor, "height_factor", self._MESSAGE, False)
        self.width_lower, self.width_upper = _pair_factor(
            width_factor, "width_factor", self._MESSAGE, False)
        self._init_affine(fill_mode, interpolation, seed, fill_value)

    def get_random_transformation(self, images, training=True, seed=None):
        if not training:
            return None
        h, w = height_width(images, self.data_format)
        shape = _shape(_batch(images), 1)
        dy = self._uniform(shape, self.height_lower, self.height_upper) * cast(h, dtypes.float32)
        dx = self._uniform(shape, self.width_lower, self.width_upper) * cast(w, dtypes.float32)
        return array_slicing.concat([dx, dy], axis=1)

    def matrix(self, images, translations):
        dx, dy = translations[:, 0], translations[:, 1]
        zeros, ones = array_fill.zeros_like(dx), array_fill.ones_like(dx)
        return array_core.stack([ones, zeros, -dx, zeros, ones, -dy, zeros, zeros], axis=1)

    def get_config(self) -> dict:
        return {**super().get_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor, "fill_mode": self.fill_mode,
                "interpolation": self.interpolation, "seed": self.seed,
                "fill_value": self.fill_value, "data_format": self.data_format}


@keras_export("keras.layers.RandomCrop")
class RandomCrop(ImagePreprocessingLayer):
    _USE_BASE_FACTOR = False

    def __init__(self, height, width, seed=None, data_format=None, name=None, **kwargs):
        super().__init__(name=name, data_format=data_format, **kwargs)
        self.height, self.width = height, width
        self.seed = seed if seed is not None else int(random_ops_seed())
        self.supports_masking = False

    def get_random_transformation(self, images, training=True, seed=None):
        in_h, in_w = images.shape.as_list()[-3:-1] if self.data_format == "channels_last" \
            else images.shape.as_list()[-2:]
        if in_h is None or in_w is None:
            raise ValueError("RandomCrop requires the input to have a fully defined height and "
                             f"width. Received: images.shape={tuple(images.shape.as_list())}")
        if training and in_h > self.height and in_w > self.width:
            h0 = cast(random_ops.random_uniform([], 0, float(in_h - self.height + 1),
                                                seed=self.seed), dtypes.int32)
            w0 = cast(random_ops.random_uniform([], 0, float(in_w - self.width + 1),
                                                seed=self.seed), dtypes.int32)
            return h0, w0
        crop_h = max(min(in_h, int(float(in_w * self.height) / self.width)), 1)
        crop_w = max(min(in_w, int(float(in_h * self.width) / self.height)), 1)
        return int(float(in_h - crop_h) / 2), int(float(in_w - crop_w) / 2)

    def transform_images(self, images, transformation, training=True):
        if not training:
            return images
        images = cast(images, self.compute_dtype)
        h0, w0 = transformation
        hs, ws = slice(h0, h0 + self.height), slice(w0, w0 + self.width)
        first = self.data_format == "channels_first"
        if images.shape.rank == 4:
            images = images[:, :, hs, ws] if first else images[:, hs, ws, :]
        else:
            images = images[:, hs, ws] if first else images[hs, ws, :]
        new_h, new_w = height_width(images, self.data_format)
        if not isinstance(new_h, int) or not isinstance(new_w, int) or \
                new_h != self.height or new_w != self.width:
            images = cast(resize(images, (self.height, self.width),
                                 data_format=self.data_format), self.compute_dtype)
        return images

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        h_axis = -2 if self.data_format == "channels_first" else -3
        shape[h_axis], shape[h_axis + 1] = self.height, self.width
        return tuple(shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "height": self.height, "width": self.width,
                "seed": self.seed, "data_format": self.data_format}


def random_ops_seed() -> int:
    """Keras' make_default_seed: a random int32 when no seed is given."""
    return py_random.randint(1, int(1e9))


@keras_export("keras.layers.RandomContrast")
class RandomContrast(ImagePreprocessingLayer):
    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(**kwargs)
        self._set_factor(factor)
        self.value_range = value_range
        self.seed = seed

    def get_random_transformation(self, images, training=True, seed=None):
        if not training:
            return None
        shape = (1, 1, 1) if images.shape.rank == 3 else (_batch(images), 1, 1, 1)
        return random_ops.random_uniform(_shape(*shape), 1.0 - self.factor[0],
                                         1.0 + self.factor[1], dtype=self.compute_dtype,
                                         seed=self.seed)

    def transform_images(self, images, transformation, training=True):
        if not training or transformation is None:
            return images
        images = cast(images, self.compute_dtype)
        rank = images.shape.rank
        h_axis = rank - (2 if self.data_format == "channels_first" else 3)
        mean = reduction.reduce_mean(images, axis=[h_axis, h_axis + 1], keepdims=True)
        out = (images - mean) * transformation + mean
        return math.clip_by_value(out, self.value_range[0], self.value_range[1])

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor,
                "value_range": self.value_range, "seed": self.seed,
                "data_format": self.data_format}


@keras_export("keras.layers.RandomBrightness")
class RandomBrightness(ImagePreprocessingLayer):
    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(factor=factor, **kwargs)
        self.seed = seed
        if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
            raise ValueError("The `value_range` argument should be a list of two numbers. "
                             f"Received: value_range={value_range}")
        self.value_range = sorted(value_range)

    def get_random_transformation(self, images, training=True, seed=None):
        if not training:
            return None
        shape = (1, 1, 1) if images.shape.rank == 3 else (_batch(images), 1, 1, 1)
        delta = random_ops.random_uniform(_shape(*shape), self.factor[0], self.factor[1],
                                          seed=self.seed)
        return delta * float(self.value_range[1] - self.value_range[0])

    def transform_images(self, images, transformation, training=True):
        if not training or transformation is None:
            return images
        out = images + cast(transformation, images.dtype)
        return math.clip_by_value(out, self.value_range[0], self.value_range[1])

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor,
                "value_range": self.value_range, "seed": self.seed,
                "data_format": self.data_format}


@keras_export("keras.layers.RandomShear")
class RandomShear(_AffineLayer):
    _USE_BASE_FACTOR = False
    _MESSAGE = ("The `factor` argument should be a number (or a list of two numbers) in the "
                "range [0, 1.0]. ")

    def __init__(self, x_factor=0.0, y_factor=0.0, interpolation="bilinear",
                 fill_mode="reflect", fill_value=0.0, data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.x_factor = self._shear_factor(x_factor, "x_factor")
        self.y_factor = self._shear_factor(y_factor, "y_factor")
        self._init_affine(fill_mode, interpolation, seed, fill_value)

    def _shear_factor(self, factor, name):
        def check(v):
            if v > 1.0 or v < 0.0:
                raise ValueError(self._MESSAGE + f"Received: input_number={v}")
        if isinstance(factor, (tuple, list)):
            if len(factor) != 2:
                raise ValueError(self._MESSAGE + f"Received: {name}={factor}")
            # |values|: the stored (-f, f) form of a config loads again (Keras 3.15 rejects it)
            check(abs(factor[0]))
            check(abs(factor[1]))
            return tuple(sorted(factor))
        if isinstance(factor, (int, float)) and not isinstance(factor, bool):
            check(factor)
            return -abs(factor), abs(factor)
        raise ValueError(self._MESSAGE + f"Received: {name}={factor}")

    def get_random_transformation(self, images, training=True, seed=None):
        if not training:
            return None
        shape = _shape(_batch(images), 1)
        dtype = self.compute_dtype
        invert = random_ops.random_uniform(shape, dtype=dtype, seed=self.seed)
        sign = arithmetic.where(comparison.greater(invert, 0.5), -array_fill.ones_like(invert),
                                array_fill.ones_like(invert))
        shear_y = random_ops.random_uniform(shape, self.y_factor[0], self.y_factor[1],
                                            dtype=dtype, seed=self.seed)
        shear_x = random_ops.random_uniform(shape, self.x_factor[0], self.x_factor[1],
                                            dtype=dtype, seed=self.seed)
        return array_slicing.concat([shear_x, shear_y], axis=1) * sign

    def matrix(self, images, shear):
        sx, sy = shear[:, 0], shear[:, 1]
        zeros, ones = array_fill.zeros_like(sx), array_fill.ones_like(sx)
        return array_core.stack([ones, sx, zeros, sy, ones, zeros, zeros, zeros], axis=1)

    def get_config(self) -> dict:
        return {**super().get_config(), "x_factor": self.x_factor, "y_factor": self.y_factor,
                "fill_mode": self.fill_mode, "interpolation": self.interpolation,
                "seed": self.seed, "fill_value": self.fill_value,
                "data_format": self.data_format}


docstrings.attach(globals(), image_augmentation_docs.DOCS)
