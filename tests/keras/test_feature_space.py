"""keras.utils.FeatureSpace against Keras 3 on TF 2.21 (tests/fixtures/keras_feature_space,
generate.py beside): every feature type adapted and encoded (concat and dict modes, a batch,
one row, a tf.data map), the encoded features in a functional model, configs and errors; a
space Keras saved loads and encodes the same, and ndflow's saved file has Keras' layout."""

from __future__ import annotations

import json
import zipfile

import h5py
import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

keras = tf.keras
HERE = fixture_modules.FIXTURES / "keras_feature_space"
CONFIGS = fixture_modules.load("keras_feature_space")
TF_VALUES = json.loads((HERE / "values.json").read_text())
CASES = CONFIGS.cases(tf, keras)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_keras(name):
    assert CONFIGS.record(CASES[name]) == TF_VALUES[name]


def test_a_space_keras_saved_loads_and_encodes_the_same():
    space = keras.models.load_model(HERE / "space.keras")
    assert isinstance(space, keras.utils.FeatureSpace)
    np.testing.assert_allclose(space(CONFIGS.data()).numpy(),
                               np.load(HERE / "space_output.npy"), atol=1e-6)


def _layout(path) -> tuple:
    with zipfile.ZipFile(path) as zf:
        assets = sorted(n for n in zf.namelist() if n.startswith("assets/"))
        with h5py.File(zf.open("model.weights.h5"), "r") as f:
            groups = []
            f.visit(groups.append)
    return assets, groups


def test_a_saved_space_reloads_and_has_keras_layout(tmp_path):
    space = CONFIGS.make_space(keras)
    space.adapt(CONFIGS.data())
    space.save(tmp_path / "space.keras")
    again = keras.models.load_model(tmp_path / "space.keras")
    np.testing.assert_allclose(again(CONFIGS.data()).numpy(), space(CONFIGS.data()).numpy())
    np.testing.assert_allclose(again(CONFIGS.data()).numpy(),
                               np.load(HERE / "space_output.npy"), atol=1e-6)
    ours, keras_file = _layout(tmp_path / "space.keras"), _layout(HERE / "space.keras")
    assert ours == keras_file     # assets and weight groups at Keras' paths


def test_trains_a_model_on_a_mapped_labelled_dataset():
    table = CONFIGS.data()
    labels = (table["fare"] > 50).astype("float32")
    space = CONFIGS.make_space(keras)
    ds = tf.data.Dataset.from_tensor_slices((table, labels)).batch(8)
    space.adapt(ds.map(lambda x, y: x))
    train = ds.map(lambda x, y: (space(x), y))
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((47,)), keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=keras.optimizers.Adam(0.1), loss="binary_crossentropy")
    history = model.fit(train, epochs=15, verbose=0).history["loss"]
    assert history[-1] < 0.5 * history[0]
