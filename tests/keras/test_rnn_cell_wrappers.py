"""tf.nn.RNNCellResidualWrapper, RNNCellDropoutWrapper and RNNCellDeviceWrapper
(ndflow/keras/layers/rnn_cell_wrappers.py) against TensorFlow 2.21 around Keras 3 cells
(tests/fixtures/keras_rnn_cell_wrappers): outputs and states step by step, with TensorFlow's
seeded dropout masks (per-step and variational), configs and their round trip; the wrappers
inside keras.layers.RNN; TF's errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

keras = tf.keras
HERE = fixture_modules.FIXTURES / "keras_rnn_cell_wrappers"
CONFIGS = fixture_modules.load("keras_rnn_cell_wrappers")
TF = np.load(HERE / "values.npz")
TF_CONFIGS = json.loads((HERE / "configs.json").read_text())


def _wrapped(name):
    wrapper_name, cell_name, kwargs = CONFIGS.CASES[name]
    tf.random.set_seed(CONFIGS.GLOBAL_SEED)
    cell = getattr(keras.layers, cell_name)(CONFIGS.UNITS)
    wrapper = getattr(tf.nn, wrapper_name)(cell, **kwargs)
    wrapper.build((2, CONFIGS.UNITS))
    cell.set_weights(CONFIGS.weights([w.shape for w in cell.get_weights()]))
    return cell, wrapper


@pytest.mark.parametrize("name", sorted(CONFIGS.CASES))
def test_wrapper_steps_match_tensorflow(name):
    cell, wrapper = _wrapped(name)
    x = CONFIGS.inputs()
    state = cell.get_initial_state(batch_size=2)
    if name in CONFIGS.BARE_STATE:
        state = state[0]
    for t in range(x.shape[1]):
        output, state = wrapper(tf.constant(x[:, t]), state)
        np.testing.assert_allclose(output.numpy(), TF[f"{name}/output/{t}"], rtol=1e-5,
                                   atol=1e-6)
        for i, s in enumerate(state if isinstance(state, list) else [state]):
            np.testing.assert_allclose(s.numpy(), TF[f"{name}/state{i}/{t}"], rtol=1e-5,
                                       atol=1e-6)
    config = json.loads(json.dumps(wrapper.get_config(), default=list))
    want = TF_CONFIGS[name]
    assert {k: v for k, v in config.items() if k not in ("name", "cell")} == \
        {k: v for k, v in want.items() if k not in ("name", "cell")}
    assert config["cell"]["class_name"] == want["cell"]["class_name"]
    assert config["cell"]["config"]["units"] == want["cell"]["config"]["units"]


def test_dropout_masks_scale_kept_values_and_drop_about_the_rate():
    cell = keras.layers.SimpleRNNCell(64, kernel_initializer="ones",
                                      recurrent_initializer="zeros", activation=None)
    wrapper = tf.nn.RNNCellDropoutWrapper(cell, input_keep_prob=0.75, seed=1)
    x = np.ones((400, 64), np.float32)
    dropped = tf.nn.RNNCellDropoutWrapper(keras.layers.SimpleRNNCell(64), seed=1)
    assert dropped._input_keep_prob == 1.0           # nothing to drop: no mask drawn
    out, _ = wrapper(tf.constant(x), [tf.zeros((400, 64))])
    # each output unit sums the kept inputs, scaled by 1/keep: the mean stays 64
    assert abs(out.numpy().mean() - 64.0) < 0.5
    kept = out.numpy() / (1 / 0.75)
    np.testing.assert_allclose(kept, np.round(kept), atol=1e-4)   # whole numbers of inputs


def test_residual_wrapper_adds_inputs_and_custom_residual_fn_round_trips():
    cell = keras.layers.SimpleRNNCell(3)
    plain = tf.nn.RNNCellResidualWrapper(cell)
    x = tf.constant(CONFIGS.inputs()[:, 0])
    state = [tf.zeros((2, 3))]
    wrapped_out, _ = plain(x, state)
    cell_out, _ = cell(x, state)
    np.testing.assert_allclose(wrapped_out.numpy(), cell_out.numpy() + x.numpy(), atol=1e-6)
    custom = tf.nn.RNNCellResidualWrapper(cell, residual_fn=_difference)
    np.testing.assert_allclose(custom(x, state)[0].numpy(), x.numpy() - cell_out.numpy(),
                               atol=1e-6)
    config = custom.get_config()
    assert (config["residual_fn"], config["residual_fn_type"]) == ("_difference", "function")
    again = tf.nn.RNNCellResidualWrapper.from_config(config,
                                                     custom_objects={"_difference": _difference})
    assert again._residual_fn is _difference and type(again.cell).__name__ == "SimpleRNNCell"


def _difference(inputs, outputs):
    return inputs - outputs


def test_wrappers_run_inside_keras_rnn_as_their_steps():
    x = CONFIGS.inputs()
    cell = keras.layers.GRUCell(3)
    layer = keras.layers.RNN(tf.nn.RNNCellResidualWrapper(cell), return_sequences=True)
    seq = layer(x).numpy()
    state = cell.get_initial_state(batch_size=2)
    for t in range(x.shape[1]):
        out, state = cell(tf.constant(x[:, t]), state)
        np.testing.assert_allclose(seq[:, t], out.numpy() + x[:, t], rtol=1e-5, atol=1e-6)
    device = keras.layers.RNN(tf.nn.RNNCellDeviceWrapper(keras.layers.LSTMCell(2), "/cpu:0"))
    assert device(x).shape == (2, 2)


def test_wrapper_errors_are_tensorflows():
    cell = keras.layers.SimpleRNNCell(3)
    with pytest.raises(ValueError, match="Parameter input_keep_prob must be between 0 and 1"):
        tf.nn.RNNCellDropoutWrapper(cell, input_keep_prob=1.5)
    with pytest.raises(ValueError, match="When variational_recurrent=True, dtype must be"):
        tf.nn.RNNCellDropoutWrapper(cell, variational_recurrent=True)
    with pytest.raises(ValueError, match="input_size must be provided"):
        tf.nn.RNNCellDropoutWrapper(cell, variational_recurrent=True, dtype=tf.float32,
                                    input_keep_prob=0.5)
    with pytest.raises(TypeError, match="dropout_state_filter_visitor must be callable"):
        tf.nn.RNNCellDropoutWrapper(cell, dropout_state_filter_visitor=3)
    wrapper = tf.nn.RNNCellResidualWrapper(keras.layers.SimpleRNNCell(2))
    with pytest.raises(ValueError):   # outputs (2 units) cannot be added to inputs (3)
        wrapper(tf.constant(CONFIGS.inputs()[:, 0]), [tf.zeros((2, 2))])
