"""Layer 6: Keras (`tf.keras`): layers, Sequential, activations, losses, optimizers,
initializers, mixed precision."""

from ndflow.keras import (  # noqa: F401 - their exports
    activation_functions,
    activation_functions_extra,
    backend_functions,
    backend_legacy,
    backend_legacy_nn,
    backend_legacy_rnn,
    callbacks,
    cloning,
    config_functions,
    constraint_functions,
    datasets,
    file_downloads,
    functional,
    layers,
    loss_ctc,
    loss_functions,
    loss_functions_extra,
    metrics,
    mixed_precision,
    model,
    numerical_utils,
    ops,
    optimizers,
    preprocessing_image_legacy,
    preprocessing_image_transforms,
    random_functions,
    regularizer_functions,
    saving,
    sequential,
    tree_functions,
    utils_config,
    utils_image,
    utils_image_dataset,
    utils_legacy_sequence,
    utils_legacy_text,
    utils_py_dataset,
    utils_sequences,
    utils_serialization,
    utils_text_audio_dataset,
)

# isort: off
# applications builds models with everything above: imported once the rest is complete
from ndflow.keras import applications  # noqa: E402, F401 - its exports
# isort: on
