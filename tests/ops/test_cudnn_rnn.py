"""CudnnRNNV3 / CudnnRNNBackpropV3 (one LSTM or GRU layer over a whole sequence) and Keras'
fused LSTM and GRU paths built on them: values against NumPy float64 step-by-step
references, gradients by finite differences (float64 runs the ATen loops) and the float32
oneDNN kernel against the float64 one, the Keras layers fused vs their generic loop
(`use_cudnn=False`: values, gradients, go_backwards, states, dropout), where the fused op
fires and where it must not, and TF's errors for what the kernels do not run."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import ndflow as tf
from ndflow.keras.layers import rnn_fused
from tests.keras.layer_checks import numeric_grad, op_types

T, B, I, H = 5, 3, 4, 6


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_lstm(x, k, r, b, h, c):
    """Keras' LSTM (gates i, f, c, o) over batch-major x, float64: (outputs, h, c)."""
    ys = []
    for t in range(x.shape[1]):
        i, f, g, o = np.split(x[:, t] @ k + h @ r + b, 4, axis=1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        ys.append(h)
    return np.stack(ys, 1) if ys else np.zeros((x.shape[0], 0, h.shape[1])), h, c


def _arrays(seed=0, t=T):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((B, t, I)), rng.standard_normal((I, 4 * H)) * 0.5,
            rng.standard_normal((H, 4 * H)) * 0.5, rng.standard_normal(4 * H) * 0.5,
            rng.standard_normal((B, H)), rng.standard_normal((B, H))]


def cudnn_lstm(x, k, r, b, h0, c0, time_major=False, lengths=None):
    """The raw op as Keras calls it: canonical params with zero input biases."""
    params = tf.concat([tf.reshape(tf.transpose(k), [-1]), tf.reshape(tf.transpose(r), [-1]),
                        tf.zeros_like(b), b], 0)
    if time_major:
        x = tf.transpose(x, [1, 0, 2])
    axis = 0 if time_major else 1
    steps = tf.shape(x)[0 if time_major else 1]
    if lengths is None:
        lengths = tf.fill([B], steps)
    out, h, c, _, _ = tf.raw_ops.CudnnRNNV3(
        input=x, input_h=tf.expand_dims(h0, axis), input_c=tf.expand_dims(c0, axis),
        params=params, sequence_lengths=lengths, is_training=True, time_major=time_major)
    if time_major:
        out = tf.transpose(out, [1, 0, 2])
    return out, tf.squeeze(h, axis), tf.squeeze(c, axis)


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
@pytest.mark.parametrize("time_major", [False, True])
def test_values_match_numpy(dtype, tol, time_major):
    a = _arrays()
    out, h, c = cudnn_lstm(*[tf.constant(v.astype(dtype)) for v in a], time_major=time_major)
    ref = np_lstm(*a)
    assert out.dtype == tf.as_dtype(dtype)
    for got, want in zip((out, h, c), ref):
        np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)


def _loss(outs):
    out, h, c = outs
    return tf.reduce_sum(out * out) + 1.7 * tf.reduce_sum(h) + 0.3 * tf.reduce_sum(c * c)


@pytest.mark.parametrize("time_major", [False, True])
def test_gradients_match_finite_differences(time_major):
    a = _arrays(1, t=3)
    variables = [tf.Variable(v) for v in a]
    with tf.GradientTape() as tape:
        loss = _loss(cudnn_lstm(*variables, time_major=time_major))
    grads = tape.gradient(loss, variables)

    def value(i):
        def f(v):
            args = [tf.constant(w) for w in a]
            args[i] = tf.constant(v)
            return float(_loss(cudnn_lstm(*args, time_major=time_major)).numpy())
        return f
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g.numpy(), numeric_grad(value(i), a[i]), rtol=1e-6,
                                   atol=1e-7)


