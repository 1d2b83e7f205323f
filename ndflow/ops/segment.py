"""Segment reductions (TF's math_ops): SegmentSum/Mean/Max/Min/Prod over sorted segment ids
(`tf.math.segment_*`), UnsortedSegmentMax/Min/Prod (`tf.math.unsorted_segment_*`; the sum is
with the gather ops), and the unsorted mean / sqrt_n that TensorFlow builds from them.

Empty segments hold 0 in the sorted ops (1 for prod); in the unsorted ones the identity of
the reduction (lowest value for max, highest for min, 1 for prod). Unsorted ops drop rows
with a negative id."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import segment_docs
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import maximum, truediv
from ndflow.ops.array_core import (
    expand_dims,
    int_input,
    int_tensor,
    rank,
    reshape,
    shape,
    static_value,
)
from ndflow.ops.array_fill import ones
from ndflow.ops.array_gather import UnsortedSegmentSum, unsorted_segment_sum
from ndflow.ops.array_slicing import concat
from ndflow.ops.comparison import composite_name
from ndflow.ops.math import sqrt
from ndflow.ops.op_def import op_def

_REAL = ("T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, uint32, "
         "uint64}")
_WITH_COMPLEX = _REAL[:-1] + ", complex64, complex128}"  # TF's numbertype
_INDEX = "Tindices: {int16, int32, int64}"


def _sorted_shape(ctx):
    data, ids = ctx.shapes
    if ids.rank not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {ids.rank}")
    if data.rank is not None and data.rank < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {data.rank}")
    value = static_value(ctx, 1)
    rows = None if value is None else (int(value[-1]) + 1 if value.size else 0)
    tail = TensorShape(None) if data.rank is None else TensorShape(data.dims[1:])
    return [TensorShape([rows]).concatenate(tail)]


def _sorted(name: str, types: str = _REAL):
    return op_def(name, inputs=["data: T", "segment_ids: Tindices"], outputs=["output: T"],
                  attrs=[types, _INDEX], shape=_sorted_shape)


SegmentSum = _sorted("SegmentSum", _WITH_COMPLEX)
SegmentMean = _sorted("SegmentMean", _WITH_COMPLEX)
SegmentMax = _sorted("SegmentMax")
SegmentMin = _sorted("SegmentMin")
SegmentProd = _sorted("SegmentProd")


def _unsorted(name: str):
    return op_def(name, inputs=["data: T", "segment_ids: Tindices",
                                "num_segments: Tnumsegments"], outputs=["output: T"],
                  attrs=[_REAL, _INDEX, "Tnumsegments: {int32, int64} = DT_INT32"],
                  shape=UnsortedSegmentSum.shape_fn)


UnsortedSegmentMax = _unsorted("UnsortedSegmentMax")
UnsortedSegmentMin = _unsorted("UnsortedSegmentMin")
UnsortedSegmentProd = _unsorted("UnsortedSegmentProd")


def _sorted_public(op, names: list, what: str):
    def segment(data, segment_ids, name: str | None = None) -> Tensor:
        return apply_op(op, [convert_to_tensor(data), int_input(segment_ids)],
                        name=name).outputs[0]
    segment.__doc__ = f"`tf.math.{names[0]}`: the {what} of each run of equal, increasing " \
                      "segment ids."
    segment.__name__ = segment.__qualname__ = names[0]
    return tf_export(f"math.{names[0]}", v1=[f"math.{names[0]}", names[0]])(segment)


segment_sum = _sorted_public(SegmentSum, ["segment_sum"], "sum")
segment_mean = _sorted_public(SegmentMean, ["segment_mean"], "mean")
segment_max = _sorted_public(SegmentMax, ["segment_max"], "maximum")
segment_min = _sorted_public(SegmentMin, ["segment_min"], "minimum")
segment_prod = _sorted_public(SegmentProd, ["segment_prod"], "product")


def _unsorted_public(op, name_: str, what: str):
    def unsorted_segment(data, segment_ids, num_segments, name: str | None = None) -> Tensor:
        return apply_op(op, [convert_to_tensor(data), int_input(segment_ids),
                             convert_to_tensor(num_segments, dtype_hint=dtypes.int32)],
                        name=name).outputs[0]
    unsorted_segment.__doc__ = f"`tf.math.{name_}`: the {what} of the rows of each of " \
                               "`num_segments` segments (rows with a negative id are dropped)."
    unsorted_segment.__name__ = unsorted_segment.__qualname__ = name_
    return tf_export(f"math.{name_}", v1=[f"math.{name_}", name_])(unsorted_segment)


unsorted_segment_max = _unsorted_public(UnsortedSegmentMax, "unsorted_segment_max", "maximum")
unsorted_segment_min = _unsorted_public(UnsortedSegmentMin, "unsorted_segment_min", "minimum")
unsorted_segment_prod = _unsorted_public(UnsortedSegmentProd, "unsorted_segment_prod",
                                         "product")
tf_export("math.unsorted_segment_sum", v1=["math.unsorted_segment_sum",
                                           "unsorted_segment_sum"])(unsorted_segment_sum)


def _unsorted_counts(data, segment_ids, num_segments):
    """How many rows each segment has, shaped to divide the segment sums (TF's
    _unsorted_segment_N)."""
    segment_ids = int_tensor(segment_ids)
    counts = unsorted_segment_sum(ones(shape(segment_ids), data.dtype), segment_ids,
                                  num_segments)
    if data.shape.rank is not None and segment_ids.shape.rank is not None:
        return reshape(counts, [-1] + [1] * (data.shape.rank - segment_ids.shape.rank))
    extra = rank(data) - rank(segment_ids)
    return reshape(counts, concat([shape(counts), ones(expand_dims(extra, 0), dtypes.int32)],
                                  0))


@tf_export("math.unsorted_segment_mean", v1=["math.unsorted_segment_mean",
                                             "unsorted_segment_mean"])
def unsorted_segment_mean(data, segment_ids, num_segments, name: str | None = None) -> Tensor:
    """`tf.math.unsorted_segment_mean`: segment sums divided by max(rows in segment, 1)."""
    with composite_name(name, "UnsortedSegmentMean") as final:
        data = convert_to_tensor(data)
        n = maximum(_unsorted_counts(data, segment_ids, num_segments), 1.0)
        total = unsorted_segment_sum(data, int_tensor(segment_ids), num_segments)
    return truediv(total, n, name=final)


@tf_export("math.unsorted_segment_sqrt_n", v1=["math.unsorted_segment_sqrt_n",
                                               "unsorted_segment_sqrt_n"])
def unsorted_segment_sqrt_n(data, segment_ids, num_segments,
                            name: str | None = None) -> Tensor:
    """`tf.math.unsorted_segment_sqrt_n`: segment sums divided by sqrt(rows in segment)."""
    with composite_name(name, "UnsortedSegmentSqrtN") as final:
        data = convert_to_tensor(data)
        n = sqrt(maximum(_unsorted_counts(data, segment_ids, num_segments), 1.0))
        total = unsorted_segment_sum(data, int_tensor(segment_ids), num_segments)
    return truediv(total, n, name=final)


attach(globals(), segment_docs.DOCS)
