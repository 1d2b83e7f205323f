"""Keras 3's Embedding (rows of a trainable table looked up by integer index; gradients are
IndexedSlices through Gather; `mask_zero` masks index 0) and Masking (timesteps whose
features all equal `mask_value` are masked and zeroed)."""

from __future__ import annotations

import warnings

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.keras import constraint_functions as constraints
from ndflow.keras import regularizer_functions as regularizers
from ndflow.keras.layers.activation_layers import ElementwiseLayer
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.merging_layers import set_mask
from ndflow.ops import arithmetic, comparison, init_ops, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import squeeze
from ndflow.ops.cast import cast
from ndflow.ops.gather_batch import gather

# Keras' initializer aliases that tf.keras.initializers.get does not know by these names
_ALIASES = {"uniform": init_ops.RandomUniform, "normal": init_ops.RandomNormal}


def _initializer(identifier):
    if isinstance(identifier, str) and identifier in _ALIASES:
        return _ALIASES[identifier]()
    return init_ops.get(identifier)


def _positive_int(value, name: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value} "
                         f"(of type {type(value).__name__}).")


@keras_export("keras.layers.Embedding")
class Embedding(Layer):
    """Turns integer indices into dense vectors: index i becomes row i of the learned
    `embeddings` matrix (input_dim, output_dim).

    Negative indices count from the end, as Keras' `take`. Keras 2's `input_length` is
    accepted with a deprecation warning and ignored.

    Args:
      input_dim: the vocabulary size: indices lie in [0, input_dim).
      output_dim: the size of each vector.
      embeddings_initializer: the matrix' initializer (default "uniform").
      embeddings_regularizer: optional penalty on the matrix.
      embeddings_constraint: optional projection of the matrix after each update.
      mask_zero: whether index 0 is padding: the output then carries a mask (False at
        0s) that later layers (RNNs, attention) follow.
      weights: optional initial matrix (a list holding one array).
      lora_rank: must be None (LoRA is not built in ndflow).
      lora_alpha: accepted for Keras' signature.
      quantization_config: must be None.
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: `input_dim` or `output_dim` is not a positive int.
      NotImplementedError: `lora_rank` or `quantization_config` given.

    Example:

    >>> layer = tf.keras.layers.Embedding(10, 4)
    >>> layer(tf.constant([[1, 2, 3]])).shape
    TensorShape([1, 3, 4])
    """

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False,
                 weights=None, lora_rank=None, lora_alpha=None, quantization_config=None,
                 **kwargs):
        _positive_int(input_dim, "input_dim")
        _positive_int(output_dim, "output_dim")
        if kwargs.pop("input_length", None) is not None:
            warnings.warn("Argument `input_length` is deprecated. Just remove it.",
                          stacklevel=2)
        if lora_rank or quantization_config:
            raise NotImplementedError("Embedding(lora_rank=...) and quantization are not "
                                      "built in ndflow yet")
        super().__init__(**kwargs)
        self.input_dim, self.output_dim = input_dim, output_dim
        self.embeddings_initializer = _initializer(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.mask_zero = mask_zero
        self.supports_masking = mask_zero
        self.autocast = False
        self.lora_rank, self.lora_alpha = lora_rank, lora_alpha
        self._embeddings = None
        if weights is not None:
            self.build()
            if not (isinstance(weights, list) and len(weights) == 1):
                weights = [weights]
            self.set_weights(weights)

    def build(self, input_shape=None) -> None:
        if self.built:
            return
        self._embeddings = self.add_weight(
            (self.input_dim, self.output_dim), self.embeddings_initializer,
            regularizer=self.embeddings_regularizer, constraint=self.embeddings_constraint,
            trainable=True, name="embeddings")
        self.built = True

    @property
    def embeddings(self):
        if not self.built:
            raise AttributeError("You must build the layer before accessing `embeddings`.")
        return self._embeddings

    def call(self, inputs):
        if inputs.dtype not in (dtypes.int32, dtypes.int64):
            inputs = cast(inputs, dtypes.int32)
        zero = cast(0, inputs.dtype)
        inputs = arithmetic.select_v2(comparison.less(inputs, zero),
                                      inputs + cast(self.input_dim, inputs.dtype), inputs)
        return cast(gather(self.embeddings, inputs, axis=0), self.compute_dtype)

    def compute_mask(self, inputs, mask=None):
        if not self.mask_zero:
            return None
        return comparison.not_equal(inputs, cast(0, convert_to_tensor(inputs).dtype))

    def compute_output_shape(self, input_shape):
        return (*input_shape, self.output_dim)

    def get_config(self) -> dict:
        config = {**super().get_config(), "input_dim": self.input_dim,
                  "output_dim": self.output_dim,
                  "embeddings_initializer": init_ops.serialize(self.embeddings_initializer),
                  "embeddings_regularizer": regularizers.serialize(self.embeddings_regularizer),
                  "activity_regularizer": regularizers.serialize(self.activity_regularizer),
                  "embeddings_constraint": constraints.serialize(self.embeddings_constraint),
                  "mask_zero": self.mask_zero, "quantization_config": None}
        return config


def _mask_value(value):
    """Keras serializes a tensor or array `mask_value` as a `__tensor__`/`__numpy__` dict."""
    if isinstance(value, dict) and value.get("config"):
        if value.get("class_name") not in ("__tensor__", "__numpy__"):
            raise ValueError(f"Could not interpret mask_value: {value}")
        return np.asarray(value["config"]["value"], dtype=value["config"]["dtype"])
    return value


@keras_export("keras.layers.Masking")
class Masking(ElementwiseLayer):
    """Marks padding steps for the layers after it: a step (a position on all axes but the
    last) whose features all equal `mask_value` is masked, and its output set to 0.

    Args:
      mask_value: the padding value.
      **kwargs: Layer arguments (name, dtype, ...).

    Example:

    >>> out = tf.keras.layers.Masking()(tf.constant([[[1.0], [0.0]]]))
    >>> out._keras_mask.numpy()
    array([[ True, False]])
    """

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = _mask_value(mask_value)

    def _keep(self, inputs, keepdims):
        value = cast(convert_to_tensor(self.mask_value), inputs.dtype)
        return reduction.reduce_any(comparison.not_equal(inputs, value), axis=-1,
                                    keepdims=keepdims)

    def compute_mask(self, inputs, mask=None):
        return self._keep(inputs, keepdims=False)

    def call(self, inputs):
        keep = self._keep(inputs, keepdims=True)
        outputs = arithmetic.select_v2(keep, inputs, cast(0, inputs.dtype))
        set_mask(outputs, squeeze(keep, [-1]))
        return outputs

    def get_config(self) -> dict:
        return {**super().get_config(), "mask_value": self.mask_value}
