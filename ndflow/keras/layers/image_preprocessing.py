"""Keras 3's deterministic image preprocessing layers: Rescaling, Resizing and CenterCrop, and
the base class of every image preprocessing layer (ImagePreprocessingLayer), with Keras 3.15's
arguments, dtype rules and configs.

The base class does what Keras' BaseImagePreprocessingLayer does for plain image inputs:
rank-3 (one image) or rank-4 (a batch) tensors, `data_format` channels_last or channels_first,
`call(images, training=True)` = `transform_images(images, get_random_transformation(...))`,
where random layers draw nothing and return their input when `training` is false (inference:
`predict`, `evaluate`, `training=False`). Random layers are in image_augmentation.py; all work
eagerly, inside `tf.function` and in `tf.data` `map` (they are built from ndflow ops only).
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.core.tensor import Tensor
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.conv_utils import standardize_data_format
from ndflow.keras.ops.image_functions import check_resize_arguments
from ndflow.ops import (
    arithmetic,
    array_core,
    array_fill,
    array_slicing,
    array_transpose,
    image_resize,
    math,
)
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast


def _is_tensor_dim(d) -> bool:
    return isinstance(d, Tensor)


def dims(images: Tensor) -> list:
    """Static dims where known, else scalar int32 tensors (tf.function with unknown dims)."""
    static = images.shape.as_list()
    if all(d is not None for d in static):
        return static
    dynamic = array_core.shape(images)
    return [d if d is not None else dynamic[i] for i, d in enumerate(static)]


def to_channels_last(images: Tensor, data_format: str) -> Tensor:
    if data_format != "channels_first":
        return images
    perm = (0, 2, 3, 1) if images.shape.rank == 4 else (1, 2, 0)
    return array_transpose.transpose(images, perm)


def from_channels_last(images: Tensor, data_format: str) -> Tensor:
    if data_format != "channels_first":
        return images
    perm = (0, 3, 1, 2) if images.shape.rank == 4 else (2, 0, 1)
    return array_transpose.transpose(images, perm)


def height_width(images: Tensor, data_format: str) -> tuple:
    d = dims(images)
    return (d[-2], d[-1]) if data_format == "channels_first" else (d[-3], d[-2])


def saturate_cast(x: Tensor, dtype) -> Tensor:
    """Clip to `dtype`'s range then cast (Keras' _saturate_cast for resized integer images)."""
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_integer:
        x = math.clip_by_value(x, float(dtype.min), float(dtype.max))
    return cast(x, dtype)


def bounded_pair(value, bounds, name: str = "factor") -> tuple:
    """Keras' reading of a factor-like argument: a number f gives (max(-f, low), f), a pair
    is sorted; outside `bounds` (low, high) it is Keras' ValueError."""
    low_b, high_b = bounds
    msg = (f"The `{name}` argument should be a number (or a list of two numbers) in the "
           f"range [{low_b}, {high_b}]. Received: factor={value}")
    if isinstance(value, (tuple, list)):
        if len(value) != 2 or value[0] > high_b or value[1] < low_b:
            raise ValueError(msg)
        lower, upper = sorted(value)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if value < low_b or value > high_b:
            raise ValueError(msg)
        value = abs(value)
        lower, upper = max(-value, low_b), value
    else:
        raise ValueError(msg)
    return lower, upper


class ImagePreprocessingLayer(Layer):
    """Base of the image preprocessing layers: factor validation, rank and data_format
    handling, and the random-transformation / transform split of Keras 3."""

    _allow_non_tensor_positional_args = True   # Keras: Python values allowed

    _USE_BASE_FACTOR = True
    _FACTOR_BOUNDS = (-1, 1)

    def __init__(self, factor=None, bounding_box_format=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.bounding_box_format = bounding_box_format
        self.data_format = standardize_data_format(data_format)
        if self._USE_BASE_FACTOR:
            self._set_factor(factor or 0.0)
        elif factor is not None:
            raise ValueError(f"Layer {type(self).__name__} does not take a `factor` argument. "
                             f"Received: factor={factor}")

    def _set_factor(self, factor) -> None:
        self.factor = bounded_pair(factor, self._FACTOR_BOUNDS)

    def get_random_transformation(self, images, training=True, seed=None):
        return None

    def transform_images(self, images, transformation, training=True):
        raise NotImplementedError

    @staticmethod
    def check_rank(images: Tensor) -> bool:
        rank = images.shape.rank
        if rank not in (3, 4):
            raise ValueError("Expected image tensor to have rank 3 (single image) or 4 (batch "
                             f"of images). Received: data.shape={tuple(images.shape.as_list())}")
        return rank == 4

    def transform_labels(self, labels, transformation, training=True):
        return labels

    def transform_segmentation_masks(self, masks, transformation, training=True):
        raise NotImplementedError(f"{type(self).__name__} does not transform segmentation "
                                  "masks in ndflow yet")

    def call(self, inputs, training=True):
        if not isinstance(inputs, dict):
            images = convert_to_tensor(inputs)
            self.check_rank(images)
            transformation = self.get_random_transformation(images, training=training)
            return self.transform_images(images, transformation, training=training)
        # Keras' dict form: {"images", "labels", "segmentation_masks"} share one draw
        data = dict(inputs)
        images = convert_to_tensor(data["images"])
        self.check_rank(images)
        transformation = self.get_random_transformation(images, training=training)
        data["images"] = self.transform_images(images, transformation, training=training)
        if "bounding_boxes" in data:
            raise NotImplementedError("Bounding boxes are not supported by ndflow's image "
                                      "preprocessing layers yet")
        if "labels" in data:
            data["labels"] = self.transform_labels(convert_to_tensor(data["labels"]),
                                                   transformation, training=training)
        if "segmentation_masks" in data:
            data["segmentation_masks"] = self.transform_segmentation_masks(
                convert_to_tensor(data["segmentation_masks"]), transformation,
                training=training)
        return data

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self) -> dict:
        config = {**super().get_config(), "data_format": self.data_format}
        if self.bounding_box_format is not None:
            config["bounding_box_format"] = self.bounding_box_format
        return config


