"""Pooling: MaxPool, AvgPool and their gradient ops (MaxPoolGrad, MaxPoolGradGrad, AvgPoolGrad).

`ksize` and `strides` attrs are 4-lists in `data_format` order, as TF's. The public wrappers
accept an int or a 1/2/4-list (`tf.nn.max_pool2d(x, 2, 2, "SAME")`) like TF2's.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.nn_common import (
    DATA_FORMAT,
    EXPLICIT_PADDINGS,
    PADDING,
    PADDING_NO_EXPLICIT,
    channel_index,
    check_rank,
    check_window_attr,
    explicit_hw,
    get_sequence,
    hw,
    padding_attrs,
    spatial_dims,
    window_geometry,
)
from ndflow.ops.op_def import op_def

_MAX_T = "T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8} = DT_FLOAT"
_AVG_T = "T: {half, bfloat16, float, double}"
_WINDOW = ["ksize: list(int)", "strides: list(int)"]


def _check_pool_attrs(ctx) -> None:
    fmt = ctx.attrs["data_format"]
    check_window_attr(ctx.op_type, "ksize", ctx.attrs["ksize"], fmt, "ksize")
    check_window_attr(ctx.op_type, "strides", ctx.attrs["strides"], fmt, "stride")
    explicit = ctx.attrs.get("explicit_paddings") or []
    if ctx.attrs["padding"] == "EXPLICIT" and len(explicit) != 8:
        raise ValueError(f"explicit_paddings attribute must contain 8 values, but got: "
                         f"{len(explicit)}")


def pool_output_shape(attrs, x: TensorShape) -> TensorShape:
    fmt = attrs["data_format"]
    h, w, c = spatial_dims(fmt)
    kh, kw = hw(attrs["ksize"], fmt)
    (oh, ow), _ = window_geometry(x[h], x[w], kh, kw, hw(attrs["strides"], fmt), (1, 1),
                                  attrs["padding"],
                                  explicit_hw(attrs.get("explicit_paddings") or [], fmt))
    dims = [None] * 4
    dims[0], dims[h], dims[w], dims[c] = x[0], oh, ow, x[c]
    return TensorShape(dims)


def _pool_shape(ctx):
    x = check_rank(ctx.shapes[0], 4)
    _check_pool_attrs(ctx)
    return [pool_output_shape(ctx.attrs, x)]


def _max_pool_grad_shape(ctx):
    _check_pool_attrs(ctx)
    return [check_rank(ctx.shapes[0], 4)]


def _max_pool_grad_grad_shape(ctx):
    _check_pool_attrs(ctx)
    return [check_rank(ctx.shapes[1], 4)]


def _avg_pool_grad_shape(ctx):
    _check_pool_attrs(ctx)
    v = ctx.value(0)
    if v is not None:
        v = np.asarray(v).reshape(-1)
        if v.size != 4:
            raise ValueError(f"Shape must be rank 4 but is rank {v.size}")
        return [TensorShape([int(d) for d in v])]
    return [TensorShape([None] * 4)]


MaxPool = op_def("MaxPool", inputs=["input: T"], outputs=["output: T"],
                 attrs=[_MAX_T, *_WINDOW, PADDING, EXPLICIT_PADDINGS, DATA_FORMAT],
                 shape=_pool_shape)
MaxPoolGrad = op_def("MaxPoolGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"],
                     outputs=["output: T"],
                     attrs=[*_WINDOW, PADDING, EXPLICIT_PADDINGS, DATA_FORMAT, _MAX_T],
                     shape=_max_pool_grad_shape)
MaxPoolGradGrad = op_def("MaxPoolGradGrad",
                         inputs=["orig_input: T", "orig_output: T", "grad: T"],
                         outputs=["output: T"],
                         attrs=[*_WINDOW, PADDING_NO_EXPLICIT, DATA_FORMAT, _MAX_T],
                         shape=_max_pool_grad_grad_shape)
AvgPool = op_def("AvgPool", inputs=["value: T"], outputs=["output: T"],
                 attrs=[*_WINDOW, PADDING_NO_EXPLICIT, DATA_FORMAT, _AVG_T], shape=_pool_shape)
AvgPoolGrad = op_def("AvgPoolGrad", inputs=["orig_input_shape: int32", "grad: T"],
                     outputs=["output: T"],
                     attrs=[*_WINDOW, PADDING_NO_EXPLICIT, DATA_FORMAT, _AVG_T],
                     shape=_avg_pool_grad_shape)


_COMMON = ("ksize", "strides", "padding", "data_format")


def _raw(op_def_, inputs, attrs, name=None):
    return apply_op(op_def_, inputs, attrs, name=name).outputs[0]


# -- public wrappers -------------------------------------------------------------------------------


def _pool(op_def_, input, ksize, strides, padding, data_format, name, default_name):  # noqa: A002
    data_format = data_format or "NHWC"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"`data_format` must be 'NHWC' or 'NCHW'. Received: {data_format}")
    cidx = channel_index(data_format)
    pad, explicit = padding_attrs(padding)
    attrs = {"ksize": get_sequence(ksize, 2, cidx, "ksize"),
             "strides": get_sequence(strides, 2, cidx, "strides"), "padding": pad,
             "data_format": data_format}
    if op_def_ is MaxPool:
        attrs["explicit_paddings"] = explicit
    elif explicit:
        raise ValueError("`padding` must be 'SAME' or 'VALID' for average pooling.")
    x = convert_to_tensor(input, name="input")
    return _raw(op_def_, [x], attrs, name=name or default_name)


def _check_rank4(input) -> None:  # noqa: A002
    rank = getattr(getattr(input, "shape", None), "rank", None)
    if rank is not None and rank != 4:
        raise NotImplementedError(f"ndflow pools 4-D inputs only (got rank {rank})")


@tf_export("nn.max_pool2d")
def max_pool2d(input, ksize, strides, padding, data_format: str = "NHWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """`tf.nn.max_pool2d`: max over `ksize` windows (int or 1/2/4-list), SAME/VALID/explicit."""
    return _pool(MaxPool, input, ksize, strides, padding, data_format, name, "MaxPool2d")


@tf_export("nn.max_pool", v1=["nn.max_pool_v2"])
def max_pool(input, ksize, strides, padding, data_format: str | None = None,  # noqa: A002
             name: str | None = None) -> Tensor:
    """`tf.nn.max_pool` (TF2, N-D; 4-D inputs here)."""
    _check_rank4(input)
    return _pool(MaxPool, input, ksize, strides, padding, data_format, name, "MaxPool")


@tf_export(v1=["nn.max_pool"])
def max_pool_v1(value, ksize, strides, padding, data_format: str = "NHWC",
                name: str | None = None, input=None) -> Tensor:  # noqa: A002
    """`tf.compat.v1.nn.max_pool`."""
    value = input if value is None else value
    return _pool(MaxPool, value, ksize, strides, padding, data_format, name, "MaxPool")


@tf_export("nn.avg_pool2d", v1=[])
def avg_pool2d(input, ksize, strides, padding, data_format: str = "NHWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """`tf.nn.avg_pool2d`: mean over windows; SAME padding is not counted (as TF)."""
    return _pool(AvgPool, input, ksize, strides, padding, data_format, name, "AvgPool2D")


@tf_export("nn.avg_pool", v1=["nn.avg_pool_v2"])
def avg_pool(input, ksize, strides, padding, data_format: str | None = None,  # noqa: A002
             name: str | None = None) -> Tensor:
    """`tf.nn.avg_pool` (TF2, N-D; 4-D inputs here)."""
    _check_rank4(input)
    return _pool(AvgPool, input, ksize, strides, padding, data_format, name, "AvgPool")


@tf_export(v1=["nn.avg_pool", "nn.avg_pool2d"])
def avg_pool_v1(value, ksize, strides, padding, data_format: str = "NHWC",
                name: str | None = None, input=None) -> Tensor:  # noqa: A002
    """`tf.compat.v1.nn.avg_pool`."""
    value = input if value is None else value
    return _pool(AvgPool, value, ksize, strides, padding, data_format, name, "AvgPool")


def max_pool_grad(orig_input, orig_output, grad, ksize, strides, padding,
                  data_format: str = "NHWC", explicit_paddings=(),
                  name: str | None = None) -> Tensor:
    """The raw MaxPoolGrad op (`tf.raw_ops.MaxPoolGrad`)."""
    attrs = {"ksize": list(ksize), "strides": list(strides), "padding": padding,
             "explicit_paddings": list(explicit_paddings), "data_format": data_format}
    return _raw(MaxPoolGrad, [orig_input, orig_output, grad], attrs, name=name)


def avg_pool_grad(orig_input_shape, grad, ksize, strides, padding,
                  data_format: str = "NHWC", name: str | None = None) -> Tensor:
    """The raw AvgPoolGrad op (`tf.raw_ops.AvgPoolGrad`)."""
    attrs = {"ksize": list(ksize), "strides": list(strides), "padding": padding,
             "data_format": data_format}
    return _raw(AvgPoolGrad, [convert_to_tensor(orig_input_shape, dtypes.int32), grad], attrs,
                name=name)
