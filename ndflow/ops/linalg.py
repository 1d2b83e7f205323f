"""Matrix products: MatMul (rank 2) and BatchMatMulV2 (batched, broadcasting batch dims).

`matmul` dispatches as TF's `tf.linalg.matmul`: BatchMatMulV2 when either operand may have
rank > 2 (or unknown rank), else MatMul. Gradients are in linalg_grad.py.
"""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape, fmt
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op
from ndflow.ops.arithmetic import binary_operands
from ndflow.ops.comparison import broadcast_pair, composite_name
from ndflow.ops.complex_ops import conj
from ndflow.ops.op_def import op_def

_MATMUL_TYPES = "T: {half, bfloat16, float, double, int32, int64, complex64, complex128}"


def _inner_dims_error(ctx, k1, k2) -> ValueError:
    """TF's wording: graph construction names the dims, the eager kernel the operand shapes."""
    if context.executing_eagerly():
        a, b = ctx.shapes
        return ValueError(f"Matrix size-incompatible: In[0]: {fmt(a)}, In[1]: {fmt(b)}")
    return ValueError(f"Dimensions must be equal, but are {k1} and {k2}")


def _matmul_shape(ctx):
    a, b = ctx.shapes[:2]   # (fused forms read more inputs after the two operands)
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


@tf_export("linalg.matmul", "matmul")
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
    # MatMul only transposes: an adjoint of a complex matrix conjugates first, as TF does.
    a = conj(a) if adjoint_a else a
    b = conj(b) if adjoint_b else b
    return apply_op(MatMul, [a, b], {"transpose_a": transpose_a or adjoint_a,
                                     "transpose_b": transpose_b or adjoint_b},
                    name=final).outputs[0]


def batch_matmul(x, y, adj_x=False, adj_y=False, name=None) -> Tensor:
    """`tf.linalg.matmul` on batches (op BatchMatMulV2)."""
    return apply_op(BatchMatMulV2, [x, y], {"adj_x": adj_x, "adj_y": adj_y},
                    name=name).outputs[0]

