"""Layer 6: Keras (`tf.keras`): layers, Sequential, activations, losses, optimizers,
initializers, mixed precision."""

from ndflow.keras import (  # noqa: F401 - their exports
    activation_functions,
    backend_functions,
    callbacks,
    cloning,
    constraint_functions,
    datasets,
    file_downloads,
    functional,
    layers,
    loss_functions,
    loss_functions_extra,
    metrics,
    mixed_precision,
    model,
    numerical_utils,
    optimizers,
    regularizer_functions,
    saving,
    sequential,
)
