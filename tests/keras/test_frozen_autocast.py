"""Keras 3's rules for a layer created frozen (its weights are frozen as they are made, so a
model does not train them) and for autocasting a layer with `autocast=False` under a mixed
policy (alone it still reads its variables in the compute dtype; inside another layer's call
it clears the scope), against TF 2.21 (tests/fixtures/keras_frozen_autocast)."""

from __future__ import annotations

import json

import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("keras_frozen_autocast")
TF_VALUES = json.loads(
    (fixture_modules.FIXTURES / "keras_frozen_autocast" / "values.json").read_text())
CASES = CONFIGS.cases(tf, tf.keras)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_keras(name):
    assert CONFIGS.record(CASES[name]) == TF_VALUES[name]
