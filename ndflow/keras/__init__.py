"""Layer 6: Keras (`tf.keras`): layers, Sequential, activations, losses, optimizers,
initializers, mixed precision."""

from ndflow.keras import (  # noqa: F401 - their exports
    activation_functions,
    constraint_functions,
    layers,
    loss_functions,
    mixed_precision,
    optimizers,
    regularizer_functions,
    sequential,
)
