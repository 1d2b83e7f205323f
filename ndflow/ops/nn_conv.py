"""Convolutions: Conv2D, DepthwiseConv2dNative, their backprop ops, BiasAdd/BiasAddGrad.

OpDefs follow TF's REGISTER_OP (attrs T, strides, padding, explicit_paddings, data_format,
dilations); gradients follow TF's nn_grad.py, so a backward graph holds Conv2DBackpropInput,
Conv2DBackpropFilter and BiasAddGrad nodes exactly as TensorFlow's does.
"""

from __future__ import annotations

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import nn_conv_docs
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.nn_common import (
    DATA_FORMAT,
    DILATIONS,
    EXPLICIT_PADDINGS,
    PADDING,
    check_rank,
    check_window_attr,
    conv_transpose_v1,
    explicit_hw,
    get_sequence,
    hw,
    padding_attrs,
    scoped_op_name,
    sizes_input_shape,
    spatial_dims,
    window_geometry,
)
from ndflow.ops.op_def import op_def

_CONV_T = "T: {half, bfloat16, float, double, int32}"
_FLOAT_T = "T: {half, bfloat16, float, double}"
_WINDOW_ATTRS = ["strides: list(int)", "use_cudnn_on_gpu: bool = true", PADDING,
                 EXPLICIT_PADDINGS, DATA_FORMAT, DILATIONS]
_DEPTHWISE_ATTRS = ["strides: list(int)", PADDING, EXPLICIT_PADDINGS, DATA_FORMAT, DILATIONS]


def _check_conv_attrs(ctx) -> None:
    fmt = ctx.attrs["data_format"]
    check_window_attr(ctx.op_type, "strides", ctx.attrs["strides"], fmt, "stride")
    check_window_attr(ctx.op_type, "dilations", ctx.attrs["dilations"], fmt, "dilation")
    explicit = ctx.attrs.get("explicit_paddings") or []
    if ctx.attrs["padding"] == "EXPLICIT":
        if len(explicit) != 8:
            raise ValueError(f"explicit_paddings attribute must contain 8 values, but got: "
                             f"{len(explicit)}")
    elif explicit:
        raise ValueError("explicit_paddings attribute must be empty if the padding attribute "
                         f"is not EXPLICIT, but got {ctx.attrs['padding']}")


def conv_output_shape(ctx, x: TensorShape, kh, kw, out_depth) -> TensorShape:
    """The NHWC/NCHW output shape of a 2-D window op over `x` (rank-4, possibly partial)."""
    fmt = ctx.attrs["data_format"]
    h, w, c = spatial_dims(fmt)
    (oh, ow), _ = window_geometry(
        x[h], x[w], kh, kw, hw(ctx.attrs["strides"], fmt),
        hw(ctx.attrs.get("dilations", [1, 1, 1, 1]), fmt), ctx.attrs["padding"],
        explicit_hw(ctx.attrs.get("explicit_paddings") or [], fmt))
    dims = [None] * 4
    dims[0], dims[h], dims[w], dims[c] = x[0], oh, ow, out_depth
    return TensorShape(dims)


def _conv2d_shape(ctx):
    x = check_rank(ctx.shapes[0], 4)
    f = check_rank(ctx.shapes[1], 4)
    _check_conv_attrs(ctx)
    _, _, c = spatial_dims(ctx.attrs["data_format"])
    depth, f_depth = x[c], f[2]
    if depth is not None and f_depth is not None:
        if f_depth == 0 or depth % f_depth:
            raise ValueError(f"Depth of input ({depth}) is not a multiple of input depth of "
                             f"filter ({f_depth})")
    if f[3] is not None and f_depth is not None and depth is not None and f_depth:
        groups = depth // f_depth
        if f[3] % groups:
            raise ValueError(f"Depth of output ({f[3]}) is not a multiple of the number of "
                             f"groups ({groups})")
    return [conv_output_shape(ctx, x, f[0], f[1], f[3])]


