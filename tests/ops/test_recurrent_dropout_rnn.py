"""_RecurrentDropoutRNN (ops/cudnn_rnn.py): CudnnRNNV3's LSTM, GRU and plain RNN with Keras'
per-gate dropout masks. The op against a NumPy float64 recurrence (float64 runs the ATen
loops of kernels/rnn_loops.py), its gradients against finite differences, the float32 numba
kernels (kernels/rnn_numba_rows.py) against float64 on sizes off the 16-lane tiles and over
padded sequences, and malformed masks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import rnn_numba
from ndflow.ops import cudnn_rnn
from ndflow.ops.apply import apply_op
from tests.keras.layer_checks import numeric_grad

GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}
MODES = sorted(GATES)


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def np_rnn(mode, x, h0, c0, params, input_masks, rec_masks, lengths=None):
    """(outputs (B, T, H), h, c) of the recurrence in float64, batch-major, gate k's input
    weights seeing x * input_masks[k] and its recurrent weights h * rec_masks[k]; a row
    past its length holds its states and outputs zeros (cuDNN's)."""
    b, t_len, i = x.shape
    g, h = GATES[mode], h0.shape[1]
    n_w, n_r = g * h * i, g * h * h
    w_ih, w_hh = params[:n_w].reshape(g * h, i), params[n_w:n_w + n_r].reshape(g * h, h)
    b_ih, b_hh = params[n_w + n_r:n_w + n_r + g * h], params[n_w + n_r + g * h:]
    hs, c = h0, c0
    ys = []
    for t in range(t_len):
        xs = [x[:, t] * (input_masks[k] if input_masks is not None else 1.0) for k in range(g)]
        hm = [hs * (rec_masks[k] if rec_masks is not None else 1.0) for k in range(g)]
        xp = [xs[k] @ w_ih[k * h:(k + 1) * h].T + b_ih[k * h:(k + 1) * h] for k in range(g)]
        hp = [hm[k] @ w_hh[k * h:(k + 1) * h].T + b_hh[k * h:(k + 1) * h] for k in range(g)]
        if mode == "lstm":
            ig, fg = _sigmoid(xp[0] + hp[0]), _sigmoid(xp[1] + hp[1])
            cg, og = np.tanh(xp[2] + hp[2]), _sigmoid(xp[3] + hp[3])
            c_new = fg * c + ig * cg
            h_new = og * np.tanh(c_new)
        elif mode == "gru":
            r, z = _sigmoid(xp[0] + hp[0]), _sigmoid(xp[1] + hp[1])
            n = np.tanh(xp[2] + r * hp[2])
            h_new, c_new = n + z * (hs - n), c
        else:
            pre = xp[0] + hp[0]
            h_new, c_new = (np.maximum(pre, 0.0) if mode == "rnn_relu" else np.tanh(pre)), c
        running = np.ones((b, 1)) if lengths is None else (t < lengths)[:, None] * 1.0
        hs = running * h_new + (1 - running) * hs
        c = running * c_new + (1 - running) * c
        ys.append(running * h_new)
    return np.stack(ys, 1), hs, c


def _arrays(mode, seed, b=3, t=4, i=5, h=6, input_dropout=True, rec_dropout=True):
    rng = np.random.default_rng(seed)
    g = GATES[mode]

    def mask(size):
        return (rng.random((g, b, size)) > 0.3) / 0.7
    return [rng.standard_normal((b, t, i)), rng.standard_normal((b, h)) * 0.5,
            rng.standard_normal((b, h)) * 0.5,
            rng.standard_normal(g * h * (i + h) + 2 * g * h) * 0.4,
            mask(i) if input_dropout else None, mask(h) if rec_dropout else None]


def run_op(mode, x, h0, c0, params, input_masks, rec_masks, lengths=None):
    """(outputs, h, c) of the op, batch-major (masks None: no values)."""
    b, t_len = x.shape[0], x.shape[1]
    dtype = x.dtype
    lengths = tf.fill([b], t_len) if lengths is None else tf.constant(lengths, tf.int32)
    c = tf.expand_dims(c0, 1) if mode == "lstm" else tf.zeros([], dtype)
    none = tf.zeros([0], dtype)
    out, h, c, _ = apply_op(
        cudnn_rnn.RecurrentDropoutRNN,
        [x, tf.expand_dims(h0, 1), c, params, lengths,
         none if input_masks is None else input_masks, none if rec_masks is None else rec_masks],
        {"rnn_mode": mode, "time_major": False}).outputs
    return out, tf.squeeze(h, 1), (tf.squeeze(c, 1) if mode == "lstm" else c)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("which", ["both", "recurrent", "input"])
def test_float64_values_match_numpy(mode, which):
    a = _arrays(mode, 1, input_dropout=which != "recurrent", rec_dropout=which != "input")
    out, h, c = run_op(mode, *[None if v is None else tf.constant(v) for v in a])
    want_out, want_h, want_c = np_rnn(mode, *a)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h.numpy(), want_h, rtol=1e-12, atol=1e-12)
    if mode == "lstm":
        np.testing.assert_allclose(c.numpy(), want_c, rtol=1e-12, atol=1e-12)


