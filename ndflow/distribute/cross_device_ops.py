"""`tf.distribute.CrossDeviceOps` and its implementations: how MirroredStrategy combines the
replicas' values. In one process every one of them adds the per-device values (ATen copies
between devices as needed); they differ in TensorFlow only in the transfer pattern."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.distribute import values as values_lib
from ndflow.distribute.reduce_util import ReduceOp, as_reduce_op
from ndflow.ops.arithmetic import truediv
from ndflow.ops.array_core import constant, identity
from ndflow.ops.cast import cast


@tf_export("distribute.CrossDeviceOps")
class CrossDeviceOps:
    """Reduces PerReplica values to Mirrored ones (one copy per destination device)."""

    def reduce(self, reduce_op, per_replica_value, destinations, options=None):
        reduce_op = as_reduce_op(reduce_op)
        parts = [p.value() if hasattr(p, "handle") else p
                 for p in values_lib.local_results(per_replica_value)]
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        if reduce_op is ReduceOp.MEAN and len(parts) > 1:
            total = truediv(total, cast(constant(len(parts)), total.dtype))
        return total if len(parts) == 1 else identity(total)

    def batch_reduce(self, reduce_op, value_destination_pairs, options=None):
        return [self.reduce(reduce_op, v, d, options) for v, d in value_destination_pairs]

    def broadcast(self, tensor, destinations):
        return tensor


@tf_export("distribute.ReductionToOneDevice")
class ReductionToOneDevice(CrossDeviceOps):
    def __init__(self, reduce_to_device=None, accumulation_fn=None):
        self.reduce_to_device = reduce_to_device
        self.accumulation_fn = accumulation_fn


@tf_export("distribute.NcclAllReduce")
class NcclAllReduce(CrossDeviceOps):
    def __init__(self, num_packs=1):
        if num_packs < 0:
            raise ValueError(f"NCCL all-reduce requires num_packs >= 0, but {num_packs} is "
                             "specified")
        self.num_packs = num_packs


@tf_export("distribute.HierarchicalCopyAllReduce")
class HierarchicalCopyAllReduce(CrossDeviceOps):
    def __init__(self, num_packs=1):
        self.num_packs = num_packs
