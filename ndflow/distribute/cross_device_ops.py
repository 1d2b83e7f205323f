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
    """Combines the replicas' values by gathering them on one device and reducing there.

    In one ndflow process every cross-device op adds the per-device values the same way; the
    arguments are kept for compatibility.

    Args:
      reduce_to_device: the device to reduce on (None: the first destination).
      accumulation_fn: the function summing a list of tensors (TF's default `tf.math.add_n`).

    Example:
      >>> strategy = tf.distribute.MirroredStrategy(
      ...     ["/cpu:0"], cross_device_ops=tf.distribute.ReductionToOneDevice())
      >>> float(strategy.reduce("SUM", strategy.run(lambda: tf.constant(2.0)), axis=None))
      2.0
    """
    def __init__(self, reduce_to_device=None, accumulation_fn=None):
        self.reduce_to_device = reduce_to_device
        self.accumulation_fn = accumulation_fn


def _packed_doc(how: str, name: str, num_packs_rest: str) -> str:
    """The docstring of the all-reduce `name` (combining by `how`) taking `num_packs`."""
    return f"""Combines the replicas' values with {how}.

    In one ndflow process the values are added directly; `num_packs` is kept for
    compatibility.

    Args:
      num_packs: how many packs the gradients are grouped into{num_packs_rest}

    Example:
      >>> strategy = tf.distribute.MirroredStrategy(
      ...     ["/cpu:0"], cross_device_ops=tf.distribute.{name}())
      >>> float(strategy.reduce("SUM", strategy.run(lambda: tf.constant(2.0)), axis=None))
      2.0
    """


@tf_export("distribute.NcclAllReduce")
class NcclAllReduce(CrossDeviceOps):
    __doc__ = _packed_doc("an NCCL all-reduce (TF's GPU default)", "NcclAllReduce", """ (>= 0).

    Raises:
      ValueError: if `num_packs` is negative.""")

    def __init__(self, num_packs=1):
        if num_packs < 0:
            raise ValueError(f"NCCL all-reduce requires num_packs >= 0, but {num_packs} is "
                             "specified")
        self.num_packs = num_packs


@tf_export("distribute.HierarchicalCopyAllReduce")
class HierarchicalCopyAllReduce(CrossDeviceOps):
    __doc__ = _packed_doc("a hierarchical copy (TF's for DGX-1-like topologies)",
                          "HierarchicalCopyAllReduce", ".")

    def __init__(self, num_packs=1):
        self.num_packs = num_packs
