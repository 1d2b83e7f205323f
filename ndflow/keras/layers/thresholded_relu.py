"""`keras.layers.ThresholdedReLU`: Keras' legacy layer `x if x > theta else 0`, still in
TensorFlow 2.21's `tf.keras.layers` (keras.src.legacy.layers)."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras.layers.base_layer import Layer
from ndflow.ops.cast import cast
from ndflow.ops.comparison import greater


@keras_export("keras.layers.ThresholdedReLU")
class ThresholdedReLU(Layer):
    """Keras 2's thresholded ReLU layer: `x` where `x > theta`, 0 elsewhere.

    Args:
      theta: the threshold (a non-negative float, default 1.0).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: `theta` is None or negative.

    Example:

    >>> tf.keras.layers.ThresholdedReLU(1.0)(tf.constant([0.5, 2.0])).numpy()
    array([0., 2.], dtype=float32)
    """

    _keras_module = "keras._legacy.layers"   # where Keras' saving finds the legacy class

    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        if theta is None:
            raise ValueError("Theta of a Thresholded ReLU layer cannot be None, expecting a "
                             f"float. Received: {theta}")
        if theta < 0:
            raise ValueError("The theta value of a Thresholded ReLU layer should be >=0. "
                             f"Received: {theta}")
        self.supports_masking = True
        self.theta = theta

    def build(self, input_shape) -> None:   # no weights; Keras records the build shape
        self.built = True

    def call(self, inputs):
        return inputs * cast(greater(inputs, cast(self.theta, inputs.dtype)), inputs.dtype)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "theta": float(self.theta)}
