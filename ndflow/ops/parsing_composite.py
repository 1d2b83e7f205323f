"""The composite results of `tf.io.parse_example`: a `SparseFeature` becomes one SparseTensor
built from its index and value features, a `RaggedFeature` one RaggedTensor built from its
value feature and partition features, as TensorFlow's parsing_config does it (the op,
ParseExampleV2, parses those features as plain sparse and ragged keys).
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.ops import arithmetic
from ndflow.ops import math as math_ops
from ndflow.ops.array_core import expand_dims, reshape
from ndflow.ops.array_core import shape as shape_op
from ndflow.ops.array_gather import gather
from ndflow.ops.array_mask import boolean_mask
from ndflow.ops.array_range import range as range_op
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.comparison import greater
from ndflow.ops.math_cumulative import cumprod, cumsum
from ndflow.ops.parsing_config import RaggedFeature, SparseFeature
from ndflow.ops.ragged_math import ragged_reduce
from ndflow.ops.ragged_tensor import RaggedTensor
from ndflow.ops.reduction import reduce_sum
from ndflow.ops.sort import argsort
from ndflow.ops.sparse_tensor import SparseTensor


def ragged_outputs(single: bool, values: list, splits: list) -> list:
    """The op's ragged outputs: one example gives the values; a batch a RaggedTensor of
    one row per example."""
    if single:
        return list(values)
    return [RaggedTensor.from_row_splits(v, s, validate=False) for v, s in zip(values, splits)]


def construct(features: dict, parsed: dict) -> dict:
    """`parsed` (every parsed key) -> the result for `features`' keys."""
    updates = {}
    for key in sorted(features):
        f = features[key]
        if isinstance(f, SparseFeature):
            ids = [parsed[f.index_key]] if isinstance(f.index_key, str) else \
                [parsed[k] for k in f.index_key]
            sizes = [f.size] if isinstance(f.index_key, str) else list(f.size)
            updates[key] = _sparse_merge(ids, parsed[f.value_key], sizes, f.already_sorted)
        elif isinstance(f, RaggedFeature):
            rt = parsed[key if f.value_key is None else f.value_key]
            batched = isinstance(rt, RaggedTensor)  # a batch of examples, not one
            for p in reversed(f.partitions):
                rt = _add_batched_partition(rt, p, parsed, key, f.validate) if batched else \
                    _add_partition(rt, p, parsed, f.row_splits_dtype, f.validate)
            updates[key] = rt
    result = {k: parsed[k] for k in features if k in parsed}
    result.update(updates)
    return result


def _sparse_merge(sp_ids: list, sp_values: SparseTensor, sizes: list, already_sorted: bool):
    """TensorFlow's sparse_merge: the ids become the last index columns."""
    ids = [expand_dims(cast(s.values, dtypes.int64), 1) for s in sp_ids]
    indices = concat([sp_ids[0].indices[:, :-1]] + ids, 1)
    shape = concat([sp_ids[0].dense_shape[:-1],
                    cast(concat([[int(n) for n in sizes]], 0), dtypes.int64)], 0)
    values = sp_values.values
    if not already_sorted:  # row-major order, as sparse_reorder
        strides = cumprod(shape, exclusive=True, reverse=True)
        order = argsort(reduce_sum(arithmetic.multiply(indices, strides[None]), axis=1),
                        stable=True)
        indices, values = gather(indices, order), gather(values, order)
    return SparseTensor(indices, values, shape)


def _add_partition(values, p, parsed, splits_dtype, validate):
    """One example: `values` split by partition `p` (TF's _add_ragged_partition)."""
    if isinstance(p, RaggedFeature.UniformRowLength):
        if isinstance(values, RaggedTensor):
            return RaggedTensor.from_uniform_row_length(values, p.length, validate=validate)
        return reshape(values, concat([[-1, p.length], shape_op(values)[1:]], 0))
    t = cast(parsed[p.key], splits_dtype)
    make = {RaggedFeature.RowSplits: RaggedTensor.from_row_splits,
            RaggedFeature.RowLengths: RaggedTensor.from_row_lengths,
            RaggedFeature.RowStarts: RaggedTensor.from_row_starts,
            RaggedFeature.RowLimits: RaggedTensor.from_row_limits,
            RaggedFeature.ValueRowIds: RaggedTensor.from_value_rowids}[type(p)]
    return make(values, t, validate=validate)


def _drop_first_of_each_row(rt: RaggedTensor) -> RaggedTensor:
    """rt[:, 1:] for a ragged_rank-1 tensor."""
    starts = rt.row_splits[:-1]
    rowids = rt.value_rowids()
    position = arithmetic.subtract(range_op(rt.row_splits[-1], dtype=rt.row_splits.dtype),
                                   gather(starts, rowids))
    values = boolean_mask(rt.values, greater(position, 0))
    lengths = arithmetic.maximum(arithmetic.subtract(rt.row_lengths(), 1), 0)
    return RaggedTensor.from_row_lengths(values, lengths, validate=False)


def _add_batched_partition(rt, p, parsed, key, validate):
    """A batch: each example's rows partitioned by its own partition values (TF's
    _add_batched_ragged_partition)."""
    if isinstance(p, RaggedFeature.UniformRowLength):
        if rt.ragged_rank > 1:
            inner = RaggedTensor.from_uniform_row_length(rt.values, p.length,
                                                         validate=validate)
        else:
            inner = reshape(rt.values, concat([[-1, p.length], shape_op(rt.values)[1:]], 0))
        return RaggedTensor.from_row_splits(inner, math_ops.floordiv(rt.row_splits,
                                                                        p.length),
                                            validate=validate)
    part = parsed[p.key]
    if part.values.dtype is not rt.row_splits.dtype:
        part = part.with_values(cast(part.values, rt.row_splits.dtype))
    if isinstance(p, (RaggedFeature.RowSplits, RaggedFeature.RowLimits)):
        if isinstance(p, RaggedFeature.RowSplits):
            part = _drop_first_of_each_row(part)
        limits = arithmetic.add(part.values, gather(rt.row_splits[:-1], part.value_rowids()))
        return part.with_values(RaggedTensor.from_row_limits(rt.values, limits,
                                                             validate=validate))
    if isinstance(p, RaggedFeature.RowStarts):
        starts = arithmetic.add(part.values, gather(rt.row_splits[:-1], part.value_rowids()))
        return part.with_values(RaggedTensor.from_row_starts(rt.values, starts,
                                                             validate=validate))
    if isinstance(p, RaggedFeature.RowLengths):
        return part.with_values(RaggedTensor.from_row_lengths(rt.values, part.values,
                                                              validate=validate))
    nrows = arithmetic.maximum(ragged_reduce("Max", part + 1, 1, False), 0)
    rowids = arithmetic.add(part.values, gather(cumsum(nrows, exclusive=True),
                                                part.value_rowids()))
    return RaggedTensor.from_row_lengths(
        RaggedTensor.from_value_rowids(rt.values, rowids, validate=validate), nrows,
        validate=validate)
