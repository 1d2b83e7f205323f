"""ndflow's fused exact GELU for Keras' "gelu" activation: `_Gelu` and its gradient
`_GeluGrad` (TensorFlow has no such op: `tf.nn.gelu` composes 0.5 x erfc(-x / sqrt 2) from
ops, three forward and about seven in its gradient; this file's ops run ATen's GELU, one pass
each way). `tf.nn.gelu` itself stays TensorFlow's composite; Keras' activation takes these
ops except while a SavedModel is written (keras/activation_functions.py), so files keep
TensorFlow's ops. `_GeluGrad`'s own gradient differentiates the same derivative written as
ops, so gradients of gradients still work."""

from __future__ import annotations

import math as _pymath

from ndflow.core import context
from ndflow.ops import arithmetic, math, math_special
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import op_def

_T = "T: {bfloat16, half, float, double}"

Gelu = op_def("_Gelu", inputs=["features: T"], outputs=["activations: T"], attrs=[_T],
              shape=lambda ctx: [ctx.shapes[0]],
              doc="x * Phi(x), Phi the standard normal CDF (the exact GELU).")

GeluGrad = op_def("_GeluGrad", inputs=["gradients: T", "features: T"],
                  outputs=["backprops: T"], attrs=[_T], shape=lambda ctx: [ctx.shapes[1]],
                  doc="_Gelu's gradient: gradients * (Phi(x) + x phi(x)).")


def gelu(x):
    return apply_op(Gelu, [x], {}, name="Gelu").outputs[0]


@Gelu.def_grad
def _gelu_grad(op, dy):
    return [apply_op(GeluGrad, [dy, op.inputs[0]], {}, name="GeluGrad").outputs[0]]


def gelu_backward(dy, x):
    """_GeluGrad written as ops: dy (Phi(x) + x phi(x)), Phi(x) = erfc(-x / sqrt 2) / 2."""
    cdf = arithmetic.multiply(math_special.erfc(arithmetic.multiply(x, -_pymath.sqrt(0.5))),
                              0.5)
    pdf = arithmetic.multiply(math.exp(arithmetic.multiply(arithmetic.multiply(x, x), -0.5)),
                              1.0 / _pymath.sqrt(2.0 * _pymath.pi))
    return arithmetic.multiply(dy, arithmetic.add(cdf, arithmetic.multiply(x, pdf)))


@GeluGrad.def_grad
def _gelu_grad_grad(op, grad):
    d_dy, d_x = context.hooks.vjp(lambda dy, x: [gelu_backward(dy, x)], list(op.inputs),
                                  [grad])
    return [d_dy, d_x]
