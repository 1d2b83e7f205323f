"""TF2-style programs as TensorFlow's guides write them, run unchanged on ndflow.

- A `tf.Module` linear model trained with GradientTape in an eager Python loop (the "Basic
  training loops" guide).
- The same model trained inside one `tf.function` whose Python `for`/`if`/`break` on tensors
  AutoGraph turns into a while loop with a conditional early stop and a periodic tf.print.

Both are compared with full-batch gradient descent computed by NumPy in float64.
"""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf


class Linear(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(5.0, name="w")
        self.b = tf.Variable(0.0, name="b")

    def __call__(self, x):
        return self.w * x + self.b


def _data(n: int = 200):
    rng = np.random.default_rng(0)
    x = rng.normal(size=n).astype(np.float32)
    y = (3.0 * x + 2.0 + 0.1 * rng.normal(size=n)).astype(np.float32)
    return x, y


def _numpy_descent(x, y, lr: float, steps: int, tol: float | None = None):
    """Full-batch gradient descent on mean squared error in float64; (w, b, loss, steps run)."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    w, b = 5.0, 0.0
    loss = np.inf
    for step in range(steps):
        err = w * x + b - y
        loss = float(np.mean(err ** 2))
        w, b = w - lr * float(np.mean(2 * err * x)), b - lr * float(np.mean(2 * err))
        if tol is not None and loss < tol:
            return w, b, loss, step + 1
    return w, b, loss, steps


def test_module_linear_model_eager_training_loop():
    x, y = _data()
    model = Linear()
    assert [v.name for v in model.trainable_variables] == ["b:0", "w:0"]
    for _ in range(30):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(tf.constant(x)) - y))
        dw, db = tape.gradient(loss, [model.w, model.b])
        model.w.assign_sub(0.1 * dw)
        model.b.assign_sub(0.1 * db)
    w, b, ref_loss, _ = _numpy_descent(x, y, 0.1, 30)
    assert float(model.w.numpy()) == pytest.approx(w, rel=1e-4)
    assert float(model.b.numpy()) == pytest.approx(b, rel=1e-4)
    assert float(loss) == pytest.approx(ref_loss, rel=1e-4)


def test_training_loop_in_one_autograph_function(capfd):
    x, y = _data()
    model = Linear()
    ran = tf.Variable(0)

    @tf.function
    def train(x, y, steps, lr, tol):
        loss = tf.constant(np.inf)
        for step in tf.range(steps):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            dw, db = tape.gradient(loss, [model.w, model.b])
            model.w.assign_sub(lr * dw)
            model.b.assign_sub(lr * db)
            ran.assign_add(1)
            if step % 20 == 0:
                tf.print("step", step, "loss", loss)
            if loss < tol:
                break
        return loss

    loss = train(tf.constant(x), tf.constant(y), tf.constant(500), 0.1, 0.0105)
    w, b, ref_loss, ref_steps = _numpy_descent(x, y, 0.1, 500, tol=0.0105)
    assert int(ran.numpy()) == ref_steps < 500  # the conditional break stopped the loop
    assert float(model.w.numpy()) == pytest.approx(w, rel=1e-4)
    assert float(model.b.numpy()) == pytest.approx(b, rel=1e-4)
    assert float(loss) == pytest.approx(ref_loss, rel=1e-3)
    printed = [line for line in capfd.readouterr().err.splitlines() if line.startswith("step")]
    assert len(printed) == (ref_steps - 1) // 20 + 1 and printed[0].startswith("step 0 loss")
    graph_ops = {op.type for op in train.get_concrete_function(
        tf.constant(x), tf.constant(y), tf.constant(500), 0.1, 0.0105).graph.get_operations()}
    assert {"While", "StatelessWhile"} & graph_ops
