"""`.keras` interop for every layer ndflow has (tests/fixtures/keras_saving_layers/zoo.py,
one definition for both libraries): Keras 3.15's archives load into ndflow with Keras'
predictions and optimizer state, and the archive ndflow writes for the same model has Keras'
structure — zip members, config.json keys at every level, each layer's class, module and
config keys, and the HDF5 groups/datasets/shapes/dtypes of model.weights.h5."""

from __future__ import annotations

import importlib.util
import io
import json
import warnings
import zipfile
from pathlib import Path

import h5py
import numpy as np
import pytest

import ndflow as tf
from ndflow.keras import serialization_lib

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "keras_saving_layers"
_spec = importlib.util.spec_from_file_location("zoo", HERE / "zoo.py")  # generate.py's name
zoo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(zoo)
ARRAYS = np.load(HERE / "layers.npz")
NAMES = list(zoo.MODELS)
pytestmark = pytest.mark.filterwarnings("ignore:Layer .conv1d. .of type Conv1D. was passed")
keras = tf.keras


def _load(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # mask warnings Keras gives too
        return tf.keras.models.load_model(HERE / f"{name}.keras")


def _members(path):
    with zipfile.ZipFile(path) as zf:
        return zf.namelist(), json.loads(zf.read("config.json")), zf.read("model.weights.h5")


def _h5_tree(data: bytes) -> dict:
    out = {}

    def visit(name, obj):
        out[name] = ("group",) if isinstance(obj, h5py.Group) else \
            ("dataset", obj.shape, obj.dtype.str)

    with h5py.File(io.BytesIO(data), "r") as f:
        f.visititems(visit)
    return out


@pytest.mark.parametrize("name", NAMES)
def test_keras_archive_loads_with_keras_predictions(name):
    model = _load(name)
    np.testing.assert_allclose(model.predict(ARRAYS[f"x_{name}"], verbose=0),
                               ARRAYS[f"y_{name}"], rtol=1e-5, atol=1e-6)
    assert int(model.optimizer.iterations.numpy()) == 1   # Adam's state came along
    _, _, weights = _members(HERE / f"{name}.keras")
    keras_slots = [p for p, v in _h5_tree(weights).items()
                   if p.startswith("optimizer/vars/") and v[0] == "dataset"]
    assert len(model.optimizer.variables) == len(keras_slots)


def test_masking_operations_keras_records_are_loaded_and_written_back(tmp_path):
    """Keras saves the mask of a Masking layer as keras.ops nodes (NotEqual, Any) feeding the
    RNNs' `mask=`; ndflow rebuilds them and writes them as Keras does."""
    model = _load("sequence")
    layer = model.get_layer("any")
    mask = layer(model.get_layer("not_equal")(np.array([[[0.0, 1.0], [0.0, 0.0]]]), 0.0))
    np.testing.assert_array_equal(mask.numpy(), [[True, False]])
    model.save(tmp_path / "m.keras")
    _, ours, _ = _members(tmp_path / "m.keras")
    _, theirs, _ = _members(HERE / "sequence.keras")
    pick = {"not_equal", "any", "simple_rnn"}
    assert [_unshared(s) for s in ours["config"]["layers"] if s["name"] in pick] == \
        [_unshared(s) for s in theirs["config"]["layers"] if s["name"] in pick]


def _unshared(spec):
    """`spec` without Keras' `shared_object_id`s (ids of objects it saved once)."""
    if isinstance(spec, dict):
        return {k: _unshared(v) for k, v in spec.items() if k != "shared_object_id"}
    if isinstance(spec, list):
        return [_unshared(v) for v in spec]
    return spec


def _layer_specs(config: dict) -> dict:
    """name -> (class_name, module, registered_name, config keys, build_config) of each layer,
    the keras.ops nodes left out (ndflow computes masks inside the layers)."""
    layers = config["config"]["layers"]
    return {s.get("name", s["config"].get("name")):
            (s["class_name"], s["module"], s["registered_name"], sorted(s["config"]),
             s.get("build_config"))
            for s in layers if not s["module"].startswith("keras.src.ops")}


@pytest.mark.parametrize("name", NAMES)
def test_ndflow_archive_has_keras_structure(name, tmp_path):
    tf.keras.backend.clear_session()   # Keras' automatic layer names, as in generate.py
    model = zoo.MODELS[name](tf.keras)
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="categorical_crossentropy"
                  if name != "sequence" else "binary_crossentropy", metrics=["accuracy"])
    model.optimizer.build(model.trainable_variables)
    model.save(tmp_path / "m.keras")
    ours, theirs = _members(tmp_path / "m.keras"), _members(HERE / f"{name}.keras")
    assert ours[0] == theirs[0] == ["metadata.json", "config.json", "model.weights.h5"]
    config, keras_config = ours[1], theirs[1]
    assert sorted(config) == sorted(keras_config)
    assert sorted(config["config"]) == sorted(keras_config["config"])
    for key in ("module", "class_name", "registered_name", "build_config"):
        assert config[key] == keras_config[key], key
    assert sorted(config["compile_config"]) == sorted(keras_config["compile_config"])
    assert _layer_specs(config) == _layer_specs(keras_config)
    assert _h5_tree(ours[2]) == _h5_tree(theirs[2])


