"""`keras.layers.GroupQueryAttention` (Keras 3's GroupedQueryAttention): attention with
fewer key/value heads than query heads, each key/value head shared by a group of query heads.
EinsumDense projections named query / key / value / attention_output, as Keras 3 saves them."""

from __future__ import annotations

import math

from ndflow.core.api_export import keras_export
from ndflow.keras import constraint_functions as constraints
from ndflow.keras import regularizer_functions as regularizers
from ndflow.keras.layers.activation_layers import Softmax
from ndflow.keras.layers.base_layer import _BUILTIN_LAYERS, Layer
from ndflow.keras.layers.call_arguments import shape_tuple
from ndflow.keras.layers.core_layers import Dropout
from ndflow.keras.layers.einsum_dense import EinsumDense
from ndflow.keras.layers.multi_head_attention import (
    ATTENTION_CALL,
    PROJECTION_ARGS,
    MultiHeadAttention,
    attention_shapes,
    dot_product_attention,
)
from ndflow.keras.layers.weight_options import set_kernel_and_bias_options
from ndflow.ops import init_ops
from ndflow.ops.array_builders import repeat
from ndflow.ops.array_core import expand_dims, identity
from ndflow.ops.cast import cast
from ndflow.ops.einsum import einsum


@keras_export("keras.layers.GroupQueryAttention")
class GroupedQueryAttention(Layer):
    __doc__ = f"""Grouped-query attention (Ainslie et al., 2023): `num_query_heads` query heads
    share `num_key_value_heads` key/value heads (each key/value head serves a group of
    query heads), which cuts the key/value projections' size; one key/value head is
    multi-query attention.

    {ATTENTION_CALL}

    Saved as "GroupQueryAttention", the name Keras exports it under.

    Args:
      head_dim: the size of each head.
      num_query_heads: the number of query heads.
      num_key_value_heads: the number of key/value heads (a divisor of
        `num_query_heads`).
      dropout: the fraction of attention weights dropped in training.
      use_bias: whether the projections add biases.
      sliding_window: optional int w: each position attends only within distance < w.
      flash_attention: accepted for Keras' signature.
      {PROJECTION_ARGS}
    """

    _keras_class_name = "GroupQueryAttention"

    def __init__(self, head_dim, num_query_heads, num_key_value_heads, dropout=0.0,
                 use_bias=True, sliding_window=None, flash_attention=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, use_gate=False, seed=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.head_dim, self.num_query_heads = head_dim, num_query_heads
        self.num_key_value_heads = num_key_value_heads
        if num_query_heads % num_key_value_heads != 0:
            raise ValueError("`num_query_heads` must be divisible by `num_key_value_heads`.")
        self.num_repeats = num_query_heads // num_key_value_heads
        self.dropout, self.use_bias, self.use_gate = dropout, use_bias, use_gate
        if sliding_window is not None and (not isinstance(sliding_window, int)
                                           or sliding_window <= 0):
            raise ValueError("`sliding_window` must be `None` or a positive integer. "
                             f"Received: sliding_window={sliding_window}")
        self.sliding_window = sliding_window
        self._flash_attention = flash_attention
        set_kernel_and_bias_options(self, kernel_initializer, bias_initializer, kernel_regularizer,
                                    bias_regularizer, kernel_constraint, bias_constraint)
        self._gqa_activity_regularizer = regularizers.get(activity_regularizer)
        self.seed = seed
        self._inverse_sqrt_head_dim = 1.0 / math.sqrt(float(head_dim))
        if flash_attention and dropout > 0.0:
            raise ValueError("Dropout is not supported when flash attention is enabled. "
                             "Please set dropout to 0.0 to use flash attention.")
        self._shapes_dict = None

    # (no public query_dense ... properties: Keras 3 saves the projections under their
    # private names, _query_dense ...)

    def _dense(self, equation, out_shape, bias_axes, name, activation=None):
        return EinsumDense(
            equation, output_shape=out_shape, bias_axes=bias_axes if self.use_bias else None,
            activation=activation, name=name, kernel_regularizer=self.kernel_regularizer,
            bias_regularizer=self.bias_regularizer,
            activity_regularizer=self._gqa_activity_regularizer,
            kernel_constraint=self.kernel_constraint, bias_constraint=self.bias_constraint,
            dtype=self.dtype_policy,
            kernel_initializer=init_ops.get(init_ops.serialize(self.kernel_initializer)),
            bias_initializer=init_ops.get(init_ops.serialize(self.bias_initializer)))

    def build(self, query_shape, value_shape=None, key_shape=None) -> None:
        self._shapes_dict, query_shape, value_shape, key_shape = attention_shapes(
            query_shape, value_shape, key_shape)
        self.feature_dim = query_shape[-1]
        q, kv = (None, self.num_query_heads, self.head_dim), \
            (None, self.num_key_value_heads, self.head_dim)
        with self._name_scope_if_outside():
            self._query_dense = self._dense("bqm,muh->bquh", q, "uh", "query")
            self._query_dense.build(query_shape)
            self._key_dense = self._dense("bkm,mvh->bkvh", kv, "vh", "key")
            self._key_dense.build(key_shape)
            if self.use_gate:
                self._gate_dense = self._dense("bqm,muh->bquh", q, "uh", "gate", "sigmoid")
                self._gate_dense.build(query_shape)
            self._value_dense = self._dense("bkm,mvh->bkvh", kv, "vh", "value")
            self._value_dense.build(value_shape)
            self._softmax = Softmax(axis=-1, dtype=self.dtype_policy)
            self._dropout_layer = Dropout(rate=self.dropout, dtype=self.dtype_policy,
                                          seed=self.seed)
            self._output_dense = self._dense("bquh,uhm->bqm", (None, self.feature_dim), "m",
                                             "attention_output")
            self._output_dense.build((None, None, self.num_query_heads, self.head_dim))
        self.built = True

    get_build_config = MultiHeadAttention.get_build_config
    build_from_config = MultiHeadAttention.build_from_config

    def __call__(self, query, value=None, key=None, **kwargs):
        if value is None:
            raise TypeError(f"Layer {self.name}: call() needs `query` and `value`.")
        if not self.built:
            self.build(shape_tuple(query), shape_tuple(value),
                       None if key is None else shape_tuple(key))
        return super().__call__(query, value, key, **kwargs)

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None,
             attention_mask=None, return_attention_scores=False, training=None,
             use_causal_mask=False):
        # Keras fills the *_mask arguments from the masks the tensors carry
        query_mask = getattr(query, "_keras_mask", None) if query_mask is None else query_mask
        if value_mask is None:
            value_mask = getattr(value, "_keras_mask", None)
        if key is not None and key_mask is None:
            key_mask = getattr(key, "_keras_mask", None)
        key = value if key is None else key
        query, value, key = (identity(t) if getattr(t, "_keras_mask", None) is not None
                             else t for t in (query, value, key))
        attention_mask = MultiHeadAttention._compute_attention_mask(
            self, query, value, query_mask=query_mask, value_mask=value_mask,
            key_mask=key_mask, attention_mask=attention_mask, use_causal_mask=use_causal_mask)
        gate = self._gate_dense(query) if self.use_gate else None
        query = self._query_dense(query)
        key = repeat(self._key_dense(key), self.num_repeats, axis=2)
        value = repeat(self._value_dense(value), self.num_repeats, axis=2)
        if self.dropout > 0.0 or return_attention_scores:
            query = query * cast(self._inverse_sqrt_head_dim, query.dtype)
            scores = einsum("bquh,bkuh->buqk", query, key)
            if attention_mask is not None:
                for _ in range(4 - attention_mask.shape.rank):
                    attention_mask = expand_dims(attention_mask, -3)
            scores = self._softmax(scores, mask=attention_mask)
            weights = self._dropout_layer(scores, training=training) if self.dropout > 0.0 \
                else scores
            output = einsum("buqk,bkuh->bquh", weights, value)
        else:   # Keras' fused path
            output = dot_product_attention(query, key, value, self._inverse_sqrt_head_dim,
                                           attention_mask)
        output = self._output_dense(output * gate if gate is not None else output)
        return (output, scores) if return_attention_scores else output

    @property
    def _sliding_window(self):   # the name MultiHeadAttention's mask code reads
        return self.sliding_window

    _positions = staticmethod(MultiHeadAttention._positions)
    _compute_causal_mask = MultiHeadAttention._compute_causal_mask

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        value_shape = query_shape if value_shape is None else value_shape
        key_shape = value_shape if key_shape is None else key_shape
        if query_shape[-1] != value_shape[-1]:
            raise ValueError("The last dimension of `query_shape` and `value_shape` must be "
                             f"equal, but are {query_shape[-1]}, {value_shape[-1]}. Received: "
                             f"query_shape={query_shape}, value_shape={value_shape}")
        if tuple(value_shape[1:-1]) != tuple(key_shape[1:-1]):
            raise ValueError("All dimensions of `value` and `key`, except the last one, must "
                             f"be equal. Received: value_shape={value_shape} and "
                             f"key_shape={key_shape}")
        return tuple(query_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "head_dim": self.head_dim,
                "num_query_heads": self.num_query_heads,
                "num_key_value_heads": self.num_key_value_heads, "use_bias": self.use_bias,
                "use_gate": self.use_gate, "sliding_window": self.sliding_window,
                "dropout": self.dropout,
                "kernel_initializer": init_ops.serialize(self.kernel_initializer),
                "bias_initializer": init_ops.serialize(self.bias_initializer),
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "activity_regularizer": regularizers.serialize(self._gqa_activity_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint),
                "seed": self.seed}


# Keras' files name the class "GroupQueryAttention"
_BUILTIN_LAYERS["GroupQueryAttention"] = GroupedQueryAttention