def test_float32_kernel_gradients_match_float64():
    """float32 runs oneDNN's LSTM on CPUs, float64 the ATen loop checked above."""
    a = _arrays(2, t=7)
    grads = {}
    for dt in (np.float32, np.float64):
        variables = [tf.Variable(v.astype(dt)) for v in a]
        with tf.GradientTape() as tape:
            loss = _loss(cudnn_lstm(*variables))
        grads[dt] = [g.numpy() for g in tape.gradient(loss, variables)]
    for g32, g64 in zip(grads[np.float32], grads[np.float64]):
        np.testing.assert_allclose(g32, g64, rtol=2e-4, atol=2e-4)


def test_gradient_of_one_output_only():
    a = _arrays(3)
    variables = [tf.Variable(v.astype(np.float32)) for v in a]
    with tf.GradientTape() as tape:
        _, h, _ = cudnn_lstm(*variables)
        loss = tf.reduce_sum(h)
    grads = tape.gradient(loss, variables)
    assert all(g is not None and np.all(np.isfinite(g.numpy())) for g in grads)


def test_empty_sequence_returns_initial_state():
    a = _arrays(t=0)
    out, h, c = cudnn_lstm(*[tf.constant(v.astype(np.float32)) for v in a])
    assert out.shape == (B, 0, H)
    np.testing.assert_allclose(h.numpy(), a[4], rtol=1e-6)
    np.testing.assert_allclose(c.numpy(), a[5], rtol=1e-6)


def test_static_shapes_in_a_graph():
    @tf.function(input_signature=[tf.TensorSpec([None, 9, I], tf.float32)])
    def f(x):
        a = _arrays()
        out, h, c = cudnn_lstm(x, *[tf.constant(v.astype(np.float32)) for v in a[1:4]],
                               tf.zeros([tf.shape(x)[0], H]), tf.zeros([tf.shape(x)[0], H]))
        assert out.shape.as_list() == [None, 9, H]
        return out
    assert f(tf.zeros([B, 9, I])).shape == (B, 9, H)


