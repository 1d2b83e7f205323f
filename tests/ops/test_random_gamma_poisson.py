"""tf.random.gamma / poisson and their stateless forms: TensorFlow's shapes and dtypes, the
samples' laws (moments against the exact values), the reparameterization gradient against
TensorFlow's RandomGammaGrad (tests/fixtures/tf_random), and seeding."""

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURE = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "tf_random" /
                      "philox.json").read_text())


def test_shapes_and_dtypes_as_tensorflow():
    assert tf.random.gamma([3], [0.5, 2.0], seed=1).shape.as_list() == [3, 2]
    assert tf.random.gamma([3, 4], 2.0, dtype=tf.float64).dtype is tf.float64
    p = tf.random.poisson([4], [1.0, 10.0], seed=2)
    assert p.shape.as_list() == [4, 2] and p.dtype is tf.float32
    assert tf.random.poisson([4], [1.0], dtype=tf.int32).dtype is tf.int32
    assert tf.compat.v1.random.poisson([1.0, 2.0], [5]).shape.as_list() == [5, 2]  # TF1 order
    sg = tf.random.stateless_gamma([5, 2], seed=[1, 2], alpha=[0.5, 1.5])
    assert sg.shape.as_list() == [5, 2] and sg.dtype is tf.float32
    sp = tf.random.stateless_poisson([5, 2], seed=[1, 2], lam=[0.5, 15.0])
    assert sp.shape.as_list() == [5, 2] and sp.dtype is tf.int32
    assert np.isnan(tf.random.gamma([2], [-1.0]).numpy()).all()  # TF: NaN for alpha <= 0


def test_gamma_and_poisson_follow_their_laws():
    alpha, beta = np.array([0.3, 2.0, 9.0]), 2.0
    g = tf.random.gamma([40000], alpha, beta=beta, dtype=tf.float64, seed=3).numpy()
    np.testing.assert_allclose(g.mean(0), alpha / beta, rtol=0.04)
    np.testing.assert_allclose(g.var(0), alpha / beta ** 2, rtol=0.08)
    assert (g > 0).all()
    lam = np.array([0.5, 4.0, 30.0])
    p = tf.random.poisson([40000], lam, dtype=tf.float64, seed=4).numpy()
    np.testing.assert_allclose(p.mean(0), lam, rtol=0.03)
    np.testing.assert_allclose(p.var(0), lam, rtol=0.06)
    assert np.array_equal(p, np.round(p))
    s = tf.random.stateless_gamma([40000, 3], [5, 6], alpha, dtype=tf.float64).numpy()
    np.testing.assert_allclose(s.mean(0), alpha, rtol=0.04)


def test_gamma_grad_matches_tensorflows():
    ref = FIXTURE["random_gamma_grad"]
    a = np.broadcast_to(np.array(ref["alpha"])[:, None], (7, 7))
    s = np.broadcast_to(np.array(ref["sample"])[None, :], (7, 7))
    from ndflow.ops import random_gamma_poisson as rgp
    from ndflow.ops.apply import apply_op
    got = apply_op(rgp.RandomGammaGrad, [tf.constant(a), tf.constant(s)]).outputs[0].numpy()
    np.testing.assert_allclose(got, ref["grad"], rtol=1e-6, atol=1e-10)


def test_gradients_in_alpha_and_beta():
    alpha = tf.constant([0.5, 2.0], tf.float64)
    beta = tf.constant(2.0, tf.float64)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([alpha, beta])
        x = tf.random.gamma([3], alpha, beta=beta, dtype=tf.float64, seed=7)
        total = tf.reduce_sum(x)
    unit = (x * beta).numpy()  # the Gamma(alpha, 1) samples
    from ndflow.ops import random_gamma_poisson as rgp
    from ndflow.ops.apply import apply_op
    partial = apply_op(rgp.RandomGammaGrad, [tf.constant(np.broadcast_to(alpha.numpy(), (3, 2))),
                                             tf.constant(unit)]).outputs[0].numpy()
    np.testing.assert_allclose(tape.gradient(total, alpha).numpy(), partial.sum(0) / 2.0)
    np.testing.assert_allclose(float(tape.gradient(total, beta)), -unit.sum() / 4.0)
    # E[d sample / d alpha] = 1 / beta for Gamma(alpha, beta)
    a = tf.constant(3.0, tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(a)
        mean = tf.reduce_mean(tf.random.gamma([40000], a, beta=2.0, dtype=tf.float64, seed=1))
    assert float(tape.gradient(mean, a)) == pytest.approx(0.5, rel=0.03)


def test_seeds_and_stateless_determinism():
    tf.random.set_seed(11)
    a = tf.random.gamma([5], 1.5, seed=3).numpy()
    tf.random.set_seed(11)
    assert np.array_equal(a, tf.random.gamma([5], 1.5, seed=3).numpy())
    one = tf.random.stateless_poisson([6], [1, 2], 3.0).numpy()
    assert np.array_equal(one, tf.random.stateless_poisson([6], [1, 2], 3.0).numpy())
    assert np.array_equal(one, tf.function(
        lambda: tf.random.stateless_poisson([6], tf.constant([1, 2]), 3.0))().numpy())
    assert not np.array_equal(
        tf.random.stateless_gamma([50], [1, 2], 2.0).numpy(),
        tf.random.stateless_gamma([50], [1, 3], 2.0).numpy())
