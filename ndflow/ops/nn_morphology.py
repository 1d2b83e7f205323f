"""Grayscale morphology: Dilation2D and its backprop ops (`tf.nn.dilation2d`), and
`tf.nn.erosion2d` (TF's composition: -dilation2d(-x, reversed filter)).

out[b, y, x, c] = max over (dy, dx) of input[b, y*s_h + dy*r_h - pad_top,
x*s_w + dx*r_w - pad_left, c] + filter[dy, dx, c] (padding never wins), NHWC only.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import negative
from ndflow.ops.array_reorder import reverse
from ndflow.ops.comparison import composite_name
from ndflow.ops.nn_common import REAL_T, check_rank, windowed_output_size
from ndflow.ops.op_def import op_def

_ATTRS = [REAL_T, "strides: list(int)", "rates: list(int)", "padding: {'SAME', 'VALID'}"]


def _check_attrs(ctx) -> None:
    for attr, what in (("strides", "stride"), ("rates", "rates")):
        n = len(ctx.attrs[attr])
        if n != 4:
            raise ValueError(f"Dilation2D requires the {what} attribute to contain 4 values, "
                             f"but got: {n}")


def _dilation_shape(ctx):
    _check_attrs(ctx)
    x = check_rank(ctx.shapes[0], 4)
    f = check_rank(ctx.shapes[1], 3)
    if x[3] is not None and f[2] is not None and x[3] != f[2]:
        raise ValueError(f"Dimensions must be equal, but are {x[3]} and {f[2]}")
    s, r = ctx.attrs["strides"], ctx.attrs["rates"]
    dims = [x[0], None, None, x[3] if x[3] is not None else f[2]]
    for i in (1, 2):
        k = f[i - 1]
        if k is not None:
            dims[i] = windowed_output_size(x[i], (k - 1) * r[i] + 1, s[i], 1,
                                           ctx.attrs["padding"])[0]
    return [TensorShape(dims)]


def _same_as(index: int):
    def shape_fn(ctx):
        _check_attrs(ctx)
        return [check_rank(ctx.shapes[index], 4 if index == 0 else 3)]
    return shape_fn


Dilation2D = op_def("Dilation2D", inputs=["input: T", "filter: T"], outputs=["output: T"],
                    attrs=_ATTRS, shape=_dilation_shape)
Dilation2DBackpropInput = op_def(
    "Dilation2DBackpropInput", inputs=["input: T", "filter: T", "out_backprop: T"],
    outputs=["in_backprop: T"], attrs=_ATTRS, shape=_same_as(0), gradient_undefined=True)
Dilation2DBackpropFilter = op_def(
    "Dilation2DBackpropFilter", inputs=["input: T", "filter: T", "out_backprop: T"],
    outputs=["filter_backprop: T"], attrs=_ATTRS, shape=_same_as(1), gradient_undefined=True)


def dilation_attrs(strides, rates, padding) -> dict:
    return {"strides": [int(s) for s in strides], "rates": [int(r) for r in rates],
            "padding": padding}


def _check_format(data_format) -> None:
    if data_format != "NHWC":
        raise ValueError(f"`data_format` values other  than 'NHWC' are not supported. "
                         f"Received: data_format={data_format}")


def _dilation2d(input, filter, strides, rates, padding, name):  # noqa: A002
    x = convert_to_tensor(input, name="input")
    f = convert_to_tensor(filter, dtype=x.dtype, name="filter")
    return apply_op(Dilation2D, [x, f], dilation_attrs(strides, rates, padding),
                    name=name).outputs[0]


@tf_export("nn.dilation2d", v1=[])
def dilation2d(input, filters, strides, padding, data_format: str = "NHWC",  # noqa: A002
               dilations=None, name: str | None = None) -> Tensor:
    """`tf.nn.dilation2d`: grayscale dilation of NHWC `input` by [h, w, depth] `filters`."""
    _check_format(data_format)
    return _dilation2d(input, filters, strides, dilations, padding, name)


@tf_export(v1=["nn.dilation2d"])
def dilation2d_v1(input, filter=None, strides=None, rates=None,  # noqa: A002
                  padding=None, name: str | None = None, filters=None,
                  dilations=None) -> Tensor:
    """`tf.compat.v1.nn.dilation2d` (`rates`: TF1's name for `dilations`)."""
    filter = deprecated_argument_lookup("filters", filters, "filter", filter)  # noqa: A001
    rates = deprecated_argument_lookup("dilations", dilations, "rates", rates)
    return _dilation2d(input, filter, strides, rates, padding, name)


def _erosion2d(value, kernel, strides, rates, padding, name):
    with composite_name(name, "erosion2d") as final:
        value = convert_to_tensor(value, name="value")
        kernel = convert_to_tensor(kernel, dtype=value.dtype, name="kernel")
        dilated = _dilation2d(negative(value), reverse(kernel, [0, 1]), strides, rates,
                              padding, final)
    return negative(dilated)


@tf_export("nn.erosion2d", v1=[])
def erosion2d(value, filters, strides, padding, data_format: str = "NHWC",
              dilations=None, name: str | None = None) -> Tensor:
    """`tf.nn.erosion2d`: grayscale erosion, -dilation2d(-value, reversed filters)."""
    _check_format(data_format)
    return _erosion2d(value, filters, strides, dilations, padding, name)


@tf_export(v1=["nn.erosion2d"])
def erosion2d_v1(value, kernel, strides, rates, padding, name: str | None = None) -> Tensor:
    """`tf.compat.v1.nn.erosion2d`."""
    return _erosion2d(value, kernel, strides, rates, padding, name)


def dilation2d_backprop_input(input, filter, out_backprop, strides, rates,  # noqa: A002
                              padding, name: str | None = None) -> Tensor:
    """The raw Dilation2DBackpropInput op."""
    return apply_op(Dilation2DBackpropInput, [input, filter, out_backprop],
                    dilation_attrs(strides, rates, padding), name=name).outputs[0]


def dilation2d_backprop_filter(input, filter, out_backprop, strides, rates,  # noqa: A002
                               padding, name: str | None = None) -> Tensor:
    """The raw Dilation2DBackpropFilter op."""
    return apply_op(Dilation2DBackpropFilter, [input, filter, out_backprop],
                    dilation_attrs(strides, rates, padding), name=name).outputs[0]
