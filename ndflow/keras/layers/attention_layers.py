"""`keras.layers.Attention` (Luong-style dot or concat scores) and
`keras.layers.AdditiveAttention` (Bahdanau-style) on `[query, value]` or
`[query, value, key]`, with Keras 3's masking: the value mask drops keys, the query mask
zeroes outputs and is the output mask."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.keras.layers import attention_docs
from ndflow.keras.layers.base_layer import Layer
from ndflow.ops import arithmetic, comparison, linalg, math, nn_activation, nn_dropout
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import expand_dims, reshape, shape
from ndflow.ops.array_range import range as tf_range
from ndflow.ops.cast import cast
from ndflow.ops.reduction import reduce_sum


@keras_export("keras.layers.Attention")
class Attention(Layer):
    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.use_scale, self.score_mode, self.dropout, self.seed = (use_scale, score_mode,
                                                                     dropout, seed)
        if score_mode not in ("dot", "concat"):
            raise ValueError("Invalid value for argument score_mode. Expected one of "
                             f"{{'dot', 'concat'}}. Received: score_mode={score_mode}")
        self.scale = self.concat_score_weight = None
        self.supports_masking = True

    def build(self, input_shape) -> None:
        self._validate_inputs(input_shape)
        if self.use_scale:
            self.scale = self.add_weight((), "ones", name="scale")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight((), "ones", name="concat_score_weight")
        self.built = True

    def _calculate_scores(self, query, key):
        if self.score_mode == "dot":
            scores = linalg.matmul(query, key, transpose_b=True)
            return scores * self.scale if self.scale is not None else scores
        total = expand_dims(query, -2) + expand_dims(key, -3)
        if self.scale is not None:
            total = self.scale * total
        return self.concat_score_weight * reduce_sum(math.tanh(total), axis=-1)

    def _apply_scores(self, scores, value, scores_mask=None, training=False):
        if scores_mask is not None:
            padding = comparison.logical_not(scores_mask)
            big = 65504.0 if scores.dtype.name == "float16" else 1.0e9
            if padding.shape.rank == 2:
                padding = expand_dims(padding, -2)
            scores = arithmetic.select_v2(padding, scores - cast(big, scores.dtype), scores)
        weights = nn_activation.softmax(scores, axis=-1)
        if training and self.dropout > 0:
            weights = nn_dropout.dropout(weights, rate=self.dropout, seed=self.seed)
        return linalg.matmul(weights, value), weights

    @staticmethod
    def _calculate_score_mask(scores, v_mask, use_causal_mask):
        if not use_causal_mask:
            return v_mask
        dims = shape(scores)
        rows = reshape(tf_range(dims[-2]), [1, -1, 1])
        cols = reshape(tf_range(dims[-1]), [1, 1, -1])
        causal = comparison.greater_equal(rows, cols)
        if v_mask is not None:
            return comparison.logical_and(expand_dims(v_mask, -2), causal)
        return causal

    def call(self, inputs, mask=None, training=False, return_attention_scores=False,
             use_causal_mask=False):
        self._validate_inputs(inputs, mask)
        q, v = inputs[0], inputs[1]
        k = inputs[2] if len(inputs) > 2 else v
        q_mask = mask[0] if mask else None
        v_mask = mask[1] if mask else None
        if v_mask is not None:
            v_mask = cast(v_mask, "bool")
        scores = self._calculate_scores(q, k)
        scores_mask = self._calculate_score_mask(scores, v_mask, use_causal_mask)
        output, weights = self._apply_scores(scores, v, scores_mask, training=training)
        if q_mask is not None:
            keep = expand_dims(cast(q_mask, "bool"), -1)
            output = arithmetic.select_v2(keep, output, cast(0.0, output.dtype))
        if return_attention_scores:
            return output, weights
        return output

    def compute_mask(self, inputs, mask=None):
        self._validate_inputs(inputs, mask)
        if mask is None or mask[0] is None:
            return None
        return convert_to_tensor(mask[0])

    def compute_output_shape(self, input_shape):
        return (*tuple(input_shape[0])[:-1], tuple(input_shape[1])[-1])

    def _validate_inputs(self, inputs, mask=None) -> None:
        name = type(self).__name__
        if not isinstance(inputs, list):
            raise ValueError(f"{name} layer must be called on a list of inputs, namely "
                             "[query, value] or [query, value, key]. Received: "
                             f"inputs={inputs}.")
        if len(inputs) < 2 or len(inputs) > 3:
            raise ValueError(f"{name} layer accepts inputs list of length 2 or 3, namely "
                             "[query, value] or [query, value, key]. Received length: "
                             f"{len(inputs)}.")
        if mask is not None:
            if not isinstance(mask, list):
                raise ValueError(f"{name} layer mask must be a list, namely [query_mask, "
                                 f"value_mask]. Received: mask={mask}.")
            if len(mask) < 2 or len(mask) > 3:
                raise ValueError(f"{name} layer accepts mask list of length 2 or 3. "
                                 f"Received: inputs={inputs}, mask={mask}.")

    def get_config(self) -> dict:
        return {**super().get_config(), "use_scale": self.use_scale,
                "score_mode": self.score_mode, "dropout": self.dropout, "seed": self.seed}


@keras_export("keras.layers.AdditiveAttention")
class AdditiveAttention(Attention):
    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape) -> None:
        self._validate_inputs(input_shape)
        if self.use_scale:
            self.scale = self.add_weight((input_shape[0][-1],), "glorot_uniform",
                                         name="scale")
        self.built = True

    def _calculate_scores(self, query, key):
        total = math.tanh(expand_dims(query, -2) + expand_dims(key, -3))
        if self.use_scale:
            total = self.scale * total
        return reduce_sum(total, axis=-1)

    def get_config(self) -> dict:
        config = super().get_config()
        del config["score_mode"]
        return config


attach(globals(), attention_docs.DOCS)
