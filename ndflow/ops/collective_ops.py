"""TensorFlow's collective all-reduce op (`CollectiveReduceV2`, as tf.raw_ops declares it).

Its kernel (ndflow/kernels/collective_ops.py) runs torch.distributed's all-reduce on the
process group ndflow.distribute.collective initialises, so the same op serves eager code,
`tf.function` graphs and TF1 Sessions (ndflow.distribute.horovod and the multi-worker
strategy build on it). Stateful, as in TensorFlow: it is never folded, merged or pruned.
"""

from __future__ import annotations

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
