"""Candidate samplers, compute_accidental_hits, tf.nn.nce_loss and
tf.nn.sampled_softmax_loss: NumPy references of TF's formulas (with given sampled values, so
nothing random is compared), gradients by finite differences, and a word2vec-style model
that learns."""

import numpy as np
import pytest

import ndflow as tf
from tests.ops.harness import OpCase

rng = np.random.default_rng(17)
V, D = 12, 4
_LABELS = np.array([[1], [5], [7]])
_SAMPLED = np.array([5, 0, 9, 3])          # 5 hits row 1's true class
_TRUE_Q = np.full((3, 1), 0.3)
_SAMPLED_Q = np.array([0.2, 0.5, 0.1, 0.25])
_VALUES = (tf.constant(_SAMPLED, tf.int64), tf.constant(_TRUE_Q, tf.float32),
           tf.constant(_SAMPLED_Q, tf.float32))


def _np_logits(w, b, x, hits: bool):
    true_logits = np.sum(x * w[_LABELS[:, 0]], 1, keepdims=True) + b[_LABELS]
    sampled_logits = x @ w[_SAMPLED].T + b[_SAMPLED]
    if hits:
        for r, label in enumerate(_LABELS[:, 0]):
            sampled_logits[r, _SAMPLED == label] += -np.finfo(np.float32).max
    true_logits = true_logits - np.log(_TRUE_Q)
    sampled_logits = sampled_logits - np.log(_SAMPLED_Q)
    logits = np.concatenate([true_logits, sampled_logits], 1)
    labels = np.concatenate([np.ones_like(true_logits), np.zeros_like(sampled_logits)], 1)
    return logits, labels


def _np_nce(w, b, x):
    z, y = _np_logits(w, b, x, hits=False)
    return np.sum(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))), 1)


def _np_sampled_softmax(w, b, x):
    z, y = _np_logits(w, b, x, hits=True)
    z = z - z.max(1, keepdims=True)
    return -np.sum(y * (z - np.log(np.sum(np.exp(z), 1, keepdims=True))), 1)


_W, _B, _X = rng.normal(0, 0.5, (V, D)), rng.normal(0, 0.1, V), rng.normal(0, 1, (3, D))
_LOSS = dict(dtypes=(tf.float32,), low_precision=False, rtol=1e-4, atol=1e-4,
             grad_eps=1e-3, grad_tol=2e-3)

CASES = [
    OpCase("nce_loss", lambda w, b, x: tf.cast(tf.nn.nce_loss(
        w, b, _LABELS, x, num_sampled=4, num_classes=V, sampled_values=_VALUES), w.dtype),
           [_W, _B, _X], _np_nce, **_LOSS),
    OpCase("sampled_softmax_loss", lambda w, b, x: tf.cast(tf.nn.sampled_softmax_loss(
        w, b, _LABELS, x, num_sampled=4, num_classes=V, sampled_values=_VALUES), w.dtype),
           [_W, _B, _X], _np_sampled_softmax, **_LOSS),
    OpCase("nce_loss_v1_two_shards", lambda w0, w1, b, x: tf.cast(tf.compat.v1.nn.nce_loss(
        [w0, w1], b, _LABELS, x, num_sampled=4, num_classes=V, sampled_values=_VALUES),
        w0.dtype), [_W[0::2], _W[1::2], _B, _X],  # "mod" sharding: even rows, odd rows
           lambda w0, w1, b, x: _np_nce(_W, b, x), grad=(2, 3), **_LOSS),
]


@pytest.mark.parametrize("sampler", [tf.random.log_uniform_candidate_sampler,
                                     tf.random.uniform_candidate_sampler])
def test_samplers_draw_unique_classes_in_range_with_expected_counts(sampler):
    true = tf.constant([[1], [3]], tf.int64)
    sampled, true_q, sampled_q = sampler(true, 1, 20, True, 50, seed=7)
    s = sampled.numpy()
    assert s.dtype == np.int64 and s.shape == (20,) and len(set(s)) == 20
    assert s.min() >= 0 and s.max() < 50
    assert true_q.shape.as_list() == [2, 1] and sampled_q.shape.as_list() == [20]
    assert np.all((0 < sampled_q.numpy()) & (sampled_q.numpy() <= 1))


def test_log_uniform_expected_counts_without_unique_are_p_times_num_sampled():
    _, true_q, sampled_q = tf.random.log_uniform_candidate_sampler(
        tf.constant([[0], [9]], tf.int64), 1, 8, False, 10, seed=1)
    p = lambda c: np.log((c + 2.0) / (c + 1.0)) / np.log(11.0)  # noqa: E731
    np.testing.assert_allclose(true_q.numpy().ravel(), [8 * p(0), 8 * p(9)], rtol=1e-5)


def test_compute_accidental_hits():
    rows, positions, weights = tf.nn.compute_accidental_hits(
        tf.constant([[1, 2], [3, 4]], tf.int64), tf.constant([3, 7, 1, 2], tf.int64), 2)
    assert sorted(zip(rows.numpy().tolist(), positions.numpy().tolist())) == \
        [(0, 2), (0, 3), (1, 0)]
    assert np.all(weights.numpy() == -np.finfo(np.float32).max)


def test_word2vec_style_training_lowers_the_loss():
    tf.random.set_seed(0)
    vocab, dim = 40, 8
    embeddings = tf.Variable(tf.random.uniform([vocab, dim], -1.0, 1.0))
    nce_w = tf.Variable(tf.random.truncated_normal([vocab, dim], stddev=dim ** -0.5))
    nce_b = tf.Variable(tf.zeros([vocab]))
    centers = np.arange(vocab) % 10
    contexts = ((centers + 1) % 10).reshape(-1, 1)
    opt = tf.keras.optimizers.SGD(1.0)
    losses = []
    for _ in range(60):
        with tf.GradientTape() as tape:
            embed = tf.nn.embedding_lookup(embeddings, centers)
            loss = tf.reduce_mean(tf.nn.nce_loss(nce_w, nce_b, contexts, embed,
                                                 num_sampled=8, num_classes=vocab))
        variables = [embeddings, nce_w, nce_b]
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        losses.append(float(loss))
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:10])
