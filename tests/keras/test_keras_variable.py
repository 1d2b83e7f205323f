"""keras.Variable (Keras 3's constructor, paths, errors) and layers tracking the ones assigned
to their attributes, against TF 2.21 / Keras 3 (tests/fixtures/keras_variable: values.json and
a model Keras trained and saved, by generate.py beside them)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

keras = tf.keras
HERE = fixture_modules.FIXTURES / "keras_variable"
CONFIGS = fixture_modules.load("keras_variable")
TF_VALUES = json.loads((HERE / "values.json").read_text())
CASES = CONFIGS.cases(tf, keras)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_keras(name):
    got = CONFIGS.record(CASES[name])
    want = TF_VALUES[name]
    if "value" in want and isinstance(want["value"], list) and name == "trained":
        assert len(got["value"]) == len(want["value"])
        for g, w in zip(got["value"], want["value"]):
            np.testing.assert_allclose(g, w, rtol=1e-6)
    else:
        assert got == want


def test_a_model_keras_saved_with_the_layer_loads_and_predicts_the_same():
    model = keras.models.load_model(HERE / "scaled.keras")
    x = np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(model.predict(x, verbose=0),
                               np.load(HERE / "scaled_prediction.npy"), rtol=1e-6)
    layer = model.layers[0]
    assert [w.path for w in layer.weights] == ["scale", "scaled/kernel", "offset"]


def test_a_variable_assigned_twice_is_tracked_once_and_a_plain_tf_variable_not_at_all():
    class Twice(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.a = keras.Variable(1.0, name="a")
            self.b = self.a
            self.c = tf.Variable(2.0)     # Keras 3 tracks its own variables only
    assert [w.path for w in Twice().weights] == ["a"]


def test_freezing_the_layer_freezes_its_tracked_variables():
    layer = CONFIGS.layer_class(keras)(name="frozen")
    layer(np.ones((1, 4), np.float32))
    layer.trainable = False
    assert layer.trainable_weights == []
    assert [w.path for w in layer.non_trainable_weights] == ["scale", "frozen/kernel", "offset"]
