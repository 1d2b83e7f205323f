"""Math on RaggedTensors: `tf.ragged.map_flat_values`, the elementwise operators, reductions
(`tf.reduce_sum(rt, axis=1)`: segment reductions over each row) and `tf.concat` along axis 0.

The plain ops hand ragged arguments here through ops/composite_dispatch.py.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import control_dependencies
from ndflow.core.tensor import Tensor
from ndflow.ops import arithmetic, check_ops, comparison, composite_dispatch, reduction, segment
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import expand_dims, identity
from ndflow.ops.array_core import shape as shape_op
from ndflow.ops.array_fill import ones_like
from ndflow.ops.array_gather import gather
from ndflow.ops.array_range import range as range_op
from ndflow.ops.array_slicing import concat as dense_concat
from ndflow.ops.cast import cast
from ndflow.ops.ragged_factory import constant as ragged_constant
from ndflow.ops.ragged_factory import lengths_to_splits
from ndflow.ops.ragged_tensor import RaggedTensor, _gather_rows, splits_to_segment_ids

_COMPARISONS = {"less": comparison.less, "less_equal": comparison.less_equal,
                "greater": comparison.greater, "greater_equal": comparison.greater_equal,
                "equal": comparison.equal, "not_equal": comparison.not_equal}


def _same_partitions(a: RaggedTensor, b: RaggedTensor) -> list:
    """Asserts that `a` and `b` have the same nested row splits (eagerly at once)."""
    sa, sb = a.nested_row_splits, b.nested_row_splits
    if len(sa) != len(sb):
        raise ValueError(f"Ragged tensors have different ragged ranks ({len(sa)} and "
                         f"{len(sb)}): their row partitions must match.")
    checks = []
    for x, y in zip(sa, sb):
        if x is y:
            continue
        if x.dtype is not y.dtype:
            raise ValueError("Ragged tensors have row_splits of different dtypes "
                             f"({x.dtype.name}, {y.dtype.name}).")
        if x.shape.is_fully_defined() and y.shape.is_fully_defined() and x.shape != y.shape:
            raise check_ops.InvalidArgumentError(
                None, None, "Inputs must have identical ragged splits (row_splits of shapes "
                f"{x.shape} and {y.shape}).")
        checks.append(check_ops.assert_equal(x, y, message="Inputs must have identical "
                                             "ragged splits"))
    return checks


@tf_export("ragged.map_flat_values")
def map_flat_values(op, *args, **kwargs):
    """`op` applied to the flat values of the RaggedTensors among `args`/`kwargs` (which
    must share their row partitions), the result given their partitions: the elementwise
    functions of TensorFlow work on ragged tensors this way."""
    ragged = [a for a in list(args) + list(kwargs.values()) if isinstance(a, RaggedTensor)]
    if not ragged:
        return op(*args, **kwargs)
    for other in ragged[1:]:
        _same_partitions(ragged[0], other)

    def flat(x):
        return x.flat_values if isinstance(x, RaggedTensor) else x

    result = op(*[flat(a) for a in args], **{k: flat(v) for k, v in kwargs.items()})
    return ragged[0].with_flat_values(result)


@composite_dispatch.register("ragged_elementwise")
def elementwise(op, x, y):
    """`op(x, y)` with at least one RaggedTensor: same partitions, or a dense scalar (or
    a dense value broadcasting against the inner dimensions) applied to every value."""
    if isinstance(op, str):
        op = _COMPARISONS[op]
    if isinstance(x, RaggedTensor) and isinstance(y, RaggedTensor):
        return map_flat_values(op, x, y)
    rt, dense, ragged_first = (x, y, True) if isinstance(x, RaggedTensor) else (y, x, False)
    if isinstance(dense, (list, tuple)):
        try:
            dense = ragged_constant(dense, rt.dtype)
        except (TypeError, ValueError):
            dense = convert_to_tensor(dense, rt.dtype)
        if isinstance(dense, RaggedTensor):
            return elementwise(op, rt, dense) if ragged_first else elementwise(op, dense, rt)
    dense = convert_to_tensor(dense, dtype_hint=rt.dtype)
    inner_rank = rt.flat_values.shape.rank
    if dense.shape.rank is not None and inner_rank is not None and \
            dense.shape.rank > inner_rank - 1:
        raise ValueError(f"ndflow broadcasts a dense operand of rank <= {inner_rank - 1} "
                         f"against this RaggedTensor; got rank {dense.shape.rank}. Convert "
                         "it with tf.RaggedTensor.from_tensor first.")
    flat = rt.flat_values
    out = op(flat, dense) if ragged_first else op(dense, flat)
    return rt.with_flat_values(out)


_SEGMENT = {"Sum": segment.unsorted_segment_sum, "Max": segment.unsorted_segment_max,
            "Min": segment.unsorted_segment_min, "Prod": segment.unsorted_segment_prod}
_DENSE = {"Sum": reduction.Sum, "Max": reduction.Max, "Min": reduction.Min,
          "Prod": reduction.Prod}


def _dense_reduce(kind: str):
    return lambda x, axis, keepdims: reduction.reduce(_DENSE[kind], x, axis, keepdims, None)


@composite_dispatch.register("reduce")
def ragged_reduce(kind: str, rt, axis, keepdims, name=None):
    """TensorFlow's ragged reduction: axis None reduces every value; the ragged axis 1
    reduces each row (an empty row gives the reduction's identity: 0, 1, the lowest or
    highest value); axis 0 reduces each column across rows; deeper axes reduce the values."""
    if kind == "Mean":
        return _ragged_mean(rt, axis, keepdims)
    if kind not in _SEGMENT:
        raise TypeError(f"reduce ({kind}) is not supported for RaggedTensors in ndflow.")
    dense_reduce = _dense_reduce(kind)
    if axis is None:
        return dense_reduce(rt.flat_values, None, keepdims)
    axes = sorted({_axis(a, rt) for a in (axis if isinstance(axis, (list, tuple))
                                          else [axis])}, reverse=True)
    result = rt
    for a in axes:
        result = _reduce_axis(kind, result, a, dense_reduce)
        if keepdims:
            result = _expand(result, a)
    return result


def _axis(a, rt) -> int:
    if isinstance(a, Tensor):
        a = int(a.numpy())
    rank = rt.shape.rank
    if a < 0:
        if rank is None:
            raise ValueError("axis may not be negative for a RaggedTensor of unknown rank")
        a += rank
    if rank is not None and not 0 <= a < rank:
        raise ValueError(f"axis={a} out of bounds: expected {-rank}<=axis<{rank}")
    return a


def _reduce_axis(kind, rt, axis: int, dense_reduce):
    if not isinstance(rt, RaggedTensor):
        return dense_reduce(rt, axis, False)
    op = _SEGMENT[kind]
    if axis == 0:  # one segment per column: each value's position within its row
        splits = rt.row_splits
        rowids = splits_to_segment_ids(splits)
        nvals = splits[-1]
        position = arithmetic.subtract(range_op(nvals, dtype=splits.dtype),
                                       gather(splits, rowids))
        lengths = arithmetic.subtract(splits[1:], splits[:-1])
        ncols = arithmetic.maximum(reduction.reduce_max(dense_concat(
            [lengths, convert_to_tensor([0], splits.dtype)], 0)), convert_to_tensor(
                0, splits.dtype))
        return _segment(op, rt.values, position, ncols)
    if axis == 1:
        return _segment(op, rt.values, rt.value_rowids(), rt.nrows())
    return rt.with_values(_reduce_axis(kind, rt.values, axis - 1, dense_reduce))


def _segment(op, data, segment_ids, num_segments):
    """`op` (an unsorted segment reduction) over the rows of `data`; ragged rows are reduced
    position by position, each output row as long as the longest row in its segment."""
    if not isinstance(data, RaggedTensor):
        return op(data, segment_ids, num_segments)
    dt = data.row_splits.dtype
    ids = cast(segment_ids, dt)
    longest = arithmetic.maximum(segment.unsorted_segment_max(
        data.row_lengths(), ids, num_segments), convert_to_tensor(0, dt))
    splits = lengths_to_splits(longest)
    rowids = data.value_rowids()
    position = arithmetic.subtract(range_op(data.row_splits[-1], dtype=dt),
                                   gather(data.row_splits, rowids))
    value_ids = arithmetic.add(gather(splits, gather(ids, rowids)), position)
    return RaggedTensor._from_splits(_segment(op, data.values, value_ids, splits[-1]), splits)


def _expand(x, axis: int):
    if isinstance(x, RaggedTensor):
        if axis == 0:
            raise ValueError("keepdims=True along axis 0 of a RaggedTensor is not supported "
                             "in ndflow.")
        return x.with_values(_expand(x.values, axis - 1))
    return expand_dims(x, axis)


def _ragged_mean(rt, axis, keepdims):
    """Sum / count (integers: in float64, as TensorFlow)."""
    flat = rt.flat_values
    total = ragged_reduce("Sum", rt, axis, keepdims)
    ones = rt.with_flat_values(ones_like(flat, dtype=flat.dtype if flat.dtype.is_floating
                                         else dtypes.float64))
    count = ragged_reduce("Sum", ones, axis, keepdims)
    if not flat.dtype.is_floating:
        total = cast(total, dtypes.float64) if not isinstance(total, RaggedTensor) else \
            total.with_flat_values(cast(total.flat_values, dtypes.float64))
    return elementwise(arithmetic.truediv, total, count) if \
        isinstance(total, RaggedTensor) or isinstance(count, RaggedTensor) else \
        arithmetic.truediv(total, count)


@composite_dispatch.register("concat")
def ragged_concat(values, axis):
    """`tf.concat` of ragged (and dense) tensors: along axis 0 the rows one after another,
    along axis 1 each row the concatenation of the inputs' rows."""
    axis = int(axis.numpy()) if isinstance(axis, Tensor) else int(axis)
    first = next(v for v in values if isinstance(v, RaggedTensor))
    rank = first.shape.rank
    if axis < 0 and rank is not None:
        axis += rank
    rts = [v if isinstance(v, RaggedTensor) else RaggedTensor.from_tensor(
        v, ragged_rank=first.ragged_rank, row_splits_dtype=first.row_splits.dtype)
        for v in values]
    if axis == 0:
        return _concat_rows(rts)
    if axis == 1:
        return _concat_in_rows(rts)
    raise ValueError(f"ndflow concatenates RaggedTensors along axis 0 or 1, not {axis}.")


