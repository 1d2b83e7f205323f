"""RandomHue, RandomSaturation, RandomColorDegeneration, RandomPosterization, RandomColorJitter
(ndflow/keras/layers/image_color_random.py) and Equalization (image_equalization.py) against
Keras 3 on TF 2.21
(tests/fixtures/keras_color_random): fixed transformations replayed through
`transform_images`, configs; the random draws' ranges; identity in inference."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

keras = tf.keras
HERE = fixture_modules.FIXTURES / "keras_color_random"
CONFIGS = fixture_modules.load("keras_color_random")
KERAS = np.load(HERE / "values.npz")
KERAS_CONFIGS = json.loads((HERE / "configs.json").read_text())
NAMES = sorted(CONFIGS.CASES)


@pytest.mark.parametrize("name", NAMES)
def test_fixed_transformations_match_keras(name):
    cls, kwargs, shape, value_range, transformation = CONFIGS.CASES[name]
    layer = getattr(keras.layers, cls)(**kwargs)
    dtype = "uint8" if "shift_factor" in transformation else "float32"
    t = {k: tf.constant(np.array(v, dtype)) for k, v in transformation.items()}
    got = layer.transform_images(tf.constant(CONFIGS.images(shape, value_range,
                                                            NAMES.index(name))), t)
    # HSV round trips differ from TF's in the last float32 bits: 1e-6 of the value range
    np.testing.assert_allclose(got.numpy(), KERAS[name], rtol=0,
                               atol=1e-6 * (value_range[1] - value_range[0]))
    config = json.loads(json.dumps(layer.get_config(), default=list))
    assert {k: v for k, v in config.items() if k != "name"} == \
        {k: v for k, v in KERAS_CONFIGS[name].items() if k != "name"}


@pytest.mark.parametrize("cls, kwargs, key, low, high", [
    ("RandomHue", dict(factor=(0.2, 0.6)), "factor", 0.1, 0.3),
    ("RandomSaturation", dict(factor=(0.2, 0.5)), "factor", 0.2 / 0.8, 1.0),
    ("RandomColorDegeneration", dict(factor=(0.3, 0.7)), "factor", 0.3, 0.7),
    ("RandomPosterization", dict(factor=(2, 6)), "shift_factor", 3, 6),
])
def test_random_draws_stay_in_the_factor_range(cls, kwargs, key, low, high):
    layer = getattr(keras.layers, cls)(**kwargs, seed=1)
    images = np.random.default_rng(0).random((64, 2, 2, 3)).astype(np.float32) * 255
    drawn = np.abs(layer.get_random_transformation(tf.constant(images))[key].numpy())
    assert drawn.min() >= low - 1e-6 and drawn.max() <= high + 1e-6
    assert len(np.unique(drawn)) > 1
    out = layer(images, training=True).numpy()
    assert out.shape == images.shape and not np.allclose(out, images)
    np.testing.assert_array_equal(layer(images, training=False).numpy(), images)


def test_color_jitter_with_fixed_factors_matches_keras():
    layer = keras.layers.RandomColorJitter(**CONFIGS.JITTER)
    x = CONFIGS.images((3, 5, 4, 3), (0, 255), 99)
    np.testing.assert_allclose(layer(x, training=True).numpy(), KERAS["jitter"], rtol=0,
                               atol=1e-6 * 255)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    config = json.loads(json.dumps(layer.get_config(), default=list))
    assert {k: v for k, v in config.items() if k != "name"} == \
        {k: v for k, v in KERAS_CONFIGS["jitter"].items() if k != "name"}


@pytest.mark.parametrize("name", sorted(CONFIGS.EQUALIZATION))
def test_equalization_matches_keras(name):
    kwargs, shape, value_range = CONFIGS.EQUALIZATION[name]
    layer = keras.layers.Equalization(**kwargs)
    x = CONFIGS.images(shape, value_range, len(name)) ** 2 / value_range[1]   # skewed
    got = layer(x).numpy()
    np.testing.assert_allclose(got, KERAS[name], rtol=0,
                               atol=1e-6 * (value_range[1] - value_range[0]))
    assert not np.allclose(got, x)
    config = json.loads(json.dumps(layer.get_config(), default=list))
    assert {k: v for k, v in config.items() if k != "name"} == \
        {k: v for k, v in KERAS_CONFIGS[name].items() if k != "name"}


def test_bad_arguments_raise_keras_errors():
    with pytest.raises(ValueError, match=r"range \[0, 1\]"):
        keras.layers.RandomHue(1.5)
    with pytest.raises(ValueError, match=r"range \[1, 8\]"):
        keras.layers.RandomPosterization(9)
    with pytest.raises(ValueError, match="value_range"):
        keras.layers.RandomSaturation(0.5, value_range=(0, 1, 2))