@keras_export("keras.layers.Rescaling")
class Rescaling(Layer):
    """A layer rescaling its inputs: `inputs * scale + offset`, computed in the layer's
    dtype (inputs of any dtype are cast), e.g. pixels from [0, 255] to [0, 1].

    Args:
      scale: the factor (a float, or an array broadcastable to the inputs).
      offset: the value added after scaling.
      **kwargs: Layer arguments (name, dtype, ...).

    Example:

    >>> tf.keras.layers.Rescaling(1 / 255)(tf.constant([0, 255], "uint8")).numpy()
    array([0., 1.], dtype=float32)
    """

    _allow_non_tensor_positional_args = True   # Keras: Python values allowed

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale
        self.offset = offset
        self.supports_masking = True

    def call(self, inputs):
        dtype = self.compute_dtype
        scale, offset = cast(self.scale, dtype), cast(self.offset, dtype)
        return cast(inputs, dtype) * scale + offset

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "scale": _plain(self.scale),
                "offset": _plain(self.offset)}


def _plain(v):
    """Config value of a scale/offset: numbers as they are, arrays as nested lists."""
    if hasattr(v, "tolist"):
        return v.tolist()
    return v


@keras_export("keras.layers.Resizing")
class Resizing(ImagePreprocessingLayer):
    """A layer resizing images (a 3-D image or 4-D batch) to (height, width), the same in
    training and inference.

    Integer images come back rounded and saturated to their own dtype, as Keras 3.

    Args:
      height: the output height.
      width: the output width.
      interpolation: "bilinear" (the default), "nearest", "bicubic", "area",
        "lanczos3" or "lanczos5" (another name fails when the layer is called).
      crop_to_aspect_ratio: whether to first crop the largest centred window of the
        target's aspect ratio (no distortion).
      pad_to_aspect_ratio: whether to first pad symmetrically to the target's aspect
        ratio with `fill_value` instead.
      fill_mode: must be "constant".
      fill_value: the padding value.
      antialias: whether to low-pass filter when downsampling.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      **kwargs: Layer arguments (name, dtype, ...).

    Example:

    >>> tf.keras.layers.Resizing(4, 6)(tf.zeros((2, 8, 8, 3))).shape
    TensorShape([2, 4, 6, 3])
    """

    _USE_BASE_FACTOR = False

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False,
                 pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0,
                 antialias=False, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.height = height
        self.width = width
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = crop_to_aspect_ratio
        self.pad_to_aspect_ratio = pad_to_aspect_ratio
        self.fill_mode = fill_mode
        self.fill_value = fill_value
        self.antialias = bool(antialias)

    def transform_images(self, images, transformation=None, training=True):
        resized = resize(images, (self.height, self.width), self.interpolation,
                         self.antialias, self.crop_to_aspect_ratio, self.pad_to_aspect_ratio,
                         self.fill_mode, self.fill_value, self.data_format)
        if resized.dtype == images.dtype:
            return resized
        if images.dtype.is_integer:
            resized = math.round(resized)
        return saturate_cast(resized, images.dtype)

    def compute_output_shape(self, input_shape):
        return _with_hw(input_shape, self.height, self.width, self.data_format)

    def get_config(self) -> dict:
        return {**super().get_config(), "height": self.height, "width": self.width,
                "interpolation": self.interpolation,
                "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
                "pad_to_aspect_ratio": self.pad_to_aspect_ratio, "fill_mode": self.fill_mode,
                "fill_value": self.fill_value, "antialias": self.antialias,
                "data_format": self.data_format}


def _with_hw(input_shape, height, width, data_format) -> tuple:
    shape = list(input_shape)
    h_axis = -2 if data_format == "channels_first" else -3
    shape[h_axis], shape[h_axis + 1] = height, width
    return tuple(shape)


def _i32(x):
    return cast(x, dtypes.int32)


def _f32(x):
    return cast(x, dtypes.float32)