def _depthwise_shape(ctx):
    x = check_rank(ctx.shapes[0], 4)
    f = check_rank(ctx.shapes[1], 4)
    _check_conv_attrs(ctx)
    _, _, c = spatial_dims(ctx.attrs["data_format"])
    if x[c] is not None and f[2] is not None and x[c] != f[2]:
        raise ValueError(f"Dimensions must be equal, but are {x[c]} and {f[2]}")
    depth = x[c] if x[c] is not None else f[2]
    out_depth = depth * f[3] if depth is not None and f[3] is not None else None
    return [conv_output_shape(ctx, x, f[0], f[1], out_depth)]


def _sizes_shape(index: int):
    def shape_fn(ctx):
        _check_conv_attrs(ctx)
        return sizes_input_shape(ctx, index)
    return shape_fn


Conv2D = op_def("Conv2D", inputs=["input: T", "filter: T"], outputs=["output: T"],
                attrs=[_CONV_T] + _WINDOW_ATTRS, shape=_conv2d_shape)
Conv2DBackpropInput = op_def(
    "Conv2DBackpropInput", inputs=["input_sizes: int32", "filter: T", "out_backprop: T"],
    outputs=["output: T"], attrs=[_CONV_T] + _WINDOW_ATTRS, shape=_sizes_shape(0))
Conv2DBackpropFilter = op_def(
    "Conv2DBackpropFilter", inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
    outputs=["output: T"], attrs=[_FLOAT_T] + _WINDOW_ATTRS, shape=_sizes_shape(1))
DepthwiseConv2dNative = op_def(
    "DepthwiseConv2dNative", inputs=["input: T", "filter: T"], outputs=["output: T"],
    attrs=[_FLOAT_T] + _DEPTHWISE_ATTRS, shape=_depthwise_shape)
DepthwiseConv2dNativeBackpropInput = op_def(
    "DepthwiseConv2dNativeBackpropInput",
    inputs=["input_sizes: int32", "filter: T", "out_backprop: T"], outputs=["output: T"],
    attrs=[_FLOAT_T] + _DEPTHWISE_ATTRS, shape=_sizes_shape(0))
DepthwiseConv2dNativeBackpropFilter = op_def(
    "DepthwiseConv2dNativeBackpropFilter",
    inputs=["input: T", "filter_sizes: int32", "out_backprop: T"], outputs=["output: T"],
    attrs=[_FLOAT_T] + _DEPTHWISE_ATTRS, shape=_sizes_shape(1))


def _raw(op_def_, inputs, attrs, name=None):
    return apply_op(op_def_, inputs, attrs, name=name).outputs[0]


def _converted_in_scope(op_def_, convert, attrs, name, default: str) -> Tensor:
    """The op on `convert()`'s inputs, converted as TF's wrappers do: inside the op's name
    scope in a graph (a variable's read is `Conv2D/ReadVariableOp`, a constant `BiasAdd/bias`),
    the op named after the scope."""
    if context.executing_eagerly():
        return _raw(op_def_, convert(), attrs, name=name or default)
    with name_scope(name, default) as scope:
        return _raw(op_def_, convert(), attrs, name=scope)


# -- BiasAdd -------------------------------------------------------------------------------------

_BIAS_T = "T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8}"


def _bias_add_shape(ctx):
    x, b = ctx.shapes
    fmt = ctx.attrs["data_format"]
    if x.rank is not None and x.rank < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {x.rank}")
    b = check_rank(b, 1)
    if x.rank is None:
        return [x]
    c = 1 if fmt == "NCHW" and x.rank >= 3 else x.rank - 1
    if x[c] is not None and b[0] is not None and x[c] != b[0]:
        raise ValueError(f"Dimensions must be equal, but are {x[c]} and {b[0]}")
    dims = x.as_list()
    dims[c] = dims[c] if dims[c] is not None else b[0]
    return [TensorShape(dims)]


def _bias_add_grad_shape(ctx):
    x = ctx.shapes[0]
    if x.rank is None:
        return [TensorShape([None])]
    if x.rank < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {x.rank}")
    c = 1 if ctx.attrs["data_format"] == "NCHW" and x.rank >= 3 else x.rank - 1
    return [TensorShape([x[c]])]


