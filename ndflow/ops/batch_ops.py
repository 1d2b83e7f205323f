"""TensorFlow's BatchFunction op, behind `tf.nondifferentiable_batch_function`
(runtime/batch_function.py, which also registers its kernel: running `f` needs a Plan).

    BatchFunction(in_tensors: Tin, captured_tensors: Tcaptured) -> out_tensors: Tout
        attr f: the function, run on the concatenation of the in_tensors of concurrent calls
        (padded to an allowed batch size), each call getting its rows of every output

As in TensorFlow the op is not stateful and has no gradient; its outputs' shapes are unknown
statically (a batch's size is known only when it runs).
"""

from __future__ import annotations

from ndflow.core.shapes import TensorShape
from ndflow.ops.op_def import op_def

BatchFunction = op_def(
    "BatchFunction", inputs=["in_tensors: Tin", "captured_tensors: Tcaptured"],
    outputs=["out_tensors: Tout"],
    attrs=["f: func", "num_batch_threads: int", "max_batch_size: int",
           "batch_timeout_micros: int", "max_enqueued_batches: int = 10",
           "allowed_batch_sizes: list(int) = []", "container: string = ''",
           "shared_name: string = ''", "batching_queue: string = ''",
           "low_priority_max_batch_size: int = 0", "low_priority_batch_timeout_micros: int = 0",
           "low_priority_allowed_batch_sizes: list(int) = []",
           "low_priority_max_enqueued_batches: int = 0",
           "mixed_priority_policy: {'low_priority_padding_with_max_batch_size', "
           "'low_priority_padding_with_next_allowed_batch_size', 'priority_isolation', "
           "'priority_merge'} = 'low_priority_padding_with_max_batch_size'",
           "batch_padding_policy: {'PAD_UP', 'BATCH_DOWN', 'MINIMIZE_TPU_COST_PER_REQUEST'} = "
           "'PAD_UP'",
           "Tin: list(type)", "Tcaptured: list(type)", "Tout: list(type)",
           "enable_large_batch_splitting: bool = false"],
    shape=lambda ctx: [TensorShape(None)] * len(ctx.attrs["Tout"]),
    functional=True, gradient_undefined=True,
    doc="Batches the computation `f` over the inputs of concurrent calls.")