def _splits_dtype(values):
    return next(v.row_splits.dtype for v in values if isinstance(v, RaggedTensor))


def _concat_rows(rts):
    if not all(isinstance(r, RaggedTensor) for r in rts):
        return dense_concat(rts, 0)
    if len({r.ragged_rank for r in rts}) != 1:
        raise ValueError("Ragged tensors to concatenate must have the same ragged_rank.")
    parts, offset = [], None
    for r in rts:
        s = r.row_splits if offset is None else arithmetic.add(r.row_splits[1:], offset)
        parts.append(s)
        offset = r.row_splits[-1] if offset is None else arithmetic.add(offset,
                                                                          r.row_splits[-1])
    return RaggedTensor._from_splits(_concat_rows([r.values for r in rts]),
                                     dense_concat(parts, 0))


def _concat_in_rows(rts):
    """Row i of the result: row i of each input in turn. Each input value's place in the
    result is computed, and the values gathered by the inverse of that permutation."""
    if len({r.ragged_rank for r in rts}) != 1:
        raise ValueError("Ragged tensors to concatenate must have the same ragged_rank.")
    checks = [check_ops.assert_equal(rts[0].nrows(), r.nrows(), message=f"Input tensors at "
                                     f"index 0 (=x) and {i} (=y) have incompatible shapes.")
              for i, r in enumerate(rts[1:], 1)]
    with control_dependencies([c for c in checks if c is not None]):
        lengths = [identity(r.row_lengths()) for r in rts]
    total = lengths[0]
    for length in lengths[1:]:
        total = arithmetic.add(total, length)
    splits = lengths_to_splits(total)
    before, places = arithmetic.multiply(lengths[0], 0), []
    for r, length in zip(rts, lengths):
        rowids = r.value_rowids()
        position = arithmetic.subtract(range_op(r.row_splits[-1], dtype=splits.dtype),
                                       gather(r.row_splits, rowids))
        places.append(arithmetic.add(gather(arithmetic.add(splits[:-1], before), rowids),
                                     position))
        before = arithmetic.add(before, length)
    place = dense_concat(places, 0)
    n = shape_op(place, out_type=place.dtype)[0]
    order = segment.unsorted_segment_sum(range_op(n, dtype=place.dtype), place, n)
    values = _gather_rows(_concat_rows([r.values for r in rts]), order)
    return RaggedTensor._from_splits(values, splits)
