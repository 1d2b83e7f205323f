"""CTC: tf.nn.ctc_loss (v2 dense/sparse labels, blank_index, batch-major; v1 flags), its
gradient, ctc_greedy_decoder, collapse_repeated, Keras' CTC loss and the Keras 2 backend's
helpers — against TensorFlow 2.21's values on the same inputs (tests/fixtures/ctc), a float64
NumPy forward algorithm, and finite differences; errors as TF's."""

from __future__ import annotations

import os

import numpy as np
import pytest

import ndflow as tf

V = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures", "ctc", "values.npz"))
LOGITS, LABELS = V["logits"], V["labels"]
LABEL_LEN, LOGIT_LEN = V["label_length"], V["logit_length"]


def _ctc_numpy(logits, label, frames, blank):
    """-log p(label | logits) by the CTC forward recursion, float64."""
    x = logits[:frames].astype(np.float64)
    logp = x - np.log(np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)) - \
        x.max(1, keepdims=True)
    ext = [blank]
    for c in label:
        ext += [c, blank]
    alpha = np.full(len(ext), -np.inf)
    alpha[0] = logp[0, blank]
    if len(ext) > 1:
        alpha[1] = logp[0, ext[1]]
    for t in range(1, frames):
        new = np.full_like(alpha, -np.inf)
        for s in range(len(ext)):
            terms = [alpha[s]] + ([alpha[s - 1]] if s >= 1 else [])
            if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                terms.append(alpha[s - 2])
            new[s] = np.logaddexp.reduce(terms) + logp[t, ext[s]]
        alpha = new
    return -np.logaddexp(alpha[-1], alpha[-2] if len(ext) > 1 else -np.inf)


def test_loss_equals_tensorflow_and_the_forward_algorithm():
    got = tf.nn.ctc_loss(LABELS, LOGITS, LABEL_LEN, LOGIT_LEN).numpy()
    np.testing.assert_allclose(got, V["loss_blank0"], rtol=1e-5)
    for b in range(3):
        want = _ctc_numpy(LOGITS[:, b], list(LABELS[b, :LABEL_LEN[b]]), LOGIT_LEN[b], 0)
        assert got[b] == pytest.approx(want, rel=1e-5)
    np.testing.assert_allclose(tf.nn.ctc_loss(np.minimum(LABELS, 4), LOGITS, LABEL_LEN,
                                              LOGIT_LEN, blank_index=-1).numpy(),
                               V["loss_blank_last"], rtol=1e-5)
    batch_major = tf.nn.ctc_loss(LABELS, np.transpose(LOGITS, (1, 0, 2)), LABEL_LEN, LOGIT_LEN,
                                 logits_time_major=False, blank_index=2)
    np.testing.assert_allclose(batch_major.numpy(), V["loss_batch_major"], rtol=1e-5)


def test_gradient_equals_tensorflow_and_finite_differences():
    weights = tf.constant([1.0, 0.5, 2.0])

    @tf.function
    def grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(tf.nn.ctc_loss(LABELS, x, LABEL_LEN, LOGIT_LEN) * weights)
        return tape.gradient(loss, x)

    got = grad(tf.constant(LOGITS)).numpy()
    np.testing.assert_allclose(got, V["grad_blank0"], rtol=1e-4, atol=1e-6)
    x64 = LOGITS.astype(np.float64)
    with tf.GradientTape() as tape:
        xv = tf.constant(x64)
        tape.watch(xv)
        loss = tf.reduce_sum(tf.nn.ctc_loss(LABELS, xv, LABEL_LEN, LOGIT_LEN))
    analytic = tape.gradient(loss, xv).numpy()
    rng = np.random.default_rng(1)
    for _ in range(5):
        t, b, c = rng.integers(0, 4), rng.integers(0, 3), rng.integers(0, 6)
        step = np.zeros_like(x64)
        step[t, b, c] = 1e-6
        hi = tf.nn.ctc_loss(LABELS, x64 + step, LABEL_LEN, LOGIT_LEN).numpy().sum()
        lo = tf.nn.ctc_loss(LABELS, x64 - step, LABEL_LEN, LOGIT_LEN).numpy().sum()
        assert analytic[t, b, c] == pytest.approx((hi - lo) / 2e-6, rel=1e-5, abs=1e-7)


