"""`keras.layers.ReversibleEmbedding` (Keras 3.15): an Embedding that also projects back from
`output_dim` to `input_dim` when called with `reverse=True`: `inputs @ embeddings.T` (tied,
the default) or `inputs @ reverse_embeddings` (`tie_weights=False`: a second trainable
`(output_dim, input_dim)` weight from the same initializer), computed in `reverse_dtype` when
given, the logits optionally soft-capped `tanh(logits / cap) * cap`. The forward call is
Embedding's, its `mask_zero` mask set on the output (the layer computes no mask of its own).
Quantization (int8/int4) is not built, as for Embedding."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras.layers.embedding_layer import Embedding
from ndflow.keras.layers.merging_layers import set_mask
from ndflow.keras.ops import numpy_linear, numpy_math
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast


@keras_export("keras.layers.ReversibleEmbedding")
class ReversibleEmbedding(Embedding):
    """An Embedding that can also project back: `layer(ids)` embeds as `Embedding` does;
    `layer(hidden, reverse=True)` multiplies hidden states by the (transposed) embedding
    matrix to give vocabulary logits, as language models' output layers do.

    Args:
      input_dim: the vocabulary size.
      output_dim: the embedding size.
      tie_weights: whether the reverse projection reuses the embedding matrix (else a
        separate one is learned).
      embeddings_initializer: the matrix' initializer (default "uniform").
      embeddings_regularizer: optional penalty on the matrix.
      embeddings_constraint: optional projection of the matrix after each update.
      mask_zero: whether index 0 is padding (masked).
      reverse_dtype: optional dtype the reverse projection computes in.
      logit_soft_cap: optional float c: logits become `c * tanh(logits / c)`.
      **kwargs: Layer arguments (name, dtype, ...).
    """

    def __init__(self, input_dim, output_dim, tie_weights=True,
                 embeddings_initializer="uniform", embeddings_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, reverse_dtype=None,
                 logit_soft_cap=None, **kwargs):
        # (set first: Embedding builds in __init__ when given `weights`)
        self.tie_weights = tie_weights
        self.reverse_dtype = reverse_dtype
        self.logit_soft_cap = logit_soft_cap
        super().__init__(input_dim, output_dim, embeddings_initializer=embeddings_initializer,
                         embeddings_regularizer=embeddings_regularizer,
                         embeddings_constraint=embeddings_constraint, mask_zero=mask_zero,
                         **kwargs)

    def build(self, input_shape=None) -> None:
        if self.built:
            return
        super().build(input_shape)
        if not self.tie_weights:
            self.reverse_embeddings = self.add_weight(
                shape=(self.output_dim, self.input_dim),
                initializer=self.embeddings_initializer, name="reverse_embeddings",
                trainable=True)

    def call(self, inputs, reverse=False):
        if not reverse:
            result = super().call(inputs)
            mask = super().compute_mask(inputs)
            if mask is not None:
                set_mask(result, mask)
            return result
        kernel = transpose(self.embeddings) if self.tie_weights else self.reverse_embeddings
        if self.reverse_dtype is not None:
            inputs, kernel = cast(inputs, self.reverse_dtype), cast(kernel, self.reverse_dtype)
        logits = numpy_linear.matmul(inputs, kernel)
        if self.logit_soft_cap is not None:
            cap = self.logit_soft_cap
            logits = numpy_math.multiply(numpy_math.tanh(numpy_math.divide(logits, cap)), cap)
        return logits

    def compute_mask(self, inputs, mask=None):
        return None   # (the forward call sets the mask itself)

    def compute_output_shape(self, input_shape, reverse=False):
        output_shape = list(input_shape)
        if reverse:
            output_shape[-1] = self.input_dim
        else:
            output_shape += [self.output_dim]
        return output_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "tie_weights": self.tie_weights,
                "reverse_dtype": self.reverse_dtype, "logit_soft_cap": self.logit_soft_cap}
