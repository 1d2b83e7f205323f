"""keras.activations called on a functional model's KerasTensors build the model steps Keras 3
builds (the keras.ops each is made of), with TF 2.21's outputs (tests/fixtures/
keras_activations_symbolic, generate.py runs configs.run), and such a model saves and loads.
Where TF 2.21's Keras refuses a KerasTensor (hard_silu, sparsemax, ...), ndflow may compute."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("keras_activations_symbolic")
EXPECTED = fixture_modules.expected("keras_activations_symbolic", "calls")


@pytest.fixture(scope="module")
def results():
    return CONFIGS.run(tf)


@pytest.mark.parametrize("i", range(len(EXPECTED)), ids=[f"{c[0]}{c[1] or ''}" for c in EXPECTED])
def test_outputs_as_tensorflow(results, i):
    name, kwargs, want = EXPECTED[i]
    got = results[i]
    assert got[:2] == [name, kwargs]
    if isinstance(want, str):          # TF refuses; ndflow computes or refuses alike
        assert isinstance(got[2], list) or got[2] == want
    else:
        np.testing.assert_allclose(got[2], want, rtol=2e-5, atol=2e-5)


def test_each_activation_is_one_step_of_the_model():
    inp = tf.keras.Input((3,))
    model = tf.keras.Model(inp, tf.keras.activations.elu(tf.keras.activations.tanh(inp)))
    steps = [type(layer).__name__ for layer in model.layers[1:]]
    assert steps == ["Tanh", "Elu"]
