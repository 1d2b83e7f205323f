"""Keras 3's 1-D and 3-D reshaping layers: UpSampling1D/3D (each step / voxel repeated),
ZeroPadding1D/3D and Cropping1D/3D, with Keras' argument checks and configs."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras.layers import conv_utils as cu
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.input_spec import InputSpec
from ndflow.ops.array_builders import repeat
from ndflow.ops.array_fill import pad

_ORDINALS = ("1st", "2nd", "3rd")


def _triples(value, name: str) -> tuple:
    """An int, 3 ints (symmetric) or 3 pairs -> three (before, after) pairs (Keras' rules)."""
    if isinstance(value, int):
        if value < 0 and name == "cropping":
            raise ValueError(f"`cropping` cannot be negative. Received: cropping={value}.")
        return ((value, value),) * 3
    if hasattr(value, "__len__"):
        if len(value) != 3:
            raise ValueError(f"`{name}` should have 3 elements. Received: {value}.")
        return tuple(cu.standardize_tuple(v, 2, f"{o} entry of {name}", allow_zero=True)
                     for v, o in zip(value, _ORDINALS))
    kind = "pad" if name == "padding" else "crop"
    raise ValueError(f"`{name}` should be either an int, a tuple of 3 ints (symmetric_dim1_"
                     f"{kind}, symmetric_dim2_{kind}, symmetric_dim3_{kind}), or a tuple of 3 "
                     f"tuples of 2 ints ((left_dim1_{kind}, right_dim1_{kind}), (left_dim2_"
                     f"{kind}, right_dim2_{kind}), (left_dim3_{kind}, right_dim2_{kind})). "
                     f"Received: {name}={value}." if name == "padding" else
                     f"Received: {value}.")


def _first_spatial(data_format: str) -> int:
    return 2 if data_format == "channels_first" else 1


@keras_export("keras.layers.UpSampling1D")
class UpSampling1D(Layer):
    """A layer upsampling sequences: each step of (batch, steps, features) inputs repeated
    `size` times.

    Args:
      size: the repetition factor (an int).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      TypeError: `size` is not an int.
    """

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(size, int) or isinstance(size, bool):
            raise TypeError(f"Expected an integer value for `size`, got {type(size)}.")
        if size <= 0:
            raise ValueError("Argument `size` should be a positive integer. Received: "
                             f"size={size}")
        self.size = size
        self.input_spec = InputSpec(ndim=3)

    def compute_output_shape(self, input_shape):
        steps = None if input_shape[1] is None else self.size * input_shape[1]
        return (input_shape[0], steps, input_shape[2])

    def call(self, inputs):
        return repeat(inputs, self.size, axis=1)

    def get_config(self) -> dict:
        return {**super().get_config(), "size": self.size}


@keras_export("keras.layers.UpSampling3D")
class UpSampling3D(Layer):
    """A layer upsampling volumes: each voxel of 5-D inputs repeated along depth, rows and
    columns.

    Args:
      size: the factors, an int or (depth, rows, cols).
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      **kwargs: Layer arguments (name, dtype, ...).
    """

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = cu.standardize_data_format(data_format)
        self.size = cu.standardize_tuple(size, 3, "size")
        self.input_spec = InputSpec(ndim=5)

    def compute_output_shape(self, input_shape):
        out, first = list(input_shape), _first_spatial(self.data_format)
        for i, f in enumerate(self.size):
            d = out[first + i]
            out[first + i] = None if d is None else d * f
        return tuple(out)

    def call(self, inputs):
        first = _first_spatial(self.data_format)
        for i, f in enumerate(self.size):
            inputs = repeat(inputs, f, axis=first + i)
        return inputs

    def get_config(self) -> dict:
        return {**super().get_config(), "size": self.size, "data_format": self.data_format}


class _Padding(Layer):
    """Zeros added before/after each spatial axis (`self.padding`: one pair per axis)."""

    def compute_output_shape(self, input_shape):
        out, first = list(input_shape), _first_spatial(self.data_format)
        for i, (a, b) in enumerate(self.padding):
            if out[first + i] is not None:
                out[first + i] += a + b
        return tuple(out)

    def call(self, inputs):
        pairs = [list(p) for p in self.padding]
        spec = ([[0, 0], [0, 0], *pairs] if self.data_format == "channels_first"
                else [[0, 0], *pairs, [0, 0]])
        return pad(inputs, spec)

    def get_config(self) -> dict:
        return {**super().get_config(), "padding": self.padding_config(),
                "data_format": self.data_format}


@keras_export("keras.layers.ZeroPadding1D")
class ZeroPadding1D(_Padding):
    """A layer adding zero steps at the start and end of (batch, steps, features)
    sequences.

    Args:
      padding: an int (both ends) or a pair (before, after).
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      **kwargs: Layer arguments (name, dtype, ...).

    Example:

    >>> tf.keras.layers.ZeroPadding1D((1, 2))(tf.zeros((1, 3, 4))).shape
    TensorShape([1, 6, 4])
    """

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = cu.standardize_data_format(data_format)
        self._pair = cu.standardize_tuple(padding, 2, "padding", allow_zero=True)
        self.padding = (self._pair,)
        self.input_spec = InputSpec(ndim=3)

    def padding_config(self):
        return self._pair


@keras_export("keras.layers.ZeroPadding3D")
class ZeroPadding3D(_Padding):
    """A layer adding zeros around the depth, rows and columns of 5-D volumes.

    Args:
      padding: an int (all sides), three ints (symmetric per axis), or three
        (before, after) pairs.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      **kwargs: Layer arguments (name, dtype, ...).
    """

    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = cu.standardize_data_format(data_format)
        self.padding = _triples(padding, "padding")
        self.input_spec = InputSpec(ndim=5)

    def padding_config(self):
        return self.padding


def _crop(layer, inputs, crops, first: int):
    """inputs[..., a:n-b, ...] on the spatial axes from `first` (static sizes checked)."""
    dims = inputs.shape.as_list()
    index = [slice(None)] * len(dims)
    for i, (a, b) in enumerate(crops):
        n = dims[first + i]
        if n is not None and n - a - b <= 0:
            raise ValueError(layer._too_big(inputs.shape))
        index[first + i] = slice(a, -b if b else None)
    return inputs[tuple(index)]


@keras_export("keras.layers.Cropping1D")
class Cropping1D(Layer):
    """A layer removing steps from the start and end of (batch, steps, features)
    sequences.

    Args:
      cropping: an int (both ends) or a pair (before, after).
      **kwargs: Layer arguments (name, dtype, ...).
    """

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self.cropping = cu.standardize_tuple(cropping, 2, "cropping", allow_zero=True)
        self.input_spec = InputSpec(ndim=3)

    def _too_big(self, in_shape) -> str:
        return ("`cropping` parameter of `Cropping1D` layer must be smaller than the input "
                f"length. Received: inputs.shape={in_shape}, cropping={self.cropping}")

    def compute_output_shape(self, input_shape):
        length = input_shape[1]
        if length is not None:
            length -= sum(self.cropping)
            if length <= 0:
                raise ValueError("`cropping` parameter of `Cropping1D` layer must be smaller "
                                 f"than the input length. Received: input_shape="
                                 f"{tuple(input_shape)}, cropping={self.cropping}")
        return (input_shape[0], length, input_shape[2])

    def call(self, inputs):
        return _crop(self, inputs, [self.cropping], 1)

    def get_config(self) -> dict:
        return {**super().get_config(), "cropping": self.cropping}


@keras_export("keras.layers.Cropping3D")
class Cropping3D(Layer):
    """A layer removing slices from the edges of the depth, rows and columns of 5-D
    volumes.

    Args:
      cropping: an int (all sides), three ints (symmetric per axis), or three
        (before, after) pairs.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      **kwargs: Layer arguments (name, dtype, ...).
    """

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = cu.standardize_data_format(data_format)
        self.cropping = _triples(cropping, "cropping")
        self.input_spec = InputSpec(ndim=5)

    def _too_big(self, in_shape) -> str:
        return ("Values in `cropping` argument should be smaller than the corresponding "
                f"spatial dimension of the input. Received: inputs.shape={in_shape}, "
                f"cropping={self.cropping}")

    def compute_output_shape(self, input_shape):
        out, first = list(input_shape), _first_spatial(self.data_format)
        for i, (a, b) in enumerate(self.cropping):
            if out[first + i] is None:
                continue
            out[first + i] -= a + b
            if out[first + i] <= 0:
                raise ValueError("Values in `cropping` argument should be smaller than the "
                                 "corresponding spatial dimension of the input. Received: "
                                 f"input_shape={tuple(input_shape)}, cropping={self.cropping}")
        return tuple(out)

    def call(self, inputs):
        return _crop(self, inputs, self.cropping, _first_spatial(self.data_format))

    def get_config(self) -> dict:
        return {**super().get_config(), "cropping": self.cropping,
                "data_format": self.data_format}
