"""keras.RematScope against Keras 3 on TF 2.21 (tests/fixtures/keras_remat, generate.py
beside): for each mode, which layers' calls and activations run again in the backward pass,
in order, and the gradients (rematerializing changes no value)."""

from __future__ import annotations

import json

import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("keras_remat")
TF_VALUES = json.loads((fixture_modules.FIXTURES / "keras_remat" / "values.json").read_text())
CASES = CONFIGS.cases(tf, tf.keras)


@pytest.mark.parametrize("name", sorted(CASES))
def test_recomputations_match_keras(name):
    assert CONFIGS.record(CASES[name]) == TF_VALUES[name]
