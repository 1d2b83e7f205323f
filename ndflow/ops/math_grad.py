"""Gradients of the math family (TF's math_grad.py): elementwise arithmetic, Cast, Select,
AddN, the unary ops, reductions and cumulative ops.

Imported after every op family (ndflow/ops/__init__.py), so a gradient uses any op directly.
Broadcasting binary ops sum each operand's gradient back to its shape (TF's
`_ReduceGradientArgs`): over axes decided from the static shapes when they decide them, else
at run time by BroadcastGradientArgs on the operands' Shapes.
"""

from __future__ import annotations

import functools
import math as _pymath

import numpy as np

from ndflow.core import dtypes
from ndflow.core.shapes import as_shape
from ndflow.ops import arithmetic as ar
from ndflow.ops import array_core, array_fill, math, math_cumulative, reduction
from ndflow.ops import math_trig as trig
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.cast import Cast, cast
from ndflow.ops.comparison import (
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    not_equal,
)
from ndflow.ops.complex_ops import conj

# -- broadcasting --------------------------------------------------------------------------------


def infer_reduction_axes(x_shape, y_shape):
    """TF's `_InferGradientReductionAxes`: static axes each side was broadcast along."""
    x_shape, y_shape = as_shape(x_shape), as_shape(y_shape)
    if x_shape.rank is None or y_shape.rank is None:
        return None, None
    xs, ys = x_shape.as_list(), y_shape.as_list()
    n = max(len(xs), len(ys))
    xs = [1] * (n - len(xs)) + xs
    ys = [1] * (n - len(ys)) + ys
    x_axes, y_axes = [], []
    for axis, (xd, yd) in enumerate(zip(xs, ys)):
        if xd == 1 and yd != 1:
            x_axes.append(axis)
        elif yd == 1 and xd != 1:
            y_axes.append(axis)
        elif xd is None or yd is None:
            return None, None
    return x_axes, y_axes


def _reshape_like(g, x):
    if g.shape.rank is not None and g.shape.rank == x.shape.rank:
        return g  # keep_dims sums already give x's shape
    if x.shape.is_fully_defined():
        return array_core.reshape(g, x.shape.as_list())
    return array_core.reshape(g, array_core.shape(x))


def reduce_gradient_args(x, y, gx, gy) -> tuple:
    """Sums the gradients of broadcast operands `x`, `y` back to their shapes."""
    if gx is None and gy is None:
        return gx, gy
    x_axes, y_axes = infer_reduction_axes(x.shape, y.shape)
    if x_axes is None:
        sx, sy = array_core.shape(x), array_core.shape(y)
        rx, ry = array_fill.broadcast_gradient_args(sx, sy)
        if gx is not None:
            gx = array_core.reshape(reduction.reduce_sum(gx, rx, keepdims=True), sx)
        if gy is not None:
            gy = array_core.reshape(reduction.reduce_sum(gy, ry, keepdims=True), sy)
        return gx, gy
    if gx is not None and (x_axes or x.shape.rank < y.shape.rank):
        gx = _reshape_like(reduction.reduce_sum(gx, x_axes, keepdims=True), x)
    if gy is not None and (y_axes or y.shape.rank < x.shape.rank):
        gy = _reshape_like(reduction.reduce_sum(gy, y_axes, keepdims=True), y)
    return gx, gy


def _binary_grads(op, gx, gy) -> list:
    x, y = op.inputs
    return list(reduce_gradient_args(x, y, gx, gy))


# -- binary arithmetic ---------------------------------------------------------------------------


@ar.AddV2.def_grad
@ar.Add.def_grad
def _add_grad(op, grad):
    return _binary_grads(op, grad, grad)


@ar.Sub.def_grad
def _sub_grad(op, grad):
    return _binary_grads(op, grad, ar.negative(grad))


@ar.Mul.def_grad
def _mul_grad(op, grad):
    x, y = (conj(t) for t in op.inputs)  # TF's convention for complex operands
    return _binary_grads(op, ar.multiply(grad, y), ar.multiply(x, grad))


