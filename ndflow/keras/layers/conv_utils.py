"""What Keras 3's convolution, pooling and reshaping layers share: argument normalisation
(int-or-tuple arguments, padding and data_format strings, with Keras' messages), the layout
helpers (TF data format strings, channel and spatial axes) and the output-shape arithmetic of
convolutions, transposed convolutions and pooling (`compute_output_shape` and the checks a
layer runs when it is built)."""

from __future__ import annotations

import numpy as np

from ndflow.core.tensor import Tensor
from ndflow.keras import global_config
from ndflow.ops import nn_conv
from ndflow.ops.array_core import shape as dynamic_shape
from ndflow.ops.array_core import stack
from ndflow.ops.nn_common import keras_transpose_size

# -- arguments ---------------------------------------------------------------------------------


def standardize_tuple(value, n: int, name: str, allow_zero: bool = False) -> tuple:
    """An int or `n` ints -> a tuple of `n` positive (non-negative with `allow_zero`) ints."""
    message = f"The `{name}` argument must be a tuple of {n} integers. Received {name}={value}"
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        values = (int(value),) * n
    else:
        try:
            values = tuple(value)
        except TypeError:
            raise ValueError(message) from None
        if len(values) != n:
            raise ValueError(message)
        for v in values:
            try:
                int(v)
            except (ValueError, TypeError):
                raise ValueError(f"{message}including element {v} of type {type(v)}") from None
    bad = {v for v in values if (v < 0 if allow_zero else v <= 0)}
    if bad:
        raise ValueError(f"{message}, including values {bad} that do not satisfy "
                         f"`value {'>= 0' if allow_zero else '> 0'}`")
    return values


def standardize_padding(value, allow_causal: bool = False) -> str:
    """'valid' / 'same' (and 'causal' for 1-D convolutions), case-insensitive."""
    padding = str(value).lower()
    allowed = ("valid", "same", "causal") if allow_causal else ("valid", "same")
    if padding not in allowed:
        names = ", ".join(f"'{a}'" for a in allowed)
        raise ValueError(f"The `padding` argument must be a list/tuple or one of {{{names}}}. "
                         f"Received: {padding}")
    return padding


def standardize_data_format(data_format) -> str:
    """None -> Keras' image_data_format() ('channels_last' unless set); else checked."""
    if data_format is None:
        return global_config.image_data_format()
    data_format = str(data_format).lower()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    return data_format


def check_positive(value, name: str) -> None:
    if value is not None and value <= 0:
        raise ValueError(f"Invalid value for argument `{name}`. Expected a strictly positive "
                         f"value. Received {name}={value}.")


def check_strides_dilation(strides: tuple, dilation_rate: tuple) -> None:
    if max(strides) > 1 and max(dilation_rate) > 1:
        raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
                         f"Received: strides={strides} and dilation_rate={dilation_rate}")


# -- layouts -----------------------------------------------------------------------------------


def tf_format(data_format: str, n_spatial: int) -> str:
    """The TF op data format: 'NWC'/'NHWC' for channels_last, 'NCW'/'NCHW' else."""
    spatial = "W" if n_spatial == 1 else "HW"
    return f"N{spatial}C" if data_format == "channels_last" else f"NC{spatial}"


def channel_axis(data_format: str) -> int:
    return -1 if data_format == "channels_last" else 1


def spatial_axes(data_format: str, rank: int) -> list:
    """The spatial axes of a rank-`rank` tensor (batch and channels excluded)."""
    return list(range(1, rank - 1)) if data_format == "channels_last" else list(range(2, rank))


def split_shape(input_shape, data_format: str) -> tuple:
    """(batch, spatial dims, channels) of a shape tuple."""
    input_shape = tuple(input_shape)
    if data_format == "channels_last":
        return input_shape[0], input_shape[1:-1], input_shape[-1]
    return input_shape[0], input_shape[2:], input_shape[1]