def _loss(mode, outs):
    out, h, c = outs
    value = tf.reduce_sum(out * out) + 1.3 * tf.reduce_sum(h)
    return value + (0.7 * tf.reduce_sum(c * c) if mode == "lstm" else 0.0)


@pytest.mark.parametrize("mode", MODES)
def test_gradients_match_finite_differences(mode):
    a = _arrays(mode, 2, b=2, t=3, i=3, h=4)
    masks = [tf.constant(m) for m in a[4:]]
    variables = [tf.Variable(v) for v in a[:4]]
    with tf.GradientTape() as tape:
        value = _loss(mode, run_op(mode, *variables, *masks))
    grads = tape.gradient(value, variables)

    def f_of(k):
        def f(v):
            args = [tf.constant(w) for w in a[:4]]
            args[k] = tf.constant(v)
            return float(_loss(mode, run_op(mode, *args, *masks)).numpy())
        return f
    for k in (0, 1, 2, 3) if mode == "lstm" else (0, 1, 3):   # c0 only feeds an LSTM
        np.testing.assert_allclose(grads[k].numpy(), numeric_grad(f_of(k), a[k]), rtol=1e-6,
                                   atol=1e-7)


@pytest.mark.skipif(not rnn_numba.applies(torch.zeros(1)), reason="needs numba")
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("b,h", [(5, 20), (11, 33)])
def test_float32_kernels_match_float64(mode, padded, b, h):
    """The numba kernels (float32) against the ATen loops (float64), values and gradients,
    unit counts whose gates end inside a 16-lane tile, batches split over threads, padded
    sequences (which only the numba kernels take: checked against NumPy)."""
    t_len = 9
    a = _arrays(mode, 3 + h, b=b, t=t_len, i=7, h=h)
    lengths = (np.random.default_rng(b).integers(0, t_len + 1, b) if padded else None)
    f64 = [tf.Variable(v) for v in a[:4]]
    f32 = [tf.Variable(v.astype(np.float32)) for v in a[:4]]
    grads = []
    for variables, dtype in ((f64, np.float64), (f32, np.float32)):
        masks = [tf.constant(m.astype(dtype)) for m in a[4:]]
        with tf.GradientTape() as tape:
            outs = run_op(mode, *variables, *masks, lengths=lengths if dtype is np.float32
                          else None)
            value = _loss(mode, outs)
        grads.append((outs, tape.gradient(value, variables)))
    want = np_rnn(mode, *a, lengths=lengths)
    (_, g64), (outs32, g32) = grads
    for got, ref in zip(outs32[:2 if mode != "lstm" else 3], want):
        np.testing.assert_allclose(got.numpy(), ref, rtol=2e-4, atol=2e-4)
    if not padded:
        for k, (x64, x32) in enumerate(zip(g64, g32)):
            if mode != "lstm" and k == 2:
                continue
            scale = np.abs(x64.numpy()).max()
            np.testing.assert_allclose(x32.numpy(), x64.numpy(), rtol=1e-4, atol=1e-4 * scale)


def test_padded_float32_gradients_match_finite_differences():
    """Padded sequences run the numba kernels only: their masked gradients in float32 against
    central differences of the float64 NumPy recurrence."""
    mode = "lstm"
    a = _arrays(mode, 4, b=3, t=4, i=3, h=5)
    lengths = np.array([4, 2, 0])
    masks = [tf.constant(m.astype(np.float32)) for m in a[4:]]
    variables = [tf.Variable(v.astype(np.float32)) for v in a[:4]]
    with tf.GradientTape() as tape:
        value = _loss(mode, run_op(mode, *variables, *masks, lengths=lengths))
    grads = tape.gradient(value, variables)

    def f(v):
        out, h, c = np_rnn(mode, a[0], a[1], a[2], v, a[4], a[5], lengths)
        return float((out * out).sum() + 1.3 * h.sum() + 0.7 * (c * c).sum())
    np.testing.assert_allclose(grads[3].numpy(), numeric_grad(f, a[3]), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("what,shape", [("input_masks", [3, 2, 5]),
                                        ("recurrent_masks", [4, 2, 7])])
def test_malformed_masks_are_named(what, shape):
    a = _arrays("lstm", 5, b=2, t=3, i=5, h=6)
    args = [tf.constant(v) for v in a[:4]] + [tf.constant(m) for m in a[4:]]
    args[4 if what == "input_masks" else 5] = tf.ones(shape, tf.float64)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf"RecurrentDropoutRNN: {what} must have shape \[4, 2, \d+\]"):
        run_op("lstm", *args)