def test_errors_name_the_op_and_shapes():
    a = [tf.constant(v.astype(np.float32)) for v in _arrays()]
    x = a[0]
    h0 = tf.expand_dims(a[4], 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"CudnnRNNV3.*params.*"
                       r"\b" + str(4 * H * I + 4 * H * H + 8 * H) + r"\b.*\[7\]"):
        tf.raw_ops.CudnnRNNV3(input=x, input_h=h0, input_c=h0, params=tf.zeros([7]),
                              sequence_lengths=tf.fill([B], T), time_major=False)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"input_c must have shape"):
        tf.raw_ops.CudnnRNNV3(input=x, input_h=h0, input_c=tf.zeros([B, 1, H + 1]),
                              params=tf.zeros([7]), sequence_lengths=tf.fill([B], T),
                              time_major=False)
    with pytest.raises(tf.errors.UnimplementedError, match="direction=.bidirectional."):
        tf.raw_ops.CudnnRNNV3(input=x, input_h=h0, input_c=h0, params=tf.zeros([7]),
                              sequence_lengths=tf.fill([B], T), direction="bidirectional",
                              time_major=False)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"params.*\b"
                       + str(H * I + H * H + 2 * H) + r"\b.*rnn_tanh"):
        tf.raw_ops.CudnnRNNV3(input=x, input_h=h0, input_c=h0, params=tf.zeros([7]),
                              sequence_lengths=tf.fill([B], T), rnn_mode="rnn_tanh",
                              time_major=False)
    a64 = [tf.constant(v) for v in _arrays()]
    with pytest.raises(tf.errors.UnimplementedError, match="shorter.*float32 CPU"):
        cudnn_lstm(*a64, lengths=tf.constant([T, 2, T]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"sequence_lengths must be 3 "
                                                             r"values in \[0, 5\]"):
        cudnn_lstm(*a, lengths=tf.constant([T, T + 1, T]))


# -- padded sequences (sequence_lengths) --------------------------------------------------------

LENGTHS = [T, 2, 0]


def _held(step, x, states, lengths):
    """A float64 reference loop over batch-major x where each row stops at its length: its
    states hold from then on and its outputs are zeros (cuDNN's padded outputs)."""
    outs = []
    for t in range(x.shape[1]):
        new = step(x[:, t], states)
        live = (t < np.asarray(lengths))[:, None]
        states = [np.where(live, n, s) for n, s in zip(new, states)]
        outs.append(np.where(live, states[0], 0.0))
    return np.stack(outs, 1), states


def np_lstm_lengths(x, k, r, b, h, c, lengths):
    def step(x_t, states):
        i, f, g, o = np.split(x_t @ k + states[0] @ r + b, 4, axis=1)
        c_new = _sigmoid(f) * states[1] + _sigmoid(i) * np.tanh(g)
        return [_sigmoid(o) * np.tanh(c_new), c_new]
    out, (h, c) = _held(step, x, [h, c], lengths)
    return out, h, c


def np_gru_lengths(x, k, r, b, h, lengths):
    def step(x_t, states):
        xz, xr, xh = np.split(x_t @ k + b[0], 3, axis=1)
        rz, rr, rh = np.split(states[0] @ r + b[1], 3, axis=1)
        z, rg = _sigmoid(xz + rz), _sigmoid(xr + rr)
        return [z * states[0] + (1 - z) * np.tanh(xh + rg * rh)]
    out, (h,) = _held(step, x, [h], lengths)
    return out, h


def cudnn_gru(x, k, r, b, h0, lengths):
    """The raw op as Keras' _cudnn_gru calls it (gates r, z, h; biases (input, recurrent))."""
    def rzh(w, axis):
        z, r_, hh = tf.split(w, 3, axis=axis)
        return tf.concat([r_, z, hh], axis)
    params = tf.concat([tf.reshape(tf.transpose(rzh(k, 1)), [-1]),
                        tf.reshape(tf.transpose(rzh(r, 1)), [-1]),
                        rzh(b[0], 0), rzh(b[1], 0)], 0)
    out, h, _, _, _ = tf.raw_ops.CudnnRNNV3(
        input=x, input_h=tf.expand_dims(h0, 1), input_c=tf.zeros([]), params=params,
        sequence_lengths=lengths, is_training=True, rnn_mode="gru", time_major=False)
    return out, tf.squeeze(h, 1)


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_padded_sequences_hold_their_states(mode):
    a = _arrays(6) if mode == "lstm" else _gru_arrays(6)
    lengths = tf.constant(LENGTHS)
    args = [tf.constant(v.astype(np.float32)) for v in a]
    got = cudnn_lstm(*args, lengths=lengths) if mode == "lstm" else cudnn_gru(*args, lengths)
    want = np_lstm_lengths(*a, LENGTHS) if mode == "lstm" else np_gru_lengths(*a, LENGTHS)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=2e-5, atol=2e-5)
    assert not np.any(got[0].numpy()[1, 2:]) and not np.any(got[0].numpy()[2])


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_padded_sequences_gradients_match_finite_differences(mode):
    """float32 kernels against central differences of the float64 reference."""
    a = _arrays(7) if mode == "lstm" else _gru_arrays(7)
    lengths = tf.constant(LENGTHS)
    run = (lambda *v: cudnn_lstm(*v, lengths=lengths)) if mode == "lstm" else \
        (lambda *v: cudnn_gru(*v, lengths))
    ref = (lambda *v: np_lstm_lengths(*v, LENGTHS)) if mode == "lstm" else \
        (lambda *v: np_gru_lengths(*v, LENGTHS))
    weights = [np.random.default_rng(i).standard_normal(w.shape)
               for i, w in enumerate(ref(*a))]

    def loss(outs, lib):
        return sum(lib.reduce_sum(o * w) if lib is tf else np.sum(o * w)
                   for o, w in zip(outs, weights))
    variables = [tf.Variable(v.astype(np.float32)) for v in a]
    with tf.GradientTape() as tape:
        value = loss(run(*variables), tf)
    grads = tape.gradient(value, variables)
    for i, g in enumerate(grads):
        def f(v, i=i):
            args = list(a)
            args[i] = v
            return float(loss(ref(*args), np))
        want = numeric_grad(f, a[i])
        np.testing.assert_allclose(g.numpy(), want, rtol=2e-3, atol=2e-4 * np.abs(want).max())


