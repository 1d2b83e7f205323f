"""Keras layers (`tf.keras.layers`): the Layer base and the layers built on it."""

from ndflow.keras.layers import base_layer, core_layers  # noqa: F401 - their exports