BiasAdd = op_def("BiasAdd", inputs=["value: T", "bias: T"], outputs=["output: T"],
                 attrs=[_BIAS_T, DATA_FORMAT], shape=_bias_add_shape)
BiasAddGrad = op_def("BiasAddGrad", inputs=["out_backprop: T"], outputs=["output: T"],
                     attrs=[_BIAS_T, DATA_FORMAT], shape=_bias_add_grad_shape)


@tf_export("nn.bias_add")
def bias_add(value, bias, data_format: str | None = None, name: str | None = None) -> Tensor:
    """`tf.nn.bias_add`: adds a 1-D `bias` along the channel dimension of `value`."""
    if data_format is not None:
        if data_format.startswith("NC"):
            data_format = "NCHW"
        elif data_format.startswith("N") and data_format.endswith("C"):
            data_format = "NHWC"
        else:
            raise ValueError("data_format must be of the form `N...C` or `NC...`")
    def convert():
        x = convert_to_tensor(value, name="input")
        return [x, convert_to_tensor(bias, dtype=x.dtype, name="bias")]

    return _converted_in_scope(BiasAdd, convert, {"data_format": data_format or "NHWC"}, name,
                               "BiasAdd")


# -- Public wrappers -------------------------------------------------------------------------------


def _conv_attrs(strides, padding, data_format, dilations, channel_idx) -> dict:
    pad, explicit = padding_attrs(padding)
    return {"strides": get_sequence(strides, 2, channel_idx, "strides"), "padding": pad,
            "explicit_paddings": explicit, "data_format": data_format,
            "dilations": get_sequence(dilations, 2, channel_idx, "dilations")}


@tf_export("nn.conv2d", v1=[])
def conv2d(input, filters, strides, padding, data_format: str = "NHWC",  # noqa: A002
           dilations=None, name: str | None = None) -> Tensor:
    """`tf.nn.conv2d` (TF2): 2-D convolution of NHWC/NCHW `input` with HWIO `filters`."""
    data_format = data_format or "NHWC"
    cidx = 1 if data_format.startswith("NC") else 3
    attrs = _conv_attrs(strides, padding, data_format, dilations, cidx)
    return _converted_in_scope(Conv2D, lambda: _conv_inputs(input, filters), attrs, name,
                               "Conv2D")


def _conv_inputs(input, filters) -> list:  # noqa: A002
    x = convert_to_tensor(input, name="input")
    return [x, convert_to_tensor(filters, dtype=x.dtype, name="filter")]


@tf_export(v1=["nn.conv2d"])
def conv2d_v1(input, filter=None, strides=None, padding=None,  # noqa: A002
              use_cudnn_on_gpu: bool = True, data_format: str = "NHWC", dilations=None,
              name: str | None = None, filters=None) -> Tensor:
    """`tf.compat.v1.nn.conv2d`: `filter=`, 4-element strides."""
    filter = filters if filter is None else filter  # noqa: A001
    data_format = data_format or "NHWC"
    cidx = 1 if data_format.startswith("NC") else 3
    attrs = _conv_attrs(strides, padding, data_format, dilations, cidx)
    attrs["use_cudnn_on_gpu"] = use_cudnn_on_gpu
    return _converted_in_scope(Conv2D, lambda: _conv_inputs(input, filter), attrs, name,
                               "Conv2D")


def _raw_window_attrs(strides, padding, use_cudnn_on_gpu, explicit_paddings, data_format,
                      dilations) -> dict:
    """The attrs of the raw conv backprop ops, as their wrappers take them."""
    return {"strides": list(strides), "padding": padding, "use_cudnn_on_gpu": use_cudnn_on_gpu,
            "explicit_paddings": list(explicit_paddings), "data_format": data_format,
            "dilations": list(dilations)}