def _trunc_div(a, b):
    """int(float32(a) / b) as Keras computes crop/pad sizes (static ints stay ints)."""
    if not _is_tensor_dim(a) and not _is_tensor_dim(b):
        return int(np.float32(a) / np.float32(b))
    return _i32(_f32(a) / _f32(b))


def _max(a, b):
    return max(a, b) if not (_is_tensor_dim(a) or _is_tensor_dim(b)) else \
        arithmetic.maximum(a, b)


def _min(a, b):
    return min(a, b) if not (_is_tensor_dim(a) or _is_tensor_dim(b)) else \
        arithmetic.minimum(a, b)


def resize(images, size, interpolation="bilinear", antialias=False, crop_to_aspect_ratio=False,
           pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0,
           data_format="channels_last") -> Tensor:
    """Keras 3's `ops.image.resize` (TensorFlow backend semantics)."""
    check_resize_arguments(size, interpolation, fill_mode, crop_to_aspect_ratio,
                           pad_to_aspect_ratio)
    images = convert_to_tensor(images)
    if images.shape.rank not in (3, 4):
        raise ValueError("Invalid images rank: expected rank 3 (single image) or rank 4 "
                         "(batch of images). Received input with shape: "
                         f"images.shape={tuple(images.shape.as_list())}")
    images = to_channels_last(images, data_format)
    target_h, target_w = size
    if crop_to_aspect_ratio or pad_to_aspect_ratio:
        height, width = height_width(images, "channels_last")
    if crop_to_aspect_ratio:
        crop_h = _max(_min(height, _trunc_div(width * target_h, target_w)), 1)
        crop_w = _max(_min(width, _trunc_div(height * target_w, target_h)), 1)
        h0, w0 = _trunc_div(height - crop_h, 2), _trunc_div(width - crop_w, 2)
        images = (images[:, h0:h0 + crop_h, w0:w0 + crop_w, :] if images.shape.rank == 4
                  else images[h0:h0 + crop_h, w0:w0 + crop_w, :])
    elif pad_to_aspect_ratio:
        pad_h = _max(height, _trunc_div(width * target_h, target_w))
        pad_w = _max(width, _trunc_div(height * target_w, target_h))
        images = _pad_symmetric(images, _trunc_div(pad_h - height, 2),
                                _trunc_div(pad_w - width, 2), fill_value)
    out = image_resize.resize(images, [target_h, target_w], method=interpolation,
                              antialias=antialias)
    return from_channels_last(out, data_format)


def _pad_symmetric(images, top, left, fill_value) -> Tensor:
    """`top` rows of fill_value above and below, then `left` columns on each side."""
    batched = images.shape.rank == 4
    h_axis = 1 if batched else 0

    def border(x, n, axis):
        shape = dims(x)
        shape[axis] = n
        return array_fill.ones(array_core.stack(shape) if any(map(_is_tensor_dim, shape))
                               else shape, x.dtype) * cast(fill_value, x.dtype)

    for n, axis in ((top, h_axis), (left, h_axis + 1)):
        if _is_tensor_dim(n) or n > 0:
            images = array_slicing.concat([border(images, n, axis), images,
                                           border(images, n, axis)], axis)
    return images


@keras_export("keras.layers.CenterCrop")
class CenterCrop(ImagePreprocessingLayer):
    """A layer cropping the central (height, width) window of images, the same in training
    and inference; an image smaller than the target is instead resized (the largest
    centred window of the target's aspect ratio, then bilinear resizing).

    Args:
      height: the output height.
      width: the output width.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      **kwargs: Layer arguments (name, dtype, ...).

    Example:

    >>> tf.keras.layers.CenterCrop(2, 2)(tf.zeros((1, 4, 5, 3))).shape
    TensorShape([1, 2, 2, 3])
    """

    _USE_BASE_FACTOR = False

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.height = height
        self.width = width

    def transform_images(self, images, transformation=None, training=True):
        images = cast(images, self.compute_dtype)
        init_h, init_w = height_width(images, self.data_format)
        h_diff, w_diff = init_h - self.height, init_w - self.width
        if (_is_tensor_dim(h_diff) or h_diff >= 0) and (_is_tensor_dim(w_diff) or w_diff >= 0):
            h0, w0 = h_diff // 2, w_diff // 2
            hs, ws = slice(h0, h0 + self.height), slice(w0, w0 + self.width)
            first = self.data_format == "channels_first"
            if images.shape.rank == 4:
                return images[:, :, hs, ws] if first else images[:, hs, ws, :]
            return images[:, hs, ws] if first else images[hs, ws, :]
        out = resize(images, (self.height, self.width), crop_to_aspect_ratio=True,
                     data_format=self.data_format)
        return cast(out, self.compute_dtype)

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        if shape and isinstance(shape[0], (list, tuple)) or len(shape) not in (3, 4):
            raise ValueError("`input_shape` must be a non-nested tuple or list of rank-1 with "
                             "size 3 (unbatched) or 4 (batched). ")
        return _with_hw(shape, self.height, self.width, self.data_format)

    def get_config(self) -> dict:
        return {**super().get_config(), "height": self.height, "width": self.width,
                "data_format": self.data_format}
