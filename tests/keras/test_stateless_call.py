"""keras.StatelessScope and Layer.stateless_call against Keras 3 on TF 2.21
(tests/fixtures/keras_stateless, generate.py beside): reads of the given values, recorded
updates, BatchNormalization's moving statistics, regularization losses, a JAX-style training
loop on a Sequential model, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("keras_stateless")
TF_VALUES = json.loads(
    (fixture_modules.FIXTURES / "keras_stateless" / "values.json").read_text())
CASES = CONFIGS.cases(tf, tf.keras)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_keras(name):
    got, want = CONFIGS.record(CASES[name]), TF_VALUES[name]
    if name == "training_loop":    # a few float32 steps: their last digit may differ
        np.testing.assert_allclose(got["value"]["losses"], want["value"]["losses"],
                                   rtol=1e-4, atol=2e-5)
        np.testing.assert_allclose(got["value"]["moving"], want["value"]["moving"], atol=2e-5)
        assert got["value"]["model_unchanged"] == want["value"]["model_unchanged"]
        return
    assert got == want
