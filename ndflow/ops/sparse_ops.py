"""The OpDefs of the sparse ops that rearrange a SparseTensor's entries (TensorFlow's
sparse_ops.cc): SparseReorder, SparseReshape, SparseAdd (+ SparseAddGrad), SparseTensorDenseAdd,
SparseConcat, SparseSlice (+ SparseSliceGrad), SparseSplit, SparseFillEmptyRows
(+ SparseFillEmptyRowsGrad) and SparseTensorDenseMatMul. Kernels: kernels/sparse_ops.py;
gradients: sparse_ops_grad.py; the public `tf.sparse.*` functions: sparse_api.py.

A SparseTensor travels as its three tensors: indices (int64 [N, rank]), values ([N]) and
dense_shape (int64 [rank]).
"""

from __future__ import annotations

from ndflow.core.shapes import TensorShape
from ndflow.ops.op_def import op_def

_NUMBER = "T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8, complex64, " \
          "complex128}"


def _rank(ctx, i):
    """The sparse rank given by a dense_shape (input `i`), or None."""
    s = ctx.shapes[i]
    return s.as_list()[0] if s.rank == 1 else None


def _entries(rank):
    return [TensorShape([None, rank]), TensorShape([None])]


SparseReorder = op_def(
    "SparseReorder", inputs=["input_indices: int64", "input_values: T", "input_shape: int64"],
    outputs=["output_indices: int64", "output_values: T"], attrs=["T: type"],
    shape=lambda ctx: [ctx.shapes[0], ctx.shapes[1]])

SparseReshape = op_def(
    "SparseReshape", inputs=["input_indices: int64", "input_shape: int64", "new_shape: int64"],
    outputs=["output_indices: int64", "output_shape: int64"],
    shape=lambda ctx: [TensorShape([ctx.shapes[0].as_list()[0] if ctx.shapes[0].rank else None,
                                    _rank(ctx, 2)]), TensorShape([_rank(ctx, 2)])],
    gradient_undefined=True)

SparseAdd = op_def(
    "SparseAdd", inputs=["a_indices: int64", "a_values: T", "a_shape: int64", "b_indices: int64",
                         "b_values: T", "b_shape: int64", "thresh: Treal"],
    outputs=["sum_indices: int64", "sum_values: T", "sum_shape: int64"],
    attrs=[_NUMBER, "Treal: {float, double, int32, int64, uint8, int16, int8, half, bfloat16}"],
    shape=lambda ctx: _entries(_rank(ctx, 2)) + [ctx.shapes[2]])

SparseAddGrad = op_def(
    "SparseAddGrad", inputs=["backprop_val_grad: T", "a_indices: int64", "b_indices: int64",
                             "sum_indices: int64"],
    outputs=["a_val_grad: T", "b_val_grad: T"], attrs=[_NUMBER],
    shape=lambda ctx: [TensorShape([ctx.shapes[1].as_list()[0] if ctx.shapes[1].rank else None]),
                       TensorShape([ctx.shapes[2].as_list()[0] if ctx.shapes[2].rank else None])],
    not_differentiable=True)

SparseTensorDenseAdd = op_def(
    "SparseTensorDenseAdd", inputs=["a_indices: Tindices", "a_values: T", "a_shape: Tindices",
                                    "b: T"],
    outputs=["output: T"], attrs=[_NUMBER, "Tindices: {int32, int64}"],
    shape=lambda ctx: [ctx.shapes[3]])

SparseConcat = op_def(
    "SparseConcat", inputs=["indices: N * int64", "values: N * T", "shapes: N * int64"],
    outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
    attrs=["concat_dim: int", "N: int >= 2", "T: type"],
    shape=lambda ctx: _entries(_rank(ctx, 2 * ctx.attrs["N"])) + [
        ctx.shapes[2 * ctx.attrs["N"]]],
    not_differentiable=True)

SparseSlice = op_def(
    "SparseSlice", inputs=["indices: int64", "values: T", "shape: int64", "start: int64",
                           "size: int64"],
    outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
    attrs=["T: type"], shape=lambda ctx: _entries(_rank(ctx, 2)) + [ctx.shapes[2]])

SparseSliceGrad = op_def(
    "SparseSliceGrad", inputs=["backprop_val_grad: T", "input_indices: int64",
                               "input_start: int64", "output_indices: int64"],
    outputs=["val_grad: T"], attrs=[_NUMBER],
    shape=lambda ctx: [TensorShape([ctx.shapes[1].as_list()[0] if ctx.shapes[1].rank
                                    else None])],
    gradient_undefined=True)

SparseSplit = op_def(
    "SparseSplit", inputs=["split_dim: int64", "indices: int64", "values: T", "shape: int64"],
    outputs=["output_indices: num_split * int64", "output_values: num_split * T",
             "output_shape: num_split * int64"],
    attrs=["num_split: int >= 1", "T: type"],
    shape=lambda ctx: ([TensorShape([None, _rank(ctx, 3)])] * ctx.attrs["num_split"]
                       + [TensorShape([None])] * ctx.attrs["num_split"]
                       + [ctx.shapes[3]] * ctx.attrs["num_split"]),
    gradient_undefined=True)

SparseFillEmptyRows = op_def(
    "SparseFillEmptyRows", inputs=["indices: int64", "values: T", "dense_shape: int64",
                                   "default_value: T"],
    outputs=["output_indices: int64", "output_values: T", "empty_row_indicator: bool",
             "reverse_index_map: int64"],
    attrs=["T: type"],
    shape=lambda ctx: _entries(_rank(ctx, 2)) + [
        TensorShape([None]), TensorShape([ctx.shapes[1].as_list()[0] if ctx.shapes[1].rank
                                          else None])])

SparseFillEmptyRowsGrad = op_def(
    "SparseFillEmptyRowsGrad", inputs=["reverse_index_map: int64", "grad_values: T"],
    outputs=["d_values: T", "d_default_value: T"], attrs=["T: type"],
    shape=lambda ctx: [ctx.shapes[0], TensorShape([])], gradient_undefined=True)

SparseTensorDenseMatMul = op_def(
    "SparseTensorDenseMatMul", inputs=["a_indices: Tindices", "a_values: T", "a_shape: int64",
                                       "b: T"],
    outputs=["product: T"],
    attrs=["T: type", "Tindices: {int32, int64} = DT_INT64", "adjoint_a: bool = false",
           "adjoint_b: bool = false"],
    shape=lambda ctx: [_matmul_shape(ctx)])


def _matmul_shape(ctx):
    b = ctx.shapes[3]
    n = None
    if b.rank == 2:
        n = b.as_list()[0 if ctx.attrs.get("adjoint_b") else 1]
    shape = ctx.value(2)
    m = None if shape is None else int(shape.reshape(-1)[1 if ctx.attrs.get("adjoint_a") else 0])
    return TensorShape([m, n])
