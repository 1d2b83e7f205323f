"""Gradients of the matrix products (MatMul, BatchMatMulV2) and of Einsum, as TensorFlow's
math_grad.py and `_EinsumGrad` write them.

Operands broadcast along batch dimensions get their gradients summed back over those
dimensions (statically when the shapes say how, else with BroadcastGradientArgs).
"""

from __future__ import annotations

from ndflow.core.shapes import TensorShape
from ndflow.ops import einsum, linalg
from ndflow.ops.arithmetic import add
from ndflow.ops.array_core import expand_dims, reshape, shape, stack
from ndflow.ops.array_fill import broadcast_gradient_args, broadcast_to, ones
from ndflow.ops.array_slicing import concat
from ndflow.ops.op_def import input_needed
from ndflow.ops.reduction import reduce_sum


@linalg.MatMul.def_grad
def _matmul_grad(op, grad):
    a, b = op.inputs
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    ga = gb = None
    if input_needed(op, 0):
        ga = (linalg.matmul(grad, b, transpose_b=True) if not ta and not tb else
              linalg.matmul(grad, b) if not ta else
              linalg.matmul(b, grad, transpose_b=True) if not tb else
              linalg.matmul(b, grad, transpose_a=True, transpose_b=True))
    if input_needed(op, 1):
        gb = (linalg.matmul(a, grad, transpose_a=True) if not ta and not tb else
              linalg.matmul(grad, a, transpose_a=True) if not ta else
              linalg.matmul(a, grad) if not tb else
              linalg.matmul(grad, a, transpose_a=True, transpose_b=True))
    return [ga, gb]


@linalg.BatchMatMulV2.def_grad
def _batch_matmul_grad(op, grad):
    x, y = op.inputs
    adj_x, adj_y = op.get_attr("adj_x"), op.get_attr("adj_y")
    if not adj_x:
        if not adj_y:
            gx, gy = linalg.matmul(grad, y, adjoint_b=True), linalg.matmul(x, grad, adjoint_a=True)
        else:
            gx, gy = linalg.matmul(grad, y), linalg.matmul(grad, x, adjoint_a=True)
    elif not adj_y:
        gx, gy = linalg.matmul(y, grad, adjoint_b=True), linalg.matmul(x, grad)
    else:
        gx, gy = (linalg.matmul(y, grad, adjoint_a=True, adjoint_b=True),
                  linalg.matmul(grad, x, adjoint_a=True, adjoint_b=True))
    sx, sy = x.shape, y.shape
    maybe_batch = sx.rank is None or sx.rank > 2 or sy.rank is None or sy.rank > 2
    if not maybe_batch or (sx[:-2].is_fully_defined() and sy[:-2].is_fully_defined()
                           and sx[:-2] == sy[:-2]):
        return [gx, gy]
    if sx.is_fully_defined() and sy.is_fully_defined():
        return [_sum_batch(gx, sx, sy), _sum_batch(gy, sy, sx)]
    shape_x, shape_y = shape(x), shape(y)
    rx, ry = broadcast_gradient_args(shape_x[:-2], shape_y[:-2])
    return [reshape(reduce_sum(gx, rx), shape_x),
            reshape(reduce_sum(gy, ry), shape_y)]


def _sum_batch(g, own: TensorShape, other: TensorShape):
    """Sums `g` (batch shape = broadcast of both) over the batch dims `own` was broadcast in."""
    gb = g.shape.as_list()[:-2]
    ob = [1] * (len(gb) - (own.rank - 2)) + own.as_list()[:-2]
    axes = [i for i, (d, o) in enumerate(zip(gb, ob)) if o == 1 and d != 1]
    axes += [i for i in range(len(gb) - (own.rank - 2)) if i not in axes]
    if not axes:
        return g
    return reshape(reduce_sum(g, sorted(axes)), own.as_list())


# -- Einsum --------------------------------------------------------------------------------------