def join_shape(batch, spatial, channels, data_format: str) -> tuple:
    if data_format == "channels_last":
        return (batch, *spatial, channels)
    return (batch, channels, *spatial)


def add_bias(outputs, bias, data_format: str):
    """`outputs` plus `bias` along the channel axis (BiasAdd, as TF's Keras layers)."""
    return nn_conv.bias_add(outputs, bias,
                            data_format="NHWC" if data_format == "channels_last" else "NCHW")


# -- output shapes -----------------------------------------------------------------------------


def _check_sizes(out, padding, received) -> None:
    """Keras' error where a 'valid' window does not fit (`received()`: the arguments)."""
    if padding == "valid" and any(o is not None and o <= 0 for o in out):
        raise ValueError(f"Computed output size would be zero or negative. Received{received()}")


def conv_output_shape(input_shape, filters, kernel_size, strides, padding, data_format,
                      dilation_rate) -> tuple:
    """Keras' compute_conv_output_shape: the output shape of a convolution (None dims kept),
    with Keras' errors for a rank mismatch and a window that does not fit ('valid')."""
    batch, spatial, channels = split_shape(input_shape, data_format)
    kernel_shape = tuple(kernel_size) + (channels, filters)
    if len(kernel_shape) != len(input_shape):
        raise ValueError("Kernel shape must have the same length as input, but received kernel "
                         f"of shape {kernel_shape} and input of shape {tuple(input_shape)}.")
    out = []
    for n, k, s, d in zip(spatial, kernel_size, strides, dilation_rate):
        if n is None:
            out.append(None)
        elif padding == "valid":
            out.append((n - d * (k - 1) - 1) // s + 1)
        else:  # same, causal
            out.append((n - 1) // s + 1)
    _check_sizes(out, padding, lambda: (
        f" `inputs shape={tuple(input_shape)}`, `kernel shape={kernel_shape}`, "
        f"`dilation_rate={np.array(dilation_rate)}`, `strides={strides}`, `padding={padding}`."))
    return join_shape(batch, out, filters, data_format)


def conv_transpose_output_shape(input_shape, kernel_size, filters, strides, padding,
                                output_padding, data_format, dilation_rate) -> tuple:
    batch, spatial, _ = split_shape(input_shape, data_format)
    pads = output_padding or (None,) * len(spatial)
    out = [keras_transpose_size(n, k, s, padding, p, d)
           for n, k, s, p, d in zip(spatial, kernel_size, strides, pads, dilation_rate)]
    return join_shape(batch, out, filters, data_format)


def dynamic_dims(x: Tensor) -> list:
    """The dims of `x`: static ints where known, scalar int32 tensors elsewhere."""
    dims = x.shape.as_list()
    if all(d is not None for d in dims):
        return dims
    sizes = dynamic_shape(x)
    return [sizes[i] if d is None else d for i, d in enumerate(dims)]


def shape_argument(dims: list):
    """A shape argument for an op: a list of ints, or a stacked int32 tensor when a dim is
    dynamic."""
    if any(isinstance(d, Tensor) for d in dims):
        return stack(dims)
    return [int(d) for d in dims]


def pooling_output_shape(input_shape, pool_size, strides, padding, data_format) -> tuple:
    """Keras' compute_pooling_output_shape."""
    batch, spatial, channels = split_shape(input_shape, data_format)
    padding = str(padding).lower()
    if padding not in ("valid", "same"):
        raise ValueError("Argument `padding` must be either 'valid' or 'same'. Received: "
                         f"padding={padding}")
    out = []
    for n, k, s in zip(spatial, pool_size, strides):
        if n is None:
            out.append(None)
        elif padding == "valid":
            out.append(int(np.floor((n - k) / s)) + 1)
        else:
            out.append(int(np.floor((n - 1) / s)) + 1)
    _check_sizes(out, padding, lambda: (
        f": `inputs.shape={np.array(input_shape)}`, `pool_size={np.array(pool_size)}`, "
        f"`strides={strides}`, `padding={padding}`."))
    return join_shape(batch, out, channels, data_format)
