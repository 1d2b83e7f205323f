"""`keras.layers.MultiHeadAttention` with Keras 3's structure: EinsumDense projections named
query / key / value / attention_output (reachable as `query_dense` ...), so `.keras` and
`.weights.h5` files written by Keras 3 load; attention over any `attention_axes`; the
query's Keras mask and the value's / key's masks, `attention_mask` and `use_causal_mask`
merged into one boolean mask."""

from __future__ import annotations

import math
import string

from ndflow.core import save_context
from ndflow.core.api_export import keras_export
from ndflow.keras import constraint_functions as constraints
from ndflow.keras import regularizer_functions as regularizers
from ndflow.keras.layers.activation_layers import Softmax, _large_negative
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.call_arguments import shape_tuple
from ndflow.keras.layers.core_layers import Dropout
from ndflow.keras.layers.einsum_dense import EinsumDense
from ndflow.ops import arithmetic, attention, comparison, init_ops, nn_activation
from ndflow.ops.array_core import expand_dims, identity, reshape, shape
from ndflow.ops.array_range import range as tf_range
from ndflow.ops.cast import cast
from ndflow.ops.einsum import einsum


def _letters(n: int, offset: int = 0) -> str:
    return string.ascii_lowercase[offset:offset + n]


def build_proj_equation(free_dims: int, bound_dims: int, output_dims: int):
    """(equation, bias axes, output rank) of a projection keeping `free_dims` input axes,
    contracting `bound_dims` and producing `output_dims` (Keras 3's letters)."""
    free = _letters(free_dims)
    bound = _letters(bound_dims, free_dims)
    out = _letters(output_dims, free_dims + bound_dims)
    return f"{free}{bound},{bound}{out}->{free}{out}", out, free_dims + output_dims


def build_attention_equation(rank: int, attn_axes: tuple):
    """(query-key product equation, combination equation, scores rank) for projected
    tensors of `rank` (batch, ..., heads, channels) attending over `attn_axes`."""
    target = _letters(rank)
    batch_dims = [i for i in range(rank) if i not in attn_axes and i != rank - 1]
    source, offset = "", rank
    for i in range(rank):
        if i in batch_dims or i == rank - 1:
            source += target[i]
        else:
            source += string.ascii_lowercase[offset]
            offset += 1
    product = ("".join(target[i] for i in batch_dims) + "".join(target[i] for i in attn_axes)
               + "".join(source[i] for i in attn_axes))
    return f"{source},{target}->{product}", f"{product},{source}->{target}", len(product)


def dot_product_attention(query, key, value, scale: float, attention_mask=None):
    """The attention path Keras 3's attention layers take through `ops.dot_product_attention`
    (no dropout, no returned scores) for (batch, length, heads, depth) projections, where a
    fully masked query row averages all the values instead of giving zeros: one fused
    _ScaledDotProductAttention op, or while a SavedModel is written, its portable form."""
    if attention_mask is not None:
        for _ in range(4 - attention_mask.shape.rank):
            attention_mask = expand_dims(attention_mask, -3)
        attention_mask = cast(attention_mask, "bool")
    if query.dtype.is_floating and not save_context.in_save_context():
        return attention.scaled_dot_product_attention(query, key, value, scale, attention_mask)
    scores = einsum("btnh,bsnh->bnts", query * cast(scale, query.dtype), key)
    if attention_mask is not None:
        scores = arithmetic.select_v2(attention_mask, scores,
                                      cast(_large_negative(scores.dtype), scores.dtype))
    return einsum("bnts,bsnh->btnh", nn_activation.softmax(scores, axis=-1), value)


def _output_shape(output_rank: int, known_last_dims) -> list:
    return [None] * (output_rank - len(known_last_dims)) + list(known_last_dims)


def attention_shapes(query_shape, value_shape=None, key_shape=None) -> tuple:
    """(Keras 3's build-config `shapes_dict` naming the shapes a call was given, and the
    query, value and key shapes as tuples: value defaults to query, key to value)."""
    query_shape = tuple(query_shape)
    value_shape = query_shape if value_shape is None else tuple(value_shape)
    shapes = {"query_shape": query_shape, "value_shape": value_shape}
    if key_shape is not None:
        shapes["key_shape"] = key_shape = tuple(key_shape)
    else:
        key_shape = value_shape
    return shapes, query_shape, value_shape, key_shape


