"""The docstrings of Attention and AdditiveAttention (attention_layers.py; attached at its end)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "dropout": "the fraction of attention weights dropped in training.",
}


# How both layers are called, after their first paragraph.
_CALLED = """

    Called as `layer([query, value])` or `layer([query, value, key])` (key defaults to
    value), with query (batch, Tq, dim) and value/key (batch, Tv, dim); optional
    `mask=[query_mask, value_mask]`, `return_attention_scores=True` (also returns the
    (batch, Tq, Tv) weights) and `use_causal_mask=True` (position i attends to j <= i).
    The output has shape (batch, Tq, dim)."""

DOCS = docs_with_args(_ARGS, {
    "Attention": (
        "Dot-product (Luong-style) attention: `softmax(scores) @ value`, the scores being\n"
        "    `query @ key^T` (times a learned scalar `scale` with `use_scale`) or, with\n"
        '    `score_mode="concat"`, `sum(tanh(query + key))`.'
        + _CALLED,
        ["use_scale: whether to learn a scalar scaling the scores.",
         'score_mode: "dot" (the default) or "concat".', "dropout",
         "seed: an int for reproducible dropout.",
         "**kwargs: Layer arguments (name, dtype, ...)."],
        "", """

    Example:

    >>> q, v = tf.zeros((2, 3, 4)), tf.ones((2, 5, 4))
    >>> tf.keras.layers.Attention()([q, v]).shape
    TensorShape([2, 3, 4])"""),
    "AdditiveAttention": (
        "Additive (Bahdanau-style) attention: the scores are\n"
        "    `sum(scale * tanh(query + key), axis=-1)`, `scale` a learned vector over the "
        "features\n"
        "    (with `use_scale`), then `softmax(scores) @ value`."
        + _CALLED,
        ["use_scale: whether to learn the feature scaling (default True).", "dropout",
         "**kwargs: Layer arguments (name, dtype, seed, ...)."],
        ""),
})
