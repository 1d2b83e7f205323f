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
    keras_function,
    layers,
    legacy_layers_unavailable,
    loss_ctc,
    loss_functions,
    loss_functions_extra,
    metrics,
    mixed_precision,
    model,
    numerical_utils,
    operation,
    ops,
    optimizers,
    preprocessing_image_legacy,
    preprocessing_image_transforms,
    quantizer_classes,
    random_functions,
    regularizer_functions,
    saving,
    sequential,
    symbolic_scope,
    tree_functions,
    utils_config,
    utils_feature_space,
    utils_image,
    utils_image_dataset,
    utils_legacy_sequence,
    utils_legacy_text,
    utils_model_visualization,
    utils_py_dataset,
    utils_sequences,
    utils_serialization,
    utils_text_audio_dataset,
)

# isort: off
# applications builds models with everything above: imported once the rest is complete
from ndflow.keras import applications  # noqa: E402, F401 - its exports
# isort: on

# Keras 3's module metadata: the version whose API and file formats this follows (TF 2.21's)
__version__ = config_functions.version()
