"""Cumulative ops: Cumsum and Cumprod (`tf.cumsum`, `tf.math.cumprod`), plus DivNoNan
(`tf.math.divide_no_nan`), which Cumprod's gradient uses. Gradients follow TF's math_grad."""

from __future__ import annotations

from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import binary_operands, multiply, negative, reduce_gradient_args
from ndflow.ops.array_core import int_tensor
from ndflow.ops.comparison import broadcast_shape, unchanged_shape
from ndflow.ops.op_def import op_def


def _scan_shape(ctx):
    if ctx.shapes[1].rank not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {ctx.shapes[1].rank}")
    return unchanged_shape(ctx)


def _scan_op(name: str):
    return op_def(name, inputs=["x: T", "axis: Tidx"], outputs=["out: T"],
                  attrs=["exclusive: bool = false", "reverse: bool = false", "T: numbertype",
                         "Tidx: {int32, int64} = DT_INT32"], shape=_scan_shape)


Cumsum = _scan_op("Cumsum")
Cumprod = _scan_op("Cumprod")


def _scan(op_def_, x, axis, exclusive, reverse, name):
    x = convert_to_tensor(x, name="x")
    return apply_op(op_def_, [x, int_tensor(axis)],
                    {"exclusive": bool(exclusive), "reverse": bool(reverse)},
                    name=name or op_def_.name).outputs[0]


def cumsum(x, axis=0, exclusive: bool = False, reverse: bool = False,
           name: str | None = None) -> Tensor:
    """`tf.math.cumsum`: running sums along `axis` (exclusive: shifted by one; reverse: from
    the end)."""
    return _scan(Cumsum, x, axis, exclusive, reverse, name)


def cumprod(x, axis=0, exclusive: bool = False, reverse: bool = False,
            name: str | None = None) -> Tensor:
    """`tf.math.cumprod`: running products along `axis`."""
    return _scan(Cumprod, x, axis, exclusive, reverse, name)


@Cumsum.def_grad
def _cumsum_grad(op, grad):
    return [cumsum(grad, op.inputs[1], exclusive=op.get_attr("exclusive"),
                   reverse=not op.get_attr("reverse")), None]


@Cumprod.def_grad
def _cumprod_grad(op, grad):
    x, axis = op.inputs
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    prod = cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = cumsum(multiply(prod, grad), axis, exclusive=exclusive, reverse=not reverse)
    return [div_no_nan(out, x), None]


# -- DivNoNan ------------------------------------------------------------------------------------

DivNoNan = op_def("DivNoNan", inputs=["x: T", "y: T"], outputs=["z: T"],
                  attrs=["T: {half, float, bfloat16, double}"],
                  shape=broadcast_shape)


@DivNoNan.def_grad
def _div_no_nan_grad(op, grad):
    x, y = op.inputs
    gx = div_no_nan(grad, y)
    gy = multiply(grad, div_no_nan(div_no_nan(negative(x), y), y))
    return list(reduce_gradient_args(x, y, gx, gy))


def div_no_nan(x, y, name: str | None = None) -> Tensor:
    """`tf.math.divide_no_nan`: x / y, and 0 wherever y is 0."""
    x, y = binary_operands(x, y)
    return apply_op(DivNoNan, [x, y], name=name).outputs[0]


__all__ = ["Cumsum", "Cumprod", "DivNoNan", "cumsum", "cumprod", "div_no_nan"]
