"""Gradients of the data-flow family (TF's data_flow_grad.py): DynamicPartition and
DynamicStitch route the gradient back through the same permutation."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.ops import data_flow
from ndflow.ops.array_core import reshape, shape, size
from ndflow.ops.array_gather import gather
from ndflow.ops.array_grad import zero_filled
from ndflow.ops.array_range import range as range_
from ndflow.ops.cast import cast


@data_flow.DynamicPartition.def_grad
def _dynamic_partition_grad(op, *grads):
    data, partitions = op.inputs
    positions = reshape(range_(size(partitions)), shape(partitions))
    partitioned = data_flow.dynamic_partition(positions, partitions,
                                              op.attrs["num_partitions"])
    stitched = data_flow.dynamic_stitch(partitioned, zero_filled(grads, op.outputs))
    return [reshape(stitched, shape(data)), None]


@data_flow.DynamicStitch.def_grad
def _dynamic_stitch_grad(op, grad):
    # As TensorFlow: every value gets the gradient of the row it was written to, even one
    # that a later duplicate index overwrote.
    n = op.attrs["N"]
    indices = [i if i.dtype is dtypes.int32 else cast(i, dtypes.int32)
               for i in op.inputs[:n]]
    return [None] * n + [gather(grad, i) for i in indices]
