"""Making RaggedTensors: the `RaggedTensor.from_*` class methods (attached to the class here,
which ops/ragged_tensor.py cannot import), `tf.ragged.constant`, `tf.ragged.range` and the
row-splits / segment-ids conversions.

`validate=True` checks the row partition as TensorFlow does, with the same messages: eagerly
an InvalidArgumentError at once, in a graph Assert ops the splits depend on.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import control_dependencies
from ndflow.core.tensor import Tensor
from ndflow.ops import arithmetic, check_ops
from ndflow.ops import math as math_ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_builders import sequence_mask
from ndflow.ops.array_core import identity, reshape
from ndflow.ops.array_core import shape as shape_op
from ndflow.ops.array_fill import broadcast_to, ones_like, zeros
from ndflow.ops.array_gather import gather, unsorted_segment_sum
from ndflow.ops.array_mask import boolean_mask
from ndflow.ops.array_range import range as range_op
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal, logical_not
from ndflow.ops.math import ceil
from ndflow.ops.math_cumulative import cumsum
from ndflow.ops.ragged_tensor import RaggedTensor, splits_to_segment_ids, values_count
from ndflow.ops.reduction import reduce_all, reduce_max

_SPLITS_DTYPES = (dtypes.int32, dtypes.int64)


def _values(values, name="values"):
    return values if isinstance(values, RaggedTensor) else convert_to_tensor(values, name=name)


def _index_tensor(x, name: str, dtype=None):
    """A row-partitioning tensor: int64 for Python values (TF's default), int32/int64 kept."""
    if isinstance(x, Tensor):
        if x.dtype not in _SPLITS_DTYPES:
            raise ValueError(f"{name} must have dtype int32 or int64, got {x.dtype.name}")
        return x if dtype is None or x.dtype is dtype else cast(x, dtype)
    arr = np.asarray(x)
    if arr.size and arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must have dtype int32 or int64, got {arr.dtype}")
    return convert_to_tensor(arr.astype(np.int64) if arr.size or arr.ndim else
                             np.zeros(arr.shape, np.int64), dtype or dtypes.int64, name=name)


def _rank1(t, name: str):
    if t.shape.rank is not None and t.shape.rank != 1:
        raise ValueError(f"Shape {tuple(t.shape.as_list())} must have rank 1 ({name})")


def _checked(t, checks: list):
    """`t` once `checks` held: eagerly they already ran (and raised); in a graph `t` is
    made to depend on their Assert ops."""
    ops = [c for c in checks if c is not None]
    if context.executing_eagerly() or not ops:
        return t
    with control_dependencies(ops):
        return identity(t)


def _match_splits_dtype(values, splits):
    if isinstance(values, RaggedTensor) and values.row_splits.dtype is not splits.dtype:
        raise ValueError("dtype mismatch between the row_splits of the inner ragged values "
                         f"({values.row_splits.dtype.name}) and the new row partition "
                         f"({splits.dtype.name}); use with_row_splits_dtype to convert.")


def _from_row_partition(values, splits, validate: bool):
    _match_splits_dtype(values, splits)
    if validate:
        nvals = values_count(values, splits.dtype)
        splits = _checked(splits, [check_ops.assert_equal(
            splits[-1:], nvals[None], message="Arguments to _from_row_partition do not "
            "form a valid RaggedTensor")])
    return RaggedTensor._from_splits(values, splits)


def from_row_splits(cls, values, row_splits, name=None, validate=True) -> RaggedTensor:
    """`values` split into rows by `row_splits` (row i: values[splits[i]:splits[i+1]])."""
    values = _values(values)
    splits = _index_tensor(row_splits, "row_splits")
    _rank1(splits, "row_splits")
    if validate:
        msg = "Arguments to from_row_splits do not form a valid RaggedTensor:"
        if splits.shape.rank == 1 and splits.shape.as_list()[0] == 0:
            raise ValueError("row_splits must have at least one element (it starts with 0)")
        splits = _checked(splits, [
            check_ops.assert_equal(splits[:1], convert_to_tensor([0], splits.dtype),
                                   message=msg + "zero"),
            check_ops.assert_non_negative(arithmetic.subtract(splits[1:], splits[:-1]),
                                          message=msg + "monotonic")])
    return _from_row_partition(values, splits, validate)


def from_row_lengths(cls, values, row_lengths, name=None, validate=True) -> RaggedTensor:
    """`values` split into rows of `row_lengths` values each."""
    values = _values(values)
    lengths = _index_tensor(row_lengths, "row_lengths")
    _rank1(lengths, "row_lengths")
    if validate:
        lengths = _checked(lengths, [check_ops.assert_non_negative(
            lengths, message="Arguments to from_row_lengths do not form a valid "
            "RowPartition.")])
    return _from_row_partition(values, lengths_to_splits(lengths), validate)


def from_row_starts(cls, values, row_starts, name=None, validate=True) -> RaggedTensor:
    """Rows starting at `row_starts` (the last row ends at the last value)."""
    values = _values(values)
    starts = _index_tensor(row_starts, "row_starts")
    _rank1(starts, "row_starts")
    splits = concat([starts, values_count(values, starts.dtype)[None]], 0)
    return from_row_splits(cls, values, splits, validate=validate)


def from_row_limits(cls, values, row_limits, name=None, validate=True) -> RaggedTensor:
    """Rows ending at `row_limits` (the first row starts at 0)."""
    values = _values(values)
    limits = _index_tensor(row_limits, "row_limits")
    _rank1(limits, "row_limits")
    return from_row_splits(cls, values, concat([zeros([1], limits.dtype), limits], 0),
                           validate=validate)


def lengths_to_splits(lengths):
    return concat([zeros([1], lengths.dtype), cumsum(lengths)], 0)


def from_value_rowids(cls, values, value_rowids, nrows=None, name=None,
                      validate=True) -> RaggedTensor:
    """`values` grouped into rows by their (sorted) row ids; `nrows` adds empty rows at the
    end (default: last id + 1)."""
    values = _values(values)
    rowids = _index_tensor(value_rowids, "value_rowids")
    _rank1(rowids, "value_rowids")
    if nrows is None:
        n = shape_op(rowids, out_type=rowids.dtype)[0]
        last = gather(concat([convert_to_tensor([-1], rowids.dtype), rowids], 0), n)
        nrows = arithmetic.add(last, 1)
    else:
        nrows = _index_tensor(nrows, "nrows", rowids.dtype)
    if validate:
        msg = "Arguments to from_value_rowids do not form a valid RowPartition."
        rowids = _checked(rowids, [
            check_ops.assert_non_negative(rowids[:1], message=msg),
            check_ops.assert_non_negative(arithmetic.subtract(rowids[1:], rowids[:-1]),
                                          message=msg),
            check_ops.assert_less(rowids[-1:], nrows[None], message=msg)])
    return _from_row_partition(values, segment_ids_to_splits(rowids, nrows), validate)


def segment_ids_to_splits(ids, nrows):
    counts = unsorted_segment_sum(ones_like(ids), ids, nrows)
    return lengths_to_splits(counts)


def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None,
                           validate=True) -> RaggedTensor:
    """Nested ragged dimensions, outermost first."""
    if isinstance(nested_row_splits, Tensor):
        raise TypeError("nested_row_splits must be a list of Tensors")
    result = _values(flat_values, "flat_values")
    for splits in reversed(list(nested_row_splits)):
        result = from_row_splits(cls, result, splits, validate=validate)
    return result


