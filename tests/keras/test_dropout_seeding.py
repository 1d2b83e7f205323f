"""Keras 3's Dropout seeding (a SeedGenerator per layer, made at construction) against TF 2.21:
the masks of seeded, unseeded, noise-shaped and spatial dropout and the kernel of a Dense made
after a Dropout (fixture tests/fixtures/keras_dropout_seeding)."""

import json

import numpy as np
import pytest

import ndflow as tf
from tests.fixture_modules import FIXTURES, load

CASES = load("keras_dropout_seeding", "cases")
EXPECTED = json.loads((FIXTURES / "keras_dropout_seeding" / "expected.json").read_text())


@pytest.fixture(scope="module")
def results():
    return CASES.run(tf)


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_dropout_matches_tf(results, key):
    np.testing.assert_allclose(results[key], EXPECTED[key], rtol=1e-6)


def test_seed_generator_only_when_dropping():
    assert hasattr(tf.keras.layers.Dropout(0.1), "seed_generator")
    assert not hasattr(tf.keras.layers.Dropout(0.0), "seed_generator")
