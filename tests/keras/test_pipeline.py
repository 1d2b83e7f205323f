"""keras.layers.Pipeline (ndflow/keras/layers/pipeline.py) against Keras 3 on TF 2.21
(tests/fixtures/keras_pipeline): its config, a model Keras saved with one, and the training
flag passed on; it runs in a tf.data map."""

from __future__ import annotations

import json

import numpy as np

import ndflow as tf
from tests import fixture_modules

keras = tf.keras
HERE = fixture_modules.FIXTURES / "keras_pipeline"
KERAS = np.load(HERE / "values.npz")


def _pipeline():
    return keras.layers.Pipeline([keras.layers.Rescaling(1 / 127.5, offset=-1, name="scale"),
                                  keras.layers.CenterCrop(4, 4, name="crop"),
                                  keras.layers.RandomFlip("horizontal", seed=3, name="flip"),
                                  keras.layers.Dense(2, name="project")], name="prep")


def test_config_equals_keras_and_round_trips():
    config = json.loads(json.dumps(_pipeline().get_config(), default=list))
    assert config == json.loads((HERE / "config.json").read_text())
    again = keras.layers.Pipeline.from_config(_pipeline().get_config())
    assert [type(layer).__name__ for layer in again.layers] == \
        ["Rescaling", "CenterCrop", "RandomFlip", "Dense"]


def test_a_model_keras_saved_with_a_pipeline_predicts_the_same(tmp_path):
    model = keras.models.load_model(HERE / "model.keras")
    np.testing.assert_allclose(model.predict(KERAS["x"], verbose=0), KERAS["y"], rtol=1e-5,
                               atol=1e-6)
    model.save(tmp_path / "again.keras")
    again = keras.models.load_model(tmp_path / "again.keras")
    np.testing.assert_allclose(again.predict(KERAS["x"], verbose=0), KERAS["y"], rtol=1e-5,
                               atol=1e-6)


def test_training_reaches_the_random_layers_and_tf_data_maps_it():
    pipe = keras.layers.Pipeline([keras.layers.RandomFlip("horizontal", seed=1)])
    x = np.arange(2 * 64 * 3, dtype=np.float32).reshape(64, 1, 2, 3)
    np.testing.assert_array_equal(pipe(x, training=False).numpy(), x)
    flipped = pipe(x, training=True).numpy()
    assert not np.array_equal(flipped, x)
    batches = list(tf.data.Dataset.from_tensor_slices(x).batch(32).map(
        lambda v: pipe(v, training=False)))
    np.testing.assert_array_equal(np.concatenate([b.numpy() for b in batches]), x)
