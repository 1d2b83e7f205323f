"""`tf.nn.max_pool_with_argmax`: MaxPoolWithArgmax (NHWC) and its gradient op
MaxPoolGradWithArgmax. The argmax is TF's flat index ((y * width + x) * channels + c, plus
b * height * width * channels with `include_batch_in_index`) into the unpadded input."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.nn_common import PADDING_NO_EXPLICIT, REAL_T, check_rank, seq_attr
from ndflow.ops.nn_pool import pool_output_shape
from ndflow.ops.op_def import op_def

_ATTRS = ["ksize: list(int)", "strides: list(int)", PADDING_NO_EXPLICIT,
          "include_batch_in_index: bool = false", "Targmax: {int32, int64} = DT_INT64", REAL_T]


def _check(ctx) -> None:
    for attr in ("ksize", "strides"):
        n = len(ctx.attrs[attr])
        if n < 4:
            raise ValueError(f"Attr '{attr}' of '{ctx.op_type}' Op passed list of length {n} "
                             f"less than minimum 4.")


def _argmax_shape(ctx):
    _check(ctx)
    x = check_rank(ctx.shapes[0], 4)
    out = pool_output_shape(dict(ctx.attrs, data_format="NHWC"), x)
    return [out, out]


def _grad_shape(ctx):
    _check(ctx)
    return [check_rank(ctx.shapes[0], 4)]


MaxPoolWithArgmax = op_def("MaxPoolWithArgmax", inputs=["input: T"],
                           outputs=["output: T", "argmax: Targmax"], attrs=_ATTRS,
                           shape=_argmax_shape)
MaxPoolGradWithArgmax = op_def("MaxPoolGradWithArgmax",
                               inputs=["input: T", "grad: T", "argmax: Targmax"],
                               outputs=["output: T"], attrs=_ATTRS, shape=_grad_shape,
                               gradient_undefined=True)


def _check_format(data_format) -> None:
    if data_format != "NHWC":
        raise ValueError(f"`data_format` values other  than 'NHWC' are not supported. "
                         f"Received: data_format={data_format}")


def _argmax_pool(input, ksize, strides, padding, targmax, include_batch_in_index,  # noqa: A002
                 name):
    x = convert_to_tensor(input, name="input")
    attrs = {"ksize": list(ksize), "strides": list(strides), "padding": padding,
             "Targmax": dtypes.as_dtype(targmax),
             "include_batch_in_index": bool(include_batch_in_index)}
    op = apply_op(MaxPoolWithArgmax, [x], attrs, name=name)
    return op.outputs[0], op.outputs[1]


@tf_export("nn.max_pool_with_argmax", v1=[])
def max_pool_with_argmax(input, ksize, strides, padding, data_format: str = "NHWC",  # noqa: A002
                         output_dtype=dtypes.int64, include_batch_in_index: bool = False,
                         name: str | None = None) -> tuple:
    """`tf.nn.max_pool_with_argmax`: (max pool, flat index of each maximum)."""
    _check_format(data_format)
    return _argmax_pool(input, seq_attr(ksize, 2, 3, "ksize"), seq_attr(strides, 2, 3, "strides"),
                        padding, output_dtype, include_batch_in_index, name)


@tf_export(v1=["nn.max_pool_with_argmax"])
def max_pool_with_argmax_v1(input, ksize, strides, padding, data_format: str = "NHWC",  # noqa: A002
                            Targmax=None, name: str | None = None,  # noqa: N803 - TF's name
                            output_dtype=None, include_batch_in_index: bool = False) -> tuple:
    """`tf.compat.v1.nn.max_pool_with_argmax` (4-element ksize/strides; `Targmax`)."""
    _check_format(data_format)
    targmax = deprecated_argument_lookup("output_dtype", output_dtype, "Targmax", Targmax)
    return _argmax_pool(input, ksize, strides, padding, targmax or dtypes.int64,
                        include_batch_in_index, name)


def max_pool_grad_with_argmax(input, grad, argmax, ksize, strides, padding,  # noqa: A002
                              include_batch_in_index: bool = False,
                              name: str | None = None) -> Tensor:
    """The raw MaxPoolGradWithArgmax op: `grad` summed into the argmax positions."""
    attrs = {"ksize": list(ksize), "strides": list(strides), "padding": padding,
             "include_batch_in_index": bool(include_batch_in_index)}
    return apply_op(MaxPoolGradWithArgmax, [input, grad, argmax], attrs, name=name).outputs[0]
