"""Neural-network ops: activations, convolution, pooling, normalization, losses."""

from __future__ import annotations

from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import op_def

_FLOAT = "T: {half, bfloat16, float, double}"
_REAL = "T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8}"

Relu = op_def("Relu", inputs=["features: T"], outputs=["activations: T"], attrs=[_REAL],
              shape=lambda ctx: [ctx.shapes[0]])
ReluGrad = op_def("ReluGrad", inputs=["gradients: T", "features: T"], outputs=["backprops: T"],
                  attrs=[_REAL], shape=lambda ctx: [ctx.shapes[0]])


@Relu.def_grad
def _relu_grad(op, grad):
    return [apply_op(ReluGrad, [grad, op.outputs[0]]).outputs[0]]


def relu(features, name=None):
    return apply_op(Relu, [features], name=name).outputs[0]