def test_v1_sparse_labels_and_flags():
    sparse = tf.sparse.from_dense(tf.constant(V["v1_labels_dense"]))
    v1 = tf.compat.v1.nn.ctc_loss
    np.testing.assert_allclose(v1(sparse, LOGITS, LOGIT_LEN).numpy(), V["v1_loss"], rtol=1e-5)
    np.testing.assert_allclose(v1(sparse, LOGITS, LOGIT_LEN,
                                  preprocess_collapse_repeated=True).numpy(),
                               V["v1_loss_collapse"], rtol=1e-5)
    too_long = tf.sparse.from_dense(tf.constant([[1, 2, 3, 4, 1, 2, 3], [1, 0, 0, 0, 0, 0, 0],
                                                 [1, 2, 1, 2, 1, 2, 1]], tf.int32))
    np.testing.assert_allclose(v1(too_long, LOGITS, LOGIT_LEN,
                                  ignore_longer_outputs_than_inputs=True).numpy(),
                               V["v1_loss_ignore_longer"], rtol=1e-5)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Not enough time for target transition sequence"):
        v1(too_long, LOGITS, LOGIT_LEN)
    with pytest.raises(TypeError, match="Expected labels .* to be a SparseTensor"):
        v1(LABELS, LOGITS, LOGIT_LEN)


def test_greedy_decoder_and_collapse_repeated():
    for merge in (True, False):
        decoded, neg = tf.nn.ctc_greedy_decoder(LOGITS, LOGIT_LEN, merge_repeated=merge)
        np.testing.assert_array_equal(tf.sparse.to_dense(decoded[0], default_value=-1).numpy(),
                                      V[f"greedy_{merge}"])
        np.testing.assert_allclose(neg.numpy(), V[f"greedy_{merge}_logprob"], rtol=1e-6)
    decoded, _ = tf.nn.ctc_greedy_decoder(LOGITS, LOGIT_LEN, blank_index=0)
    np.testing.assert_array_equal(tf.sparse.to_dense(decoded[0], default_value=-1).numpy(),
                                  V["greedy_blank0"])
    collapsed, lengths = tf.nn.collapse_repeated(tf.constant([[1, 1, 2, 2, 0], [3, 4, 4, 4, 4]]),
                                                 tf.constant([5, 3]))
    np.testing.assert_array_equal(collapsed.numpy(), V["collapsed"])
    np.testing.assert_array_equal(lengths.numpy(), V["collapsed_lengths"])


def test_keras_ctc_loss_and_backend_helpers():
    batch_major = np.transpose(LOGITS, (1, 0, 2))
    np.testing.assert_allclose(tf.keras.losses.ctc(LABELS, batch_major).numpy(),
                               V["keras_ctc"], rtol=1e-5)
    np.testing.assert_allclose(tf.keras.losses.CTC()(LABELS, batch_major).numpy(),
                               V["keras_CTC"], rtol=1e-5)
    assert isinstance(tf.keras.losses.get("CTC"), tf.keras.losses.CTC)   # an instance, as Keras
    probs = tf.nn.softmax(batch_major).numpy()
    K = tf.keras.backend
    np.testing.assert_allclose(K.ctc_batch_cost(np.minimum(LABELS, 4), probs, LOGIT_LEN[:, None],
                                                LABEL_LEN[:, None]).numpy(),
                               V["k_ctc_batch_cost"], rtol=1e-5)
    decoded, log_prob = K.ctc_decode(probs, LOGIT_LEN)
    np.testing.assert_array_equal(decoded[0].numpy(), V["k_ctc_decode"])
    np.testing.assert_allclose(log_prob.numpy(), V["k_ctc_decode_logprob"], rtol=1e-5)
    with pytest.raises(ValueError, match="Targets `y_true` are expected to be a tensor of shape"):
        tf.keras.losses.ctc(LABELS[0], batch_major)


def test_ocr_style_model_trains_with_the_ctc_loss():
    """A tiny Keras OCR-style model (conv features over time, Dense logits) fit with CTC."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(8, 12, 4)).astype(np.float32)
    y = rng.integers(1, 5, (8, 3)).astype(np.int32)
    model = tf.keras.Sequential([tf.keras.Input((12, 4)),
                                 tf.keras.layers.Conv1D(16, 3, padding="same",
                                                        activation="relu"),
                                 tf.keras.layers.Dense(6)])
    model.compile(tf.keras.optimizers.Adam(0.05), loss=tf.keras.losses.CTC())
    history = model.fit(x, y, epochs=8, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
