"""Keras' LSTM, GRU and SimpleRNN with recurrent dropout (and Keras' implementation 1 with
input dropout) run as one _RecurrentDropoutRNN op in training (keras/layers/rnn_fused.py):
the same masks as the generic loop draws, so the same values and gradients as
`keras.layers.RNN(cell)` (which never fuses) under the same seeds; CudnnRNNV3 in inference;
Keras' refusal of use_cudnn=True kept; `fit` follows the loop."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from tests.keras.layer_checks import op_types, saved_op_types
from tests.ops.test_cudnn_rnn import MASKS

T, B, I, H = 5, 3, 4, 6
LAYERS = {"LSTM": (tf.keras.layers.LSTM, tf.keras.layers.LSTMCell),
          "GRU": (tf.keras.layers.GRU, tf.keras.layers.GRUCell),
          "SimpleRNN": (tf.keras.layers.SimpleRNN, tf.keras.layers.SimpleRNNCell)}
CELL_ARGS = ("dropout", "recurrent_dropout", "implementation")


def _pair(name, **kwargs):
    """The layer (fused) and RNN(cell) (the generic loop), equal weights and seeds."""
    layer_cls, cell_cls = LAYERS[name]
    cell_args = {k: kwargs.pop(k) for k in CELL_ARGS if k in kwargs}
    fused = layer_cls(H, seed=7, **cell_args, **kwargs)
    loop = tf.keras.layers.RNN(cell_cls(H, seed=7, **cell_args), **kwargs)
    x = np.random.default_rng(4).standard_normal((B, T, I)).astype(np.float32)
    fused(x)
    loop(x)
    loop.set_weights(fused.get_weights())
    return fused, loop, x


def _training_run(layer, x, mask=None):
    """Outputs and gradients (input, weights) of a training call, seeds reset first."""
    tf.random.set_seed(11)
    xv = tf.Variable(x)
    with tf.GradientTape() as tape:
        out = layer(xv, mask=mask, training=True)
        outs = out if isinstance(out, (list, tuple)) else [out]
        loss = sum(tf.reduce_sum(o * o) + 0.5 * tf.reduce_sum(o) for o in outs)
    grads = tape.gradient(loss, [xv, *layer.trainable_weights])
    return [o.numpy() for o in outs] + [g.numpy() for g in grads]



@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("kwargs", [
    {"recurrent_dropout": 0.4},
    {"recurrent_dropout": 0.4, "dropout": 0.3, "return_sequences": True,
     "return_state": True},
    {"recurrent_dropout": 0.3, "go_backwards": True},
    {"dropout": 0.3, "implementation": 1, "return_sequences": True}])
def test_training_fused_equals_the_loop(name, kwargs):
    if name == "SimpleRNN" and "implementation" in kwargs:
        pytest.skip("SimpleRNN has no implementation argument")
    fused, loop, x = _pair(name, **kwargs)
    got, want = _training_run(fused, x), _training_run(loop, x)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    # the masks dropped something: the training call differs from inference
    inference = fused(x, training=False)
    inference = inference[0] if isinstance(inference, (list, tuple)) else inference
    assert not np.allclose(got[0], inference.numpy())
    assert "_RecurrentDropoutRNN" in op_types(fused, x, training=True)
    assert "_RecurrentDropoutRNN" not in op_types(loop, x, training=True)
    assert fused.cell._recurrent_dropout_mask is None and fused.cell._dropout_mask is None


@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("mask_name", sorted(MASKS))
def test_padded_sequences_fused_equal_the_loop(name, mask_name):
    fused, loop, x = _pair(name, recurrent_dropout=0.4, return_sequences=True)
    mask = tf.constant(np.array(MASKS[mask_name], bool))
    for a, b in zip(_training_run(fused, x, mask), _training_run(loop, x, mask)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_inference_runs_cudnn_rnn_v3(name):
    fused, loop, x = _pair(name, recurrent_dropout=0.4)
    np.testing.assert_allclose(fused(x).numpy(), loop(x).numpy(), rtol=1e-5, atol=1e-6)
    types = op_types(fused, x)
    assert "CudnnRNNV3" in types and "_RecurrentDropoutRNN" not in types


def test_use_cudnn_true_is_refused_as_keras_does():
    x = np.ones((B, T, I), np.float32)
    for layer in (tf.keras.layers.LSTM, tf.keras.layers.GRU):
        with pytest.raises(ValueError, match="use_cudnn=True was specified"):
            layer(H, recurrent_dropout=0.2, use_cudnn=True)(x)


def test_saved_model_tracing_keeps_the_loop(tmp_path):
    """TensorFlow has no _RecurrentDropoutRNN: a SavedModel of a training call keeps the
    time loop."""
    layer = tf.keras.layers.LSTM(H, recurrent_dropout=0.3)
    x = np.ones((B, T, I), np.float32)
    layer(x)
    module = tf.Module()
    module.layer = layer
    module.f = tf.function(lambda v: layer(v, training=True),
                           input_signature=[tf.TensorSpec([B, T, I], tf.float32)])
    types = saved_op_types(module, tmp_path)
    assert "_RecurrentDropoutRNN" not in types and types & {"While", "StatelessWhile"}


def test_fit_follows_the_loop():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 50, size=(64, 12)).astype(np.int32)
    y = (x[:, -1] > 25).astype(np.int32)
    histories, weights = [], None
    for rnn in (tf.keras.layers.LSTM(16, recurrent_dropout=0.3, seed=2),
                tf.keras.layers.RNN(tf.keras.layers.LSTMCell(16, recurrent_dropout=0.3,
                                                             seed=2))):
        model = tf.keras.Sequential([tf.keras.Input((12,), dtype="int32"),
                                     tf.keras.layers.Embedding(50, 8), rnn,
                                     tf.keras.layers.Dense(2)])
        if weights is None:
            weights = model.get_weights()
        model.set_weights(weights)
        model.compile(tf.keras.optimizers.Adam(0.01),
                      tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        tf.random.set_seed(3)
        histories.append(model.fit(x, y, batch_size=16, epochs=4, shuffle=False,
                                   verbose=0).history["loss"])
    np.testing.assert_allclose(histories[0], histories[1], rtol=1e-4)
    assert histories[0][-1] < histories[0][0]
