"""Pooling: MaxPool, AvgPool and their gradient ops (MaxPoolGrad, MaxPoolGradGrad, AvgPoolGrad).

`ksize` and `strides` attrs are 4-lists in `data_format` order, as TF's. The public wrappers
accept an int or a 1/2/4-list (`tf.nn.max_pool2d(x, 2, 2, "SAME")`) like TF2's. 1-D pools are
TF's composition (ExpandDims, the 2-D op, Squeeze); `tf.nn.max_pool`/`avg_pool` dispatch on
the input's rank to the 1-, 2- or 3-D pool.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import nn_pool3d, nn_pool_docs
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import expand_dims, squeeze
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
    seq_attr,
    sizes_input_shape,
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
    return sizes_input_shape(ctx, 0)


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


def _pool1d(op_def_, input, ksize, strides, padding, data_format, name):  # noqa: A002
    """TF's max_pool1d/avg_pool1d: the 2-D op over an ExpandDims'd input, then Squeeze."""
    data_format = data_format or "NWC"
    cidx = 1 if data_format.startswith("NC") else 2
    attrs = {"ksize": [1] + seq_attr(ksize, 1, cidx, "ksize"),
             "strides": [1] + seq_attr(strides, 1, cidx, "strides")}
    pad, explicit = padding_attrs(padding) if not isinstance(padding, (list, tuple)) \
        else ("EXPLICIT", [0, 0] + [int(p) for pair in padding for p in pair])
    attrs["padding"] = pad
    if op_def_ is MaxPool:
        attrs["explicit_paddings"] = explicit
    elif explicit:
        raise ValueError("`padding` must be 'SAME' or 'VALID' for average pooling.")
    axis = 1 if data_format == "NWC" else 2
    attrs["data_format"] = "NHWC" if data_format == "NWC" else "NCHW"
    x = expand_dims(convert_to_tensor(input, name="input"), axis)
    default = "MaxPool1d" if op_def_ is MaxPool else "AvgPool1D"
    return squeeze(_raw(op_def_, [x], attrs, name=name or default), [axis])


@tf_export("nn.max_pool1d")
def max_pool1d(input, ksize, strides, padding, data_format: str = "NWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """`tf.nn.max_pool1d`: MaxPool over a [batch, width, channels] (or NCW) input."""
    return _pool1d(MaxPool, input, ksize, strides, padding, data_format, name)


@tf_export("nn.avg_pool1d")
def avg_pool1d(input, ksize, strides, padding, data_format: str = "NWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """`tf.nn.avg_pool1d`: AvgPool over a [batch, width, channels] (or NCW) input."""
    return _pool1d(AvgPool, input, ksize, strides, padding, data_format, name)


def _pool_nd(kind: str, input, ksize, strides, padding, data_format, name):  # noqa: A002
    """TF's max_pool_v2/avg_pool_v2: the 1-, 2- or 3-D pool by the input's rank."""
    x = convert_to_tensor(input, name="input")
    rank = x.shape.rank
    if rank is not None:
        n = rank - 2
    elif data_format is not None:
        n = len(data_format) - 2
    else:
        raise ValueError("`input` must have a static shape or a data format. Received: "
                         f"input={x} and data_format={data_format}")
    if not 1 <= n <= 3:
        raise ValueError(f"`input.shape.rank` must be 3, 4 or 5. Received: "
                         f"input.shape={x.shape} of rank {n + 2}.")
    cidx = n + 1 if data_format is None or not data_format.startswith("NC") else 1
    ksize = seq_attr(ksize, n, cidx, "ksize")
    strides = seq_attr(strides, n, cidx, "strides")
    if isinstance(padding, (list, tuple)) and n == 3:
        raise ValueError("Explicit padding is not supported with an input tensor of rank 5. "
                         f"Received: padding={padding}")
    if n == 1:
        fn = max_pool1d if kind == "max" else avg_pool1d
        return fn(x, ksize, strides, padding, data_format or "NWC", name)
    if n == 3:
        fn = nn_pool3d.max_pool3d if kind == "max" else nn_pool3d.avg_pool3d
        return fn(x, ksize, strides, padding, data_format or "NDHWC", name)
    return _pool(MaxPool if kind == "max" else AvgPool, x, ksize, strides, padding, data_format,
                 name, "MaxPool" if kind == "max" else "AvgPool")


@tf_export("nn.max_pool2d")
def max_pool2d(input, ksize, strides, padding, data_format: str = "NHWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """`tf.nn.max_pool2d`: max over `ksize` windows (int or 1/2/4-list), SAME/VALID/explicit."""
    return _pool(MaxPool, input, ksize, strides, padding, data_format, name, "MaxPool2d")


@tf_export("nn.max_pool", v1=["nn.max_pool_v2"])
def max_pool(input, ksize, strides, padding, data_format: str | None = None,  # noqa: A002
             name: str | None = None) -> Tensor:
    """`tf.nn.max_pool` (TF2): the 1-, 2- or 3-D max pool by the input's rank."""
    return _pool_nd("max", input, ksize, strides, padding, data_format, name)


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
    """`tf.nn.avg_pool` (TF2): the 1-, 2- or 3-D average pool by the input's rank."""
    return _pool_nd("avg", input, ksize, strides, padding, data_format, name)


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


attach(globals(), nn_pool_docs.DOCS)
