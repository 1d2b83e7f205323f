"""Gradients of the sparse ops of sparse_ops.py and sparse_reductions.py, as TensorFlow's
sparse_grad.py defines them: only the values (and dense operands) get gradients; indices and
shapes get None."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.ops import sparse_dense_cwise as cwise
from ndflow.ops import sparse_ops as ops
from ndflow.ops import sparse_reductions as red
from ndflow.ops.apply import apply_op
from ndflow.ops.arithmetic import multiply, subtract
from ndflow.ops.array_core import reshape, shape
from ndflow.ops.array_fill import ones_like
from ndflow.ops.array_gather import gather, unsorted_segment_sum
from ndflow.ops.array_nd import gather_nd
from ndflow.ops.array_range import range as tf_range
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_transpose import invert_permutation, transpose
from ndflow.ops.complex_ops import conj
from ndflow.ops.math import floordiv
from ndflow.ops.math_cumulative import cumprod
from ndflow.ops.reduction import reduce_prod, reduce_sum


@ops.SparseReorder.def_grad
def _reorder_grad(op, _, grad_values):
    indices, dense_shape = op.inputs[0], op.inputs[2]
    entries = tf_range(shape(indices, out_type=dtypes.int64)[0], dtype=dtypes.int64)
    _, perm = apply_op(ops.SparseReorder, [indices, entries, dense_shape]).outputs
    return [None, gather(grad_values, invert_permutation(perm)), None]


@ops.SparseAdd.def_grad
def _add_grad(op, _, grad_values, __):
    a_grad, b_grad = apply_op(ops.SparseAddGrad, [grad_values, op.inputs[0], op.inputs[3],
                                                  op.outputs[0]]).outputs
    return [None, a_grad, None, None, b_grad, None, None]


@ops.SparseTensorDenseAdd.def_grad
def _tensor_dense_add_grad(op, grad):
    return [None, gather_nd(grad, op.inputs[0]), None, grad]


@ops.SparseSlice.def_grad
def _slice_grad(op, _, grad_values, __):
    val_grad = apply_op(ops.SparseSliceGrad, [grad_values, op.inputs[0], op.inputs[3],
                                              op.outputs[0]]).outputs[0]
    return [None, val_grad, None, None, None]


@ops.SparseFillEmptyRows.def_grad
def _fill_empty_rows_grad(op, _, grad_values, __, ___):
    d_values, d_default = apply_op(ops.SparseFillEmptyRowsGrad,
                                   [op.outputs[3], grad_values]).outputs
    return [None, d_values, None, d_default]


@ops.SparseTensorDenseMatMul.def_grad
def _dense_matmul_grad(op, grad):
    indices, values, dense_shape, b = op.inputs
    adj_a, adj_b = op.attrs["adjoint_a"], op.attrs["adjoint_b"]
    # d/dB = A^H · grad (transposed back when B was used adjointed).
    b_grad = apply_op(ops.SparseTensorDenseMatMul, [indices, values, dense_shape, grad],
                      {"adjoint_a": not adj_a, "adjoint_b": False}).outputs[0]
    if adj_b:
        b_grad = transpose(b_grad, conjugate=True)
    # d/dA[i, j] = <grad[i, :], B'[j, :]> for each entry (i, j) of op(A).
    rows, cols = indices[:, 0], indices[:, 1]
    if adj_a:
        rows, cols = cols, rows
    b_rows = gather(transpose(b, conjugate=True) if adj_b else b, cols)
    parts = multiply(gather(grad, rows), conj(b_rows) if b.dtype.is_complex else b_rows)
    values_grad = reduce_sum(parts, axis=1)
    if adj_a and values.dtype.is_complex:
        values_grad = conj(values_grad)
    return [None, values_grad, None, b_grad]


@red.SparseReduceSum.def_grad
def _reduce_sum_grad(op, grad):
    """Each entry gets the gradient of the output element it was summed into."""
    indices, dense_shape, axes = op.inputs[0], op.inputs[2], op.inputs[3]
    kept = red.kept_dims_shape(dense_shape, axes)
    scale = floordiv(dense_shape, kept)
    return [None, gather_nd(reshape(grad, kept), floordiv(indices, scale)), None, None]


@red.SparseSoftmax.def_grad
def _softmax_grad(op, grad):
    """(grad - sum(grad * y) over each row) * y, the sums over explicit entries only."""
    indices, _, dense_shape = op.inputs
    y = op.outputs[0]
    sums = red.row_sums(indices, multiply(grad, y), dense_shape)
    return [None, multiply(subtract(grad, sums), y), None]


@red.SparseSparseMaximum.def_grad
def _maximum_grad(op, *grads):
    raise NotImplementedError("Gradient for SparseSparseMaximum is currently not implemented "
                              "yet.")


@red.SparseSparseMinimum.def_grad
def _minimum_grad(op, *grads):
    raise NotImplementedError("Gradient for SparseSparseMinimum is currently not implemented "
                              "yet.")


def _register_segment_grads():
    for kind, segment_ops in (("sum", (red.SparseSegmentSum, red.SparseSegmentSumWithNumSegments)),
                              ("mean", (red.SparseSegmentMean,
                                        red.SparseSegmentMeanWithNumSegments)),
                              ("sqrt_n", (red.SparseSegmentSqrtN,
                                          red.SparseSegmentSqrtNWithNumSegments))):
        for op_def in segment_ops:
            op_def.def_grad(lambda op, grad, kind=kind: red.segment_grad(kind, op, grad))


_register_segment_grads()


def _cwise_grad(op, grad, is_mul: bool):
    """TF's _SparseDenseCwiseMulOrDivGrad: the values' gradient elementwise; the dense
    operand's summed over the entries that read each of its elements."""
    indices, values, dense_shape, y = op.inputs
    y_shape = shape(y, out_type=dtypes.int64)
    rank_gap = (shape(dense_shape, out_type=dtypes.int64)[0]
                - shape(y_shape, out_type=dtypes.int64)[0])
    padded = concat([ones_like(dense_shape)[:rank_gap], y_shape], 0)
    scaled = floordiv(indices, floordiv(dense_shape, padded))[:, rank_gap:]
    y_values = gather_nd(y, scaled)
    if is_mul:
        dx, dy_values = grad * y_values, grad * values
    else:
        dx, dy_values = grad / y_values, -grad * values / (y_values * y_values)
    flat = reduce_sum(scaled * _row_major_strides(y_shape), axis=1)
    dy = reshape(unsorted_segment_sum(dy_values, flat, reduce_prod(y_shape)), y_shape)
    return [None, dx, None, dy]


def _row_major_strides(y_shape):
    # strides[i] = prod(y_shape[i + 1:]): a reversed cumulative product, exclusive
    return cumprod(y_shape, exclusive=True, reverse=True)


cwise.SparseDenseCwiseMul.def_grad(lambda op, grad: _cwise_grad(op, grad, True))
cwise.SparseDenseCwiseDiv.def_grad(lambda op, grad: _cwise_grad(op, grad, False))


@cwise.SparseDenseCwiseAdd.def_grad
def _cwise_add_grad(op, grad):
    raise NotImplementedError("Gradient for SparseDenseCwiseAdd is not implemented.")
