"""ConvLSTM1D/2D/3D (ndflow/keras/layers/conv_lstm.py) against Keras 3 on TF 2.21
(tests/fixtures/keras_conv_lstm): outputs, states and gradients for the same weights and
inputs, the layers' configs, a model Keras saved, and the errors Keras raises."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from ndflow.keras.layers import conv_lstm, rnn_layers
from tests import fixture_modules

keras = tf.keras
HERE = fixture_modules.FIXTURES / "keras_conv_lstm"
CONFIGS = fixture_modules.load("keras_conv_lstm")
KERAS = np.load(HERE / "values.npz")
KERAS_CONFIGS = json.loads((HERE / "configs.json").read_text())
NAMES = sorted(CONFIGS.CASES)


def _layer_and_input(name):
    i = NAMES.index(name)
    cls, kwargs, shape = CONFIGS.CASES[name]
    layer = getattr(keras.layers, cls)(**kwargs)
    layer.build(shape)
    layer.set_weights(CONFIGS.weights_for([tuple(w.shape) for w in layer.weights], i))
    return layer, tf.constant(CONFIGS.inputs_for(shape, i))


@pytest.mark.parametrize("name", NAMES)
def test_outputs_and_gradients_match_keras(name):
    layer, x = _layer_and_input(name)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
        ys = y if isinstance(y, (list, tuple)) else [y]
        loss = sum(tf.reduce_sum(t * (k + 1.0)) for k, t in enumerate(ys))
    grads = tape.gradient(loss, [x] + layer.trainable_weights)
    assert len(ys) == sum(k.startswith(f"{name}/out") for k in KERAS.files)
    for k, t in enumerate(ys):
        np.testing.assert_allclose(t.numpy(), KERAS[f"{name}/out{k}"], rtol=1e-5, atol=2e-6)
        assert tuple(t.shape) == tuple(layer.compute_output_shape(x.shape)[k]
                                       if len(ys) > 1 else layer.compute_output_shape(x.shape))
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g.numpy(), KERAS[f"{name}/grad{k}"], rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", NAMES)
def test_configs_are_keras_and_round_trip(name):
    layer, _ = _layer_and_input(name)
    config = json.loads(json.dumps(layer.get_config(), default=list))
    want = dict(KERAS_CONFIGS[name])
    assert {k: v for k, v in config.items() if k != "name"} == \
        {k: v for k, v in want.items() if k != "name"}
    again = type(layer).from_config(layer.get_config())
    assert again.get_config() == layer.get_config()


def test_a_model_keras_saved_loads_and_predicts_the_same(tmp_path):
    model = keras.models.load_model(HERE / "model.keras")
    np.testing.assert_allclose(model.predict(KERAS["model/input"], verbose=0),
                               KERAS["model/output"], rtol=1e-5, atol=1e-6)
    model.save(tmp_path / "again.keras")
    again = keras.models.load_model(tmp_path / "again.keras")
    np.testing.assert_allclose(again.predict(KERAS["model/input"], verbose=0),
                               KERAS["model/output"], rtol=1e-5, atol=1e-6)


def test_trains_with_dropout_and_masks_per_gate():
    layer = keras.layers.ConvLSTM2D(2, 3, padding="same", dropout=0.5, recurrent_dropout=0.5,
                                    seed=3)
    x = np.ones((2, 3, 5, 5, 1), np.float32)
    a, b = layer(x, training=True), layer(x, training=True)
    assert not np.allclose(a.numpy(), b.numpy())            # new masks per call
    np.testing.assert_allclose(layer(x).numpy(), layer(x).numpy())   # none in inference
    model = keras.Sequential([keras.Input((3, 5, 5, 1)), layer, keras.layers.Flatten(),
                              keras.layers.Dense(1)])
    model.compile("adam", "mse")
    history = model.fit(np.random.rand(8, 3, 5, 5, 1), np.random.rand(8, 1), epochs=2,
                        verbose=0)
    assert np.isfinite(history.history["loss"]).all()


@pytest.mark.parametrize("kwargs, shape, message", [
    (dict(filters=2, kernel_size=3, strides=2, dilation_rate=2), (1, 2, 9, 9, 1),
     "not compatible with `dilation_rate > 1`"),
    (dict(filters=2, kernel_size=3), (1, 2, None, 9, 1), "static input shapes"),
    (dict(filters=2, kernel_size=(3, 3, 3)), (1, 2, 9, 9, 1), "tuple of 2 integers"),
])
def test_bad_arguments_raise_keras_errors(kwargs, shape, message):
    with pytest.raises(ValueError, match=message):
        layer = keras.layers.ConvLSTM2D(**kwargs)
        layer.build(shape)


def _generic_loop_values(layer, x, monkeypatch, **call_kwargs):
    """Outputs and gradients of `layer` with the cell's own per-step call in the generic loop
    (RNN.inner_loop: eight convolutions a step), seeds reset first."""
    with monkeypatch.context() as patch:
        patch.setattr(conv_lstm.ConvLSTM, "inner_loop", rnn_layers.RNN.inner_loop)
        return _values(layer, x, **call_kwargs)


def _values(layer, x, **call_kwargs):
    tf.random.set_seed(4)
    xv = tf.Variable(x)
    with tf.GradientTape() as tape:
        y = layer(xv, **call_kwargs)
        loss = tf.reduce_sum(y * y)
    return [y.numpy()] + [g.numpy() for g in tape.gradient(loss, [xv] + layer.trainable_weights)]


@pytest.mark.parametrize("kwargs", [
    dict(filters=3, kernel_size=3, padding="same", return_sequences=True),
    dict(filters=3, kernel_size=3, strides=2, go_backwards=True),
    dict(filters=3, kernel_size=3, padding="same", dropout=0.4, recurrent_dropout=0.3, seed=5),
    dict(filters=3, kernel_size=3, recurrent_dropout=0.3, data_format="channels_first",
         seed=6)])
def test_sequence_wide_input_convolutions_equal_the_cells_steps(kwargs, monkeypatch):
    """The layer convolves the inputs of all steps at once and each step's state by the whole
    recurrent kernel; the cell's step convolves each gate apart. The same masks are drawn."""
    layer = keras.layers.ConvLSTM2D(**kwargs)
    shape = (2, 4, 2, 7, 7) if kwargs.get("data_format") == "channels_first" else (2, 4, 7, 7, 2)
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    layer(x)
    got = _values(layer, x, training=True)
    want = _generic_loop_values(layer, x, monkeypatch, training=True)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    f = tf.function(lambda v: layer(v, training=True))
    graph = f.get_concrete_function(tf.TensorSpec(shape, tf.float32)).graph
    bodies = [fn for fn in graph.as_graph_def().library.function
              if any(n.op == "Conv2D" for n in fn.node_def)]
    per_step = min(sum(n.op == "Conv2D" for n in fn.node_def) for fn in bodies)
    assert per_step == (4 if kwargs.get("recurrent_dropout") else 1)
