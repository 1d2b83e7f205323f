"""Embedding + LSTM(128) text classifier, Keras `fit` (issue 54): vocabulary 10,000, 100
tokens per sequence, 64-wide embedding, batch 64, Adam, sparse categorical cross-entropy from
logits, accuracy metric; ndflow against TensorFlow 2.21 in the same run. `--cell gru` runs
the same model with GRU(128).

    python benchmarks/models/lstm_classifier.py [--cell lstm|gru] [--rounds 2] [--epochs 3]
                                                [--no-jit-row]

The LSTM step is ~3.8 GFLOP of small GEMMs (per token 2 x 64 x (64 + 128) x 512 forward,
three times that with the gradients), sequential over the 100 steps; the GRU's is 3/4 of it.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

VOCAB, STEPS, EMBED, UNITS, BATCH, BATCHES = 10_000, 100, 64, 128, 64, 20


def _gates() -> int:
    return 3 if "gru" in sys.argv else 4


def flops() -> float:
    forward = 2 * BATCH * STEPS * (EMBED + UNITS) * _gates() * UNITS
    return 3 * forward


def bytes_moved() -> float:
    g = _gates()
    adam = 7 * 4 * (VOCAB * EMBED + g * UNITS * (EMBED + UNITS + 2))  # var, m, v, grad
    gates = 2 * 4 * BATCH * STEPS * g * UNITS                         # kept for the backward
    return adam + gates


def setup(tf, jit: bool = False, cell: str = "lstm") -> harness.FitWorkload:
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.integers(0, VOCAB, size=(BATCH * BATCHES, STEPS)).astype("int32")
    y = rng.integers(0, 2, size=(BATCH * BATCHES,)).astype("int32")
    keras = tf.keras
    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.Input((STEPS,), dtype="int32"),
                              keras.layers.Embedding(VOCAB, EMBED),
                              getattr(keras.layers, cell.upper())(UNITS),
                              keras.layers.Dense(2)])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"], jit_compile=jit)
    return harness.FitWorkload(model, x, y, BATCH)


def run(tf, args) -> dict:
    return harness.measure(tf, setup(tf, bool(args.jit), args.cell), args.epochs)


if __name__ == "__main__":
    harness.main(__file__, __doc__, run, flops(), bytes_moved(), extra_args=[
        lambda p: p.add_argument("--cell", choices=("lstm", "gru"), default="lstm")])
