"""`tf.compat.v1.sparse_matmul`: TensorFlow's SparseMatMul op, a float32 matrix product of
float32 or bfloat16 operands whose `a_is_sparse`/`b_is_sparse` flags only hint that many
entries are zero (the values are those of a dense product). Kernel:
kernels/array_v1_compat.py."""

from __future__ import annotations

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.cast import cast
from ndflow.ops.linalg import _matmul_shape, matmul
from ndflow.ops.op_def import op_def


def _shape(ctx):
    if context.executing_eagerly():  # the kernel reports a mismatch, as TF's eagerly
        return [TensorShape([None, None])]
    return _matmul_shape(ctx)


SparseMatMul = op_def(
    "SparseMatMul", inputs=["a: Ta", "b: Tb"], outputs=["product: float"],
    attrs=["transpose_a: bool = false", "transpose_b: bool = false",
           "a_is_sparse: bool = false", "b_is_sparse: bool = false",
           "Ta: {float, bfloat16} = DT_FLOAT", "Tb: {float, bfloat16} = DT_FLOAT"],
    shape=_shape, doc="a @ b in float32; the sparsity flags are hints.")


@tf_export(v1=["sparse_matmul"])
def sparse_matmul(a, b, transpose_a=False, transpose_b=False, a_is_sparse=False,
                  b_is_sparse=False, name=None) -> Tensor:
    """The SparseMatMul op: `a @ b` (optionally transposed) as float32."""
    a = convert_to_tensor(a, dtype_hint=dtypes.float32, name="a")
    b = convert_to_tensor(b, dtype_hint=dtypes.float32, name="b")
    return apply_op(SparseMatMul, [a, b], {
        "transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b),
        "a_is_sparse": bool(a_is_sparse), "b_is_sparse": bool(b_is_sparse)},
        name=name or "SparseMatMul").outputs[0]


@SparseMatMul.def_grad
def _sparse_matmul_grad(op, grad):
    """TF's: each input's gradient a product of the output gradient with the other input,
    cast back to that input's type."""
    t_a, t_b = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    a, b = op.inputs

    def mm(x, y, out_dtype, ta=False, tb=False):
        prod = matmul(x, y, transpose_a=ta, transpose_b=tb)
        return prod if prod.dtype is out_dtype else cast(prod, out_dtype)

    if any(t.dtype is not dtypes.float32 for t in (a, b)):
        a32, b32 = cast(a, dtypes.float32), cast(b, dtypes.float32)
    else:
        a32, b32 = a, b
    if not t_a and not t_b:
        return [mm(grad, b32, a.dtype, tb=True), mm(a32, grad, b.dtype, ta=True)]
    if not t_a and t_b:
        return [mm(grad, b32, a.dtype), mm(grad, a32, b.dtype, ta=True)]
    if t_a and not t_b:
        return [mm(b32, grad, a.dtype, tb=True), mm(a32, grad, b.dtype)]
    return [mm(b32, grad, a.dtype, ta=True, tb=True), mm(grad, a32, b.dtype, ta=True, tb=True)]
