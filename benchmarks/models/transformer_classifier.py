"""Transformer encoder text classifier, Keras `fit` (issue 54), written as Keras' own
"Text classification with Transformer" example writes it: token and position embeddings,
one encoder block (MultiHeadAttention, residual adds, LayerNormalization, a ReLU feed-forward
network, Dropout), global average pooling, Dropout, Dense; 200 tokens, vocabulary 20,000,
embedding 32, 2 heads, feed-forward 32, batch 32, Adam, sparse categorical cross-entropy.

    python benchmarks/models/transformer_classifier.py [--rounds 2] [--epochs 3]
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

VOCAB, MAXLEN, EMBED, HEADS, FF, BATCH, BATCHES = 20_000, 200, 32, 2, 32, 32, 30


def flops() -> float:
    tokens = BATCH * MAXLEN
    projections = 2 * tokens * EMBED * HEADS * EMBED * 4       # q, k, v, output
    attention = 2 * 2 * BATCH * HEADS * MAXLEN * MAXLEN * EMBED  # scores, weighted sum
    ffn = 2 * tokens * (EMBED * FF + FF * EMBED)
    return 3 * (projections + attention + ffn)


def bytes_moved() -> float:
    adam = 7 * 4 * (VOCAB * EMBED + MAXLEN * EMBED)
    scores = 3 * 4 * BATCH * HEADS * MAXLEN * MAXLEN   # softmax written, read twice
    return adam + scores


def build(tf):
    keras, layers = tf.keras, tf.keras.layers

    class TransformerBlock(layers.Layer):
        def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
            super().__init__()
            self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
            self.ffn = keras.Sequential([layers.Dense(ff_dim, activation="relu"),
                                         layers.Dense(embed_dim)])
            self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
            self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
            self.dropout1 = layers.Dropout(rate)
            self.dropout2 = layers.Dropout(rate)

        def call(self, inputs, training=False):
            attn_output = self.att(inputs, inputs)
            attn_output = self.dropout1(attn_output, training=training)
            out1 = self.layernorm1(inputs + attn_output)
            ffn_output = self.ffn(out1)
            ffn_output = self.dropout2(ffn_output, training=training)
            return self.layernorm2(out1 + ffn_output)

    class TokenAndPositionEmbedding(layers.Layer):
        def __init__(self, maxlen, vocab_size, embed_dim):
            super().__init__()
            self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
            self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

        def call(self, x):
            maxlen = tf.shape(x)[-1]
            positions = tf.range(start=0, limit=maxlen, delta=1)
            return self.token_emb(x) + self.pos_emb(positions)

    inputs = layers.Input(shape=(MAXLEN,))
    x = TokenAndPositionEmbedding(MAXLEN, VOCAB, EMBED)(inputs)
    x = TransformerBlock(EMBED, HEADS, FF)(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dropout(0.1)(x)
    x = layers.Dense(20, activation="relu")(x)
    x = layers.Dropout(0.1)(x)
    outputs = layers.Dense(2, activation="softmax")(x)
    return keras.Model(inputs=inputs, outputs=outputs)


def setup(tf, jit: bool = False) -> harness.FitWorkload:
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.integers(0, VOCAB, size=(BATCH * BATCHES, MAXLEN)).astype("int32")
    y = rng.integers(0, 2, size=(BATCH * BATCHES,)).astype("int32")
    tf.keras.utils.set_random_seed(1)
    model = build(tf)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"], jit_compile=jit)
    return harness.FitWorkload(model, x, y, BATCH)


def run(tf, args) -> dict:
    return harness.measure(tf, setup(tf, bool(args.jit)), args.epochs)


if __name__ == "__main__":
    harness.main(__file__, __doc__, run, flops(), bytes_moved())
