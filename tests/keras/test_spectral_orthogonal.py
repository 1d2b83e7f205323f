"""keras.layers.SpectralNormalization and keras.regularizers.OrthogonalRegularizer
(ndflow/keras/layers/spectral_normalization.py, ndflow/keras/regularizer_functions.py) against
Keras 3 on TF 2.21 (tests/fixtures/keras_spectral): outputs, the kernels and power-iteration
vectors written back by training calls, weight order, penalties; in a model that trains,
saves and loads."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

keras = tf.keras
CONFIGS = fixture_modules.load("keras_spectral")
KERAS = np.load(fixture_modules.FIXTURES / "keras_spectral" / "values.npz")
CASES = CONFIGS.cases(keras, tf)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_keras(name):
    got = CASES[name]()
    want = [KERAS[f"{name}/{i}"] for i in range(sum(k.startswith(f"{name}/")
                                                    for k in KERAS.files))]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)


def test_a_spectrally_normalized_model_trains_saves_and_loads(tmp_path):
    model = keras.Sequential([
        keras.Input((6,)),
        keras.layers.SpectralNormalization(keras.layers.Dense(8, activation="relu")),
        keras.layers.Dense(1, kernel_regularizer=keras.regularizers.OrthogonalRegularizer())])
    model.compile("adam", "mse")
    x = np.random.default_rng(0).standard_normal((16, 6)).astype(np.float32)
    model.fit(x, x[:, :1], epochs=2, verbose=0)
    model.save(tmp_path / "m.keras")
    again = keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(again.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-6)


def test_enough_power_iterations_leave_a_kernel_of_spectral_norm_one():
    layer = keras.layers.SpectralNormalization(keras.layers.Dense(5), power_iterations=40)
    x = np.ones((2, 7), np.float32)
    layer(x)
    layer.layer.kernel.assign(np.random.default_rng(1).standard_normal((7, 5)) * 3)
    layer(x, training=True)
    np.testing.assert_allclose(np.linalg.norm(layer.layer.kernel.numpy(), 2), 1.0, rtol=1e-4)


def test_bad_arguments_raise_keras_errors():
    with pytest.raises(ValueError, match="power_iterations"):
        keras.layers.SpectralNormalization(keras.layers.Dense(2), power_iterations=0)
    with pytest.raises(ValueError, match="no attribute 'kernel' nor 'embeddings'"):
        keras.layers.SpectralNormalization(keras.layers.ReLU())(np.ones((1, 2), np.float32))
    with pytest.raises(ValueError, match="mode"):
        keras.regularizers.OrthogonalRegularizer(mode="diagonal")
    with pytest.raises(ValueError, match="rank 2"):
        keras.regularizers.OrthogonalRegularizer()(tf.ones([2, 2, 2]))
