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
