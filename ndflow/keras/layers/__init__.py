"""Keras layers (`tf.keras.layers`): the Layer base and the layers built on it."""

from ndflow.keras.layers import (  # noqa: F401 - their exports
    activation_layers,
    base_layer,
    bidirectional,
    conv_layers,
    core_layers,
    embedding_layer,
    input_layer,
    input_spec,
    lambda_layer,
    merging_layers,
    normalization_layers,
    pooling_layers,
    regularization_layers,
    reshaping_layers,
    rnn_cells,
    rnn_layers,
    tfsm_layer,
)
