"""Array ops that search values: Unique / UniqueWithCounts (`tf.unique`), LowerBound /
UpperBound (`tf.searchsorted`) and Bucketize (Keras' Discretization layer)."""

from __future__ import annotations

import collections

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import reshape, shape
from ndflow.ops.op_def import op_def


def _unique_outputs(with_counts: bool):
    def infer(ctx):
        x = ctx.shapes[0]
        if x.rank not in (None, 1) and not context.executing_eagerly():  # eager: the kernel
            raise ValueError(f"Shape must be rank 1 but is rank {x.rank}")
        out = [TensorShape([None]), TensorShape([x.dims[0] if x.rank else None])]
        return out + [TensorShape([None])] if with_counts else out
    return infer


_UNIQUE_ATTRS = ["T: type", "out_idx: {int32, int64} = DT_INT32"]
Unique = op_def("Unique", inputs=["x: T"], outputs=["y: T", "idx: out_idx"],
                attrs=_UNIQUE_ATTRS, shape=_unique_outputs(False), gradient_undefined=True)
UniqueWithCounts = op_def("UniqueWithCounts", inputs=["x: T"],
                          outputs=["y: T", "idx: out_idx", "count: out_idx"],
                          attrs=_UNIQUE_ATTRS, shape=_unique_outputs(True),
                          gradient_undefined=True)


# TF's result types: namedtuples (`y, idx = tf.unique(x)` or `.y`, `.idx`).
UniqueResult = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCountsResult = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


@tf_export("unique")
def unique(x, out_idx=dtypes.int32, name: str | None = None) -> UniqueResult:
    """`tf.unique`: the distinct values of a 1-D tensor in order of first appearance, and
    for each element the index of its value in them."""
    out = apply_op(Unique, [convert_to_tensor(x)], {"out_idx": dtypes.as_dtype(out_idx)},
                   name=name).outputs
    return UniqueResult(*out)


@tf_export("unique_with_counts")
def unique_with_counts(x, out_idx=dtypes.int32, name: str | None = None):
    """`tf.unique_with_counts`: `tf.unique` plus how often each distinct value occurs."""
    out = apply_op(UniqueWithCounts, [convert_to_tensor(x)],
                   {"out_idx": dtypes.as_dtype(out_idx)}, name=name).outputs
    return UniqueWithCountsResult(*out)


def _bound_shape(ctx):
    seq, values = ctx.shapes
    if seq.rank is not None and values.rank is not None:
        if seq.rank != values.rank:
            raise ValueError(f"Shape must be rank {seq.rank} but is rank {values.rank}")
        if not TensorShape(seq.as_list()[:-1]).is_compatible_with(
                TensorShape(values.as_list()[:-1])):
            raise ValueError(f"Dimensions of sorted_sequence {seq} and values {values} must "
                             "be equal except the last one")
    return [values]


_BOUND = dict(inputs=["sorted_inputs: T", "values: T"], outputs=["output: out_type"],
              attrs=["T: type", "out_type: {int32, int64} = DT_INT32"], shape=_bound_shape,
              gradient_undefined=True)
LowerBound = op_def("LowerBound", **_BOUND)
UpperBound = op_def("UpperBound", **_BOUND)

Bucketize = op_def(
    "Bucketize", inputs=["input: T"], outputs=["output: int32"],
    attrs=["T: {int32, int64, float, double}", "boundaries: list(float)"],
    shape=lambda ctx: [ctx.shapes[0]], gradient_undefined=True,
    doc="The bucket of each value: how many of the sorted `boundaries` are <= it.")


@tf_export("searchsorted")
def searchsorted(sorted_sequence, values, side: str = "left", out_type=dtypes.int32,
                 name: str | None = None) -> Tensor:
    """`tf.searchsorted`: for each value, where it would go in the sorted innermost rows of
    `sorted_sequence` (`side="left"`: before equal values, "right": after them)."""
    sorted_sequence = convert_to_tensor(sorted_sequence)
    values = convert_to_tensor(values, dtype=sorted_sequence.dtype)
    if side not in ("left", "right"):
        raise ValueError(f"Argument `side` must be either 'right' or 'left'. Received: `side` "
                         f"= '{side}'.")
    op = LowerBound if side == "left" else UpperBound
    # As TF: searched as 2-D rows ([-1, sequence length] and [-1, values per row]).
    rows = apply_op(op, [reshape(sorted_sequence, [-1, shape(sorted_sequence)[-1]]),
                         reshape(values, [-1, shape(values)[-1]])],
                    {"out_type": dtypes.as_dtype(out_type)}, name=name).outputs[0]
    return reshape(rows, shape(values))
