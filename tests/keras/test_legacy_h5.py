"""Keras' legacy whole-model HDF5 format: files Keras 3.15 and Keras 2 (tf_keras 2.21) wrote
load with the same outputs (tests/fixtures/keras_legacy_h5), optimizer state and compile
arguments; ndflow writes TF's layout (TF 2.21 loads it: checked when this was written);
`load_weights` of legacy files by order and by name; bad files give clear errors."""

from __future__ import annotations

import json
import os

import h5py
import numpy as np
import pytest

import ndflow as tf

K = tf.keras
L = K.layers
HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "keras_legacy_h5")
OUT = np.load(os.path.join(HERE, "outputs.npz"))


def _fixture(name):
    return os.path.join(HERE, name)


def test_keras3_files_load_with_their_outputs_and_optimizer_state():
    model = K.models.load_model(_fixture("k3_sequential.h5"))
    np.testing.assert_allclose(model.predict(OUT["x3"], verbose=0), OUT["k3_sequential"],
                               rtol=1e-5, atol=1e-6)
    assert int(model.optimizer.iterations.numpy()) == int(OUT["k3_sequential_iterations"])
    assert model.loss == "mse"
    functional = K.models.load_model(_fixture("k3_functional.h5"), compile=False)
    got = functional.predict([OUT["x3"], OUT["x3"] * 2], verbose=0)
    np.testing.assert_allclose(got, OUT["k3_functional"], rtol=1e-5, atol=1e-6)
    assert [t.name for t in functional.inputs] == ["a", "b"]


def test_keras2_files_load_with_their_outputs_and_optimizer_state():
    model = K.models.load_model(_fixture("k2_sequential.h5"))
    np.testing.assert_allclose(model.predict(OUT["x3"], verbose=0), OUT["k2_sequential"],
                               rtol=1e-5, atol=1e-6)
    assert int(model.optimizer.iterations.numpy()) == 2     # Keras 2's slots restored
    assert model.loss == "categorical_crossentropy"
    model.fit(OUT["x3"], np.eye(2, dtype=np.float32)[[0, 1, 0, 1, 1]], verbose=0)
    cnn = K.models.load_model(_fixture("k2_functional.h5"), compile=False)
    cls, reg = cnn.predict(OUT["img"], verbose=0)
    np.testing.assert_allclose(cls, OUT["k2_functional_cls"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(reg, OUT["k2_functional_reg"], rtol=1e-5, atol=1e-5)


def _keras2_cnn(names=("conv", "bn", "skip", "cls", "reg")):
    i = K.Input((8, 8, 2), name="image")
    c = L.BatchNormalization(name=names[1])(L.Conv2D(3, 3, padding="same", activation="relu",
                                                     name=names[0])(i))
    r = L.Add(name="add")([c, L.Conv2D(3, 1, name=names[2])(i)])
    p = L.GlobalAveragePooling2D(name="pool")(r)
    return K.Model(i, [L.Dense(2, activation="softmax", name=names[3])(p),
                       L.Dense(1, name=names[4])(p)])


def test_load_weights_of_a_legacy_file_by_order_and_by_name():
    model = _keras2_cnn(("c1", "b1", "s1", "o1", "o2"))   # other names: order decides
    model.load_weights(_fixture("k2_functional_weights.h5"))
    cls, reg = model.predict(OUT["img"], verbose=0)
    np.testing.assert_allclose(cls, OUT["k2_functional_cls"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(reg, OUT["k2_functional_reg"], rtol=1e-5, atol=1e-5)
    partial = _keras2_cnn(("conv", "bn", "skip", "other", "reg"))
    before = partial.get_layer("other").get_weights()
    partial.load_weights(_fixture("k2_functional.h5"), by_name=True)   # a whole-model file
    _, reg = partial.predict(OUT["img"], verbose=0)
    np.testing.assert_allclose(reg, OUT["k2_functional_reg"], rtol=1e-5, atol=1e-5)
    for a, b in zip(partial.get_layer("other").get_weights(), before):
        np.testing.assert_array_equal(a, b)                # no namesake: left as it was
    small = K.Sequential([K.Input((8, 8, 2)), L.Conv2D(3, 3)])
    with pytest.raises(ValueError, match="Layer count mismatch when loading weights from "
                                         "file. Model expected 1 layers, found 5 saved"):
        small.load_weights(_fixture("k2_functional_weights.h5"))


def test_round_trip_and_layout(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 3)).astype(np.float32)
    a, b = K.Input((3,), name="a"), K.Input((3,), name="b")
    h = L.Dense(4, name="d1", activation="tanh")(a)
    model = K.Model([a, b], L.Dense(1, name="d2")(L.Concatenate(name="cat")([h, b])))
    model.compile(K.optimizers.Adam(0.01), K.losses.MeanSquaredError(), metrics=["mae"])
    model.fit([x, x], x[:, :1], epochs=2, verbose=0)
    path = str(tmp_path / "m.h5")
    model.save(path)
    again = K.models.load_model(path)
    np.testing.assert_allclose(again.predict([x, x], verbose=0), model.predict([x, x], verbose=0),
                               rtol=1e-6)
    assert int(again.optimizer.iterations.numpy()) == 2
    for mine, theirs in zip(again.optimizer.variables, model.optimizer.variables):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    # the layout of Keras 3's own file for this architecture
    with h5py.File(path) as mine, h5py.File(_fixture("k3_functional.h5")) as keras:
        assert set(keras.attrs) <= set(mine.attrs) and mine.attrs["backend"] == "tensorflow"
        assert json.loads(mine.attrs["model_config"])["class_name"] == "Functional"
        group, theirs = mine["model_weights"], keras["model_weights"]
        assert list(group.attrs["layer_names"]) == list(theirs.attrs["layer_names"])
        for name in ("d1", "d2", "cat", "a"):
            assert list(group[name].attrs["weight_names"]) == \
                list(theirs[name].attrs["weight_names"])
        assert "optimizer_weights" in mine and "training_config" in mine.attrs
    model.save(path, include_optimizer=False)
    with h5py.File(path) as f:
        assert "optimizer_weights" not in f and "training_config" not in f.attrs


def test_bad_files(tmp_path):
    truncated = tmp_path / "t.h5"
    truncated.write_bytes(open(_fixture("k2_sequential.h5"), "rb").read()[:2000])
    with pytest.raises(OSError, match="t.h5"):
        K.models.load_model(truncated)
    empty = tmp_path / "e.h5"
    with h5py.File(empty, "w") as f:
        f.create_group("model_weights")
    with pytest.raises(ValueError, match="No model config found in the file at .*e.h5"):
        K.models.load_model(empty)
    op_lambda = tmp_path / "op.h5"
    with h5py.File(op_lambda, "w") as f:
        f.attrs["model_config"] = json.dumps({"class_name": "Functional", "config": {
            "name": "m", "layers": [{"class_name": "TFOpLambda", "name": "tf.math.add",
                                     "config": {"name": "tf.math.add"}, "inbound_nodes": []}],
            "input_layers": [], "output_layers": []}})
    with pytest.raises(ValueError, match="Cannot load a `TFOpLambda` layer"):
        K.models.load_model(op_lambda)