@tf_export(v1=["nn.conv2d_backprop_input"])
def conv2d_backprop_input(input_sizes, filter, out_backprop, strides, padding,  # noqa: A002
                          use_cudnn_on_gpu: bool = True, explicit_paddings=(),
                          data_format: str = "NHWC", dilations=(1, 1, 1, 1),
                          name: str | None = None, filters=None) -> Tensor:
    """`tf.compat.v1.nn.conv2d_backprop_input` (the raw op's signature; `filters` is TF2's
    name for `filter`)."""
    filter = deprecated_argument_lookup("filters", filters, "filter", filter)  # noqa: A001
    attrs = _raw_window_attrs(strides, padding, use_cudnn_on_gpu, explicit_paddings,
                              data_format, dilations)
    sizes = convert_to_tensor(input_sizes, dtypes.int32)
    return _raw(Conv2DBackpropInput, [sizes, filter, out_backprop], attrs, name=name)


@tf_export(v1=["nn.conv2d_backprop_filter"])
def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           use_cudnn_on_gpu: bool = True, explicit_paddings=(),
                           data_format: str = "NHWC", dilations=(1, 1, 1, 1),
                           name: str | None = None) -> Tensor:
    """`tf.compat.v1.nn.conv2d_backprop_filter` (the raw op's signature)."""
    attrs = _raw_window_attrs(strides, padding, use_cudnn_on_gpu, explicit_paddings,
                              data_format, dilations)
    sizes = convert_to_tensor(filter_sizes, dtypes.int32)
    return _raw(Conv2DBackpropFilter, [input, sizes, out_backprop], attrs, name=name)


@tf_export("nn.conv2d_transpose", v1=[])
def conv2d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format: str = "NHWC", dilations=None, name: str | None = None) -> Tensor:
    """`tf.nn.conv2d_transpose`: Conv2DBackpropInput with `output_shape` as input_sizes."""
    data_format = data_format or "NHWC"
    cidx = 1 if data_format.startswith("NC") else 3
    attrs = _conv_attrs(strides, padding, data_format, dilations, cidx)
    sizes = convert_to_tensor(output_shape, dtypes.int32)
    return _raw(Conv2DBackpropInput, [sizes, filters, input], attrs,
                name=scoped_op_name(name, "conv2d_transpose"))


@tf_export("nn.depthwise_conv2d", v1=[])
def depthwise_conv2d(input, filter, strides, padding, data_format: str | None = None,  # noqa: A002
                     dilations=None, name: str | None = None) -> Tensor:
    """`tf.nn.depthwise_conv2d`: per-channel convolution, `filter` [fh, fw, in, multiplier].

    Dilations are passed to DepthwiseConv2dNative directly (TF wraps the op in
    SpaceToBatchND/BatchToSpaceND for rates > 1; the result is the same).
    """
    data_format = data_format or "NHWC"
    cidx = 1 if data_format.startswith("NC") else 3
    if len(list(strides)) != 4:
        raise ValueError(f"strides must be a list of 4 ints, got {strides}")
    attrs = _conv_attrs(list(strides), padding, data_format, dilations, cidx)
    x = convert_to_tensor(input, name="input")
    f = convert_to_tensor(filter, dtype=x.dtype, name="filter")
    return _raw(DepthwiseConv2dNative, [x, f], attrs, name=name or "depthwise")


conv2d_transpose_v1 = conv_transpose_v1(conv2d_transpose, "conv2d_transpose", "NHWC")


@tf_export(v1=["nn.depthwise_conv2d"])
def depthwise_conv2d_v1(input, filter, strides, padding, rate=None,  # noqa: A002
                        name: str | None = None, data_format: str | None = None,
                        dilations=None) -> Tensor:
    """`tf.compat.v1.nn.depthwise_conv2d` (`rate` is TF1's name for `dilations`)."""
    dilations = deprecated_argument_lookup("dilations", dilations, "rate", rate)
    return depthwise_conv2d(input, filter, strides, padding, data_format, dilations, name)


@tf_export(v1=["nn.depthwise_conv2d_native"])
def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",  # noqa: A002
                            dilations=(1, 1, 1, 1), name: str | None = None) -> Tensor:
    """`tf.nn.depthwise_conv2d_native` (the raw op)."""
    pad, explicit = padding_attrs(padding)
    attrs = {"strides": list(strides), "padding": pad, "explicit_paddings": explicit,
             "data_format": data_format, "dilations": list(dilations)}
    return _raw(DepthwiseConv2dNative, [input, filter], attrs, name=name)


attach(globals(), nn_conv_docs.DOCS)