def test_inference_mode_has_no_gradient():
    a = [tf.Variable(v.astype(np.float32)) for v in _arrays()]
    with tf.GradientTape() as tape:
        out = tf.raw_ops.CudnnRNNV3(
            input=a[0], input_h=tf.expand_dims(a[4], 1), input_c=tf.expand_dims(a[5], 1),
            params=tf.zeros([4 * H * I + 4 * H * H + 8 * H]), sequence_lengths=tf.fill([B], T),
            is_training=False, time_major=False)[0]
    with pytest.raises(ValueError, match="is_training must be set to True"):
        tape.gradient(out, a[0])


# -- Keras' LSTM on the fused op ---------------------------------------------------------------

def _layer_pair(layer="LSTM", **kwargs):
    """The same layer twice: fused (the default) and the generic loop, equal weights."""
    fused = getattr(tf.keras.layers, layer)(H, seed=7, **kwargs)
    loop = getattr(tf.keras.layers, layer)(H, seed=7, use_cudnn=False, **kwargs)
    x = np.random.default_rng(4).standard_normal((B, T, I)).astype(np.float32)
    fused(x)
    loop(x)
    loop.set_weights(fused.get_weights())
    return fused, loop, x


def _assert_fused_equals_loop(layer, kwargs):
    """Outputs and gradients (input and weights) of the fused layer equal the loop's, and
    only the fused one's graph holds CudnnRNNV3."""
    fused, loop, x = _layer_pair(layer, **kwargs)
    xv = tf.Variable(x)
    results = []
    for model in (fused, loop):
        with tf.GradientTape() as tape:
            out = model(xv)
            outs = out if isinstance(out, (list, tuple)) else [out]
            loss = sum(tf.reduce_sum(o * o) for o in outs)
        grads = tape.gradient(loss, [xv, *model.trainable_weights])
        results.append([o.numpy() for o in outs] + [g.numpy() for g in grads])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert "CudnnRNNV3" in op_types(fused, x)
    assert "CudnnRNNV3" not in op_types(loop, x)
    return x



@pytest.mark.parametrize("kwargs", [
    {}, {"return_sequences": True}, {"return_state": True, "return_sequences": True},
    {"go_backwards": True, "return_sequences": True}, {"go_backwards": True}])
def test_keras_lstm_fused_equals_loop(kwargs):
    _assert_fused_equals_loop("LSTM", kwargs)


def test_keras_lstm_fused_with_initial_state_and_stateful():
    fused, loop, x = _layer_pair(return_state=True)
    h0 = np.full((B, H), 0.3, np.float32)
    c0 = np.full((B, H), -0.2, np.float32)
    for a, b in zip(fused(x, initial_state=[h0, c0]), loop(x, initial_state=[h0, c0])):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)
    stateful = tf.keras.layers.LSTM(H, stateful=True, seed=7)
    first = stateful(x).numpy()
    again = stateful(x).numpy()     # carries the state of the previous call
    stateful.reset_state()
    np.testing.assert_allclose(stateful(x).numpy(), first, rtol=1e-6)
    assert not np.allclose(first, again)


def test_keras_lstm_fused_dropout_draws_the_loops_mask():
    fused, loop, x = _layer_pair(dropout=0.5, return_sequences=True)
    tf.random.set_seed(11)
    a = fused(x, training=True).numpy()
    tf.random.set_seed(11)
    b = loop(x, training=True).numpy()
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    assert not np.allclose(a, fused(x, training=False).numpy())


