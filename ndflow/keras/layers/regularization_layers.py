"""Keras 3's regularization layers besides Dropout: SpatialDropout1D/2D/3D (whole feature
maps dropped), GaussianNoise (additive N(0, stddev)), GaussianDropout (multiplicative
N(1, rate / (1 - rate))) — all active only in training — and ActivityRegularization (an L1/L2
penalty on its output, the identity otherwise)."""

from __future__ import annotations

import math

from ndflow.core.api_export import keras_export
from ndflow.keras import global_config, random_functions
from ndflow.keras import regularizer_functions as regularizers
from ndflow.keras.layers.activation_layers import ElementwiseLayer
from ndflow.keras.layers.core_layers import Dropout
from ndflow.keras.layers.input_spec import InputSpec
from ndflow.keras.layers.normalization_layers import dynamic_dims
from ndflow.ops import random as random_ops
from ndflow.ops.array_core import shape


def _data_format(data_format):
    data_format = global_config.image_data_format() if data_format is None else \
        str(data_format).lower()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    return data_format


class _SpatialDropout(Dropout):
    """Dropout with a noise shape of 1 along the spatial axes (Keras' signature: rate, seed,
    name, dtype only)."""

    _ndim = None

    def __init__(self, rate, seed=None, name=None, dtype=None):
        super().__init__(rate, seed=seed, name=name, dtype=dtype)
        self.input_spec = InputSpec(ndim=self._ndim)

    def _noise_dims(self, dims):
        raise NotImplementedError

    def call(self, inputs, training=False):
        if training and self.rate > 0:
            dims = self._noise_dims(dynamic_dims(inputs))
            return random_functions.dropout(inputs, self.rate, noise_shape=dims,
                                            seed=self.seed_generator)
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {"rate": self.rate, "seed": self.seed, "name": self.name, "dtype": self.dtype}


@keras_export("keras.layers.SpatialDropout1D")
class SpatialDropout1D(_SpatialDropout):
    """Spatial dropout for sequences: in training, whole channels of (batch, steps,
    channels) inputs are set to 0 (the same channels at every step), the others scaled by
    `1 / (1 - rate)`. Useful when neighbouring steps are strongly correlated.

    Args:
      rate: the fraction of channels to drop, in [0, 1].
      seed: an int for reproducible masks.
      name: the layer's name.
      dtype: the layer's dtype.
    """

    _ndim = 3

    def _noise_dims(self, dims):
        return [dims[0], 1, dims[2]]


class _SpatialDropoutND(_SpatialDropout):
    def __init__(self, rate, data_format=None, seed=None, name=None, dtype=None):
        super().__init__(rate, seed=seed, name=name, dtype=dtype)
        self.data_format = _data_format(data_format)

    def _noise_dims(self, dims):
        ones = [1] * (len(dims) - 2)
        if self.data_format == "channels_first":
            return [dims[0], dims[1]] + ones
        return [dims[0]] + ones + [dims[-1]]

    def get_config(self) -> dict:
        return {**super().get_config(), "data_format": self.data_format}


_SPATIAL_DOC = """Spatial dropout for {what}: in training, whole feature {maps} (channels)
    of {rank}-D inputs are set to 0, the others scaled by `1 / (1 - rate)`.

    Args:
      rate: the fraction of channels to drop, in [0, 1].
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      seed: an int for reproducible masks.
      name: the layer's name.
      dtype: the layer's dtype.
    """


@keras_export("keras.layers.SpatialDropout2D")
class SpatialDropout2D(_SpatialDropoutND):
    __doc__ = _SPATIAL_DOC.format(what="images", maps="maps", rank=4)
    _ndim = 4


@keras_export("keras.layers.SpatialDropout3D")
class SpatialDropout3D(_SpatialDropoutND):
    __doc__ = _SPATIAL_DOC.format(what="volumes", maps="volumes", rank=5)
    _ndim = 5


class _Noise(ElementwiseLayer):
    def __init__(self, value, name_, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= value <= 1:
            raise ValueError(f"Invalid value received for argument `{name_}`. Expected a "
                             f"float value between 0 and 1. Received: {name_}={value}")
        self.seed = seed


@keras_export("keras.layers.GaussianNoise")
class GaussianNoise(_Noise):
    """A layer adding zero-mean Gaussian noise of standard deviation `stddev` in training
    (a regularizer); at inference it passes the inputs through.

    Args:
      stddev: the noise's standard deviation.
      seed: an int for reproducible noise.
      **kwargs: Layer arguments (name, dtype, ...).
    """

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(stddev, "stddev", seed, **kwargs)
        self.stddev = stddev

    def call(self, inputs, training=False):
        if training and self.stddev > 0:
            return inputs + random_ops.random_normal(shape(inputs), 0.0, self.stddev,
                                                     dtype=self.compute_dtype, seed=self.seed)
        return inputs

    def get_config(self) -> dict:
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}


@keras_export("keras.layers.GaussianDropout")
class GaussianDropout(_Noise):
    """A layer multiplying its inputs by Gaussian noise of mean 1 and variance
    `rate / (1 - rate)` in training (dropout's variance without zeros); at inference it
    passes the inputs through.

    Args:
      rate: the equivalent drop probability, in [0, 1).
      seed: an int for reproducible noise.
      **kwargs: Layer arguments (name, dtype, ...).
    """

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(rate, "rate", seed, **kwargs)
        self.rate = rate

    def call(self, inputs, training=False):
        if training and self.rate > 0:
            stddev = math.sqrt(self.rate / (1.0 - self.rate))
            return inputs * random_ops.random_normal(shape(inputs), 1.0, stddev,
                                                     dtype=self.compute_dtype, seed=self.seed)
        return inputs

    def get_config(self) -> dict:
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}


@keras_export("keras.layers.ActivityRegularization")
class ActivityRegularization(ElementwiseLayer):
    """A layer passing its inputs through unchanged while adding a penalty on them,
    `l1 * sum(|x|) + l2 * sum(x**2)`, to the model's losses.

    Args:
      l1: the L1 factor.
      l2: the L2 factor.
      **kwargs: Layer arguments (name, dtype, ...).
    """

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = l1, l2

    def call(self, inputs):
        return inputs

    def get_config(self) -> dict:
        config = super().get_config()
        config.pop("activity_regularizer", None)
        return {**config, "l1": self.l1, "l2": self.l2}
