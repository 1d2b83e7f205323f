"""`tf.compat.v1.train`: TF1 optimizers, learning-rate decay, the global step; `experimental`
holds TF 2.21's deprecated aliases of the mixed-precision API."""

from types import SimpleNamespace

from ndflow.train import (  # noqa: F401
    AdamOptimizer,
    GradientDescentOptimizer,
    MomentumOptimizer,
    Optimizer,
    RMSPropOptimizer,
    assert_global_step,
    create_global_step,
    exponential_decay,
    get_global_step,
    get_or_create_global_step,
    global_step,
    inverse_time_decay,
    piecewise_constant,
    polynomial_decay,
)
from ndflow.train.loss_scale import DynamicLossScale, FixedLossScale, LossScale
from ndflow.train.loss_scale_optimizer import MixedPrecisionLossScaleOptimizer
from ndflow.train.mixed_precision import (
    disable_mixed_precision_graph_rewrite,
    enable_mixed_precision_graph_rewrite,
)

experimental = SimpleNamespace(
    DynamicLossScale=DynamicLossScale, FixedLossScale=FixedLossScale, LossScale=LossScale,
    MixedPrecisionLossScaleOptimizer=MixedPrecisionLossScaleOptimizer,
    disable_mixed_precision_graph_rewrite=disable_mixed_precision_graph_rewrite,
    enable_mixed_precision_graph_rewrite=enable_mixed_precision_graph_rewrite)
