"""tf.keras.preprocessing.sequence's legacy tools against TF 2.21's Keras
(tests/fixtures/keras_utils_data/legacy_sequence, generate.py)."""

import importlib.util
import json
import os
import random

import numpy as np
import pytest

import ndflow as tf

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "keras_utils_data",
                    "legacy_sequence")
_SPEC = importlib.util.spec_from_file_location("keras_legacy_sequence_recipe",
                                               os.path.join(HERE, "generate.py"))
_RECIPE = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_RECIPE)  # the fixture's own recipe, run here on ndflow


def test_results_equal_keras():
    with open(os.path.join(HERE, "expected.json")) as f:
        want = json.load(f)
    state = random.getstate()  # skipgrams reseeds Python's global random, as Keras
    try:
        got = json.loads(json.dumps(_RECIPE.results(tf)))
    finally:
        random.setstate(state)
    assert got == want


def test_timeseries_generator_feeds_fit_and_checks_lengths():
    seq = tf.keras.preprocessing.sequence
    data = np.arange(40, dtype="float32").reshape(20, 2)
    gen = seq.TimeseriesGenerator(data, data[:, :1], length=4, batch_size=4)
    model = tf.keras.Sequential([tf.keras.Input((4, 2)), tf.keras.layers.Flatten(),
                                 tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    assert model.predict(gen, verbose=0).shape == (16, 1)
    with pytest.raises(ValueError, match="Data and targets have to be of same length"):
        seq.TimeseriesGenerator(data, data[:3], length=2)
    with pytest.raises(ValueError, match="is disallowed"):
        seq.TimeseriesGenerator(data, data, length=30)
    assert json.loads(gen.to_json())["config"]["length"] == 4
