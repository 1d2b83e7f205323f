"""Matrix products: MatMul (rank 2) and BatchMatMulV2 (batched, broadcasting batch dims).

`matmul` dispatches as TF's `tf.linalg.matmul`: BatchMatMulV2 when either operand may have
rank > 2 (or unknown rank), else MatMul. Gradients follow TF's `math_grad.py`.
"""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.shapes import TensorShape, fmt
from ndflow.core.tensor import Tensor
from ndflow.ops import array
from ndflow.ops.apply import apply_op
from ndflow.ops.arithmetic import binary_operands, broadcast_gradient_args, reduce_sum
from ndflow.ops.comparison import broadcast_pair, composite_name
from ndflow.ops.op_def import input_needed, op_def

_MATMUL_TYPES = "T: {half, bfloat16, float, double, int32, int64}"


def _inner_dims_error(ctx, k1, k2) -> ValueError:
    """TF's wording: graph construction names the dims, the eager kernel the operand shapes."""
    if context.executing_eagerly():
        a, b = ctx.shapes
        return ValueError(f"Matrix size-incompatible: In[0]: {fmt(a)}, In[1]: {fmt(b)}")
    return ValueError(f"Dimensions must be equal, but are {k1} and {k2}")


def _matmul_shape(ctx):
    a, b = ctx.shapes
    ta, tb = ctx.attrs["transpose_a"], ctx.attrs["transpose_b"]
    for s in (a, b):
        if s.rank is not None and s.rank != 2:
            raise ValueError(f"Shape must be rank 2 but is rank {s.rank}")
    a = a if a.rank is not None else TensorShape([None, None])
    b = b if b.rank is not None else TensorShape([None, None])
    m, k1 = (a[1], a[0]) if ta else (a[0], a[1])
    k2, n = (b[1], b[0]) if tb else (b[0], b[1])
    if k1 is not None and k2 is not None and k1 != k2:
        raise _inner_dims_error(ctx, k1, k2)
    return [TensorShape([m, n])]


MatMul = op_def("MatMul", inputs=["a: T", "b: T"], outputs=["product: T"],
                attrs=["transpose_a: bool = false", "transpose_b: bool = false",
                       _MATMUL_TYPES, "grad_a: bool = false", "grad_b: bool = false"],
                shape=_matmul_shape)


@MatMul.def_grad
def _matmul_grad(op, grad):
    a, b = op.inputs
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    ga = gb = None
    if input_needed(op, 0):
        ga = (matmul(grad, b, transpose_b=True) if not ta and not tb else
              matmul(grad, b) if not ta else
              matmul(b, grad, transpose_b=True) if not tb else
              matmul(b, grad, transpose_a=True, transpose_b=True))
    if input_needed(op, 1):
        gb = (matmul(a, grad, transpose_a=True) if not ta and not tb else
              matmul(grad, a, transpose_a=True) if not ta else
              matmul(a, grad) if not tb else
              matmul(grad, a, transpose_a=True, transpose_b=True))
    return [ga, gb]


def _batch_matmul_shape(ctx):
    a, b = ctx.shapes
    adj_x, adj_y = ctx.attrs["adj_x"], ctx.attrs["adj_y"]
    for s in (a, b):
        if s.rank is not None and s.rank < 2:
            raise ValueError(f"Shape must be at least rank 2 but is rank {s.rank}")
    if a.rank is None or b.rank is None:
        return [TensorShape(None)]
    m, k1 = (a[-1], a[-2]) if adj_x else (a[-2], a[-1])
    k2, n = (b[-1], b[-2]) if adj_y else (b[-2], b[-1])
    if k1 is not None and k2 is not None and k1 != k2:
        raise _inner_dims_error(ctx, k1, k2)
    batch = broadcast_pair(a[:-2], b[:-2])
    return [batch.concatenate([m, n])]


BatchMatMulV2 = op_def("BatchMatMulV2", inputs=["x: T", "y: T"], outputs=["output: T"],
                       attrs=[_MATMUL_TYPES, "adj_x: bool = false", "adj_y: bool = false",
                              "grad_x: bool = false", "grad_y: bool = false"],
                       shape=_batch_matmul_shape)


@BatchMatMulV2.def_grad
def _batch_matmul_grad(op, grad):
    x, y = op.inputs
    adj_x, adj_y = op.get_attr("adj_x"), op.get_attr("adj_y")
    if not adj_x:
        if not adj_y:
            gx, gy = matmul(grad, y, adjoint_b=True), matmul(x, grad, adjoint_a=True)
        else:
            gx, gy = matmul(grad, y), matmul(grad, x, adjoint_a=True)
    elif not adj_y:
        gx, gy = matmul(y, grad, adjoint_b=True), matmul(x, grad)
    else:
        gx, gy = (matmul(y, grad, adjoint_a=True, adjoint_b=True),
                  matmul(grad, x, adjoint_a=True, adjoint_b=True))
    sx, sy = x.shape, y.shape
    maybe_batch = sx.rank is None or sx.rank > 2 or sy.rank is None or sy.rank > 2
    if not maybe_batch or (sx[:-2].is_fully_defined() and sy[:-2].is_fully_defined()
                           and sx[:-2] == sy[:-2]):
        return [gx, gy]
    if sx.is_fully_defined() and sy.is_fully_defined():
        return [_sum_batch(gx, sx, sy), _sum_batch(gy, sy, sx)]
    shape_x, shape_y = array.shape(x), array.shape(y)
    rx, ry = broadcast_gradient_args(shape_x[:-2], shape_y[:-2])
    return [array.reshape(reduce_sum(gx, rx), shape_x),
            array.reshape(reduce_sum(gy, ry), shape_y)]


def _sum_batch(g, own: TensorShape, other: TensorShape):
    """Sums `g` (batch shape = broadcast of both) over the batch dims `own` was broadcast in."""
    gb = g.shape.as_list()[:-2]
    ob = [1] * (len(gb) - (own.rank - 2)) + own.as_list()[:-2]
    axes = [i for i, (d, o) in enumerate(zip(gb, ob)) if o == 1 and d != 1]
    axes += [i for i in range(len(gb) - (own.rank - 2)) if i not in axes]
    if not axes:
        return g
    return array.reshape(reduce_sum(g, sorted(axes)), own.as_list())


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, grad_a=False,
           grad_b=False, name=None) -> Tensor:
    """`tf.linalg.matmul`: MatMul for matrices, BatchMatMulV2 for batches (rank > 2)."""
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    with composite_name(name, "MatMul") as final:
        a, b = binary_operands(a, b)
    if output_type is not None and output_type != a.dtype:
        raise NotImplementedError("matmul output_type differing from the inputs' dtype")
    ra, rb = a.shape.rank, b.shape.rank
    if ra is None or rb is None or ra > 2 or rb > 2:
        return apply_op(BatchMatMulV2, [a, b], {"adj_x": transpose_a or adjoint_a,
                                                "adj_y": transpose_b or adjoint_b},
                        name=final).outputs[0]
    return apply_op(MatMul, [a, b], {"transpose_a": transpose_a or adjoint_a,
                                     "transpose_b": transpose_b or adjoint_b},
                    name=final).outputs[0]


def batch_matmul(x, y, adj_x=False, adj_y=False, name=None) -> Tensor:
    """`tf.linalg.matmul` on batches (op BatchMatMulV2)."""
    return apply_op(BatchMatMulV2, [x, y], {"adj_x": adj_x, "adj_y": adj_y},
                    name=name).outputs[0]


__all__ = ["MatMul", "BatchMatMulV2", "matmul", "batch_matmul"]