def test_keras_lstm_takes_the_loop_where_the_op_differs():
    x = np.ones((B, T, I), np.float32)
    for kwargs in ({"activation": "relu"}, {"recurrent_activation": "hard_sigmoid"},
                   {"use_bias": False}, {"unroll": True}):
        layer = tf.keras.layers.LSTM(H, **kwargs)
        layer(x)
        assert "CudnnRNNV3" not in op_types(layer, x), kwargs
    mask = tf.constant(np.array([[True] * T, [True] * 3 + [False] * 2, [True] * T]))
    masked = tf.keras.layers.LSTM(H, dtype="float64")   # padded sequences: float32 only
    masked(x)
    assert "CudnnRNNV3" not in op_types(masked, x, mask=mask)
    assert "CudnnRNNV3" in op_types(tf.keras.layers.LSTM(H), x, mask=mask)
    with pytest.raises(ValueError, match="use_cudnn=True was specified"):
        tf.keras.layers.LSTM(H, recurrent_dropout=0.2, use_cudnn=True)(x)


MASKS = {   # batch of B=3 rows, T=5 steps
    "right-padded": [[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0]],
    "left-padded": [[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 0, 0, 0, 1]],
    "holes and an empty row": [[1, 0, 1, 0, 1], [0, 0, 0, 0, 0], [1, 1, 0, 1, 1]],
}


@pytest.mark.parametrize("mask_name", sorted(MASKS))
@pytest.mark.parametrize("layer,kwargs", [
    ("LSTM", {"return_sequences": True, "return_state": True}),
    ("LSTM", {"go_backwards": True, "return_sequences": True}),
    ("LSTM", {"zero_output_for_mask": True, "return_sequences": True}),
    ("GRU", {"return_sequences": True, "return_state": True}),
    ("GRU", {"go_backwards": True}),
    ("GRU", {"zero_output_for_mask": True, "return_sequences": True}),
    ("LSTM", {"zero_output_for_mask": True, "return_state": True}),   # last output only
    ("GRU", {}),
])
def test_masked_sequences_fused_equal_the_loop(mask_name, layer, kwargs):
    """The generic loop's mask semantics (states hold, the last output repeats or zeros)
    from the fused op on gathered steps: outputs, states and gradients."""
    fused, loop, x = _layer_pair(layer, **kwargs)
    mask = tf.constant(np.array(MASKS[mask_name], bool))
    xv = tf.Variable(x)
    results = []
    for model in (fused, loop):
        with tf.GradientTape() as tape:
            out = model(xv, mask=mask)
            outs = out if isinstance(out, (list, tuple)) else [out]
            loss = sum(tf.reduce_sum(o * o * (1.0 + tf.range(tf.size(o), dtype=o.dtype)
                                              / 10.0)[:1]) + tf.reduce_sum(o) for o in outs)
        grads = tape.gradient(loss, [xv, *model.trainable_weights])
        results.append([o.numpy() for o in outs] + [g.numpy() for g in grads])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert "CudnnRNNV3" in op_types(fused, x, mask=mask)


