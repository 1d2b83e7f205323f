"""AdaptiveAveragePooling1D/2D/3D and AdaptiveMaxPooling1D/2D/3D
(ndflow/keras/layers/pooling_adaptive.py) against Keras 3 on TF 2.21
(tests/fixtures/keras_adaptive_pooling): outputs, input gradients and configs, in a model
that saves and loads, and Keras' errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

keras = tf.keras
HERE = fixture_modules.FIXTURES / "keras_adaptive_pooling"
CONFIGS = fixture_modules.load("keras_adaptive_pooling")
KERAS = np.load(HERE / "values.npz")
KERAS_CONFIGS = json.loads((HERE / "configs.json").read_text())
NAMES = sorted(CONFIGS.CASES)


@pytest.mark.parametrize("name", NAMES)
def test_outputs_gradients_and_configs_match_keras(name):
    cls, kwargs, shape = CONFIGS.CASES[name]
    layer = getattr(keras.layers, cls)(**kwargs)
    x = tf.constant(CONFIGS.inputs_for(shape, NAMES.index(name)))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
        loss = tf.reduce_sum(y * tf.reshape(tf.range(tf.size(y), dtype=tf.float32), y.shape))
    np.testing.assert_allclose(y.numpy(), KERAS[f"{name}/out"], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), KERAS[f"{name}/grad"],
                               rtol=1e-6, atol=1e-5)
    assert tuple(y.shape) == layer.compute_output_shape(shape)
    config = json.loads(json.dumps(layer.get_config(), default=list))
    assert {k: v for k, v in config.items() if k != "name"} == \
        {k: v for k, v in KERAS_CONFIGS[name].items() if k != "name"}


def test_in_a_model_that_saves_and_loads(tmp_path):
    model = keras.Sequential([keras.Input((9, 7, 2)), keras.layers.AdaptiveMaxPooling2D(3),
                              keras.layers.Flatten(), keras.layers.Dense(1)])
    x = np.random.default_rng(0).standard_normal((2, 9, 7, 2)).astype(np.float32)
    model.save(tmp_path / "m.keras")
    again = keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(again.predict(x, verbose=0), model.predict(x, verbose=0))


@pytest.mark.parametrize("cls, size, error", [
    ("AdaptiveAveragePooling1D", (2, 3), ValueError),
    ("AdaptiveMaxPooling2D", (2, 3, 4), TypeError),
    ("AdaptiveAveragePooling3D", "2", TypeError),
])
def test_bad_output_sizes_raise_keras_errors(cls, size, error):
    with pytest.raises(error, match="output_size"):
        getattr(keras.layers, cls)(size)
