"""Keras' SimpleRNN on CudnnRNNV3 in cuDNN's rnn_tanh / rnn_relu modes (keras/layers/
rnn_fused.py): the raw op against NumPy float64 and finite differences (float64 runs the ATen
loop, float32 on CPUs the numba kernel), the layer fused against the generic loop
(`keras.layers.RNN(SimpleRNNCell)`, which never fuses): values, gradients, states, masks,
dropout, and the configurations that must keep the loop."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from tests.keras.layer_checks import numeric_grad, op_types
from tests.ops.test_cudnn_rnn import MASKS

T, B, I, H = 5, 3, 4, 6


def np_rnn(x, k, r, b, h, relu):
    ys = []
    for t in range(x.shape[1]):
        pre = x[:, t] @ k + h @ r + b
        h = np.maximum(pre, 0.0) if relu else np.tanh(pre)
        ys.append(h)
    return np.stack(ys, 1), h


def raw_rnn(x, k, r, b, h0, mode):
    params = tf.concat([tf.reshape(tf.transpose(k), [-1]), tf.reshape(tf.transpose(r), [-1]),
                        tf.zeros_like(b), b], 0)
    out, h, _, _, _ = tf.raw_ops.CudnnRNNV3(
        input=x, input_h=tf.expand_dims(h0, 1), input_c=tf.zeros([], x.dtype), params=params,
        sequence_lengths=tf.fill([B], tf.shape(x)[1]), rnn_mode=mode, is_training=True,
        time_major=False)
    return out, tf.squeeze(h, 1)


def _arrays(seed, t=T):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((B, t, I)), rng.standard_normal((I, H)) * 0.6,
            rng.standard_normal((H, H)) * 0.5, rng.standard_normal(H) * 0.5,
            rng.standard_normal((B, H))]


@pytest.mark.parametrize("mode", ["rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
def test_raw_op_values_match_numpy(mode, dtype, tol):
    a = _arrays(1)
    out, h = raw_rnn(*[tf.constant(v.astype(dtype)) for v in a], mode)
    want_out, want_h = np_rnn(*a, relu=mode == "rnn_relu")
    np.testing.assert_allclose(out.numpy(), want_out, rtol=tol, atol=tol)
    np.testing.assert_allclose(h.numpy(), want_h, rtol=tol, atol=tol)


@pytest.mark.parametrize("mode", ["rnn_tanh", "rnn_relu"])
def test_raw_op_gradients_match_finite_differences(mode):
    a = _arrays(2, t=3)

    def loss(outs):
        out, h = outs
        return tf.reduce_sum(out * out) + 1.3 * tf.reduce_sum(h)
    variables = [tf.Variable(v) for v in a]
    with tf.GradientTape() as tape:
        value = loss(raw_rnn(*variables, mode))
    grads = tape.gradient(value, variables)

    def f_of(i):
        def f(v):
            args = [tf.constant(w) for w in a]
            args[i] = tf.constant(v)
            return float(loss(raw_rnn(*args, mode)).numpy())
        return f
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g.numpy(), numeric_grad(f_of(i), a[i]), rtol=1e-6,
                                   atol=1e-7)


@pytest.mark.parametrize("mode", ["rnn_tanh", "rnn_relu"])
def test_float32_kernel_gradients_match_float64(mode):
    a = _arrays(3, t=8)
    grads = {}
    for dt in (np.float32, np.float64):
        variables = [tf.Variable(v.astype(dt)) for v in a]
        with tf.GradientTape() as tape:
            out, h = raw_rnn(*variables, mode)
            loss = tf.reduce_sum(out * out) + tf.reduce_sum(h)
        grads[dt] = [g.numpy() for g in tape.gradient(loss, variables)]
    for g32, g64 in zip(grads[np.float32], grads[np.float64]):
        np.testing.assert_allclose(g32, g64, rtol=2e-4, atol=2e-4 * np.abs(g64).max())


def _pair(**kwargs):
    """SimpleRNN (fused) and RNN(SimpleRNNCell) (the generic loop), equal weights."""
    cell_args = {k: kwargs.pop(k) for k in ("activation", "use_bias", "dropout")
                 if k in kwargs}
    fused = tf.keras.layers.SimpleRNN(H, seed=7, **cell_args, **kwargs)
    loop = tf.keras.layers.RNN(tf.keras.layers.SimpleRNNCell(H, seed=7, **cell_args),
                               **kwargs)
    x = np.random.default_rng(4).standard_normal((B, T, I)).astype(np.float32)
    fused(x)
    loop(x)
    loop.set_weights(fused.get_weights())
    return fused, loop, x



def _outputs_and_gradients(model, x, mask=None):
    xv = tf.Variable(x)
    with tf.GradientTape() as tape:
        out = model(xv, mask=mask)
        outs = out if isinstance(out, (list, tuple)) else [out]
        loss = sum(tf.reduce_sum(o * o) + 0.5 * tf.reduce_sum(o) for o in outs)
    grads = tape.gradient(loss, [xv, *model.trainable_weights])
    return [o.numpy() for o in outs] + [g.numpy() for g in grads]


@pytest.mark.parametrize("kwargs", [
    {}, {"return_sequences": True, "return_state": True}, {"go_backwards": True},
    {"activation": "relu", "return_sequences": True}, {"use_bias": False},
    {"activation": tf.nn.relu, "go_backwards": True, "return_sequences": True}])
def test_keras_simple_rnn_fused_equals_loop(kwargs):
    fused, loop, x = _pair(**kwargs)
    for a, b in zip(_outputs_and_gradients(fused, x), _outputs_and_gradients(loop, x)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert "CudnnRNNV3" in op_types(fused, x)
    assert "CudnnRNNV3" not in op_types(loop, x)


@pytest.mark.parametrize("mask_name", sorted(MASKS))
@pytest.mark.parametrize("kwargs", [{"return_sequences": True, "return_state": True},
                                    {"go_backwards": True}])
def test_masked_sequences_fused_equal_the_loop(mask_name, kwargs):
    fused, loop, x = _pair(**kwargs)
    mask = tf.constant(np.array(MASKS[mask_name], bool))
    for a, b in zip(_outputs_and_gradients(fused, x, mask),
                    _outputs_and_gradients(loop, x, mask)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert "CudnnRNNV3" in op_types(fused, x, mask=mask)


def test_dropout_draws_the_loops_mask():
    fused, loop, x = _pair(dropout=0.5, return_sequences=True)
    tf.random.set_seed(11)
    a = fused(x, training=True).numpy()
    tf.random.set_seed(11)
    b = loop(x, training=True).numpy()
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    assert not np.allclose(a, fused(x, training=False).numpy())


def test_the_loop_where_the_op_differs():
    x = np.ones((B, T, I), np.float32)
    for kwargs in ({"activation": "sigmoid"}, {"activation": None}, {"unroll": True}):
        layer = tf.keras.layers.SimpleRNN(H, **kwargs)
        layer(x)
        assert "CudnnRNNV3" not in op_types(layer, x), kwargs


def test_fit_follows_the_loop():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 50, size=(64, 12)).astype(np.int32)
    y = (x[:, -1] > 25).astype(np.int32)
    histories, weights = [], None
    for rnn in (tf.keras.layers.SimpleRNN(16),
                tf.keras.layers.RNN(tf.keras.layers.SimpleRNNCell(16))):
        model = tf.keras.Sequential([tf.keras.Input((12,), dtype="int32"),
                                     tf.keras.layers.Embedding(50, 8), rnn,
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