def test_keras_lstm_fit_follows_the_loop():
    """fit on the fused LSTM takes the steps fit on the generic loop takes."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 50, size=(64, 12)).astype(np.int32)
    y = (x[:, -1] > 25).astype(np.int32)
    histories, weights = [], None
    for use_cudnn in ("auto", False):
        model = tf.keras.Sequential([tf.keras.Input((12,), dtype="int32"),
                                     tf.keras.layers.Embedding(50, 8),
                                     tf.keras.layers.LSTM(16, use_cudnn=use_cudnn),
                                     tf.keras.layers.Dense(2)])
        if weights is None:
            weights = model.get_weights()
        model.set_weights(weights)
        model.compile(tf.keras.optimizers.Adam(0.01),
                      tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        histories.append(model.fit(x, y, batch_size=16, epochs=4, shuffle=False,
                                   verbose=0).history["loss"])
    np.testing.assert_allclose(histories[0], histories[1], rtol=1e-4)
    assert histories[0][-1] < histories[0][0]


# -- GRU ---------------------------------------------------------------------------------------

def np_gru(x, k, r, b, h):
    """Keras' GRU with reset_after (gates z, r, h; bias (input, recurrent)), float64."""
    ys = []
    for t in range(x.shape[1]):
        xz, xr, xh = np.split(x[:, t] @ k + b[0], 3, axis=1)
        rz, rr, rh = np.split(h @ r + b[1], 3, axis=1)
        z, rg = _sigmoid(xz + rz), _sigmoid(xr + rr)
        hh = np.tanh(xh + rg * rh)
        h = z * h + (1 - z) * hh
        ys.append(h)
    return np.stack(ys, 1), h


def _gru_arrays(seed=0, t=T):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((B, t, I)), rng.standard_normal((I, 3 * H)) * 0.5,
            rng.standard_normal((H, 3 * H)) * 0.5, rng.standard_normal((2, 3 * H)) * 0.5,
            rng.standard_normal((B, H))]


def fused_gru(x, k, r, b, h0, go_backwards=False):
    cell = SimpleNamespace(kernel=k, recurrent_kernel=r, bias=b)
    _, out, (h,) = rnn_fused.gru(x, [h0], cell, go_backwards, True)
    return out, h


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
def test_gru_values_match_numpy(dtype, tol):
    a = _gru_arrays()
    out, h = fused_gru(*[tf.constant(v.astype(dtype)) for v in a])
    want_out, want_h = np_gru(*a)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=tol, atol=tol)
    np.testing.assert_allclose(h.numpy(), want_h, rtol=tol, atol=tol)


def test_gru_gradients_match_finite_differences():
    a = _gru_arrays(1, t=3)

    def loss(outs):
        out, h = outs
        return tf.reduce_sum(out * out) + 1.3 * tf.reduce_sum(h)
    variables = [tf.Variable(v) for v in a]
    with tf.GradientTape() as tape:
        value = loss(fused_gru(*variables))
    grads = tape.gradient(value, variables)

    def f_of(i):
        def f(v):
            args = [tf.constant(w) for w in a]
            args[i] = tf.constant(v)
            return float(loss(fused_gru(*args)).numpy())
        return f
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g.numpy(), numeric_grad(f_of(i), a[i]), rtol=1e-6,
                                   atol=1e-7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gru_empty_sequence_gradients(dtype):
    a = _gru_arrays(5, t=0)
    variables = [tf.Variable(v.astype(dtype)) for v in a]
    with tf.GradientTape() as tape:
        out, h = fused_gru(*variables)
        loss = 2.0 * tf.reduce_sum(h)
    assert out.shape == (B, 0, H)
    grads = tape.gradient(loss, variables)
    np.testing.assert_array_equal(grads[4].numpy(), np.full((B, H), 2.0))
    for g, v in zip(grads[1:4], a[1:4]):
        np.testing.assert_array_equal(g.numpy(), np.zeros_like(v))


@pytest.mark.parametrize("scale", [0.5, 8.0])
def test_gru_float32_step_kernel_gradients_match_float64(scale):
    """float32 on the CPU runs kernels/rnn_numba.py's sequence kernels, float64 the ATen loop the
    finite differences above check; `scale` 8 saturates the gates (sigmoid and tanh at +-1,
    their derivatives at 0)."""
    a = _gru_arrays(4, t=9)
    a[1] *= scale
    a[3] *= scale
    grads, values = {}, {}
    for dt in (np.float32, np.float64):
        variables = [tf.Variable(v.astype(dt)) for v in a]
        with tf.GradientTape() as tape:
            out, h = fused_gru(*variables)
            loss = tf.reduce_sum(out * out) + 1.3 * tf.reduce_sum(h)
        values[dt] = out.numpy()
        grads[dt] = [g.numpy() for g in tape.gradient(loss, variables)]
    np.testing.assert_allclose(values[np.float32], values[np.float64], rtol=2e-5, atol=2e-5)
    for g32, g64 in zip(grads[np.float32], grads[np.float64]):
        np.testing.assert_allclose(g32, g64, rtol=2e-4, atol=2e-4 * np.abs(g64).max())


