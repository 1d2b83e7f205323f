"""`tf.train.experimental` / `tf.compat.v1.train.experimental`: the mixed-precision API under
the names TF 1.14-2.x (and NVIDIA's TF1 containers) exported it."""

from ndflow.train.loss_scale import DynamicLossScale, FixedLossScale, LossScale  # noqa: F401
from ndflow.train.loss_scale_optimizer import MixedPrecisionLossScaleOptimizer  # noqa: F401
from ndflow.train.mixed_precision import (  # noqa: F401
    disable_mixed_precision_graph_rewrite,
    enable_mixed_precision_graph_rewrite,
)
