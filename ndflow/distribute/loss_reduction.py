"""v1 `tf.distribute.get_loss_reduction`: how an optimizer combines the replicas' gradients
for the last loss. SUM unless the current strategy scales losses for Estimator (a private
switch TensorFlow's Estimator sets), where the last `tf.compat.v1.losses` reduction decides:
SUM for SUM, else MEAN."""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.distribute import distribution_context as dc
from ndflow.distribute.reduce_util import ReduceOp
from ndflow.ops.losses_impl import Reduction

# tf.compat.v1.losses' SUM, and Keras' "sum"
_SUM_REDUCTIONS = (Reduction.SUM, "sum")


@tf_export(v1=["distribute.get_loss_reduction"])
def get_loss_reduction():
    """`tf.distribute.ReduceOp` for the last loss reduction (see the module doc)."""
    if not getattr(dc.get_strategy(), "_scale_loss_for_estimator", False):
        return ReduceOp.SUM
    last = getattr(context.get_default_graph(), "_last_loss_reduction", None)
    if last in _SUM_REDUCTIONS:
        return ReduceOp.SUM
    return ReduceOp.MEAN
