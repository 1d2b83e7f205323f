"""`tf.keras.mixed_precision`: dtype policies and the loss-scale optimizer."""

from ndflow.keras.mixed_precision import (  # noqa: F401 - importing a module declares its exports
    loss_scale_optimizer,
    policy,
)