# -- user objects: custom_objects, scopes, registration, unsafe deserialization --------------
def test_keras_archive_with_user_objects_needs_custom_objects():
    with pytest.raises(TypeError, match="Could not locate class 'Scale'"):
        keras.models.load_model(HERE / "custom.keras")
    objects = zoo.custom_objects(keras)
    model = keras.models.load_model(HERE / "custom.keras", custom_objects=objects)
    np.testing.assert_allclose(model.predict(ARRAYS["x_custom"], verbose=0), ARRAYS["y_custom"],
                               rtol=1e-6)
    assert model.get_layer("dense").activation is objects["halve"]
    assert model.loss is objects["squared_error"]
    with keras.utils.custom_object_scope(zoo.custom_objects(keras)):   # the same, scoped
        scoped = keras.models.load_model(HERE / "custom.keras")
    np.testing.assert_allclose(scoped.predict(ARRAYS["x_custom"], verbose=0), ARRAYS["y_custom"],
                               rtol=1e-6)


def test_user_objects_are_written_as_keras_writes_them(tmp_path):
    objects = zoo.custom_objects(keras)
    zoo.custom_model(keras, objects).save(tmp_path / "c.keras")
    ours = {s["name"]: s for s in _members(tmp_path / "c.keras")[1]["config"]["layers"]}
    keras_config = _members(HERE / "custom.keras")[1]
    theirs = {s["name"]: s for s in keras_config["config"]["layers"]}
    for key in ("module", "class_name", "registered_name", "build_config"):
        assert ours["scale"][key] == theirs["scale"][key], key
    assert ours["scale"]["config"]["factor"] == 3.0
    assert ours["dense"]["config"]["activation"] == theirs["dense"]["config"]["activation"] == {
        "module": "builtins", "class_name": "function", "config": "halve",
        "registered_name": "function"}
    assert _members(tmp_path / "c.keras")[1]["compile_config"]["loss"] == \
        keras_config["compile_config"]["loss"]
    loaded = keras.models.load_model(tmp_path / "c.keras", custom_objects=objects)
    assert loaded.get_layer("scale").factor == 3.0


def test_registered_objects_load_without_custom_objects(tmp_path, monkeypatch):
    monkeypatch.setattr(serialization_lib, "_GLOBAL_CUSTOM_OBJECTS", {})
    monkeypatch.setattr(serialization_lib, "_REGISTERED_NAMES", {})
    objects = zoo.custom_objects(keras)
    scale = keras.utils.register_keras_serializable(package="zoo")(objects["Scale"])
    halve = keras.utils.register_keras_serializable(package="zoo")(objects["halve"])
    assert keras.utils.get_custom_objects() == {"zoo>Scale": scale, "zoo>halve": halve}
    zoo.custom_model(keras, objects).save(tmp_path / "r.keras")
    spec = {s["name"]: s for s in _members(tmp_path / "r.keras")[1]["config"]["layers"]}
    # Keras 3 writes a registered class's module too (None only for `__main__`'s classes)
    assert (spec["scale"]["module"], spec["scale"]["registered_name"]) == ("zoo", "zoo>Scale")
    assert spec["dense"]["config"]["activation"]["config"] == "zoo>halve"   # as Keras 3
    model = keras.models.load_model(tmp_path / "r.keras", compile=False)
    assert isinstance(model.get_layer("scale"), scale)
    assert model.get_layer("dense").activation is halve


def test_enable_unsafe_deserialization(tmp_path, monkeypatch):
    monkeypatch.setattr(serialization_lib, "_GLOBAL_SAFE_MODE", {"value": None})
    x = keras.Input((2,), name="x")
    keras.Model(x, keras.layers.Lambda(lambda t: t * 3.0, name="triple")(x)).save(
        tmp_path / "l.keras")
    with pytest.raises(ValueError, match="enable_unsafe_deserialization"):
        keras.models.load_model(tmp_path / "l.keras")
    keras.config.enable_unsafe_deserialization()
    model = keras.models.load_model(tmp_path / "l.keras")   # safe_mode=True is overridden
    np.testing.assert_array_equal(model(np.ones((1, 2), np.float32)).numpy(), [[3.0, 3.0]])
    spec = keras.layers.serialize(model.get_layer("triple"))   # Lambda.from_config too
    assert keras.layers.deserialize(spec)(np.ones((1, 2), np.float32)).numpy()[0, 0] == 3.0


