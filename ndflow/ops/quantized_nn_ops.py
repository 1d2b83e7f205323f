"""TF1's quantized pooling: `tf.compat.v1.nn.quantized_max_pool` / `quantized_avg_pool`
(QuantizedMaxPool / QuantizedAvgPool): NHWC pooling of a quantized tensor's integers, the
range passed through. Kernels in kernels/quantized_pooling.py. Also QuantizedConv2D and
QuantizedReluX (`tf.compat.v1.nn.quantized_relu_x`, which TensorFlow 2.21 declares but
registers no kernel for: kernels/quantized_activation.py)."""

from __future__ import annotations

import collections

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import op_def

QuantizedPoolResult = collections.namedtuple("QuantizedPool",
                                             ["output", "min_output", "max_output"])


def pool_output_size(size, k: int, stride: int, padding: str):
    """The pooled size of one dimension (None if unknown; negative when a VALID window does
    not fit, which the kernel reports)."""
    if size is None:
        return None
    if padding == "SAME":
        return -(-size // stride)
    return (size - k + stride) // stride


def _pool_shape(ctx):
    x = ctx.shapes[0]
    ksize, strides, padding = ctx.attrs["ksize"], ctx.attrs["strides"], ctx.attrs["padding"]
    if x.rank != 4 or len(ksize) != 4 or len(strides) != 4:
        return [TensorShape(None), TensorShape([]), TensorShape([])]
    n, h, w, c = x.as_list()
    sizes = [pool_output_size(h, ksize[1], strides[1], padding),
             pool_output_size(w, ksize[2], strides[2], padding)]
    out = [n, *(None if d is None or d < 0 else d for d in sizes),
           None if c is None or ksize[3] == 0 else c // ksize[3]]
    return [TensorShape(out), TensorShape([]), TensorShape([])]


_ATTRS = ["T: quantizedtype", "ksize: list(int)", "strides: list(int)",
          "padding: {'SAME', 'VALID'}"]
QuantizedMaxPool = op_def(
    "QuantizedMaxPool", inputs=["input: T", "min_input: float", "max_input: float"],
    outputs=["output: T", "min_output: float", "max_output: float"], attrs=_ATTRS,
    shape=_pool_shape, gradient_undefined=True)
QuantizedAvgPool = op_def(
    "QuantizedAvgPool", inputs=["input: T", "min_input: float", "max_input: float"],
    outputs=["output: T", "min_output: float", "max_output: float"], attrs=_ATTRS,
    shape=_pool_shape, gradient_undefined=True)


def _pool(op_def_, input, min_input, max_input, ksize, strides, padding,  # noqa: A002
          name):
    op = apply_op(op_def_, [input, min_input, max_input],
                  {"ksize": [int(k) for k in ksize], "strides": [int(s) for s in strides],
                   "padding": padding}, name=name)
    return QuantizedPoolResult(*op.outputs)


@tf_export(v1=["nn.quantized_max_pool"])
def quantized_max_pool(input, min_input, max_input, ksize, strides, padding,  # noqa: A002
                       name=None):
    """`tf.compat.v1.nn.quantized_max_pool`: max pooling of the quantized values; returns
    (output, min_output, max_output), the range unchanged."""
    return _pool(QuantizedMaxPool, input, min_input, max_input, ksize, strides, padding, name)


@tf_export(v1=["nn.quantized_avg_pool"])
def quantized_avg_pool(input, min_input, max_input, ksize, strides, padding,  # noqa: A002
                       name=None):
    """`tf.compat.v1.nn.quantized_avg_pool`: average pooling of the quantized values (integer
    sums divided by the count of in-bounds values, truncated, as TF's kernel); the range
    unchanged."""
    return _pool(QuantizedAvgPool, input, min_input, max_input, ksize, strides, padding, name)


QuantizedConv2DResult = collections.namedtuple("QuantizedConv2D",
                                               ["output", "min_output", "max_output"])


def _conv_shape(ctx):
    x, f = ctx.shapes[0], ctx.shapes[1]
    strides, padding = ctx.attrs["strides"], ctx.attrs["padding"]
    if x.rank != 4 or f.rank != 4 or len(strides) != 4:
        return [TensorShape(None), TensorShape([]), TensorShape([])]
    n, h, w, _ = x.as_list()
    kh, kw, _, out_c = f.as_list()
    sizes = [None if s is None or k is None else pool_output_size(s, k, st, padding)
             for s, k, st in ((h, kh, strides[1]), (w, kw, strides[2]))]
    return [TensorShape([n, *(None if d is None or d < 0 else d for d in sizes), out_c]),
            TensorShape([]), TensorShape([])]


QuantizedConv2D = op_def(
    "QuantizedConv2D",
    inputs=["input: Tinput", "filter: Tfilter", "min_input: float", "max_input: float",
            "min_filter: float", "max_filter: float"],
    outputs=["output: out_type", "min_output: float", "max_output: float"],
    attrs=["Tinput: quantizedtype", "Tfilter: quantizedtype",
           "out_type: quantizedtype = DT_QINT32", "strides: list(int)",
           "padding: {'SAME', 'VALID'}", "dilations: list(int) = [1, 1, 1, 1]"],
    shape=_conv_shape, gradient_undefined=True)


@tf_export(v1=["nn.quantized_conv2d"])
def quantized_conv2d(input, filter, min_input, max_input, min_filter,  # noqa: A002
                     max_filter, strides, padding, out_type=None, dilations=(1, 1, 1, 1),
                     name=None):
    """`tf.compat.v1.nn.quantized_conv2d`: an NHWC convolution of quint8 values (each less the
    value standing for 0.0) summed in qint32; returns (output, min_output, max_output), the
    range of one input step times one filter step."""
    attrs = {"strides": [int(s) for s in strides], "padding": padding,
             "dilations": [int(d) for d in dilations]}
    if out_type is not None:
        attrs["out_type"] = dtypes.as_dtype(out_type)
    op = apply_op(QuantizedConv2D, [input, filter, min_input, max_input, min_filter,
                                    max_filter], attrs, name=name)
    return QuantizedConv2DResult(*op.outputs)


QuantizedReluXResult = collections.namedtuple(
    "QuantizedReluX", ["activations", "min_activations", "max_activations"])

QuantizedReluX = op_def(
    "QuantizedReluX",
    inputs=["features: Tinput", "max_value: float", "min_features: float",
            "max_features: float"],
    outputs=["activations: out_type", "min_activations: float", "max_activations: float"],
    attrs=["Tinput: quantizedtype", "out_type: quantizedtype = DT_QUINT8"],
    shape=lambda ctx: [ctx.shapes[0], TensorShape([]), TensorShape([])],
    gradient_undefined=True)


@tf_export(v1=["nn.quantized_relu_x"])
def quantized_relu_x(features, max_value, min_features, max_features, out_type=None,
                     name=None):
    """`tf.compat.v1.nn.quantized_relu_x`: `min(max(features, 0), max_value)` of a quantized
    tensor. TensorFlow 2.21 builds the op but has no kernel for it, so running it is a
    NotFoundError there and here."""
    attrs = {} if out_type is None else {"out_type": dtypes.as_dtype(out_type)}
    op = apply_op(QuantizedReluX, [features, max_value, min_features, max_features], attrs,
                  name=name)
    return QuantizedReluXResult(*op.outputs)
