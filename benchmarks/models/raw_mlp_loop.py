"""A raw-variable MLP training loop (issue 54): 784-512-512-10 `tf.Variable`s, `tf.matmul`
and `tf.nn.relu` in a `tf.function` step with a GradientTape and a Keras optimizer's
`apply_gradients` (Adam), batch 256, the loss fetched every step as a loop printing it does.

    python benchmarks/models/raw_mlp_loop.py [--rounds 2] [--epochs 3]
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

SIZES, BATCH, BATCHES = (784, 512, 512, 10), 256, 20


def _params() -> int:
    return sum(a * b + b for a, b in zip(SIZES, SIZES[1:]))


def flops() -> float:
    forward = sum(2 * BATCH * a * b for a, b in zip(SIZES, SIZES[1:]))
    first = 2 * BATCH * SIZES[0] * SIZES[1]     # no gradient w.r.t. the input
    return 3 * forward - first


def bytes_moved() -> float:
    return 7 * 4 * _params()   # Adam: var, m, v read and written, the gradient read


def mlp_step(tf, optimizer, jit: bool = False, seed: int = 0):
    """The raw-variable MLP's `tf.function` step (x, y) -> loss with its own `tf.Variable`s,
    trained by `optimizer` (benchmarks/contention.py runs it with SGD)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    weights = [tf.Variable(rng.normal(0, 0.05, (a, b)).astype(np.float32))
               for a, b in zip(SIZES, SIZES[1:])]
    biases = [tf.Variable(np.zeros(b, np.float32)) for b in SIZES[1:]]
    params = weights + biases

    @tf.function(jit_compile=jit)
    def step(x, y):
        with tf.GradientTape() as tape:
            h = x
            for i, (w, b) in enumerate(zip(weights, biases)):
                h = tf.matmul(h, w) + b
                if i < len(weights) - 1:
                    h = tf.nn.relu(h)
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        optimizer.apply_gradients(zip(tape.gradient(loss, params), params))
        return loss
    return step


def setup(tf, jit: bool = False) -> harness.LoopWorkload:
    import numpy as np
    step = mlp_step(tf, tf.keras.optimizers.Adam(1e-3), jit)
    rng = np.random.default_rng(1)
    batches = [(tf.constant(rng.random((BATCH, SIZES[0]), dtype=np.float32)),
                tf.constant(rng.integers(0, 10, BATCH).astype(np.int64)))
               for _ in range(BATCHES)]
    return harness.LoopWorkload(step, batches)


def run(tf, args) -> dict:
    return harness.measure(tf, setup(tf, bool(args.jit)), args.epochs)


if __name__ == "__main__":
    harness.main(__file__, __doc__, run, flops(), bytes_moved())
