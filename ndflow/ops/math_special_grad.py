"""Gradients of the special functions (math_special.py), as TensorFlow's math_grad.py computes
them: Polygamma and Zeta have no gradient in their first argument (None), Igamma's in `a` is
the IgammaGradA op, and the x * f(y) ops give x's partial as 0 wherever x is 0.
"""

from __future__ import annotations

import math as _pymath

from ndflow.ops import arithmetic as ar
from ndflow.ops import array_fill, math
from ndflow.ops import math_special as sp
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal, not_equal
from ndflow.ops.math_grad import reduce_gradient_args


def _const(value, like):
    return convert_to_tensor(value, like.dtype)


@sp.Lgamma.def_grad
def _lgamma_grad(op, grad):
    return [ar.multiply(grad, sp.digamma(op.inputs[0]))]


@sp.Digamma.def_grad
def _digamma_grad(op, grad):
    x = op.inputs[0]
    return [ar.multiply(grad, sp.polygamma(_const(1, x), x))]


@sp.Polygamma.def_grad
def _polygamma_grad(op, grad):
    n, x = op.inputs
    partial_x = sp.polygamma(ar.add(n, _const(1, n)), x)
    return [None, reduce_gradient_args(n, x, None, ar.multiply(partial_x, grad))[1]]


@sp.Zeta.def_grad
def _zeta_grad(op, grad):
    x, q = op.inputs
    partial_q = ar.multiply(ar.negative(x), sp.zeta(ar.add(x, _const(1, x)), q))
    return [None, reduce_gradient_args(x, q, None, ar.multiply(partial_q, grad))[1]]


def _igamma_partials(op, grad):
    a, x = op.inputs
    partial_a = sp.igamma_grad_a(a, x)
    # exp(-x) x**(a-1) / Gamma(a), in log space: Gamma(a) can overflow.
    log_px = ar.subtract(ar.add(ar.negative(x), ar.multiply(ar.subtract(a, _const(1, a)),
                                                            ar.log(x))), sp.lgamma(a))
    return reduce_gradient_args(a, x, ar.multiply(partial_a, grad),
                                ar.multiply(math.exp(log_px), grad))


@sp.Igamma.def_grad
def _igamma_grad(op, grad):
    return list(_igamma_partials(op, grad))


@sp.Igammac.def_grad
def _igammac_grad(op, grad):
    ga, gx = _igamma_partials(op, grad)
    return [ar.negative(ga), ar.negative(gx)]


@sp.Erfc.def_grad
def _erfc_grad(op, grad):
    x = op.inputs[0]
    scale = _const(-2 / _pymath.sqrt(_pymath.pi), grad)
    return [ar.multiply(ar.multiply(grad, scale), math.exp(ar.negative(math.square(x))))]


@sp.Erfinv.def_grad
def _erfinv_grad(op, grad):
    scale = _const(_pymath.sqrt(_pymath.pi) / 2, grad)
    return [ar.multiply(ar.multiply(grad, scale), math.exp(math.square(op.outputs[0])))]


@sp.Ndtri.def_grad
def _ndtri_grad(op, grad):
    scale = _const(_pymath.sqrt(2 * _pymath.pi), grad)
    half_square = ar.real_div(math.square(op.outputs[0]), _const(2, grad))
    return [ar.multiply(ar.multiply(grad, scale), math.exp(half_square))]


def _x_partials(op, grad, partial_x_fn, partial_y):
    x, y = op.inputs
    not_zero_x = cast(not_equal(x, _const(0, x)), x.dtype)
    return list(reduce_gradient_args(x, y, ar.multiply(partial_x_fn(not_zero_x, y), grad),
                                     ar.multiply(partial_y, grad)))


@sp.Xlogy.def_grad
def _xlogy_grad(op, grad):
    x, y = op.inputs
    return _x_partials(op, grad, sp.xlogy, sp.xdivy(x, y))


@sp.Xdivy.def_grad
def _xdivy_grad(op, grad):
    x, y = op.inputs
    return _x_partials(op, grad, sp.xdivy, sp.xdivy(ar.negative(x), math.square(y)))


