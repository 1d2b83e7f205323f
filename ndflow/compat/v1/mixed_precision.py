"""`tf.compat.v1.mixed_precision`: TF1 loss scales, the loss-scale optimizer and the switches
of the mixed-precision graph rewrite (TF 2.21's exports; `experimental` holds the deprecated
aliases of the loss scales)."""

from types import SimpleNamespace

from ndflow.train.loss_scale import DynamicLossScale, FixedLossScale, LossScale
from ndflow.train.loss_scale_optimizer import MixedPrecisionLossScaleOptimizer
from ndflow.train.mixed_precision import (
    disable_mixed_precision_graph_rewrite,
    enable_mixed_precision_graph_rewrite,
)

experimental = SimpleNamespace(DynamicLossScale=DynamicLossScale,
                               FixedLossScale=FixedLossScale, LossScale=LossScale)

__all__ = ["DynamicLossScale", "FixedLossScale", "LossScale",
           "MixedPrecisionLossScaleOptimizer", "disable_mixed_precision_graph_rewrite",
           "enable_mixed_precision_graph_rewrite", "experimental"]