def from_nested_row_lengths(cls, flat_values, nested_row_lengths, name=None,
                            validate=True) -> RaggedTensor:
    """Nested ragged dimensions from their row lengths, outermost first."""
    result = _values(flat_values, "flat_values")
    for lengths in reversed(list(nested_row_lengths)):
        result = from_row_lengths(cls, result, lengths, validate=validate)
    return result


def from_nested_value_rowids(cls, flat_values, nested_value_rowids, nested_nrows=None,
                             name=None, validate=True) -> RaggedTensor:
    """Nested ragged dimensions from each value's row id, outermost first
    (`nested_nrows`: each dimension's row count, default its last id + 1)."""
    nested_nrows = [None] * len(nested_value_rowids) if nested_nrows is None else nested_nrows
    result = _values(flat_values, "flat_values")
    for ids, n in reversed(list(zip(nested_value_rowids, nested_nrows))):
        result = from_value_rowids(cls, result, ids, n, validate=validate)
    return result


def from_uniform_row_length(cls, values, uniform_row_length, nrows=None, validate=True,
                            name=None) -> RaggedTensor:
    """Rows of `uniform_row_length` values each (as a ragged dimension here)."""
    values = _values(values)
    dtype = values.row_splits.dtype if isinstance(values, RaggedTensor) else dtypes.int64
    length = _index_tensor(uniform_row_length, "uniform_row_length", dtype)
    nvals = values_count(values, dtype)
    if nrows is None:
        nrows = math_ops.floordiv(nvals, arithmetic.maximum(length, 1))
    nrows = _index_tensor(nrows, "nrows", dtype)
    splits = arithmetic.multiply(range_op(arithmetic.add(nrows, 1), dtype=dtype), length)
    rt = _from_row_partition(values, splits, validate)
    rt._uniform_row_length = _static_int(uniform_row_length)
    return rt


