"""`_UpdateDynamicLossScale`: a dynamic loss scale's whole update as one op (ndflow-internal,
made by the remapper, ndflow/passes/dynamic_loss_scale.py; never built by users).

`DynamicLossScale.update` (ndflow/train/loss_scale.py, TensorFlow's rule) writes about
fifteen scalar ops between the step's finite flag and the assignments of the scale and its
good-steps counter. Each is a kernel call whose code a step's large kernels have pushed out
of the caches: 30-60 us apiece after a convolution, against 1-4 us warm. The op reads both
variables, applies the rule and assigns both, with `increment_period` and `multiplier` (the
rule's constants) as attributes:

    finite:     grow after `increment_period` good steps (if scale * multiplier is finite),
                else count the step;
    not finite: scale = max(scale / multiplier, 1), the count restarts.
"""

from __future__ import annotations

from ndflow.ops.op_def import op_def


def _shape(ctx):
    r = ctx.shapes[2].rank
    if r is not None and r != 0:
        raise ValueError(f"Shape must be rank 0 but is rank {r} for '{ctx.op_name}' "
                         "(is_finite)")
    return []


UpdateDynamicLossScale = op_def(
    "_UpdateDynamicLossScale",
    inputs=["scale: resource", "good_steps: resource", "is_finite: bool"],
    outputs=[], attrs=["increment_period: int", "multiplier: float"],
    shape=_shape, gradient_undefined=True, stateful=True,
    doc="ndflow-internal: a DynamicLossScale's update of its float32 scale and int64 "
        "good-steps counter from the step's finite flag, in one kernel.")
