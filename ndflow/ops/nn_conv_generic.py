"""The generic N-D convolution `Conv` (`tf.conv`) and the 2-D backprop ops that take the
input / filter as a tensor instead of its shape, Conv2DBackpropInputV2 and
Conv2DBackpropFilterV2 (`tf.conv2d_backprop_input_v2`, `tf.conv2d_backprop_filter_v2`).

Conv takes `batch_dims` leading batch dimensions (flattened into one for the convolution and
restored after), 2 or 3 spatial dimensions, CHANNELS_LAST (NHWC / NDHWC) or CHANNELS_FIRST
(NCHW / NCDHW) data, HWIO / DHWIO filters, SAME / VALID / EXPLICIT (2-D only) padding,
dilations and `groups` (the input depth is `groups` times the filter's). Its shape function
is TensorFlow's ConvShape (its checks, in its order, with its messages); running eagerly, as
TF, the kernel (kernels/nn_conv_generic.py) checks what TF's ConvOp checks, with its
messages, before running ndflow's Conv2D / Conv3D kernels. Deviations from TF 2.21's CPU
kernel, which refuses them: `groups` > 1 (UnimplementedError), CHANNELS_FIRST and 3-D
dilations are computed, as TF's XLA kernel (`jit_compile=True`) computes them. TF registers
no gradient for Conv, nor for the V2 backprop ops: differentiating through them raises
LookupError, as in TF.

TensorFlow 2.21 registers no kernel at all for Conv2DBackpropInputV2 / FilterV2 (running one
is a NotFoundError, and XLA has none either); ndflow runs them on the Conv2DBackpropInput /
Conv2DBackpropFilter kernels with the shape of `input` / `filter` as the sizes. Their shape
functions are TF's: the output has the shape of `input` (`filter`), rank 4.
"""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.nn_common import (
    DATA_FORMAT,
    DILATIONS,
    EXPLICIT_PADDINGS,
    PADDING,
    check_rank,
)
from ndflow.ops.op_def import op_def

_CONV_T = "T: {half, bfloat16, float, double, int32}"
_FLOAT_T = "T: {half, bfloat16, float, double}"


def conv_layout(rank: int, channels_last: bool) -> tuple[list[int], int]:
    """(spatial indices, channel index) of a tensor of the standard `rank` (one batch dim)."""
    if channels_last:
        return list(range(1, rank - 1)), rank - 1
    return list(range(2, rank)), 1


def check_explicit_paddings(padding: str, explicit, rank: int, channel: int) -> None:
    """TF's CheckValidPadding (ValueError; its messages)."""
    explicit = list(explicit)
    if padding == "EXPLICIT":
        if len(explicit) != 2 * rank:
            raise ValueError(f"explicit_paddings attribute must contain {2 * rank} values, "
                             f"but got: {len(explicit)}")
        if any(p < 0 for p in explicit):
            raise ValueError("All elements of explicit_paddings must be nonnegative")
        if any(explicit[2 * d + i] != 0 for d in (0, channel) for i in (0, 1)):
            raise ValueError("Nonzero explicit padding in the batch or depth dimensions is not "
                             "supported")
    elif explicit:
        raise ValueError("explicit_paddings attribute must be empty if the padding attribute "
                         "is not EXPLICIT")


def _windowed_dim(size, k, stride: int, dilation: int, padding: str, before: int, after: int):
    """TF's GetWindowedOutputSizeFromDimsV2 for one spatial dim (None: unknown)."""
    if stride <= 0:
        raise ValueError(f"Stride must be > 0, but got {stride}")
    if dilation < 1:
        raise ValueError(f"Dilation rate must be >= 1, but got {dilation}")
    if size is None:
        return None
    if padding == "SAME":
        return (size + stride - 1) // stride
    if padding == "EXPLICIT":
        size += before + after
    if k is None:
        return None
    eff = (k - 1) * dilation + 1
    if size < eff:
        raise ValueError(f"Negative dimension size caused by subtracting {eff} from {size}")
    return (size - eff + stride) // stride


