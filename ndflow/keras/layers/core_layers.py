"""Keras' core layers: Dense, Activation, Flatten, Dropout (Keras 3's arguments and
defaults)."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import tf_export
from ndflow.keras import activation_functions as activations
from ndflow.keras import constraint_functions as constraints
from ndflow.keras import global_config, random_functions
from ndflow.keras import regularizer_functions as regularizers
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.input_spec import InputSpec
from ndflow.keras.layers.weight_options import set_kernel_and_bias_options
from ndflow.keras.ops import dtype_rules
from ndflow.keras.random_functions import SeedGenerator
from ndflow.ops import init_ops, linalg, linalg_extra
from ndflow.ops.array_core import reshape, shape
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast
from ndflow.ops.sparse_api import sparse_dense_matmul
from ndflow.ops.sparse_tensor import SparseTensor


def _export(name: str):
    return tf_export(f"keras.layers.{name}", v1=[f"keras.layers.{name}"])


@_export("Dense")
class Dense(Layer):
    """A densely connected layer: `activation(inputs @ kernel + bias)`, applied to the last
    axis of its inputs (any leading axes are kept).

    The kernel, of shape (input_dim, units), and the bias are created on the first call.

    Args:
      units: the output size (a positive int).
      activation: the activation (a name, a callable, or None for linear).
      use_bias: whether to add a bias vector.
      kernel_initializer: the kernel's initializer (default "glorot_uniform").
      bias_initializer: the bias' initializer (default "zeros").
      kernel_regularizer: optional penalty on the kernel.
      bias_regularizer: optional penalty on the bias.
      activity_regularizer: optional penalty on the output.
      kernel_constraint: optional projection of the kernel after each update.
      bias_constraint: optional projection of the bias after each update.
      lora_rank: must be None (LoRA is not built in ndflow).
      lora_alpha: accepted for Keras' signature.
      quantization_config: must be None (quantized Dense is not built in ndflow).
      **kwargs: Layer arguments (name, dtype, input_shape, ...).

    Raises:
      ValueError: `units` is not a positive int.
      NotImplementedError: `lora_rank` or `quantization_config` given.

    Example:

    >>> layer = tf.keras.layers.Dense(4, activation="relu")
    >>> layer(tf.ones((2, 3))).shape, layer.kernel.shape
    (TensorShape([2, 4]), TensorShape([3, 4]))
    """

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 lora_rank=None, lora_alpha=None, quantization_config=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if not isinstance(units, int) or units <= 0:
            raise ValueError("Received an invalid value for `units`, expected a positive "
                             f"integer. Received: units={units}")
        if lora_rank or quantization_config:
            raise NotImplementedError("Dense(lora_rank=...) and quantization are not built in "
                                      "ndflow yet")
        self.units = units
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        set_kernel_and_bias_options(self, kernel_initializer, bias_initializer, kernel_regularizer,
                                    bias_regularizer, kernel_constraint, bias_constraint)
        self.kernel = self.bias = None
        self.input_spec = InputSpec(min_ndim=2)
        self.supports_masking = True

    def build(self, input_shape) -> None:
        in_dim = input_shape[-1]
        if in_dim is None:
            raise ValueError("The last dimension of the inputs to a Dense layer should be "
                             f"defined. Found None. Full input shape received: {input_shape}")
        self.kernel = self.add_weight((in_dim, self.units), self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint, name="kernel")
        if self.use_bias:
            self.bias = self.add_weight((self.units,), self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint, name="bias")
        self.input_spec = InputSpec(min_ndim=2, axes={-1: in_dim})
        self.built = True

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def call(self, inputs):
        if isinstance(inputs, SparseTensor):   # Keras 3: a sparse matmul, values autocast
            values = cast(inputs.values, self.kernel.dtype)
            out = sparse_dense_matmul(SparseTensor(inputs.indices, values, inputs.dense_shape),
                                      self.kernel)
            if self.use_bias:
                out = out + self.bias
            return out if self.activation is None else self.activation(out)
        if not (inputs.dtype.is_floating or inputs.dtype.is_complex):
            # Keras 3's ops.matmul promotes integer and bool inputs (kernel's float type)
            inputs = cast(inputs, dtype_rules.result_type(inputs.dtype.name,
                                                          self.kernel.dtype.name))
        rank = inputs.shape.rank
        if rank == 2:
            out = linalg.matmul(inputs, self.kernel)
        else:
            out = linalg_extra.tensordot(inputs, self.kernel, [[rank - 1], [0]])
        if self.use_bias:
            out = out + self.bias
        return out if self.activation is None else self.activation(out)

    def get_config(self) -> dict:
        return {**super().get_config(), "units": self.units,
                "activation": activations.config_name(self.activation), "use_bias": self.use_bias,
                "kernel_initializer": init_ops.serialize(self.kernel_initializer),
                "bias_initializer": init_ops.serialize(self.bias_initializer),
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint),
                "quantization_config": None}


@_export("Activation")
class Activation(Layer):
    """A layer applying an activation function to its inputs.

    Args:
      activation: a name ("relu") or a callable.
      **kwargs: Layer arguments (name, dtype, ...).

    Example:

    >>> tf.keras.layers.Activation("relu")(tf.constant([-1.0, 2.0])).numpy()
    array([0., 2.], dtype=float32)
    """

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)
        self.supports_masking = True

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "activation": activations.config_name(self.activation)}


@_export("Flatten")
class Flatten(Layer):
    """A layer flattening each sample to one dimension: (batch, ...) to (batch, n).

    Channels-first inputs are first moved to channels last, so a following Dense layer's
    weights mean the same in both data formats.

    Args:
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: an unknown `data_format`.

    Example:

    >>> tf.keras.layers.Flatten()(tf.zeros((2, 3, 4))).shape
    TensorShape([2, 12])
    """

    _records_build_shapes = True   # Keras records its build config (input shape)

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = (data_format or global_config.image_data_format()).lower()
        if self.data_format not in ("channels_last", "channels_first"):
            raise ValueError("The `data_format` argument must be one of 'channels_first', "
                             f"'channels_last'. Received: {data_format}")

    def call(self, inputs):
        rank = inputs.shape.rank
        if self.data_format == "channels_first" and rank and rank > 2:
            inputs = transpose(inputs, [0] + list(range(2, rank)) + [1])
        dims = inputs.shape.as_list()
        if all(d is not None for d in dims[1:]):
            rest = 1
            for d in dims[1:]:
                rest *= d
            return reshape(inputs, [-1 if dims[0] is None else dims[0], rest])
        return reshape(inputs, [shape(inputs)[0], -1])

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        size = None if any(d is None for d in rest) else int(np.prod(rest, dtype=np.int64))
        return (input_shape[0], size)

    def get_config(self) -> dict:
        return {**super().get_config(), "data_format": self.data_format}


@_export("Dropout")
class Dropout(Layer):
    """A layer that, in training, sets a random fraction `rate` of its inputs to 0 and
    scales the others by `1 / (1 - rate)`; at inference it passes the inputs through.

    Args:
      rate: the fraction to drop, in [0, 1].
      noise_shape: optional shape of the keep/drop mask, broadcast against the inputs
        (e.g. (batch, 1, features) drops the same features at every step; None entries
        take the input's size).
      seed: an int for reproducible masks.
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: `rate` outside [0, 1].

    Example:

    >>> layer = tf.keras.layers.Dropout(0.5, seed=1)
    >>> layer(tf.ones((2, 2)), training=False).numpy()
    array([[1., 1.],
           [1., 1.]], dtype=float32)
    """

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float "
                             f"value between 0 and 1. Received: rate={rate}")
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed
        if rate > 0:
            # As Keras 3: a SeedGenerator made here (it draws a Python-random seed when seed
            # is None, so later layers' initializers get TF's seeds) keys every mask.
            self.seed_generator = SeedGenerator(seed)
        self.supports_masking = True

    def call(self, inputs, training=False):
        if training and self.rate > 0:
            return random_functions.dropout(inputs, self.rate, noise_shape=self.noise_shape,
                                            seed=self.seed_generator)
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "rate": self.rate, "seed": self.seed,
                "noise_shape": self.noise_shape}
