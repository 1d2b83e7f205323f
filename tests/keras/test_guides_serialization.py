"""What the Keras guides ("Save, serialize, and export models", "Writing your own callbacks")
print of configs and variables, against TF 2.21 / Keras 3 (tests/fixtures/
keras_guides_serialization: cases.py run by generate.py): `Model.to_json`, the configs of
user layers that nest Keras objects (serialized as Keras' serialize_dict does), the module
Keras writes for user classes, and Keras variables' reprs (layer weights and optimizer
state)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

CASES = fixture_modules.load("keras_guides_serialization", "cases")
with open(fixture_modules.FIXTURES / "keras_guides_serialization" / "expected.json") as f:
    EXPECTED = json.load(f)


@pytest.fixture(scope="module")
def ours():
    return CASES.cases(tf)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_matches_tensorflow(ours, name):
    assert ours[name] == EXPECTED[name]


def test_to_json_round_trips_with_json_dumps_arguments():
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    text = model.to_json(indent=2)
    assert text.startswith('{\n  "module": "keras"')
    rebuilt = tf.keras.models.model_from_json(text)
    assert [type(x).__name__ for x in rebuilt.layers] == ["Dense"]


def test_numpy_warns_about_copy_for_keras_variables():
    # Keras 3's `__array__(dtype=None)`: NumPy 2 warns (as under TF 2.21) yet converts
    layer = tf.keras.layers.Dense(1)
    layer.build((None, 2))
    with pytest.warns(DeprecationWarning, match="copy keyword"):
        value = np.array(layer.kernel)
    np.testing.assert_array_equal(value, layer.kernel.numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.asarray(layer.kernel)   # no `copy` passed: no warning


def test_optimizer_variables_are_keras_variables_made_through_creators():
    made = []

    def creator(next_creator, **kwargs):
        made.append(kwargs["name"])
        return next_creator(**kwargs)

    with tf.variable_creator_scope(creator):
        opt = tf.keras.optimizers.SGD(0.1, name="sgd_creators")
    assert made == ["sgd_creators/iteration", "sgd_creators/learning_rate"]
    assert opt.iterations.path == "sgd_creators/iteration"
    assert opt.iterations.name == "iteration"