@pytest.mark.parametrize("kwargs", [{}, {"return_sequences": True, "return_state": True},
                                    {"go_backwards": True, "return_sequences": True}])
def test_keras_gru_fused_equals_loop(kwargs):
    x = _assert_fused_equals_loop("GRU", kwargs)
    reset_before = tf.keras.layers.GRU(H, reset_after=False)
    reset_before(x)
    assert "CudnnRNNV3" not in op_types(reset_before, x)


@pytest.mark.parametrize("layer", ["LSTM", "GRU", "SimpleRNN"])
def test_saved_models_keep_the_portable_loop(tmp_path, layer):
    """TensorFlow has CudnnRNNV3 kernels on GPUs only: what ndflow writes into a SavedModel
    is the generic While loop, which TensorFlow serves on any device; it reloads equal."""
    model = tf.keras.Sequential([tf.keras.Input((T, I)), getattr(tf.keras.layers, layer)(H),
                                 tf.keras.layers.Dense(1)])
    x = np.random.default_rng(6).standard_normal((B, T, I)).astype(np.float32)
    want = model(x).numpy()
    assert "CudnnRNNV3" in op_types(model.layers[0], x)   # fused outside saving
    model.export(str(tmp_path / "export"), verbose=False)
    tf.saved_model.save(model, str(tmp_path / "saved"))
    for name in ("export", "saved"):
        data = (tmp_path / name / "saved_model.pb").read_bytes()
        assert b"CudnnRNNV3" not in data and b"While" in data, name
    got = tf.saved_model.load(str(tmp_path / "export")).serve(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backprop_refuses_what_the_forward_did_not_make(dtype):
    """A reserve space or gradient of another shape is TF's InvalidArgumentError, never a
    read past a buffer (float32 runs oneDNN, float64 the ATen loop)."""
    a = [tf.constant(v.astype(dtype)) for v in _arrays()]
    x, h0, c0 = a[0], tf.expand_dims(a[4], 1), tf.expand_dims(a[5], 1)
    params = tf.constant(np.random.default_rng(0).standard_normal(
        4 * H * I + 4 * H * H + 8 * H).astype(dtype))
    lengths = tf.fill([B], T)
    out, h, c, reserve, host = tf.raw_ops.CudnnRNNV3(
        input=x, input_h=h0, input_c=c0, params=params, sequence_lengths=lengths,
        time_major=False)
    args = dict(input=x, input_h=h0, input_c=c0, params=params, sequence_lengths=lengths,
                output=out, output_h=h, output_c=c, output_backprop=tf.ones_like(out),
                output_h_backprop=tf.zeros_like(h), output_c_backprop=tf.zeros_like(c),
                reserve_space=reserve, host_reserved=host, time_major=False)
    dx = tf.raw_ops.CudnnRNNBackpropV3(**args)[0]
    assert dx.shape == x.shape and np.all(np.isfinite(dx.numpy()))
    with pytest.raises(tf.errors.InvalidArgumentError, match="reserve_space must be"):
        tf.raw_ops.CudnnRNNBackpropV3(**{**args, "reserve_space": reserve[:-4]})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"output_backprop must have "
                       r"shape \[3, 5, 6\]"):
        tf.raw_ops.CudnnRNNBackpropV3(**{**args, "output_backprop": tf.ones_like(out)[:, :2]})
