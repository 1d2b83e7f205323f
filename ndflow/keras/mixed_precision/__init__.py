"""`tf.keras.mixed_precision`: dtype policies and the loss-scale optimizer."""

from ndflow.keras.mixed_precision.loss_scale_optimizer import LossScaleOptimizer
from ndflow.keras.mixed_precision.policy import (
    DTypePolicy,
    Policy,
    dtype_policy,
    global_policy,
    set_dtype_policy,
    set_global_policy,
)

__all__ = ["DTypePolicy", "LossScaleOptimizer", "Policy", "dtype_policy", "global_policy",
           "set_dtype_policy", "set_global_policy"]
