"""tf.keras.layers.RandomHeight / RandomWidth against TF 2.21's tf.keras
(tests/fixtures/keras_random_size, generate.py beside): outputs with fixed factors, configs,
output shapes, errors; drawn factors against their range and tf.image.resize."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

keras = tf.keras
CONFIGS = fixture_modules.load("keras_random_size")
TF_VALUES = json.loads(
    (fixture_modules.FIXTURES / "keras_random_size" / "values.json").read_text())
CASES = CONFIGS.cases(tf, keras)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name):
    got = CONFIGS.record(CASES[name])
    if name == "config_width":     # JSON keeps no tuples
        got["value"]["factor"] = list(got["value"]["factor"])
    assert got == TF_VALUES[name]


@pytest.mark.parametrize("cls, axis", [(keras.layers.RandomHeight, 1),
                                       (keras.layers.RandomWidth, 2)])
def test_drawn_factors_stay_in_range_and_resize_bilinearly(cls, axis):
    images = np.random.default_rng(0).random((3, 20, 16, 2)).astype(np.float32)
    layer = cls((-0.5, 0.8), seed=5)
    sizes = set()
    for _ in range(20):
        out = layer(images).numpy()
        n = out.shape[axis]
        assert int(0.5 * images.shape[axis]) <= n <= int(1.8 * images.shape[axis])
        assert out.shape[3 - axis] == images.shape[3 - axis]
        size = [20, 16]
        size[axis - 1] = n
        np.testing.assert_allclose(out, tf.image.resize(images, size).numpy(), rtol=1e-6)
        sizes.add(n)
    assert len(sizes) > 3       # the factor is drawn, not fixed


def test_drawn_in_a_dataset_map_with_unknown_sizes():
    ds = tf.data.Dataset.from_tensor_slices(np.ones((4, 8, 8, 3), np.float32)).batch(2)
    layer = keras.layers.RandomWidth(0.5)
    for batch in ds.map(lambda x: layer(x)):
        assert batch.shape[:2] == (2, 8) and 4 <= batch.shape[2] <= 12
