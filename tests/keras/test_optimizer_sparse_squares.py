"""Keras 3's Adam, RMSprop, Adagrad, Nadam and Adamax on TF for an IndexedSlices gradient
(an Embedding's): `ops.square` (Adamax: `ops.abs`) acts on the slices' values before they are
summed into rows, so a row looked up twice adds two squares to the second moment, while every
other use takes the summed gradient. Checked against those updates in NumPy float64, Nadam and
Adamax against TF 2.21's results (the Custom training and Load text tutorials train
embeddings with Adam)."""

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

IDS = np.array([1, 3, 1, 1, 4])


def _run(opt, steps=3):
    rng = np.random.RandomState(0)
    init = rng.normal(size=(5, 3)).astype(np.float32)
    upstream = [rng.normal(size=(5, 3)).astype(np.float32) for _ in range(steps)]
    var = tf.Variable(init)
    sums = []
    for up in upstream:
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.gather(var, IDS) * up)
        grad = tape.gradient(loss, var)
        assert isinstance(grad, tf.IndexedSlices)
        opt.apply_gradients([(grad, var)])
        g, g2 = np.zeros((5, 3)), np.zeros((5, 3))
        for row, value in zip(IDS, up.astype(np.float64)):
            g[row] += value
            g2[row] += value ** 2
        sums.append((g, g2))
    return init.astype(np.float64), sums, var


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam(amsgrad):
    w, grads, var = _run(tf.keras.optimizers.Adam(learning_rate=0.1, amsgrad=amsgrad))
    m, v, vhat = np.zeros((5, 3)), np.zeros((5, 3)), np.zeros((5, 3))
    for step, (g, g2) in enumerate(grads, start=1):
        m += (g - m) * (1 - 0.9)
        v += (g2 - v) * (1 - 0.999)
        vhat = np.maximum(vhat, v)
        alpha = 0.1 * np.sqrt(1 - 0.999 ** step) / (1 - 0.9 ** step)
        w -= alpha * m / (np.sqrt(vhat if amsgrad else v) + 1e-7)
    np.testing.assert_allclose(var.numpy(), w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_rmsprop(momentum):
    w, grads, var = _run(tf.keras.optimizers.RMSprop(learning_rate=0.1, momentum=momentum))
    vel, mom = np.zeros((5, 3)), np.zeros((5, 3))
    for g, g2 in grads:
        vel = 0.9 * vel + (1 - 0.9) * g2
        increment = 0.1 * g / np.sqrt(vel + 1e-7)
        mom = momentum * mom + increment
        w -= mom if momentum else increment
    np.testing.assert_allclose(var.numpy(), w, rtol=1e-5, atol=1e-6)


def test_adagrad():
    w, grads, var = _run(tf.keras.optimizers.Adagrad(learning_rate=0.1))
    acc = np.full((5, 3), 0.1)
    for g, g2 in grads:
        acc += g2
        w -= 0.1 * g / np.sqrt(acc + 1e-7)
    np.testing.assert_allclose(var.numpy(), w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["Nadam", "Adamax"])
def test_nadam_adamax_match_tf(name):
    # TF 2.21's results (tests/fixtures/customization_data_tutorials): Nadam squares, Adamax
    # takes the abs of, the slices' values
    fixture = json.loads((Path(__file__).resolve().parent.parent / "fixtures" /
                          "customization_data_tutorials" / "fixture.json").read_text())
    _, _, var = _run(getattr(tf.keras.optimizers, name)(learning_rate=0.1))
    np.testing.assert_allclose(var.numpy(), fixture["sparse_updates"][name], rtol=1e-5,
                               atol=1e-6)


def _adam_reference(init, ids, upstream, lr=0.5):
    w, m, v = init.astype(np.float64), np.zeros(init.shape), np.zeros(init.shape)
    for step, up in enumerate(upstream, start=1):
        g, g2 = np.zeros(init.shape), np.zeros(init.shape)
        np.add.at(g, ids, up)
        np.add.at(g2, ids, up.astype(np.float64) ** 2)
        m += (g - m) * (1 - 0.9)
        v += (g2 - v) * (1 - 0.999)
        b1p, b2p = float(np.float32(0.9)) ** step, float(np.float32(0.999)) ** step  # Keras'
        w -= lr * np.sqrt(1 - b2p) / (1 - b1p) * m / (np.sqrt(v) + 1e-7)
    return w


@pytest.mark.parametrize("dtype", [np.float32, np.float64])   # one-pass kernel / ATen ops
def test_adam_of_slices_in_one_op_equals_keras_updates(dtype):
    """Keras' Adam of an IndexedSlices gradient runs as one `_ResourceSparseApplyKerasAdam`
    (every row decays; squares of the slices summed per row), inside a tf.function, on a
    table large enough for many chunks of the one-pass kernel; a value read before a step
    keeps its numbers (the update then writes new buffers)."""
    rng = np.random.default_rng(1)
    rows, cols, steps = 5000, 24, 3
    init = rng.standard_normal((rows, cols)).astype(dtype)
    ids = rng.integers(0, rows, 3000)
    upstream = [rng.standard_normal((len(ids), cols)).astype(dtype) for _ in range(steps)]
    var = tf.Variable(init)
    opt = tf.keras.optimizers.Adam(learning_rate=0.5)   # a float32 variable: exact in binary

    @tf.function
    def step(up):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.gather(var, ids) * up)
        opt.apply_gradients([(tape.gradient(loss, var), var)])

    types = {op.type for op in step.get_concrete_function(upstream[0]).graph.get_operations()}
    assert "_ResourceSparseApplyKerasAdam" in types and "ScatterAdd" not in types
    held = var.read_value()   # alive across the first step
    for up in upstream:
        step(up)
    np.testing.assert_array_equal(held.numpy(), init)
    tol = 5e-5 if dtype == np.float32 else 1e-12   # float32 steps of 0.5 vs float64
    np.testing.assert_allclose(var.numpy(), _adam_reference(init, ids, upstream), rtol=tol,
                               atol=tol)


def test_adam_of_slices_refuses_rows_out_of_range():
    var = tf.Variable(np.zeros((4, 2), np.float32))
    m, v = tf.Variable(np.zeros((4, 2), np.float32)), tf.Variable(np.zeros((4, 2), np.float32))
    from ndflow.ops import training_sparse
    args = [tf.constant(x, tf.float32) for x in (0.9, 0.999, 0.1, 0.9, 0.999, 1e-7)]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Index 7 at offset 1"):
        training_sparse.resource_sparse_apply_keras_adam(
            var.handle, m.handle, v.handle, *args, tf.ones((2, 2)), tf.constant([0, 7]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="must match in dimension 1"):
        training_sparse.resource_sparse_apply_keras_adam(
            var.handle, m.handle, v.handle, *args, tf.ones((2, 3)), tf.constant([0, 1]))
    np.testing.assert_array_equal(var.numpy(), np.zeros((4, 2)))
