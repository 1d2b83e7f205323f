"""Gradients of the segment reductions (TF's math_grad.py): the sum and mean spread the
gradient back over each segment's rows; max/min share it among the rows that tied for the
result; prod divides the segment's product by each row, minding zeros."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.ops import segment
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import maximum, multiply, truediv, where
from ndflow.ops.array_core import expand_dims, rank, reshape, shape
from ndflow.ops.array_fill import ones, ones_like, zeros_like
from ndflow.ops.array_gather import gather, unsorted_segment_sum
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal, greater, greater_equal, logical_and


@segment.SegmentSum.def_grad
def _segment_sum_grad(op, grad):
    return [gather(grad, op.inputs[1]), None]


@segment.SegmentMean.def_grad
def _segment_mean_grad(op, grad):
    data, ids = op.inputs
    ones_shape = concat([shape(ids), ones(expand_dims(rank(data) - 1, 0), dtypes.int32)], 0)
    counts = segment.segment_sum(ones(ones_shape, grad.dtype), ids)
    return [gather(truediv(grad, counts), ids), None]


def _segment_min_or_max_grad(op, grad):
    data, ids = op.inputs
    selected = equal(data, gather(op.outputs[0], ids))
    shared = truediv(grad, segment.segment_sum(cast(selected, grad.dtype), ids))
    return [where(selected, gather(shared, ids), zeros_like(data)), None]


segment.SegmentMax.def_grad(_segment_min_or_max_grad)
segment.SegmentMin.def_grad(_segment_min_or_max_grad)


def _prod_grad(op, grad, reduce_sum, reduce_prod, gather_rows):
    """TF's three cases per segment: no zero (divide the product by the row), one zero (the
    zero row gets the product of the others, the rest 0), several zeros (all 0)."""
    data = op.inputs[0]
    is_zero = equal(data, 0)
    num_zeros = reduce_sum(cast(is_zero, dtypes.int32))
    grad = where(greater(num_zeros, 1), zeros_like(grad), grad)
    non_zero = where(is_zero, ones_like(data), data)
    non_zero_prod = reduce_prod(non_zero)
    partial = where(is_zero, gather_rows(non_zero_prod),
                    truediv(gather_rows(op.outputs[0]), non_zero))
    return multiply(gather_rows(grad), partial)


@segment.SegmentProd.def_grad
def _segment_prod_grad(op, grad):
    ids = op.inputs[1]
    return [_prod_grad(op, grad, lambda x: segment.segment_sum(x, ids),
                       lambda x: segment.segment_prod(x, ids), lambda x: gather(x, ids)),
            None]


def _gather_drop_negatives(params, ids):
    """gather(params, ids) with zeros where an id is negative (TF's _GatherDropNegatives);
    also whether each gathered row was kept."""
    zero = convert_to_tensor(0, ids.dtype)
    gathered = gather(params, maximum(ids, zero))
    keep = greater_equal(ids, zero)
    extra = rank(gathered) - rank(keep)
    keep = reshape(keep, concat([shape(keep), ones(expand_dims(extra, 0), dtypes.int32)], 0))
    keep = logical_and(keep, ones_like(gathered, dtype=dtypes.bool))
    return where(keep, gathered, zeros_like(gathered)), keep


def _unsorted_min_or_max_grad(op, grad):
    data, ids, num = op.inputs
    gathered, keep = _gather_drop_negatives(op.outputs[0], ids)
    selected = logical_and(equal(data, gathered), keep)
    shared = truediv(grad, unsorted_segment_sum(cast(selected, grad.dtype), ids, num))
    spread, _ = _gather_drop_negatives(shared, ids)
    return [where(selected, spread, zeros_like(spread)), None, None]


segment.UnsortedSegmentMax.def_grad(_unsorted_min_or_max_grad)
segment.UnsortedSegmentMin.def_grad(_unsorted_min_or_max_grad)


@segment.UnsortedSegmentProd.def_grad
def _unsorted_segment_prod_grad(op, grad):
    ids, num = op.inputs[1], op.inputs[2]
    return [_prod_grad(op, grad, lambda x: unsorted_segment_sum(x, ids, num),
                       lambda x: segment.unsorted_segment_prod(x, ids, num),
                       lambda x: _gather_drop_negatives(x, ids)[0]), None, None]
