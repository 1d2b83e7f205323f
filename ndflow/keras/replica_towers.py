"""Keras `fit` under `strategy.scope()`: the training step runs one tower per replica inside
the one step function (as the classic multi-GPU tower models do).

Each global batch is cut into one part per replica (sizes differing by at most one, as
`experimental_distribute_dataset` cuts them); tower i runs under `tf.device(device_i)`
(and the name scope `replica_i` for i > 0 in a traced step): forward pass, loss, metric
updates and gradients of its loss weighted by its share of the batch. The towers' gradients
are summed (over the workers too, under MultiWorkerMirroredStrategy, where each worker
takes its own share of every batch) and applied once, so a step equals the single-device
step on the global batch (mean losses, to float rounding) — TF's all-reduced gradients
of losses scaled by 1/num_replicas, the same thing for equal parts.
"""

from __future__ import annotations

import contextlib

from ndflow.autodiff.tape import GradientTape
from ndflow.core import dtypes, scopes
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.keras import data_adapter
from ndflow.keras.mixed_precision.loss_scale_optimizer import LossScaleOptimizer
from ndflow.ops.arithmetic import add_n, maximum, minimum, where
from ndflow.ops.array_core import shape
from ndflow.ops.array_slicing import slice as slice_op
from ndflow.ops.cast import cast
from ndflow.ops.indexed_slices import IndexedSlices, densify


def tower_slices(data, num_replicas: int) -> list:
    """`data` (a structure of batched tensors) cut into `num_replicas` parts along axis 0,
    with their sizes (int32 tensors): as even as possible, the first parts larger."""
    flat = flatten(data)
    tensors = [t for t in flat if t is not None]
    batch = shape(tensors[0])[0]
    base, extra = batch // num_replicas, batch % num_replicas
    parts = []
    for i in range(num_replicas):
        begin = base * i + minimum(extra, i)
        size = base + cast(i < extra, dtypes.int32)
        leaves = []
        for t in flat:
            if t is None:
                leaves.append(None)
                continue
            rank = t.shape.rank
            leaves.append(slice_op(t, [begin] + [0] * (rank - 1), [size] + [-1] * (rank - 1)))
        parts.append((pack_sequence_as(data, leaves), size, batch))
    return parts


def _sum_gradients(per_tower: list) -> list:
    out = []
    for grads in zip(*per_tower):
        present = [densify(g) if isinstance(g, IndexedSlices) else g
                   for g in grads if g is not None]
        out.append(None if not present else present[0] if len(present) == 1
                   else add_n(present))
    return out


def _tower_scope(i: int, device: str):
    stack = contextlib.ExitStack()
    stack.enter_context(scopes.device(device))
    if i > 0:
        stack.enter_context(scopes.name_scope(f"replica_{i}"))
    return stack


def train_step_on_replicas(model, data, strategy):
    """Model.train_step for a strategy with several replicas (see the module doc)."""
    devices = strategy.extended.worker_devices
    optimizer = model.optimizer
    variables = model.trainable_weights
    total = strategy.num_replicas_in_sync  # several workers: this one's share of the batch
    first = getattr(strategy.extended, "worker_index", 0) * len(devices)
    towers = tower_slices(data, total)[first:first + len(devices)]
    per_tower, y_pred = [], None
    for i, (part, size, batch) in enumerate(towers):
        x, y, sample_weight = data_adapter.unpack_x_y_sample_weight(part)
        with _tower_scope(i, devices[i]):
            with GradientTape() as tape:
                y_pred = model(x, training=True)
                loss = model.compute_loss(x, y, y_pred, sample_weight, training=True)
                has_rows = size > 0
                loss = where(has_rows, loss, 0.0 * loss)  # an empty tower adds nothing
                model._loss_tracker.update_state(loss, sample_weight=size)
                share = cast(size, loss.dtype) / cast(maximum(batch, 1), loss.dtype)
                scaled = loss * share
                if isinstance(optimizer, LossScaleOptimizer):
                    scaled = optimizer.get_scaled_loss(scaled)
            if variables:
                per_tower.append(tape.gradient(scaled, variables))
            if model._compile_metrics is not None:
                model._compile_metrics.update_state(y, y_pred, sample_weight)
    if variables:
        grads = _sum_gradients(per_tower)
        if total > len(devices):
            grads = strategy.extended.sum_across_workers(grads)
        if isinstance(optimizer, LossScaleOptimizer):
            grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(grads, variables))
    return model.get_metrics_result()