def _conv_shape(ctx):
    """TF's ConvShape. Running eagerly, TF runs no shape function: its kernel checks the
    inputs (kernels/nn_conv_generic.py, TF's messages)."""
    x, f = ctx.shapes
    if x.rank is None or f.rank is None or context.executing_eagerly():
        return [TensorShape(None)]
    a = ctx.attrs
    batch_dims = int(a["batch_dims"])
    if batch_dims < 0:
        raise ValueError("Batch dims must be non-negative.")
    rank = x.rank - batch_dims + 1
    if rank not in (4, 5):
        raise ValueError(f"Input tensor must be rank 4 or 5, excluding extra batch "
                         f"dimensions, but got: {rank}")
    if f.rank not in (4, 5):
        raise ValueError(f"Filter tensor must be rank 4 or 5, but got: {rank}")  # (TF's text)
    if f.rank != rank:
        raise ValueError("Input tensor rank must be the same as filter rank.")
    dilations = [int(v) for v in a["dilations"]] or [1] * rank
    if len(dilations) != rank:
        raise ValueError(f"Conv requires the dilation attribute to contain {rank} values, but "
                         f"got: {len(dilations)}")
    strides = [int(v) for v in a["strides"]]
    if len(strides) != rank:
        raise ValueError(f"Stride attribute should contain {rank} values, but got: "
                         f"{len(strides)}")
    channels_last = a["data_format"] == "CHANNELS_LAST"
    spatial, channel = conv_layout(rank, channels_last)
    dims = [None] + x.as_list()[batch_dims:]   # the input with its batch dims as one
    depth, f_depth, out_depth = dims[channel], f[rank - 2], f[rank - 1]
    groups = int(a["groups"])
    if groups < 1:
        raise ValueError("Groups attribute should be a positive integer")
    if depth is not None and depth % groups:
        raise ValueError("Number of groups should divide input depth")
    if out_depth is not None and out_depth % groups:
        raise ValueError("Number of groups should divide output depth")
    if depth is not None and f_depth is not None:
        if f_depth == 0:
            raise ValueError("Depth of filter must not be 0")
        if depth % f_depth:
            raise ValueError(f"Depth of input ({depth}) is not a multiple of input depth of "
                             f"filter ({f_depth})")
        if depth // f_depth != groups:
            raise ValueError(f"Input depth divided by filter input depth does not match with "
                             f"groups parameter ({groups})")
    padding = a["padding"]
    if rank == 5 and padding == "EXPLICIT":
        raise ValueError("Explicit padding not supported for 3D Convolution")
    explicit = list(a.get("explicit_paddings") or [])
    check_explicit_paddings(padding, explicit, rank, channel)
    out = []
    for i, d in enumerate(spatial):
        before, after = (explicit[2 * d], explicit[2 * d + 1]) if explicit else (0, 0)
        out.append(_windowed_dim(dims[d], f[i], strides[d], dilations[d], padding, before,
                                 after))
    batch = x.as_list()[:batch_dims]
    if channels_last:
        return [TensorShape(batch + out + [out_depth])]
    return [TensorShape(batch + [out_depth] + out)]


Conv = op_def(
    "Conv", inputs=["input: T", "filter: T"], outputs=["output: T"],
    attrs=[_CONV_T, "strides: list(int)", PADDING, EXPLICIT_PADDINGS,
           "data_format: {'CHANNELS_FIRST', 'CHANNELS_LAST'} = 'CHANNELS_LAST'",
           "dilations: list(int) = []", "batch_dims: int = 1", "groups: int = 1"],
    shape=_conv_shape, gradient_undefined=True)

_V2_ATTRS = ["strides: list(int)", "use_cudnn_on_gpu: bool = true", PADDING, EXPLICIT_PADDINGS,
             DATA_FORMAT, DILATIONS]