@ar.RealDiv.def_grad
def _real_div_grad(op, grad):
    x, y = (conj(t) for t in op.inputs)
    gy = ar.multiply(grad, ar.real_div(ar.real_div(ar.negative(x), y), y))
    return _binary_grads(op, ar.real_div(grad, y), gy)


@ar.FloorDiv.def_grad
def _floor_div_grad(op, grad):
    return [None, None]


@ar.FloorMod.def_grad
def _floor_mod_grad(op, grad):
    x, y = op.inputs
    return _binary_grads(op, grad, ar.multiply(grad, ar.negative(ar.floor_div(x, y))))


@ar.DivNoNan.def_grad
def _div_no_nan_grad(op, grad):
    x, y = (conj(t) for t in op.inputs)
    gy = ar.multiply(grad, ar.div_no_nan(ar.div_no_nan(ar.negative(x), y), y))
    return _binary_grads(op, ar.div_no_nan(grad, y), gy)


@ar.Pow.def_grad
def _pow_grad(op, grad):
    x, y, z = conj(op.inputs[0]), conj(op.inputs[1]), conj(op.outputs[0])
    gx = ar.multiply(ar.multiply(grad, y), ar.pow(x, ar.subtract(y, 1)))
    # log(x) is defined for every complex x but 0, for real x only above 0
    mask = not_equal(x, 0) if x.dtype.is_complex else greater(x, 0)
    safe_x = ar.select_v2(mask, x, array_fill.ones_like(x))
    log_x = ar.select_v2(mask, ar.log(safe_x), array_fill.zeros_like(x))
    gy = ar.multiply(ar.multiply(grad, z), log_x)
    return _binary_grads(op, gx, gy)


def _max_min_grad(op, grad, selector):
    x, y = op.inputs
    zeros = array_fill.zeros_like(grad)
    xmask = selector(x, y)
    return _binary_grads(op, ar.select_v2(xmask, grad, zeros), ar.select_v2(xmask, zeros, grad))


ar.Maximum.def_grad(functools.partial(_max_min_grad, selector=greater_equal))
ar.Minimum.def_grad(functools.partial(_max_min_grad, selector=less_equal))


@ar.SquaredDifference.def_grad
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    x_grad = ar.multiply(ar.multiply(grad, 2.0), ar.subtract(x, y))
    return _binary_grads(op, x_grad, ar.negative(x_grad))


@ar.AddN.def_grad
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


@Cast.def_grad
def _cast_grad(op, grad):
    src = op.inputs[0].dtype
    differentiable = dtypes.FLOATING + dtypes.COMPLEX
    if src in differentiable and grad.dtype in differentiable:
        return [cast(grad, src)]
    return [None]


# -- Select ----------------------------------------------------------------------------------------


@ar.Select.def_grad
def _select_grad(op, grad):
    c, x = op.inputs[0], op.inputs[1]
    zeros = array_fill.zeros_like(x)
    return [None, ar.select(c, grad, zeros), ar.select(c, zeros, grad)]


@ar.SelectV2.def_grad
def _select_v2_grad(op, grad):
    c, x, y = op.inputs
    z = op.outputs[0]
    zeros = convert_to_tensor(0, grad.dtype)
    gx = ar.select_v2(c, grad, zeros)
    gy = ar.select_v2(c, zeros, grad)
    return [None, reduce_gradient_args(x, z, gx, None)[0],
            reduce_gradient_args(y, z, gy, None)[0]]


# -- unary ops ------------------------------------------------------------------------------------

_TWO_OVER_ROOT_PI = 2.0 / _pymath.sqrt(_pymath.pi)


@ar.Neg.def_grad
def _neg_grad(op, grad):
    return [ar.negative(grad)]


@ar.Log.def_grad
def _log_grad(op, grad):
    return [ar.multiply(grad, ar.reciprocal(conj(op.inputs[0])))]


@ar.Reciprocal.def_grad
def _reciprocal_grad(op, grad):
    return [ar.reciprocal_grad(op.outputs[0], grad)]


@ar.ReciprocalGrad.def_grad
def _reciprocal_grad_grad(op, grad):
    a, b = conj(op.inputs[0]), op.inputs[1]
    return [ar.multiply(ar.multiply(ar.multiply(conj(grad), -2.0), b), a),
            ar.reciprocal_grad(a, grad)]


