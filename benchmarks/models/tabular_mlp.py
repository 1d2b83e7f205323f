"""A tabular MLP with BatchNormalization and Dropout, Keras `fit` (issue 54): 64 numeric
features, Dense 256 -> BatchNorm -> ReLU -> Dropout 0.3, Dense 128 -> BatchNorm -> ReLU ->
Dropout 0.3, Dense 1 sigmoid; batch 512, Adam, binary cross-entropy, metrics accuracy and
AUC; ndflow against TensorFlow 2.21 in the same run.

    python benchmarks/models/tabular_mlp.py [--rounds 2] [--epochs 3]

A small step (~0.1 GFLOP): what it measures is mostly per-op and per-step overhead
(BatchNorm's statistics, the AUC metric's thresholds, the optimizer's updates).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

FEATURES, BATCH, BATCHES = 64, 512, 30
LAYERS = (FEATURES, 256, 128, 1)


def flops() -> float:
    forward = sum(2 * BATCH * a * b for a, b in zip(LAYERS, LAYERS[1:]))
    return 3 * forward - 2 * BATCH * LAYERS[0] * LAYERS[1]


def bytes_moved() -> float:
    params = sum(a * b + b for a, b in zip(LAYERS, LAYERS[1:]))
    activations = 4 * BATCH * sum(LAYERS[1:-1]) * 6   # BN, ReLU, dropout and their grads
    return 7 * 4 * params + activations


def setup(tf, jit: bool = False) -> harness.FitWorkload:
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH * BATCHES, FEATURES)).astype("float32")
    y = (x[:, :4].sum(1) + 0.5 * rng.standard_normal(len(x)) > 0).astype("float32")
    keras, layers = tf.keras, tf.keras.layers
    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.Input((FEATURES,))])
    for units in LAYERS[1:-1]:
        model.add(layers.Dense(units))
        model.add(layers.BatchNormalization())
        model.add(layers.ReLU())
        model.add(layers.Dropout(0.3))
    model.add(layers.Dense(1, activation="sigmoid"))
    model.compile(optimizer="adam", loss="binary_crossentropy",
                  metrics=["accuracy", keras.metrics.AUC()], jit_compile=jit)
    return harness.FitWorkload(model, x, y, BATCH)


def run(tf, args) -> dict:
    return harness.measure(tf, setup(tf, bool(args.jit)), args.epochs)


if __name__ == "__main__":
    harness.main(__file__, __doc__, run, flops(), bytes_moved())
