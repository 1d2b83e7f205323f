"""TensorFlow's collective all-reduce and all-gather ops (`CollectiveReduceV2`,
`CollectiveGatherV2`, as tf.raw_ops declares them; the gather concatenates the workers'
tensors along the first dimension, which may differ between workers).

Its kernel (ndflow/kernels/collective_ops.py) runs torch.distributed's all-reduce on the
process group ndflow.distribute.collective initialises, so the same op serves eager code,
`tf.function` graphs and TF1 Sessions (ndflow.distribute.horovod and the multi-worker
strategy build on it). Stateful, as in TensorFlow: it is never folded, merged or pruned.
"""

from __future__ import annotations

from ndflow.core.shapes import TensorShape
from ndflow.ops.op_def import op_def


def _same_shape(ctx):
    return [ctx.shapes[0]]


CollectiveReduceV2 = op_def(
    "CollectiveReduceV2",
    inputs=["input: T", "group_size: int32", "group_key: int32", "instance_key: int32",
            "ordering_token: Nordering_token * resource"],
    outputs=["data: T"],
    attrs=["T: {bfloat16, float, half, double, int32, int64}",
           "merge_op: {'Min', 'Max', 'Mul', 'Add'}", "final_op: {'Id', 'Div'}",
           "communication_hint: string = 'auto'", "timeout_seconds: float = 0",
           "is_stateless: bool = false", "Nordering_token: int >= 0 = 0",
           "max_subdivs_per_device: int = -1"],
    shape=_same_shape, stateful=True, gradient_undefined=True)


def _gathered_shape(ctx):
    s = ctx.shapes[0]
    if s.rank is None or s.rank == 0:
        return [s]
    return [TensorShape([None] + s.as_list()[1:])]  # the workers' first dims may differ


CollectiveGatherV2 = op_def(
    "CollectiveGatherV2",
    inputs=["input: T", "group_size: int32", "group_key: int32", "instance_key: int32",
            "ordering_token: Nordering_token * resource"],
    outputs=["data: T"],
    attrs=["T: {float, half, double, int32, int64}", "communication_hint: string = 'auto'",
           "timeout_seconds: float = 0", "is_stateless: bool = false",
           "Nordering_token: int >= 0 = 0"],
    shape=_gathered_shape, stateful=True, gradient_undefined=True)
