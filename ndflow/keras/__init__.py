"""Layer 6: Keras (`tf.keras`): losses, optimizers, initializers, mixed precision."""

from ndflow.keras import (  # noqa: F401 - their exports
    loss_functions,
    mixed_precision,
    optimizers,
)