@pytest.mark.parametrize("name", NAMES)
def test_load_weights_from_keras_archive_into_an_ndflow_model(name):
    tf.keras.backend.clear_session()   # Keras' automatic layer names, as in generate.py
    model = zoo.MODELS[name](keras)
    model.load_weights(HERE / f"{name}.keras")
    np.testing.assert_allclose(model.predict(ARRAYS[f"x_{name}"], verbose=0),
                               ARRAYS[f"y_{name}"], rtol=1e-5, atol=1e-6)


# -- sharded weights (max_shard_size) ---------------------------------------------------------
SHARDS = ["cnn_00000.weights.h5", "cnn_00001.weights.h5", "cnn_00002.weights.h5"]


def _cnn():
    tf.keras.backend.clear_session()   # Keras' automatic layer names, as in generate.py
    model = zoo.MODELS["cnn"](keras)
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="categorical_crossentropy")
    model.optimizer.build(model.trainable_variables)
    return model


def test_keras_sharded_weights_load():
    model = _cnn()
    model.load_weights(HERE / "cnn.weights.json")
    np.testing.assert_allclose(model.predict(ARRAYS["x_cnn"], verbose=0), ARRAYS["y_cnn"],
                               rtol=1e-5, atol=1e-6)
    assert int(model.optimizer.iterations.numpy()) == 1


def test_ndflow_sharded_weights_have_keras_layout(tmp_path):
    model = _cnn()
    model.save_weights(tmp_path / "cnn.weights.json", max_shard_size=1e-6)   # ~1 KB shards
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cnn.weights.json"] + SHARDS
    ours = json.loads((tmp_path / "cnn.weights.json").read_text())
    assert ours == json.loads((HERE / "cnn.weights.json").read_text())
    for shard in SHARDS:
        assert _h5_tree((tmp_path / shard).read_bytes()) == _h5_tree((HERE / shard).read_bytes())
    other = _cnn()
    other.load_weights(tmp_path / "cnn.weights.json")
    for a, b in zip(other.weights + other.optimizer.variables,
                    model.weights + model.optimizer.variables, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_sharded_weights_errors(tmp_path):
    model = _cnn()
    with pytest.warns(UserWarning, match="requires `\\*.json` as the extension"):
        model.save_weights(tmp_path / "w.weights.h5", max_shard_size=1.0)
    assert (tmp_path / "w.weights.json").exists() and (tmp_path / "w_00000.weights.h5").exists()
    with pytest.raises(ValueError, match="must end in `.weights.json` when `max_shard_size`"):
        model.save_weights(tmp_path / "w.h5", max_shard_size=1.0)
    with pytest.raises(ValueError, match="exceeds the maximum shard size"):
        model.save_weights(tmp_path / "x.weights.json", max_shard_size=1e-8)   # ~10 bytes
    assert not list(tmp_path.glob("x*"))   # checked before any file is written
    (tmp_path / "w_00000.weights.h5").unlink()
    with pytest.raises(FileNotFoundError, match="Shard w_00000.weights.h5 named by"):
        model.load_weights(tmp_path / "w.weights.json")
    (tmp_path / "bad.weights.json").write_text(json.dumps(
        {"metadata": {}, "weight_map": {"/vars": ["../outside.weights.h5"]}}))
    with pytest.raises(ValueError, match="is not in the map's directory"):
        model.load_weights(tmp_path / "bad.weights.json")


# -- the unzipped format (zipped=False) -------------------------------------------------------
def test_keras_unzipped_model_directory_loads():
    model = keras.models.load_model(HERE / "cnn_dir")
    np.testing.assert_allclose(model.predict(ARRAYS["x_cnn"], verbose=0), ARRAYS["y_cnn"],
                               rtol=1e-5, atol=1e-6)
    assert int(model.optimizer.iterations.numpy()) == 1


def test_ndflow_unzipped_directory_has_keras_layout(tmp_path):
    model = _cnn()
    model.save(tmp_path / "m", zipped=False)
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == \
        ["assets", "config.json", "metadata.json", "model.weights.h5"]   # as Keras 3 writes
    ours = json.loads((tmp_path / "m" / "config.json").read_text())
    theirs = json.loads((HERE / "cnn_dir" / "config.json").read_text())
    assert sorted(ours) == sorted(theirs) and _layer_specs(ours) == _layer_specs(theirs)
    assert _h5_tree((tmp_path / "m" / "model.weights.h5").read_bytes()) == \
        _h5_tree((HERE / "cnn_dir" / "model.weights.h5").read_bytes())
    loaded = keras.models.load_model(tmp_path / "m")
    x = ARRAYS["x_cnn"]
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    with pytest.raises(ValueError, match="should not end in `.keras`"):
        model.save(tmp_path / "m.keras", zipped=False)
