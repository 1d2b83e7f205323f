"""ResNet-20 v1 on CIFAR-10-shaped data (issue 54), as Keras' CIFAR-10 ResNet example builds
it (three stages of 3 basic blocks, 16/32/64 filters, BatchNorm, ReLU, a 1x1 projection where
the shape changes, global average pooling, softmax); Keras `fit` at batch 128 with Adam and
sparse categorical cross-entropy, and `predict` at batch 128; ndflow against TensorFlow 2.21
in the same run.

    python benchmarks/models/resnet20.py [--rounds 2] [--epochs 2]
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

BATCH, BATCHES = 128, 8


def _conv_flops() -> float:
    """Forward FLOPs of one image."""
    total, hw, cin = 2 * 32 * 32 * 16 * 3 * 9, 32, 16
    for stage, filters in enumerate((16, 32, 64)):
        for block in range(3):
            stride = 2 if stage and not block else 1
            out = hw // stride
            total += 2 * out * out * filters * cin * 9 + 2 * out * out * filters * filters * 9
            if stride == 2:
                total += 2 * out * out * filters * cin
            hw, cin = out, filters
    return total


def flops() -> float:
    return 3 * BATCH * _conv_flops()


def bytes_moved() -> float:
    return 7 * 4 * 272_000 + 4 * BATCH * 32 * 32 * 16 * 2 * 20   # Adam, activations


def build(tf):
    keras, layers = tf.keras, tf.keras.layers

    def conv_bn(x, filters, strides=1, activation=True):
        x = layers.Conv2D(filters, 3, strides=strides, padding="same",
                          kernel_initializer="he_normal",
                          kernel_regularizer=keras.regularizers.l2(1e-4))(x)
        x = layers.BatchNormalization()(x)
        return layers.Activation("relu")(x) if activation else x

    inputs = keras.Input((32, 32, 3))
    x = conv_bn(inputs, 16)
    for stage, filters in enumerate((16, 32, 64)):
        for block in range(3):
            strides = 2 if stage and not block else 1
            y = conv_bn(x, filters, strides)
            y = conv_bn(y, filters, activation=False)
            if strides == 2:
                x = layers.Conv2D(filters, 1, strides=2, padding="same",
                                  kernel_initializer="he_normal",
                                  kernel_regularizer=keras.regularizers.l2(1e-4))(x)
            x = layers.Activation("relu")(layers.add([x, y]))
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(10, activation="softmax", kernel_initializer="he_normal")(x)
    return keras.Model(inputs, outputs)


def setup(tf, jit: bool = False) -> harness.FitWorkload:
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.random((BATCH * BATCHES, 32, 32, 3), dtype=np.float32)
    y = rng.integers(0, 10, BATCH * BATCHES).astype("int32")
    tf.keras.utils.set_random_seed(1)
    model = build(tf)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"], jit_compile=jit)
    return harness.FitWorkload(model, x, y, BATCH)


def run(tf, args) -> dict:
    workload = setup(tf, bool(args.jit))
    result = harness.measure(tf, workload, args.epochs)
    model, x = workload.model, workload.x
    model.predict(x, batch_size=BATCH, verbose=0)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        model.predict(x, batch_size=BATCH, verbose=0)
        best = min(best, time.perf_counter() - t0)
    result["predict_ms"] = best / BATCHES * 1e3
    return result


if __name__ == "__main__":
    harness.main(__file__, __doc__, run, flops(), bytes_moved())
