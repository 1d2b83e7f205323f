"""SparseTensor times / divided by a dense tensor (TensorFlow's SparseDenseCwiseMul / Div /
Add): the dense operand broadcast to the sparse shape and read at the entries, so the result
keeps the sparse indices. They back `sp * x` and `sp / x`, as TensorFlow's SparseTensor
operators. Kernels: kernels/sparse_reductions.py; gradients:
sparse_ops_grad.py."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.cast import cast
from ndflow.ops.op_def import op_def
from ndflow.ops.sparse_tensor import SparseTensor


def _cwise_op(name: str):
    return op_def(name, inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64",
                                "dense: T"],
                  outputs=["output: T"],
                  attrs=["T: {float, double, int32, uint8, int16, int8, int64, bfloat16, half, "
                         "complex64, complex128}"],
                  shape=lambda ctx: [TensorShape([ctx.shapes[1].as_list()[0]
                                                  if ctx.shapes[1].rank else None])])


SparseDenseCwiseMul = _cwise_op("SparseDenseCwiseMul")
SparseDenseCwiseDiv = _cwise_op("SparseDenseCwiseDiv")
SparseDenseCwiseAdd = _cwise_op("SparseDenseCwiseAdd")


def _apply(op, sp: SparseTensor, dense, name=None) -> SparseTensor:
    dense = convert_to_tensor(dense, sp.dtype, name="dense")
    values = apply_op(op, [sp.indices, sp.values, sp.dense_shape, dense],
                      name=name or op.name).outputs[0]
    return SparseTensor(sp.indices, values, sp.dense_shape)


def _dense_operand(other) -> bool:
    return not isinstance(other, SparseTensor)


def _mul(self, other):
    if not _dense_operand(other):
        return NotImplemented
    return _apply(SparseDenseCwiseMul, self, other)


def _rmul(self, other):
    return NotImplemented   # TF: a number times a SparseTensor is a TypeError


def _truediv(self, other):
    if not _dense_operand(other):
        return NotImplemented
    dtype = self.dtype
    if dtype.is_integer:   # Python 3 division, as TF's: small ints to float32, others float64
        dtype = dtypes.float32 if dtype.size <= 2 else dtypes.float64
        self = SparseTensor(self.indices, cast(self.values, dtype), self.dense_shape)
        other = cast(convert_to_tensor(other), dtype)
    return _apply(SparseDenseCwiseDiv, self, other)


# TensorFlow's SparseTensor operators (a named tuple's * would repeat the tuple).
SparseTensor.__mul__ = _mul
SparseTensor.__rmul__ = _rmul
SparseTensor.__truediv__ = _truediv
SparseTensor.__div__ = _truediv
