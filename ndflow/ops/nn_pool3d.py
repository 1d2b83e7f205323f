"""3-D pooling: MaxPool3D, AvgPool3D and their gradient ops (NDHWC / NCDHW).

Deviation from TF: MaxPool3D and its gradients also accept double (TF: {half, bfloat16,
float}) so their gradients can be checked in float64.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.nn_common import check_rank, seq_attr
from ndflow.ops.nn_conv3d import (
    DATA_FORMAT_3D,
    PADDING_3D,
    check_list_attr,
    sizes_shape,
    spatial_3d,
    window_shape_3d,
)
from ndflow.ops.op_def import op_def

_MAX_T = "T: {half, bfloat16, float, double}"
_WINDOW = ["ksize: list(int)", "strides: list(int)", PADDING_3D, DATA_FORMAT_3D]


def _check(ctx) -> None:
    # TF checks batch/channel windows in the kernel only (kernels/nn_conv3d.py).
    for attr in ("ksize", "strides"):
        check_list_attr(ctx.op_type, attr, ctx.attrs[attr])


def _pool3d_shape(ctx):
    x = check_rank(ctx.shapes[0], 5)
    _check(ctx)
    sp, c = spatial_3d(ctx.attrs["data_format"])
    k = [ctx.attrs["ksize"][d] for d in sp]
    return [window_shape_3d(ctx, x, k, ctx.attrs["strides"], [1] * 5, x[c])]


def _same_as(index: int):
    def shape_fn(ctx):
        _check(ctx)
        return [check_rank(ctx.shapes[index], 5)]
    return shape_fn


MaxPool3D = op_def("MaxPool3D", inputs=["input: T"], outputs=["output: T"],
                   attrs=[*_WINDOW, _MAX_T], shape=_pool3d_shape)
MaxPool3DGrad = op_def(
    "MaxPool3DGrad", inputs=["orig_input: TInput", "orig_output: TInput", "grad: T"],
    outputs=["output: T"],
    attrs=[*_WINDOW, "T: {half, bfloat16, float, double} = DT_FLOAT",
           "TInput: {half, bfloat16, float, double} = DT_FLOAT"], shape=_same_as(0))
MaxPool3DGradGrad = op_def(
    "MaxPool3DGradGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"],
    outputs=["output: T"], attrs=[*_WINDOW, _MAX_T], shape=_same_as(1))
AvgPool3D = op_def("AvgPool3D", inputs=["input: T"], outputs=["output: T"],
                   attrs=[*_WINDOW, "T: {half, bfloat16, float, double}"], shape=_pool3d_shape)
AvgPool3DGrad = op_def(
    "AvgPool3DGrad", inputs=["orig_input_shape: int32", "grad: T"], outputs=["output: T"],
    attrs=[*_WINDOW, "T: {half, bfloat16, float, double}"], shape=sizes_shape(0))


def pool3d_attrs(ksize, strides, padding, data_format) -> dict:
    return {"ksize": [int(k) for k in ksize], "strides": [int(s) for s in strides],
            "padding": padding, "data_format": data_format}


def _pool3d(op_def_, input, ksize, strides, padding, data_format, name):  # noqa: A002
    data_format = data_format or "NDHWC"
    cidx = 1 if data_format.startswith("NC") else 4
    attrs = pool3d_attrs(seq_attr(ksize, 3, cidx, "ksize"), seq_attr(strides, 3, cidx, "strides"),
                         padding, data_format)
    x = convert_to_tensor(input, name="input")
    return apply_op(op_def_, [x], attrs, name=name).outputs[0]


@tf_export("nn.max_pool3d")
def max_pool3d(input, ksize, strides, padding, data_format: str = "NDHWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """`tf.nn.max_pool3d`: max over `ksize` windows (int or 1/3/5-list) of a 5-D input."""
    return _pool3d(MaxPool3D, input, ksize, strides, padding, data_format, name or "MaxPool3D")


@tf_export("nn.avg_pool3d")
def avg_pool3d(input, ksize, strides, padding, data_format: str = "NDHWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """`tf.nn.avg_pool3d`: window means (SAME padding not counted, as TF's)."""
    return _pool3d(AvgPool3D, input, ksize, strides, padding, data_format, name or "AvgPool3D")


def max_pool3d_grad(orig_input, orig_output, grad, ksize, strides, padding,
                    data_format: str = "NDHWC", name: str | None = None) -> Tensor:
    """The raw MaxPool3DGrad op."""
    return apply_op(MaxPool3DGrad, [orig_input, orig_output, grad],
                    pool3d_attrs(ksize, strides, padding, data_format), name=name).outputs[0]


def max_pool3d_grad_grad(orig_input, orig_output, grad, ksize, strides, padding,
                         data_format: str = "NDHWC", name: str | None = None) -> Tensor:
    """The raw MaxPool3DGradGrad op."""
    return apply_op(MaxPool3DGradGrad, [orig_input, orig_output, grad],
                    pool3d_attrs(ksize, strides, padding, data_format), name=name).outputs[0]


def avg_pool3d_grad(orig_input_shape, grad, ksize, strides, padding,
                    data_format: str = "NDHWC", name: str | None = None) -> Tensor:
    """The raw AvgPool3DGrad op."""
    shape = orig_input_shape if isinstance(orig_input_shape, Tensor) else \
        convert_to_tensor(orig_input_shape, dtypes.int32)
    return apply_op(AvgPool3DGrad, [shape, grad],
                    pool3d_attrs(ksize, strides, padding, data_format), name=name).outputs[0]