@math.Abs.def_grad
def _abs_grad(op, grad):
    return [ar.multiply(grad, math.sign(op.inputs[0]))]


@math.Sign.def_grad
def _sign_grad(op, grad):
    return [array_fill.zeros_like(op.inputs[0])]


@math.Square.def_grad
def _square_grad(op, grad):
    return [ar.multiply(grad, ar.multiply(conj(op.inputs[0]), 2.0))]


@math.Exp.def_grad
def _exp_grad(op, grad):
    return [ar.multiply(grad, conj(op.outputs[0]))]


@math.Floor.def_grad
def _floor_grad(op, grad):
    return [None]  # TF's: zero almost everywhere, undefined at the integers


@math.Log1p.def_grad
def _log1p_grad(op, grad):
    return [ar.multiply(grad, ar.reciprocal(ar.add(conj(op.inputs[0]), 1.0)))]


@math.Erf.def_grad
def _erf_grad(op, grad):
    x = op.inputs[0]
    return [ar.multiply(ar.multiply(grad, _TWO_OVER_ROOT_PI),
                        math.exp(ar.negative(math.square(x))))]


def _from_output(grad_op):
    """The gradient of y = f(x) as TF computes it from y, by f's own *Grad op."""
    def gradient(op, grad):
        return [grad_op(op.outputs[0], grad)]
    return gradient


math.Sqrt.def_grad(_from_output(math.sqrt_grad))
math.Rsqrt.def_grad(_from_output(math.rsqrt_grad))
math.Tanh.def_grad(_from_output(math.tanh_grad))
math.Sigmoid.def_grad(_from_output(math.sigmoid_grad))


@math.SqrtGrad.def_grad
def _sqrt_grad_grad(op, grad):
    ga = ar.real_div(grad, op.inputs[0])
    return [ar.negative(ar.multiply(conj(ga), op.outputs[0])), ar.multiply(ga, 0.5)]


@math.RsqrtGrad.def_grad
def _rsqrt_grad_grad(op, grad):
    a, b = conj(op.inputs[0]), op.inputs[1]
    return [ar.multiply(ar.multiply(ar.multiply(conj(grad), -1.5), b), math.square(a)),
            math.rsqrt_grad(a, grad)]


@math.TanhGrad.def_grad
def _tanh_grad_grad(op, grad):
    a, b = (conj(t) for t in op.inputs)
    return [ar.multiply(ar.multiply(ar.multiply(grad, -2.0), b), a), math.tanh_grad(a, grad)]


@math.SigmoidGrad.def_grad
def _sigmoid_grad_grad(op, grad):
    a, b = (conj(t) for t in op.inputs)
    gb = ar.multiply(grad, b)
    return [ar.subtract(gb, ar.multiply(ar.multiply(gb, 2.0), a)), math.sigmoid_grad(a, grad)]


@math.CheckNumerics.def_grad
def _check_numerics_grad(op, grad):
    return [math.check_numerics(grad, "Not a number (NaN) or infinity (Inf) values detected in "
                                      f"gradient. {op.get_attr('message')}")]


# -- reductions ------------------------------------------------------------------------------------


def restore_reduced_dims(t, op):
    """`t` (shaped like the output of reduction `op`) reshaped to keep_dims form."""
    if op.get_attr("keep_dims"):
        return t
    x = op.inputs[0]
    axes = constant_value(op.inputs[1])
    shape = x.shape
    if shape.rank is None or axes is None:
        raise NotImplementedError("gradient of a reduction over unknown axes or rank")
    red = reduction.normalize_axes(axes, shape.rank)
    kept = [1 if i in red else d for i, d in enumerate(shape.as_list())]
    if kept.count(None) <= 1:
        return array_core.reshape(t, [-1 if d is None else d for d in kept])
    mask = convert_to_tensor(np.array([i in red for i in range(shape.rank)]))
    return array_core.reshape(t, ar.select_v2(mask, 1, array_core.shape(x)))