def _static_int(x):
    """`x` as a Python int when it is one (or an eager scalar), else None."""
    if isinstance(x, (int, np.integer)):
        return int(x)
    value = getattr(x, "numpy", None)
    return int(value()) if value is not None and np.ndim(value()) == 0 else None


def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None,
                row_splits_dtype=dtypes.int64) -> RaggedTensor:
    """A dense tensor as ragged: its first `ragged_rank + 1` dims become rows of rows, each
    innermost row cut to `lengths` or stripped of trailing `padding` values."""
    if lengths is not None and padding is not None:
        raise ValueError("Specify lengths or padding, but not both")
    if not isinstance(ragged_rank, int) or ragged_rank < 1:
        raise ValueError(f"ragged_rank must be greater than 0; got {ragged_rank}")
    tensor = convert_to_tensor(tensor, name="tensor")
    rank = tensor.shape.rank
    if rank is not None and rank <= ragged_rank:
        raise ValueError(f"ragged_rank must be less than the rank of tensor ({rank}); got "
                         f"{ragged_rank}")
    dtype = dtypes.as_dtype(row_splits_dtype)
    dims = shape_op(tensor, out_type=dtype)
    if ragged_rank > 1:  # the outer dimensions are uniform: merge them, recurse, re-split
        merged = reshape(tensor, concat([(dims[0] * dims[1])[None], dims[2:]], 0))
        if lengths is not None:
            lengths = reshape(_index_tensor(lengths, "lengths", dtype), [-1])
        inner = from_tensor(cls, merged, lengths, padding, ragged_rank - 1,
                            row_splits_dtype=dtype)
        return _uniform(inner, dims[0], dims[1], dtype)
    nrows, ncols = dims[0], dims[1]
    if lengths is not None:
        lengths = _index_tensor(lengths, "lengths", dtype)
        _rank1(lengths, "lengths")
        lengths = arithmetic.maximum(arithmetic.minimum(lengths, ncols),
                                     convert_to_tensor(0, dtype))
    elif padding is not None:
        padding = convert_to_tensor(padding, tensor.dtype, name="padding")
        is_pad = equal(tensor, padding)
        if rank is not None and rank > 2:
            is_pad = reduce_all(is_pad, axis=list(range(2, rank)))
        column = arithmetic.add(range_op(ncols, dtype=dtype), 1)
        last_value = arithmetic.multiply(cast(logical_not(is_pad), dtype), column[None])
        lengths = reduce_max(concat([zeros(nrows[None], dtype)[:, None], last_value], 1),
                             axis=1)
    else:
        return _uniform(reshape(tensor, concat([(nrows * ncols)[None], dims[2:]], 0)),
                        nrows, ncols, dtype)
    values = boolean_mask(tensor, sequence_mask(lengths, ncols))
    return RaggedTensor._from_splits(values, lengths_to_splits(lengths))


