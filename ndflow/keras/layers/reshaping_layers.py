"""Keras 3's reshaping layers: Reshape (one -1 inferred), Permute, UpSampling2D (nearest and
bilinear: TF's half-pixel resize), ZeroPadding2D, Cropping2D, RepeatVector. The batch axis is
never touched and may be unknown (tf.function with a None batch dimension)."""

from __future__ import annotations

import math

from ndflow.core.api_export import keras_export
from ndflow.keras.layers import conv_utils as cu
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.input_spec import InputSpec
from ndflow.ops import array_builders, array_core, array_gather, array_range
from ndflow.ops import math as math_ops
from ndflow.ops.array_fill import pad, tile
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast


def _resolve_target(input_dims: tuple, target: tuple) -> tuple:
    """Keras' compute_reshape_output_shape: `target` with its -1 resolved from the known
    `input_dims` (None when an input dim is unknown)."""
    if None in input_dims:
        return tuple(None if d == -1 else d for d in target)
    size = math.prod(input_dims)
    if -1 not in target:
        if size != math.prod(target):
            raise ValueError("The total size of the tensor must be unchanged. Received: "
                             f"input_shape={input_dims}, target_shape={target}")
        return target
    known = math.prod(d for d in target if d != -1)
    if known == 0 or size % known:
        raise ValueError("The total size of the tensor must be unchanged, however, the input "
                         "size cannot by divided by the specified dimensions in target_shape. "
                         f"Received: input_shape={input_dims}, target_shape={target}")
    return tuple(size // known if d == -1 else d for d in target)


@keras_export("keras.layers.Reshape")
class Reshape(Layer):
    """A layer reshaping each sample to `target_shape` (the batch axis is kept).

    Args:
      target_shape: the new shape of a sample, a tuple of ints; one entry may be -1
        (inferred from the size).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: an entry below -1, or more than one -1.

    Example:

    >>> tf.keras.layers.Reshape((3, 2))(tf.zeros((4, 6))).shape
    TensorShape([4, 3, 2])
    """

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        target_shape = tuple(target_shape)
        for d in target_shape:
            if isinstance(d, int) and d < -1:
                raise ValueError("Each dimension in `target_shape` must be a non-negative "
                                 "integer, or `-1` for a single unknown dimension. Received: "
                                 f"target_shape={target_shape}.")
        if target_shape.count(-1) > 1:
            raise ValueError("There must be at most one unknown dimension (-1) in "
                             f"`target_shape`. Received: target_shape={target_shape}.")
        self.target_shape = target_shape
        self.built = True

    def call(self, inputs):
        dims = tuple(inputs.shape.as_list())
        target = _resolve_target(dims[1:], self.target_shape)
        target = [-1 if d is None else d for d in target]
        batch = dims[0] if dims[0] is not None else array_core.shape(inputs)[0]
        return array_core.reshape(inputs, cu.shape_argument([batch, *target]))

    def compute_output_shape(self, input_shape):
        return (input_shape[0], *_resolve_target(tuple(input_shape[1:]), self.target_shape))

    def get_config(self) -> dict:
        return {**super().get_config(), "target_shape": self.target_shape}


@keras_export("keras.layers.Permute")
class Permute(Layer):
    """A layer permuting the non-batch axes of its inputs.

    Args:
      dims: a permutation of 1..rank-1 (the batch axis 0 stays), e.g. (2, 1) swaps the
        two axes of (batch, steps, features).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: `dims` is not a permutation of 1..n.

    Example:

    >>> tf.keras.layers.Permute((2, 1))(tf.zeros((4, 3, 5))).shape
    TensorShape([4, 5, 3])
    """

    _records_build_shapes = True   # Keras records its build config (input shape)

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError("Invalid permutation argument `dims` for Permute Layer. The set of "
                             "indices in `dims` must be consecutive and start from 1. Received "
                             f"dims={dims}")
        self.input_spec = InputSpec(ndim=len(self.dims) + 1)

    def call(self, inputs):
        return transpose(inputs, [0, *self.dims])

    def compute_output_shape(self, input_shape):
        return (input_shape[0], *(input_shape[d] for d in self.dims))

    def get_config(self) -> dict:
        return {**super().get_config(), "dims": self.dims}


_INTERPOLATIONS = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic", "area")


def _nearest(x, axis: int, size, factor: int):
    """Each row along `axis` (of `size` rows) repeated `factor` times: `tf.repeat`, as Keras
    writes it (a tile and a reshape, whose gradient is a sum)."""
    return array_builders.repeat(x, factor, axis=axis)


def _bilinear(x, axis: int, size, factor: int):
    """TF's half-pixel bilinear resize along `axis` to `size * factor` rows: output row i
    samples input coordinate (i + 0.5) / factor - 0.5 (clamped to the edge rows)."""
    coords = (cast(array_range.range(size * factor), "float64") + 0.5) / factor - 0.5
    low = math_ops.floor(coords)
    frac = cast(coords - low, x.dtype)
    low = cast(low, "int32")
    last = size - 1
    lo = math_ops.clip_by_value(low, 0, last)
    hi = math_ops.clip_by_value(low + 1, 0, last)
    frac = array_core.reshape(frac, [-1] + [1] * (x.shape.rank - axis - 1))
    return (array_gather.gather(x, lo, axis=axis) * (1 - frac) +
            array_gather.gather(x, hi, axis=axis) * frac)


@keras_export("keras.layers.UpSampling2D")
class UpSampling2D(Layer):
    """A layer upsampling images: rows and columns repeated `size` times ("nearest") or
    interpolated.

    Args:
      size: the factors, an int or (rows, cols).
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      interpolation: "nearest" (repeat) or "bilinear" (Keras' other names are refused).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: an unknown `interpolation`.
      NotImplementedError: "bicubic", "lanczos3", "lanczos5" or "area".

    Example:

    >>> tf.keras.layers.UpSampling2D()(tf.zeros((1, 2, 3, 4))).shape
    TensorShape([1, 4, 6, 4])
    """

    _records_build_shapes = True   # Keras records its build config (input shape)

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.data_format = cu.standardize_data_format(data_format)
        self.size = cu.standardize_tuple(size, 2, "size")
        self.interpolation = interpolation.lower()
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        if self.interpolation not in _INTERPOLATIONS:
            raise ValueError("Invalid value for argument `interpolation`. Expected of one "
                             f"{_INTERPOLATIONS}. Received: interpolation={self.interpolation}")
        if self.interpolation not in ("nearest", "bilinear"):
            raise NotImplementedError(f"UpSampling2D(interpolation='{self.interpolation}') is "
                                      "not built in ndflow yet")
        resize = _nearest if self.interpolation == "nearest" else _bilinear
        dims = cu.dynamic_dims(inputs)
        for axis, factor in zip(cu.spatial_axes(self.data_format, 4), self.size):
            inputs = resize(inputs, axis, dims[axis], factor)
        return inputs

    def compute_output_shape(self, input_shape):
        batch, (h, w), channels = cu.split_shape(input_shape, self.data_format)
        spatial = [None if n is None else n * f for n, f in zip((h, w), self.size)]
        return cu.join_shape(batch, spatial, channels, self.data_format)

    def get_config(self) -> dict:
        return {**super().get_config(), "size": self.size, "data_format": self.data_format,
                "interpolation": self.interpolation}


def _pairs(value, name: str, allow_negative_int: bool) -> tuple:
    """An int, 2 ints (symmetric) or 2 pairs -> ((top, bottom), (left, right))."""
    if isinstance(value, int):
        if value < 0 and not allow_negative_int:
            raise ValueError(f"`{name}` cannot be negative. Received: {name}={value}.")
        return ((value, value), (value, value))
    if hasattr(value, "__len__"):
        if len(value) != 2:
            raise ValueError(f"`{name}` should have two elements. Received: {name}={value}.")
        return (cu.standardize_tuple(value[0], 2, f"1st entry of {name}", allow_zero=True),
                cu.standardize_tuple(value[1], 2, f"2nd entry of {name}", allow_zero=True))
    raise ValueError(f"`{name}` should be either an int, a tuple of 2 ints "
                     "(symmetric_height_crop, symmetric_width_crop), or a tuple of 2 tuples of "
                     "2 ints ((top_crop, bottom_crop), (left_crop, right_crop)). Received: "
                     f"{name}={value}.")


@keras_export("keras.layers.ZeroPadding2D")
class ZeroPadding2D(Layer):
    """A layer adding rows and columns of zeros around each image.

    Args:
      padding: an int (the same on all four sides), a pair (rows, cols) (symmetric), or
        ((top, bottom), (left, right)); no value may be negative.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: a negative or ill-formed `padding`.

    Example:

    >>> tf.keras.layers.ZeroPadding2D(1)(tf.zeros((1, 2, 2, 3))).shape
    TensorShape([1, 4, 4, 3])
    """

    _records_build_shapes = True   # Keras records its build config (input shape)

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = cu.standardize_data_format(data_format)
        self.padding = _pairs(padding, "padding", allow_negative_int=True)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        paddings = [[0, 0]] * 4
        for axis, pair in zip(cu.spatial_axes(self.data_format, 4), self.padding):
            paddings[axis] = list(pair)
        return pad(inputs, paddings)

    def compute_output_shape(self, input_shape):
        out = list(input_shape)
        for axis, pair in zip(cu.spatial_axes(self.data_format, 4), self.padding):
            if out[axis] is not None:
                out[axis] += sum(pair)
        return tuple(out)

    def get_config(self) -> dict:
        return {**super().get_config(), "padding": self.padding,
                "data_format": self.data_format}


@keras_export("keras.layers.Cropping2D")
class Cropping2D(Layer):
    """A layer removing rows and columns from the edges of each image.

    Args:
      cropping: an int (the same on all four sides), a pair (rows, cols) (symmetric), or
        ((top, bottom), (left, right)).
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: cropping that leaves no rows or columns.
    """

    _records_build_shapes = True   # Keras records its build config (input shape)

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = cu.standardize_data_format(data_format)
        self.cropping = _pairs(cropping, "cropping", allow_negative_int=False)
        self.input_spec = InputSpec(ndim=4)

    def _check(self, shape, what: str) -> None:
        for axis, pair in zip(cu.spatial_axes(self.data_format, 4), self.cropping):
            if shape[axis] is not None and sum(pair) >= shape[axis]:
                raise ValueError("Values in `cropping` argument should be smaller than the "
                                 "corresponding spatial dimension of the input. Received: "
                                 f"{what}={tuple(shape)}, cropping={self.cropping}")

    def call(self, inputs):
        self._check(inputs.shape.as_list(), "inputs.shape")
        index = [slice(None)] * 4
        for axis, (before, after) in zip(cu.spatial_axes(self.data_format, 4), self.cropping):
            index[axis] = slice(before, -after if after else None)
        return inputs[tuple(index)]

    def compute_output_shape(self, input_shape):
        self._check(input_shape, "input_shape")
        out = list(input_shape)
        for axis, pair in zip(cu.spatial_axes(self.data_format, 4), self.cropping):
            if out[axis] is not None:
                out[axis] -= sum(pair)
        return tuple(out)

    def get_config(self) -> dict:
        return {**super().get_config(), "cropping": self.cropping,
                "data_format": self.data_format}


@keras_export("keras.layers.RepeatVector")
class RepeatVector(Layer):
    """A layer repeating each input vector `n` times: (batch, features) to
    (batch, n, features).

    Args:
      n: the number of repetitions (an int).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      TypeError: `n` is not an int.
      ValueError: `n` is not positive.
    """

    _records_build_shapes = True   # Keras records its build config (input shape)

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        if n <= 0:
            raise ValueError(f"Argument `n` should be a positive integer. Received: n={n}")
        self.n = n
        self.input_spec = InputSpec(ndim=2)

    def call(self, inputs):
        return tile(array_core.expand_dims(inputs, 1), [1, self.n, 1])

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.n, input_shape[1])

    def get_config(self) -> dict:
        return {**super().get_config(), "n": self.n}