def _axis_of(subs: str, label: str):
    """TF's _GetAxisFromLabel: index before the ellipsis, negative index after it."""
    splits = subs.split(einsum.ELLIPSIS)
    index = splits[0].find(label)
    if index != -1:
        return index
    if len(splits) < 2:
        return None
    index = splits[1].find(label)
    return index - len(splits[1]) if index != -1 else None


def _bcast_subshape(subs: str) -> tuple:
    start = subs.find(einsum.ELLIPSIS)
    if start == -1:
        return 0, 0
    remaining = len(subs) - (start + len(einsum.ELLIPSIS))
    return start, (-remaining if remaining > 0 else None)


def _grad_reduced(output_grad, output_subs: str, input_subs: str, input_shape,
                  reduced: list):
    """VJP of a unary einsum that sums out the labels in `reduced` (TF's _GetGradReduced)."""
    axes = [_axis_of(input_subs, c) for c in reduced]
    repeated = (len(set(input_subs)) + len(set(output_subs))
                < len(input_subs) + len(output_subs))
    without = "".join(c for c in input_subs if c not in reduced)
    if not repeated and without == output_subs:
        g = output_grad
        for ax in sorted(a for a in axes if a >= 0):
            g = expand_dims(g, ax)
        for ax in sorted((a for a in axes if a < 0), reverse=True):
            g = expand_dims(g, ax)
        return broadcast_to(g, input_shape)
    reduced_dims = stack([input_shape[ax] for ax in axes])
    grad_shape = shape(output_grad)
    full = concat([reduced_dims, grad_shape], 0)
    ones_dims = ones([len(reduced)], dtype=grad_shape.dtype)
    g = broadcast_to(reshape(output_grad, concat([ones_dims, grad_shape], 0)), full)
    return einsum.einsum_op([g], f"{''.join(reduced) + output_subs}->{input_subs}")


def _grad_wrt(output_grad, other, input_shape, input_subs, other_subs, output_subs):
    reduced = sorted(set(input_subs) - set(output_subs + other_subs + "."))
    left = "".join(c for c in input_subs if c not in reduced)
    g = einsum.einsum_op([output_grad, other], f"{output_subs},{other_subs}->{left}")
    if not reduced:
        return g
    return _grad_reduced(g, left, input_subs, input_shape, reduced)


@einsum.Einsum.def_grad
def _einsum_grad(op, grad):
    equation = op.get_attr("equation")
    input_subs, output_subs = equation.split("->")
    if len(op.inputs) == 1:
        reduced = sorted(set(input_subs) - set(output_subs + einsum.ELLIPSIS))
        if not reduced:
            return [einsum.einsum_op([grad], f"{output_subs}->{input_subs}")]
        return [_grad_reduced(grad, output_subs, input_subs, shape(op.inputs[0]),
                              reduced)]
    x_subs, y_subs = input_subs.split(",")
    if einsum.ELLIPSIS in output_subs:
        x_subs += "" if einsum.ELLIPSIS in x_subs else einsum.ELLIPSIS
        y_subs += "" if einsum.ELLIPSIS in y_subs else einsum.ELLIPSIS
    x, y = op.inputs
    x_shape, y_shape = shape(x), shape(y)
    gx = (_grad_wrt(grad, y, x_shape, x_subs, y_subs, output_subs)
          if input_needed(op, 0) else None)
    gy = (_grad_wrt(grad, x, y_shape, y_subs, x_subs, output_subs)
          if input_needed(op, 1) else None)
    if einsum.ELLIPSIS not in output_subs:
        return [gx, gy]
    bx0, bx1 = _bcast_subshape(x_subs)
    by0, by1 = _bcast_subshape(y_subs)
    sx, sy = x.shape, y.shape
    if (sx.is_fully_defined() and sy.is_fully_defined()
            and sx.as_list()[bx0:bx1] == sy.as_list()[by0:by1]):
        return [gx, gy]
    rx, ry = broadcast_gradient_args(x_shape[bx0:bx1], y_shape[by0:by1])
    if gx is not None:
        gx = reshape(reduce_sum(gx, add(rx, bx0)), x_shape)
    if gy is not None:
        gy = reshape(reduce_sum(gy, add(ry, by0)), y_shape)
    return [gx, gy]