def _uniform(values, nrows, ncols, dtype):
    splits = arithmetic.multiply(range_op(arithmetic.add(nrows, 1), dtype=dtype), ncols)
    return RaggedTensor._from_splits(values, splits, _static_int(ncols))


for _fn in (from_row_splits, from_row_lengths, from_value_rowids, from_row_starts,
            from_row_limits, from_nested_row_splits,
            from_nested_row_lengths, from_nested_value_rowids, from_uniform_row_length,
            from_tensor):
    setattr(RaggedTensor, _fn.__name__, classmethod(_fn))


@tf_export("ragged.row_splits_to_segment_ids")
def row_splits_to_segment_ids(splits, name=None, out_type=None):
    """The row id of each value: `[0, 2, 2, 5]` -> `[0, 0, 2, 2, 2]`."""
    splits = _index_tensor(splits, "splits")
    _rank1(splits, "splits")
    return splits_to_segment_ids(splits, out_type)


@tf_export("ragged.segment_ids_to_row_splits")
def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None, name=None):
    """Row splits from sorted segment ids: `[0, 0, 2, 2, 2]` -> `[0, 2, 2, 5]`."""
    out_type = dtypes.as_dtype(out_type) if out_type is not None else \
        segment_ids.dtype if isinstance(segment_ids, Tensor) else dtypes.int64
    ids = _index_tensor(segment_ids, "segment_ids", out_type)
    _rank1(ids, "segment_ids")
    if num_segments is None:
        num_segments = arithmetic.add(arithmetic.maximum(
            reduce_max(concat([convert_to_tensor([-1], out_type), ids], 0)),
            convert_to_tensor(-1, out_type)), 1)
    num_segments = _index_tensor(num_segments, "num_segments", out_type)
    return segment_ids_to_splits(ids, num_segments)


@tf_export("ragged.range")
def ragged_range(starts, limits=None, deltas=1, dtype=None, name=None,
                 row_splits_dtype=dtypes.int64) -> RaggedTensor:
    """Row i is `tf.range(starts[i], limits[i], deltas[i])` (scalars broadcast); one
    argument means `range(0, starts[i])`, as `tf.range`."""
    if limits is None:
        starts, limits = 0, starts
    parts = [convert_to_tensor(x, dtype) if dtype is not None or isinstance(x, Tensor)
             else convert_to_tensor(x) for x in (starts, limits, deltas)]
    if dtype is None:
        order = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]
        dtype = max((p.dtype for p in parts), key=lambda d: order.index(d) if d in order else 0)
        parts = [p if p.dtype is dtype else cast(p, dtype) for p in parts]
    splits_dtype = dtypes.as_dtype(row_splits_dtype)
    sizes = [1 if p.shape.rank == 0 else p.shape.as_list()[0] if p.shape.rank == 1 else None
             for p in parts]
    if all(isinstance(k, int) for k in sizes):  # a static number of rows
        n = convert_to_tensor(max(sizes), splits_dtype)
    else:
        n = arithmetic.maximum(*[shape_op(p[None] if p.shape.rank == 0 else p,
                                          out_type=splits_dtype)[0] for p in parts[:2]])
        n = arithmetic.maximum(n, shape_op(parts[2][None] if parts[2].shape.rank == 0
                                           else parts[2], out_type=splits_dtype)[0])
    start, limit, delta = (broadcast_to(p, n[None]) for p in parts)
    check_ops.assert_none_equal(delta, convert_to_tensor(0, dtype),
                                message="Requires delta != 0")
    span = arithmetic.subtract(limit, start)
    count = arithmetic.truediv(cast(span, dtypes.float64), cast(delta, dtypes.float64))
    lengths = cast(arithmetic.maximum(ceil(count), 0.0), splits_dtype)
    splits = lengths_to_splits(lengths)
    rowids = splits_to_segment_ids(splits)
    position = arithmetic.subtract(range_op(splits[-1], dtype=splits_dtype),
                                   gather(splits, rowids))
    values = arithmetic.add(gather(start, rowids),
                            arithmetic.multiply(cast(position, dtype), gather(delta, rowids)))
    return RaggedTensor._from_splits(values, splits)


