"""`keras.layers.AlphaDropout`: dropout for SELU networks, dropped units set to SELU's
negative saturation and the result rescaled so mean and variance are kept (Keras 3)."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras.layers.base_layer import Layer
from ndflow.ops import random as random_ops
from ndflow.ops.array_core import shape, stack
from ndflow.ops.cast import cast
from ndflow.ops.comparison import greater_equal

_ALPHA = 1.6732632423543772
_SCALE = 1.0507009873554805


@keras_export("keras.layers.AlphaDropout")
class AlphaDropout(Layer):
    """Dropout that keeps the self-normalizing property of SELU networks: in training, each
    unit is kept with probability `1 - rate` or set to SELU's negative saturation value
    (-alpha * scale), then the result is shifted and scaled so mean and variance stay.
    At inference the inputs pass through.

    Args:
      rate: the drop probability, in [0, 1].
      noise_shape: optional shape of the keep/drop mask, broadcast against the inputs.
      seed: an int for reproducible masks.
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: `rate` outside [0, 1].
    """

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise ValueError("Invalid value received for argument `rate`. Expected a float "
                             f"value between 0 and 1. Received: rate={rate}")
        self.rate, self.seed, self.noise_shape = rate, seed, noise_shape
        self.supports_masking = True
        self.built = True

    def _noise_shape(self, inputs):
        if self.noise_shape is None:
            return shape(inputs)
        dims = shape(inputs)
        return stack([dims[i] if v is None else v for i, v in enumerate(self.noise_shape)])

    def call(self, inputs, training=False):
        if not training or self.rate <= 0:
            return inputs
        alpha_p = -_ALPHA * _SCALE
        uniform = random_ops.random_uniform(self._noise_shape(inputs), dtype=inputs.dtype,
                                            seed=self.seed)
        kept = cast(greater_equal(uniform, cast(self.rate, inputs.dtype)), inputs.dtype)
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        x = inputs * kept + alpha_p * (1 - kept)
        return a * x + b

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "rate": self.rate, "seed": self.seed,
                "noise_shape": self.noise_shape}
