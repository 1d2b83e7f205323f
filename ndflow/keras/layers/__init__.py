"""Keras layers (`tf.keras.layers`): the Layer base and the layers built on it."""

from ndflow.keras.layers import (  # noqa: F401 - their exports
    base_layer,
    core_layers,
    input_layer,
    input_spec,
    normalization_layers,
)