@tf_export("ragged.constant")
def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None,
             row_splits_dtype=dtypes.int64):
    """A RaggedTensor from nested Python lists; every scalar must sit at the same depth.
    Default: every list level but the innermost values is ragged (`ragged_rank` =
    depth - 1); a smaller `ragged_rank` makes the inner levels a dense `inner_shape`."""
    if isinstance(pylist, RaggedTensor):
        raise TypeError("pylist may not be a RaggedTensor")
    if not isinstance(pylist, (list, tuple, np.ndarray)):
        if ragged_rank not in (None, 0):
            raise ValueError(f"Invalid pylist={pylist!r}: incompatible with ragged_rank="
                             f"{ragged_rank}")
        return convert_to_tensor(pylist, dtype, name=name)
    values, nested_splits = nested_pieces(pylist, ragged_rank, inner_shape)
    if not nested_splits:
        return convert_to_tensor(pylist, dtype, name=name)
    splits_dtype = dtypes.as_dtype(row_splits_dtype)
    inner = tuple(inner_shape) if inner_shape is not None else \
        (np.shape(values[0]) if values else ())
    flat = convert_to_tensor(np.empty((0,) + tuple(inner), np.float32) if not values else
                             values, dtype, name=name)
    result = flat
    for splits in reversed(nested_splits):
        result = RaggedTensor._from_splits(result, convert_to_tensor(splits, splits_dtype))
    return result


def nested_pieces(pylist, ragged_rank=None, inner_shape=None):
    """(the innermost items, the row splits of each ragged level as int64 arrays) of nested
    Python lists, with TensorFlow's checks; no ragged level (ragged_rank 0): (pylist, [])."""
    scalar_depth, max_depth = _depths(pylist)
    if scalar_depth is not None and max_depth > scalar_depth:
        raise ValueError(f"Invalid pylist={pylist!r}: empty list nesting is greater than "
                         "scalar value nesting")
    depth = scalar_depth if scalar_depth is not None else max_depth
    if ragged_rank is not None and ragged_rank < 0:
        raise ValueError(f"Invalid ragged_rank={ragged_rank}: must be nonnegative")
    if ragged_rank is None:
        ragged_rank = max(1, depth - 1 - (len(inner_shape) if inner_shape else 0))
    if ragged_rank == 0:
        return pylist, []
    if scalar_depth is not None and ragged_rank >= scalar_depth:
        raise ValueError(f"Invalid pylist={pylist!r}: incompatible with ragged_rank="
                         f"{ragged_rank}")
    nested_splits, values = [], list(pylist)
    for _ in range(ragged_rank):
        lengths = [len(v) for v in values]
        nested_splits.append(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
        values = [x for v in values for x in v]
    inner = tuple(inner_shape) if inner_shape is not None else \
        (np.shape(values[0]) if values else ())
    if values and any(np.shape(v) != inner for v in values):
        raise ValueError("all flat_values must have compatible shapes (inner values have "
                         "inconsistent shapes)")
    return values, nested_splits


def _depths(pylist, depth: int = 1):
    """(depth of the scalars or None when there are none, deepest list nesting)."""
    scalar_depth, max_depth = None, depth
    for item in pylist:
        if isinstance(item, (list, tuple, np.ndarray)) and not (
                isinstance(item, np.ndarray) and item.ndim == 0):
            s, m = _depths(item, depth + 1)
        else:
            s, m = depth, depth
        if s is not None:
            if scalar_depth is not None and s != scalar_depth:
                raise ValueError("all scalar values must have the same nesting depth")
            scalar_depth = s
        max_depth = max(max_depth, m)
    return scalar_depth, max_depth