Conv2DBackpropInputV2 = op_def(
    "Conv2DBackpropInputV2", inputs=["input: T", "filter: T", "out_backprop: T"],
    outputs=["output: T"], attrs=[_CONV_T] + _V2_ATTRS,
    shape=lambda ctx: [check_rank(ctx.shapes[0], 4)], gradient_undefined=True)
Conv2DBackpropFilterV2 = op_def(
    "Conv2DBackpropFilterV2", inputs=["input: T", "filter: T", "out_backprop: T"],
    outputs=["output: T"], attrs=[_FLOAT_T] + _V2_ATTRS,
    shape=lambda ctx: [check_rank(ctx.shapes[1], 4)], gradient_undefined=True)


def _ints(values) -> list:
    return [int(v) for v in values]


def _str(value) -> str:
    return value.decode() if isinstance(value, bytes) else value


@tf_export("conv")
def conv(input, filter, strides, padding, explicit_paddings=(),  # noqa: A002
         data_format="CHANNELS_LAST", dilations=(), batch_dims=1, groups=1,
         name=None) -> Tensor:
    """`tf.conv` (the raw op Conv): the N-D (N = 2 or 3) convolution of a
    `batch_shape + spatial + [in]` (CHANNELS_LAST) or `batch_shape + [in] + spatial` input
    with a `spatial + [in / groups, out]` filter; `batch_dims` leading batch dimensions."""
    x = convert_to_tensor(input, name="input")
    f = convert_to_tensor(filter, dtype=x.dtype, name="filter")
    attrs = {"strides": _ints(strides), "padding": _str(padding),
             "explicit_paddings": _ints(explicit_paddings), "data_format": _str(data_format),
             "dilations": _ints(dilations), "batch_dims": int(batch_dims),
             "groups": int(groups)}
    return apply_op(Conv, [x, f], attrs, name=name).outputs[0]


def _v2_attrs(strides, padding, use_cudnn_on_gpu, explicit_paddings, data_format,
              dilations) -> dict:
    return {"strides": _ints(strides), "padding": _str(padding),
            "use_cudnn_on_gpu": bool(use_cudnn_on_gpu),
            "explicit_paddings": _ints(explicit_paddings), "data_format": _str(data_format),
            "dilations": _ints(dilations)}


def _v2_inputs(input, filter, out_backprop):  # noqa: A002
    x = convert_to_tensor(input, name="input")
    return [x, convert_to_tensor(filter, dtype=x.dtype, name="filter"),
            convert_to_tensor(out_backprop, dtype=x.dtype, name="out_backprop")]


@tf_export("conv2d_backprop_input_v2")
def conv2d_backprop_input_v2(input, filter, out_backprop, strides, padding,  # noqa: A002
                             use_cudnn_on_gpu=True, explicit_paddings=(), data_format="NHWC",
                             dilations=(1, 1, 1, 1), name=None) -> Tensor:
    """`tf.conv2d_backprop_input_v2` (the raw op): the gradient of Conv2D with respect to its
    input, whose shape is `input`'s (its values are not read)."""
    attrs = _v2_attrs(strides, padding, use_cudnn_on_gpu, explicit_paddings, data_format,
                      dilations)
    return apply_op(Conv2DBackpropInputV2, _v2_inputs(input, filter, out_backprop), attrs,
                    name=name).outputs[0]


@tf_export("conv2d_backprop_filter_v2")
def conv2d_backprop_filter_v2(input, filter, out_backprop, strides, padding,  # noqa: A002
                              use_cudnn_on_gpu=True, explicit_paddings=(), data_format="NHWC",
                              dilations=(1, 1, 1, 1), name=None) -> Tensor:
    """`tf.conv2d_backprop_filter_v2` (the raw op): the gradient of Conv2D with respect to
    its filter, whose shape is `filter`'s (its values are not read)."""
    attrs = _v2_attrs(strides, padding, use_cudnn_on_gpu, explicit_paddings, data_format,
                      dilations)
    return apply_op(Conv2DBackpropFilterV2, _v2_inputs(input, filter, out_backprop), attrs,
                    name=name).outputs[0]
