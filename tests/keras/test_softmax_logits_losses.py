"""Keras 3's crossentropies on the TensorFlow backend compute from the logits of a softmax or
sigmoid output (cached by Keras' activation on its output, or the Softmax/Sigmoid op's input
in a graph), so saturated probabilities give the true loss instead of a clipped one; and
Dense promotes integer inputs. Compared with NumPy float64 and with
tests/fixtures/keras_softmax_logits/expected.json (TensorFlow 2.21 running configs.py)."""

import json

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules
from tests.fixture_modules import FIXTURES

EXPECTED = json.loads((FIXTURES / "keras_softmax_logits" / "expected.json").read_text())
_configs = fixture_modules.load("keras_softmax_logits")


@pytest.fixture(scope="module")
def observed():
    tf.keras.utils.set_random_seed(0)
    return _configs.program(tf)


def _logits(units):
    kernel = np.arange(3 * units, dtype=np.float64).reshape(3, units)
    return _configs.X.astype(np.float64) @ kernel


def _sparse_cce(logits, labels):
    top = logits.max(axis=-1, keepdims=True)
    lse = np.log(np.exp(logits - top).sum(axis=-1)) + top[:, 0]
    return lse - logits[np.arange(len(labels)), labels]


def test_dense_promotes_integer_inputs_as_keras(observed):
    assert observed["dense_input_dtypes"] == EXPECTED["dense_input_dtypes"]
    dense = tf.keras.layers.Dense(2, kernel_initializer="ones", bias_initializer="ones")
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int64)
    np.testing.assert_allclose(dense(x).numpy(), x.astype(np.float64) @ np.ones((3, 2)) + 1)


@pytest.mark.parametrize("key", ["sparse_cce_eager", "cce_eager"])
def test_softmax_output_losses_use_its_logits(observed, key):
    expected = _sparse_cce(_logits(4), _configs.LABELS)
    np.testing.assert_allclose(observed[key], expected, rtol=1e-6)
    np.testing.assert_allclose(observed[key], EXPECTED[key], rtol=1e-6)


def test_fit_graphs_use_the_logits_too(observed):
    expected = _sparse_cce(_logits(4), _configs.LABELS).mean()
    np.testing.assert_allclose(observed["sparse_cce_evaluate"], expected, rtol=1e-6)
    np.testing.assert_allclose(observed["bce_evaluate"], EXPECTED["bce_evaluate"], rtol=1e-6)


def test_sigmoid_output_binary_crossentropy_uses_its_logits(observed):
    z = _logits(1)[:, 0]
    expected = np.log1p(np.exp(-np.abs(z))) + np.maximum(z, 0)   # targets 0
    np.testing.assert_allclose(observed["bce_eager"], expected, rtol=1e-5)
    np.testing.assert_allclose(observed["bce_eager"], EXPECTED["bce_eager"], rtol=1e-5)


def test_other_probabilities_are_still_clipped(observed):
    np.testing.assert_allclose(observed["sparse_cce_plain_probs"],
                               EXPECTED["sparse_cce_plain_probs"], rtol=1e-6)
    assert observed["sparse_cce_plain_probs"][0] == pytest.approx(-np.log(1e-7), rel=1e-6)


def test_from_logits_on_a_softmax_output_warns_as_keras(observed):
    assert observed["from_logits_warning"] == EXPECTED["from_logits_warning"]


def test_softmax_op_input_is_taken_in_a_graph():
    @tf.function
    def loss(logits, labels):
        return tf.keras.losses.sparse_categorical_crossentropy(labels, tf.nn.softmax(logits))

    logits = _logits(4).astype(np.float32)
    np.testing.assert_allclose(loss(logits, _configs.LABELS).numpy(),
                               _sparse_cce(_logits(4), _configs.LABELS), rtol=1e-6)
