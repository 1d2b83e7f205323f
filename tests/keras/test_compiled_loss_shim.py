"""Keras 3's deprecated `Model.compiled_loss(y, y_pred)` and
`Model.compiled_metrics.update_state(y, y_pred)` (Keras 2 train steps, as TensorBoard's
scalars guide writes one): the compiled loss, and every metric updated (the loss tracker, a
Mean, with the predictions), each with Keras' deprecation warning. Compared with NumPy
float64 and with tests/fixtures/keras_compiled_loss_shim/expected.json (TensorFlow 2.21)."""

import json

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules
from tests.fixture_modules import FIXTURES

EXPECTED = json.loads((FIXTURES / "keras_compiled_loss_shim" / "expected.json").read_text())
_configs = fixture_modules.load("keras_compiled_loss_shim")


@pytest.fixture(scope="module")
def observed():
    return _configs.program(tf)


def _numpy_run(epochs=3):
    x, y = _configs.X.astype(np.float64), _configs.Y.astype(np.float64)
    w = np.ones((2, 1))
    history = {"loss": [], "mae": []}
    for _ in range(epochs):
        pred = x @ w
        history["loss"].append(pred.mean())   # the loss tracker is a Mean: fed y_pred
        history["mae"].append(np.abs(pred - y).mean())
        w = w - _configs.LR * 2.0 / len(x) * x.T @ (pred - y)
    return history, w


def test_training_with_the_shims_matches_numpy(observed):
    history, w = _numpy_run()
    for key in ("loss", "mae"):
        np.testing.assert_allclose(observed["history"][key], history[key], rtol=1e-6)
        np.testing.assert_allclose(observed["history"][key], EXPECTED["history"][key],
                                   rtol=1e-6)
    np.testing.assert_allclose(observed["kernel"], w, rtol=1e-6)


def test_shims_warn_as_keras(observed):
    assert observed["warnings"] == EXPECTED["warnings"]