# The call convention and the projection arguments MultiHeadAttention's docstring shares with
# GroupedQueryAttention's.
ATTENTION_CALL = """Called as `layer(query, value, key=None, attention_mask=None,
    return_attention_scores=False, training=None, use_causal_mask=False)`: query
    (batch, Tq, dim), value and key (batch, Tv, dim) (key defaults to value); the output
    has query's shape (or `output_shape`). `attention_mask` (batch, Tq, Tv) is True where
    attention is allowed; `use_causal_mask` lets position i attend to j <= i only; with
    `return_attention_scores` the per-head weights are returned too."""
PROJECTION_ARGS = """kernel_initializer: the projections' initializer (default "glorot_uniform").
      bias_initializer: the biases' initializer (default zeros).
      kernel_regularizer, bias_regularizer, activity_regularizer: optional penalties.
      kernel_constraint, bias_constraint: optional projections after each update.
      use_gate: whether to gate the attention output with a learned sigmoid of the
        query.
      seed: an int for reproducible dropout.
      **kwargs: Layer arguments (name, dtype, ...)."""


@keras_export("keras.layers.MultiHeadAttention")
class MultiHeadAttention(Layer):
    __doc__ = f"""Multi-head attention (Vaswani et al., 2017): query, key and value are
    projected into `num_heads` heads, each computes scaled dot-product attention, and the
    heads' results are concatenated and projected back. With query = value it is
    self-attention.

    {ATTENTION_CALL}

    Args:
      num_heads: the number of heads.
      key_dim: the size of each head's query and key projections.
      value_dim: the size of each head's value projection (default `key_dim`).
      dropout: the fraction of attention weights dropped in training.
      use_bias: whether the projections add biases.
      output_shape: the output's last dimension(s) (default query's last dimension).
      attention_axes: the axes attention runs over (default the sequence axes, all but
        batch, heads and features).
      sliding_window: optional int w: each position attends only within distance < w.
      flash_attention: accepted for Keras' signature (the same numbers either way).
      {PROJECTION_ARGS}

    Raises:
      ValueError: non-positive `num_heads`, `key_dim` or `value_dim`, a bad
        `output_shape` or `sliding_window`.

    Example:

    >>> layer = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    >>> x = tf.zeros((1, 5, 8))
    >>> layer(x, x).shape
    TensorShape([1, 5, 8])
    """

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, attention_axes=None, sliding_window=None,
                 flash_attention=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 use_gate=False, seed=None, **kwargs):
        if not isinstance(num_heads, int) or num_heads <= 0:
            raise ValueError("Received an invalid value for argument `num_heads`, expected a "
                             f"positive integer. Received: num_heads={num_heads}")
        if not isinstance(key_dim, int) or key_dim <= 0:
            raise ValueError("Received an invalid value for argument `key_dim`, expected a "
                             f"positive integer. Received: key_dim={key_dim}")
        if value_dim is not None and (not isinstance(value_dim, int) or value_dim <= 0):
            raise ValueError("Received an invalid value for argument `value_dim`, expected a "
                             f"positive integer or `None`. Received: value_dim={value_dim}")
        super().__init__(**kwargs)
        self.supports_masking = True
        self._num_heads, self._key_dim = num_heads, key_dim
        self._value_dim = value_dim if value_dim else key_dim
        self._dropout, self._use_bias, self._use_gate = dropout, use_bias, use_gate
        if output_shape:
            if isinstance(output_shape, int):
                output_shape = (output_shape,)
            try:
                output_shape = tuple(output_shape)
            except TypeError:
                raise ValueError(f"Invalid `output_shape`: {output_shape}. When specified, the "
                                 "`output_shape` should be of type tuple, list, or int.") \
                    from None
        self._output_shape = output_shape
        self._flash_attention = flash_attention   # no fused kernel here: same numbers
        self._kernel_initializer = init_ops.get(kernel_initializer)
        self._bias_initializer = init_ops.get(bias_initializer)
        self._kernel_regularizer = regularizers.get(kernel_regularizer)
        self._bias_regularizer = regularizers.get(bias_regularizer)
        self._activity_regularizer = regularizers.get(activity_regularizer)
        self._kernel_constraint = constraints.get(kernel_constraint)
        self._bias_constraint = constraints.get(bias_constraint)
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        elif attention_axes and not isinstance(attention_axes, (list, tuple)):
            raise ValueError("`attention_axes` must be an int, list, or tuple."
                             f"Received: attention_axes={attention_axes}")
        self._attention_axes = attention_axes
        if sliding_window is not None and (not isinstance(sliding_window, int)
                                           or sliding_window <= 0):
            raise ValueError("`sliding_window` must be `None` or a positive integer. "
                             f"Received: sliding_window={sliding_window}")
        self._sliding_window = sliding_window
        self.seed = seed
        self._inverse_sqrt_key_dim = 1.0 / math.sqrt(float(key_dim))
        if flash_attention and dropout > 0.0:
            raise ValueError("Dropout is not supported when flash attention is enabled. "
                             "Please set dropout to 0.0 to use flash attention.")
        self._shapes_dict = None

    num_heads = property(lambda self: self._num_heads)
    key_dim = property(lambda self: self._key_dim)
    value_dim = property(lambda self: self._value_dim)
    dropout = property(lambda self: self._dropout)
    use_bias = property(lambda self: self._use_bias)
    attention_axes = property(lambda self: self._attention_axes)
    # Keras 3 saves the projections under these public names (object-tree paths).
    query_dense = property(lambda self: self._query_dense)
    key_dense = property(lambda self: self._key_dense)
    value_dense = property(lambda self: self._value_dense)
    output_dense = property(lambda self: self._output_dense)

    def get_config(self) -> dict:
        return {**super().get_config(), "num_heads": self._num_heads,
                "key_dim": self._key_dim, "value_dim": self._value_dim,
                "dropout": self._dropout, "use_bias": self._use_bias,
                "use_gate": self._use_gate, "output_shape": self._output_shape,
                "attention_axes": self._attention_axes,
                "sliding_window": self._sliding_window,
                "kernel_initializer": init_ops.serialize(self._kernel_initializer),
                "bias_initializer": init_ops.serialize(self._bias_initializer),
                "kernel_regularizer": regularizers.serialize(self._kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self._bias_regularizer),
                "activity_regularizer": regularizers.serialize(self._activity_regularizer),
                "kernel_constraint": constraints.serialize(self._kernel_constraint),
                "bias_constraint": constraints.serialize(self._bias_constraint),
                "seed": self.seed}

    # -- building ----------------------------------------------------------------------------
    def _sublayer_kwargs(self) -> dict:
        return {"kernel_regularizer": self._kernel_regularizer,
                "bias_regularizer": self._bias_regularizer,
                "activity_regularizer": self._activity_regularizer,
                "kernel_constraint": self._kernel_constraint,
                "bias_constraint": self._bias_constraint, "dtype": self.dtype_policy,
                "kernel_initializer": init_ops.get(init_ops.serialize(
                    self._kernel_initializer)),
                "bias_initializer": init_ops.get(init_ops.serialize(self._bias_initializer))}

    def _projection(self, input_rank: int, last_dims, name: str, activation=None):
        equation, bias_axes, out_rank = build_proj_equation(input_rank - 1, 1, 2)
        return EinsumDense(equation, output_shape=_output_shape(out_rank - 1, last_dims),
                           bias_axes=bias_axes if self._use_bias else None,
                           activation=activation, name=name, **self._sublayer_kwargs())

    def build(self, query_shape, value_shape=None, key_shape=None) -> None:
        self._shapes_dict, query_shape, value_shape, key_shape = attention_shapes(
            query_shape, value_shape, key_shape)
        if value_shape[1:-1] != key_shape[1:-1]:
            raise ValueError("All dimensions of `value` and `key`, except the last one, must "
                             f"be equal. Received: value_shape={value_shape} and "
                             f"key_shape={key_shape}")
        heads = self._num_heads
        with self._name_scope_if_outside():
            self._query_dense = self._projection(len(query_shape), [heads, self._key_dim],
                                                 "query")
            self._query_dense.build(query_shape)
            self._key_dense = self._projection(len(key_shape), [heads, self._key_dim], "key")
            self._key_dense.build(key_shape)
            if self._use_gate:
                self._gate_dense = self._projection(len(query_shape), [heads, self._value_dim],
                                                    "gate", activation="sigmoid")
                self._gate_dense.build(query_shape)
            self._value_dense = self._projection(len(value_shape), [heads, self._value_dim],
                                                 "value")
            self._value_dense.build(value_shape)
            self._build_attention(len(value_shape) + 1)
            last = self._output_shape or [query_shape[-1]]
            equation, bias_axes, out_rank = build_proj_equation(len(query_shape) - 1, 2,
                                                                len(last))
            self._output_dense = EinsumDense(
                equation, output_shape=_output_shape(out_rank - 1, last),
                bias_axes=bias_axes if self._use_bias else None, name="attention_output",
                **self._sublayer_kwargs())
            projected = list(self._query_dense.compute_output_shape(query_shape))
            projected[-1] = self._value_dim
            self._output_dense.build(tuple(projected))
        self.built = True

    def _build_attention(self, rank: int) -> None:
        if self._attention_axes is None:
            self._attention_axes = tuple(range(1, rank - 2))
        else:
            self._attention_axes = tuple(a if a >= 0 else (rank - 1) + a
                                         for a in self._attention_axes)
        self._dot_product_equation, self._combine_equation, scores_rank = \
            build_attention_equation(rank, self._attention_axes)
        norm_axes = tuple(range(scores_rank - len(self._attention_axes), scores_rank))
        self._softmax = Softmax(axis=norm_axes, dtype=self.dtype_policy)
        self._dropout_layer = Dropout(rate=self._dropout, dtype=self.dtype_policy,
                                      seed=self.seed)

    def get_build_config(self):
        return None if self._shapes_dict is None else {"shapes_dict": self._shapes_dict}

    def build_from_config(self, config: dict) -> None:
        if not config or self.built:
            return
        if "shapes_dict" in config:
            shapes = {k: None if v is None else tuple(v)
                      for k, v in config["shapes_dict"].items()}
            self.build(**shapes)
        elif "input_shape" in config:
            self.build(tuple(config["input_shape"]))

    def __call__(self, query, value=None, key=None, **kwargs):
        if value is None:
            raise TypeError(f"Layer {self.name}: call() needs `query` and `value`.")
        if not self.built:   # the base builds from the first argument only: build from all
            self.build(shape_tuple(query), shape_tuple(value),
                       None if key is None else shape_tuple(key))
        outputs = super().__call__(query, value, key, **kwargs)
        if isinstance(outputs, tuple):   # the scores carry no mask
            try:
                outputs[1]._keras_mask = None
            except AttributeError:
                pass
        return outputs

    # -- computing ---------------------------------------------------------------------------
    def _masked_softmax(self, scores, attention_mask=None):
        if attention_mask is not None:
            axis = -len(self._attention_axes) * 2 - 1
            for _ in range(scores.shape.rank - attention_mask.shape.rank):
                attention_mask = expand_dims(attention_mask, axis)
        return self._softmax(scores, mask=attention_mask)

    def _compute_attention(self, query, key, value, attention_mask=None, training=None,
                           return_attention_scores=False):
        if self._dropout > 0.0 or return_attention_scores or query.shape.rank != 4:
            query = query * cast(self._inverse_sqrt_key_dim, query.dtype)
            scores = einsum(self._dot_product_equation, key, query)
            scores = self._masked_softmax(scores, attention_mask)
            final = (self._dropout_layer(scores, training=training) if self._dropout > 0.0
                     else scores)
            return einsum(self._combine_equation, final, value), scores
        if self._attention_axes == (1,):
            return dot_product_attention(query, key, value, self._inverse_sqrt_key_dim,
                                         attention_mask), None
        query = query * cast(self._inverse_sqrt_key_dim, query.dtype)
        scores = einsum(self._dot_product_equation, key, query)
        if attention_mask is not None:
            for _ in range(4 - attention_mask.shape.rank):
                attention_mask = expand_dims(attention_mask, -3)
            scores = arithmetic.select_v2(attention_mask, scores,
                                          cast(_large_negative(scores.dtype), scores.dtype))
        scores = nn_activation.softmax(scores, axis=-1)
        return einsum(self._combine_equation, scores, value), scores

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None,
             attention_mask=None, return_attention_scores=False, training=None,
             use_causal_mask=False):
        # Keras fills `value_mask` / `key_mask` from the masks the tensors carry (the key's
        # only when a key is given)
        if value_mask is None:
            value_mask = getattr(value, "_keras_mask", None)
        if key is not None and key_mask is None:
            key_mask = getattr(key, "_keras_mask", None)
        if key is None:
            key = value
        query_mask = getattr(query, "_keras_mask", None)
        # The projections must not see the masks. Keras 3 clears them on the caller's
        # tensors; its functional models still pass the masks recorded at construction
        # on to later layers (a residual Add keeps the padding mask), which is what keeping
        # the caller's tensors intact gives here: project copies.
        query, value, key = (identity(t) if getattr(t, "_keras_mask", None) is not None
                             else t for t in (query, value, key))
        attention_mask = self._compute_attention_mask(
            query, value, query_mask=query_mask, value_mask=value_mask, key_mask=key_mask,
            attention_mask=attention_mask, use_causal_mask=use_causal_mask)
        gate = self._gate_dense(query) if self._use_gate else None
        query = self._query_dense(query)
        key = self._key_dense(key)
        value = self._value_dense(value)
        output, scores = self._compute_attention(query, key, value, attention_mask, training,
                                                 return_attention_scores)
        output = self._output_dense(output * gate if gate is not None else output)
        if return_attention_scores:
            return output, scores
        return output

    def _compute_attention_mask(self, query, value, query_mask=None, value_mask=None,
                                key_mask=None, attention_mask=None, use_causal_mask=False):
        """The boolean [B, T, S] mask: the query mask as [B, T, 1], value and key masks as
        [B, 1, S], the causal and sliding-window masks as [1, T, S], and `attention_mask`,
        combined with AND."""
        auto = None

        def merge(a, b):
            return b if a is None else comparison.logical_and(a, b)
        if query_mask is not None:
            auto = expand_dims(cast(query_mask, "bool"), -1)
        if value_mask is not None:
            auto = merge(auto, expand_dims(cast(value_mask, "bool"), -2))
        if key_mask is not None:
            auto = merge(auto, expand_dims(cast(key_mask, "bool"), -2))
        if use_causal_mask:
            auto = merge(auto, self._compute_causal_mask(query, value))
        if self._sliding_window is not None:   # a band |t - s| < window
            rows, cols = self._positions(query, value)
            distance = arithmetic.maximum(rows - cols, cols - rows)
            auto = merge(auto, comparison.less(distance, self._sliding_window))
        if attention_mask is not None:
            attention_mask = cast(attention_mask, "bool")
        if auto is not None:
            attention_mask = auto if attention_mask is None else \
                comparison.logical_and(attention_mask, auto)
        return attention_mask

    @staticmethod
    def _positions(query, value):
        t = shape(query)[1]
        s = t if value is None else shape(value)[1]
        rows = reshape(tf_range(t), [1, -1, 1])
        cols = reshape(tf_range(s), [1, 1, -1])
        return rows, cols

    def _compute_causal_mask(self, query, value=None):
        """[1, T, S]: True where the key position is not after the query position."""
        rows, cols = self._positions(query, value)
        return comparison.greater_equal(rows, cols)

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        query_shape = tuple(query_shape)
        value_shape = query_shape if value_shape is None else tuple(value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        if value_shape[1:-1] != key_shape[1:-1]:
            raise ValueError("All dimensions of `value` and `key`, except the last one, must "
                             f"be equal. Received: value_shape={value_shape} and "
                             f"key_shape={key_shape}")
        if self._output_shape:
            return query_shape[:-1] + tuple(self._output_shape)
        return query_shape

