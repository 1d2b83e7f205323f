"""The MNIST CNN written TF2-style (issue 54): the example's network (conv 5x5x32, pool,
conv 5x5x64, pool, dense 512, dropout, dense 10) as Keras layers, trained by a
`tf.function` step with a GradientTape and Keras SGD with momentum (no L2 term), batch 64;
ndflow against TensorFlow 2.21 in the same run. The TF1 formulation the remapper's passes
were tuned on is benchmarks/mnist_cnn.py.

    python benchmarks/models/mnist_tf2.py [--rounds 2] [--epochs 3]
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

BATCH, BATCHES = 64, 20


def flops() -> float:
    b = BATCH
    f = {"conv1": 2 * b * 28 * 28 * 32 * 25, "conv2": 2 * b * 14 * 14 * 64 * 25 * 32,
         "fc1": 2 * b * 3136 * 512, "fc2": 2 * b * 512 * 10}
    return 3 * sum(f.values()) - f["conv1"]


def bytes_moved() -> float:
    params = 5 * 5 * 32 + 5 * 5 * 32 * 64 + 3136 * 512 + 512 * 10
    return 5 * 4 * params   # momentum: var, accum read and written, gradient read


def setup(tf, jit: bool = False) -> harness.LoopWorkload:
    import numpy as np
    keras, layers = tf.keras, tf.keras.layers
    keras.utils.set_random_seed(1)
    model = keras.Sequential([
        keras.Input((28, 28, 1)), layers.Conv2D(32, 5, padding="same", activation="relu"),
        layers.MaxPooling2D(2), layers.Conv2D(64, 5, padding="same", activation="relu"),
        layers.MaxPooling2D(2), layers.Flatten(), layers.Dense(512, activation="relu"),
        layers.Dropout(0.5), layers.Dense(10)])
    opt = keras.optimizers.SGD(0.01, momentum=0.9)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    rng = np.random.default_rng(0)
    batches = [(tf.constant(rng.random((BATCH, 28, 28, 1), dtype=np.float32)),
                tf.constant(rng.integers(0, 10, BATCH).astype("int64")))
               for _ in range(BATCHES)]

    @tf.function(jit_compile=jit)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return harness.LoopWorkload(train_step, batches)


def run(tf, args) -> dict:
    return harness.measure(tf, setup(tf, bool(args.jit)), args.epochs)


if __name__ == "__main__":
    harness.main(__file__, __doc__, run, flops(), bytes_moved())