def reduction_grad_to_input(op, grad):
    """The gradient of a reduction's output broadcast back over its input (TF's _SumGrad)."""
    x = op.inputs[0]
    g = restore_reduced_dims(grad, op)
    shape = x.shape
    if not shape.is_fully_defined():
        return array_fill.broadcast_to(g, array_core.shape(x))
    if g.shape == shape:
        return g
    if g.shape.is_fully_defined():
        return array_fill.tile(g, [d // max(s, 1) for d, s in zip(shape.as_list(), g.shape)])
    return array_fill.broadcast_to(g, shape.as_list())


@reduction.Sum.def_grad
def _sum_grad(op, grad):
    return [reduction_grad_to_input(op, grad), None]


@reduction.Mean.def_grad
def _mean_grad(op, grad):
    sum_grad = reduction_grad_to_input(op, grad)
    in_shape, out_shape = op.inputs[0].shape, op.outputs[0].shape
    if in_shape.is_fully_defined() and out_shape.is_fully_defined():
        factor = in_shape.num_elements() // max(out_shape.num_elements(), 1)
        return [ar.real_div(sum_grad, cast(factor, sum_grad.dtype)), None]
    in_size = reduction.reduce_prod(array_core.shape(op.inputs[0]))
    out_size = ar.maximum(reduction.reduce_prod(array_core.shape(op.outputs[0])), 1)
    return [ar.real_div(sum_grad, cast(ar.floor_div(in_size, out_size), sum_grad.dtype)),
            None]


def _min_or_max_grad(op, grad):
    """TF's `_MinOrMaxGrad`: the gradient is split evenly between tied extrema."""
    x = op.inputs[0]
    y = restore_reduced_dims(op.outputs[0], op)
    grad = restore_reduced_dims(grad, op)
    indicators = cast(equal(y, x), grad.dtype)
    num_selected = reduction.reduce_sum(indicators, op.inputs[1], keepdims=True)
    return [ar.multiply(ar.real_div(indicators, num_selected), grad), None]


reduction.Max.def_grad(_min_or_max_grad)
reduction.Min.def_grad(_min_or_max_grad)


@reduction.Prod.def_grad
def _prod_grad(op, grad):
    """d prod / d x_i = product of the other entries, exact also when entries are zero."""
    x, axes = op.inputs
    grad = reduction_grad_to_input(op, grad)
    is_zero = equal(x, 0)
    ones = array_fill.ones_like(x)
    safe_x = ar.select_v2(is_zero, ones, x)
    num_zeros = reduction.reduce_sum(cast(is_zero, x.dtype), axes, keepdims=True)
    prod_nonzero = reduction.reduce_prod(safe_x, axes, keepdims=True)
    no_zero = equal(num_zeros, 0)
    one_zero = logical_and(equal(num_zeros, 1), is_zero)
    others = ar.select_v2(no_zero, ar.real_div(prod_nonzero, safe_x),
                          ar.select_v2(one_zero, ar.multiply(prod_nonzero, ones),
                                       array_fill.zeros_like(x)))
    return [ar.multiply(grad, conj(others)), None]  # TF: the conjugate direction


def _arg_min_max_grad(op, grad):
    return [None, None]


reduction.ArgMax.def_grad(_arg_min_max_grad)
reduction.ArgMin.def_grad(_arg_min_max_grad)


# -- cumulative ops --------------------------------------------------------------------------------


@math_cumulative.Cumsum.def_grad
def _cumsum_grad(op, grad):
    return [math_cumulative.cumsum(grad, op.inputs[1], exclusive=op.get_attr("exclusive"),
                                   reverse=not op.get_attr("reverse")), None]


@math_cumulative.Cumprod.def_grad
def _cumprod_grad(op, grad):
    x, axis = op.inputs
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    prod = math_cumulative.cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = math_cumulative.cumsum(ar.multiply(prod, grad), axis, exclusive=exclusive,
                                 reverse=not reverse)
    return [ar.div_no_nan(out, x), None]


@math_cumulative.CumulativeLogsumexp.def_grad
def _cumulative_logsumexp_grad(op, grad):
    # TF's: the gradient split by sign, each part carried in log space through the reverse
    # scan, so nothing overflows.
    x, axis = op.inputs
    out = op.outputs[0]
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    lowest = convert_to_tensor(grad.dtype.min, dtype=grad.dtype)
    log_pos = ar.where(greater(grad, 0.0), ar.log(grad), lowest)
    log_neg = ar.where(less(grad, 0.0), ar.log(ar.negative(grad)), lowest)

    def part(log_grad):
        return math.exp(ar.add(math_cumulative.cumulative_logsumexp(
            ar.subtract(log_grad, out), axis, exclusive=exclusive, reverse=not reverse), x))
    return [ar.subtract(part(log_pos), part(log_neg)), None]



# -- rounding, Expm1, Softsign, TruncateDiv --------------------------------------------------------


def _no_gradient(op, grad):
    return [None] * len(op.inputs)  # TF's: zero almost everywhere (a function, not a mark)


for _op in (math.Ceil, math.Round, math.Rint, ar.TruncateDiv):
    _op.def_grad(_no_gradient)


@math.Expm1.def_grad
def _expm1_grad(op, grad):
    return [ar.multiply(grad, math.exp(conj(op.inputs[0])))]


@math.Softsign.def_grad
def _softsign_grad(op, grad):
    return [math.softsign_grad(grad, op.inputs[0])]


# -- trigonometric and hyperbolic ------------------------------------------------------------------


def _one_minus_square(x):
    return ar.subtract(convert_to_tensor(1, x.dtype), math.square(x))


@trig.Sin.def_grad
def _sin_grad(op, grad):
    return [ar.multiply(grad, trig.cos(conj(op.inputs[0])))]


@trig.Cos.def_grad
def _cos_grad(op, grad):
    return [ar.multiply(ar.negative(grad), trig.sin(conj(op.inputs[0])))]


@trig.Tan.def_grad
def _tan_grad(op, grad):
    return [ar.multiply(math.square(ar.reciprocal(trig.cos(conj(op.inputs[0])))), grad)]


@trig.Asin.def_grad
def _asin_grad(op, grad):
    return [ar.multiply(grad, ar.reciprocal(math.sqrt(_one_minus_square(conj(op.inputs[0])))))]


@trig.Acos.def_grad
def _acos_grad(op, grad):
    inv = ar.reciprocal(math.sqrt(_one_minus_square(conj(op.inputs[0]))))
    return [ar.multiply(ar.negative(grad), inv)]


@trig.Atan.def_grad
def _atan_grad(op, grad):
    x = conj(op.inputs[0])
    return [ar.multiply(grad, ar.reciprocal(ar.add(convert_to_tensor(1, x.dtype),
                                                   math.square(x))))]


@trig.Atan2.def_grad
def _atan2_grad(op, grad):
    y, x = op.inputs
    grad_inv = ar.real_div(grad, ar.add(math.square(y), math.square(x)))
    return list(reduce_gradient_args(y, x, ar.multiply(x, grad_inv),
                                     ar.multiply(ar.negative(y), grad_inv)))


@trig.Sinh.def_grad
def _sinh_grad(op, grad):
    return [ar.multiply(grad, trig.cosh(conj(op.inputs[0])))]


@trig.Cosh.def_grad
def _cosh_grad(op, grad):
    return [ar.multiply(grad, trig.sinh(conj(op.inputs[0])))]


@trig.Asinh.def_grad
def _asinh_grad(op, grad):
    return [ar.real_div(grad, trig.cosh(conj(op.outputs[0])))]


@trig.Acosh.def_grad
def _acosh_grad(op, grad):
    return [ar.real_div(grad, trig.sinh(conj(op.outputs[0])))]


@trig.Atanh.def_grad
def _atanh_grad(op, grad):
    return [ar.multiply(grad, ar.reciprocal(_one_minus_square(conj(op.inputs[0]))))]


@ar.MulNoNan.def_grad
def _mul_no_nan_grad(op, grad):
    x, y = op.inputs
    return _binary_grads(op, ar.mul_no_nan(grad, y), ar.mul_no_nan(x, grad))
