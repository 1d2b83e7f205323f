"""Gradients of Dawsn, Expint, FresnelCos, FresnelSin and Spence (math_special_cephes.py), as
TensorFlow's math_grad.py builds them, operation for operation:

    dawsn:       grad * (1 - 2 x y)             (y the op's output)
    expint:      grad * exp(x) / x              (the product first, then the division)
    fresnel_cos: grad * cos(pi/2 * x**2)
    fresnel_sin: grad * sin(pi/2 * x**2)
    spence:      grad * log(x) / (1 - x), and -grad at x == 1 (where that is 0/0)
"""

from __future__ import annotations

import math as _pymath

from ndflow.ops import arithmetic as ar
from ndflow.ops import math, math_trig
from ndflow.ops import math_special_cephes as sc
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_fill import ones_like
from ndflow.ops.comparison import equal


def _const(value, like):
    return convert_to_tensor(value, like.dtype)


@sc.Dawsn.def_grad
def _dawsn_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    two_xy = ar.multiply(ar.multiply(_const(2, x), x), y)
    return [ar.multiply(grad, ar.subtract(_const(1.0, x), two_xy))]


@sc.Expint.def_grad
def _expint_grad(op, grad):
    x = op.inputs[0]
    return [ar.real_div(ar.multiply(grad, math.exp(x)), x)]


def _half_pi_x2(x):
    return ar.multiply(_const(_pymath.pi / 2.0, x), math.square(x))


@sc.FresnelCos.def_grad
def _fresnel_cos_grad(op, grad):
    return [ar.multiply(grad, math_trig.cos(_half_pi_x2(op.inputs[0])))]


@sc.FresnelSin.def_grad
def _fresnel_sin_grad(op, grad):
    return [ar.multiply(grad, math_trig.sin(_half_pi_x2(op.inputs[0])))]


@sc.Spence.def_grad
def _spence_grad(op, grad):
    x = op.inputs[0]
    partial_x = ar.real_div(math.log(x), ar.subtract(_const(1, x), x))
    partial_x = ar.select_v2(equal(x, _const(1.0, x)), ar.negative(ones_like(x)), partial_x)
    return [ar.multiply(grad, partial_x)]