@sp.Xlog1py.def_grad
def _xlog1py_grad(op, grad):
    x, y = op.inputs
    return _x_partials(op, grad, sp.xlog1py, sp.xdivy(x, ar.add(y, _const(1, y))))


@sp.BesselI0.def_grad
def _bessel_i0_grad(op, grad):
    return [ar.multiply(grad, sp.bessel_i1(op.inputs[0]))]


@sp.BesselI1.def_grad
def _bessel_i1_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    # 1 at x == 0, where the general form divides by zero.
    dy_dx = ar.select_v2(equal(x, _const(0, x)), _const(1, x),
                         ar.subtract(sp.bessel_i0(x), ar.real_div(y, x)))
    return [ar.multiply(grad, dy_dx)]


@sp.BesselI0e.def_grad
def _bessel_i0e_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    return [ar.multiply(grad, ar.subtract(sp.bessel_i1e(x), ar.multiply(math.sign(x), y)))]


@sp.BesselI1e.def_grad
def _bessel_i1e_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    general = ar.subtract(sp.bessel_i0e(x),
                          ar.multiply(y, ar.add(math.sign(x), ar.reciprocal(x))))
    dy_dx = ar.select_v2(equal(x, _const(0, x)), _const(0.5, x), general)
    return [ar.multiply(grad, dy_dx)]


def _derivative(op_def, dy_dx):
    """Registers grad * dy_dx(x, y) as `op_def`'s gradient (TF's math_grad.py forms)."""
    @op_def.def_grad
    def grad_fn(op, grad):
        return [ar.multiply(grad, dy_dx(op.inputs[0], op.outputs[0]))]
    return grad_fn


_derivative(sp.BesselJ0, lambda x, y: ar.negative(sp.bessel_j1(x)))
# J1' = J0 - J1 / x, 0.5 at x == 0
_derivative(sp.BesselJ1, lambda x, y: ar.select_v2(
    equal(x, _const(0, x)), _const(0.5, x), ar.subtract(sp.bessel_j0(x), ar.real_div(y, x))))
_derivative(sp.BesselY0, lambda x, y: ar.negative(sp.bessel_y1(x)))
_derivative(sp.BesselY1, lambda x, y: ar.subtract(sp.bessel_y0(x), ar.real_div(y, x)))
_derivative(sp.BesselK0, lambda x, y: ar.negative(sp.bessel_k1(x)))
_derivative(sp.BesselK0e, lambda x, y: ar.subtract(y, sp.bessel_k1e(x)))
_derivative(sp.BesselK1, lambda x, y: ar.subtract(ar.negative(sp.bessel_k0(x)),
                                                  ar.real_div(y, x)))
_derivative(sp.BesselK1e, lambda x, y: ar.subtract(
    ar.multiply(y, ar.subtract(_const(1, x), ar.reciprocal(x))), sp.bessel_k0e(x)))


@sp.NextAfter.def_grad
def _next_after_grad(op, grad):
    x1, x2 = op.inputs
    return list(reduce_gradient_args(x1, x2, grad, array_fill.zeros_like(grad)))


@sp.Betainc.def_grad
def _betainc_grad(op, grad):
    a, b, x = op.inputs
    log_beta = ar.subtract(ar.add(sp.lgamma(a), sp.lgamma(b)), sp.lgamma(ar.add(a, b)))
    # xlog1py/xlogy: the derivative tends to 0 in a tail when a or b is 1.
    partial_x = math.exp(ar.subtract(ar.add(sp.xlog1py(ar.subtract(b, _const(1, b)),
                                                       ar.negative(x)),
                                            sp.xlogy(ar.subtract(a, _const(1, a)), x)),
                                     log_beta))
    # No gradient in a and b (TF's). The partial, shaped like the output, is summed back to
    # x's shape (TF sums against a's shape, which misses a scalar a with a tensor b).
    return [None, None,
            reduce_gradient_args(op.outputs[0], x, None, ar.multiply(partial_x, grad))[1]]
