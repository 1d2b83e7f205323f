"""Keras 3's saving formats: `.weights.h5` files and `.keras` archives. Keras' own files
(tests/fixtures/keras_saving, written by Keras 3.15 from generate.py) load into ndflow and
give Keras' predictions; ndflow's files have exactly the groups, datasets, dtypes and
attributes Keras writes for the same model; round trips; Keras' errors; no partial files."""

from __future__ import annotations

import builtins
import json
import os
import warnings
import zipfile

import h5py
import numpy as np
import pytest

import ndflow as tf
from ndflow.keras.saving import weights_h5

keras = tf.keras
layers = keras.layers
HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "keras_saving")
ARRAYS = np.load(os.path.join(HERE, "saving.npz"))
with open(os.path.join(HERE, "saving.json")) as _f:
    INFO = json.load(_f)


def fixture(name: str) -> str:
    return os.path.join(HERE, name)


def h5_tree(source) -> dict:
    """Every group and dataset of an HDF5 file: kind, shape, dtype, attributes."""
    out = {}

    def visit(name, obj):
        attrs = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in obj.attrs.items()}
        if isinstance(obj, h5py.Group):
            out[name] = ("group", attrs)
        else:
            out[name] = ("dataset", obj.shape, obj.dtype.str, attrs)

    with h5py.File(source, "r") as f:
        f.visititems(visit)
    return out


def archive_weights_tree(path: str, tmp_path) -> dict:
    target = tmp_path / "from_archive.h5"
    with zipfile.ZipFile(path) as zf:
        target.write_bytes(zf.read("model.weights.h5"))
    return h5_tree(target)


# -- the fixture models, built by ndflow's code with Keras' names ---------------------------
def functional_model():
    x = keras.Input((4,), name="x")
    h = layers.Dense(6, activation="relu", name="hidden")(x)
    h = layers.BatchNormalization(name="bn")(h)
    h = layers.Dropout(0.2, name="drop")(h)
    a = layers.Dense(3, name="head_a")(h)
    b = layers.Dense(3, use_bias=False, name="head_b")(x)
    out = layers.Activation("softmax", name="probs")(layers.Add(name="sum")([a, b]))
    model = keras.Model(x, out, name="functional_model")
    model.compile(optimizer=keras.optimizers.Adam(0.01, name="adam"),
                  loss="categorical_crossentropy", metrics=["accuracy"])
    return model


def sequential_model():
    model = keras.Sequential([keras.Input((5,)), layers.Dense(4, activation="tanh", name="dense"),
                              layers.BatchNormalization(name="batch_normalization"),
                              layers.Dropout(0.3, name="dropout"), layers.Dense(2, name="dense_1")],
                             name="sequential_model")
    model.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9, name="sgd"),
                  loss=keras.losses.MeanSquaredError(),
                  metrics=[keras.metrics.MeanAbsoluteError()])
    return model


def nested_model():
    inner = keras.Sequential([keras.Input((3,)),
                              layers.Dense(3, activation="relu", name="inner_dense")],
                             name="inner")
    x = keras.Input((3,), name="x")
    return keras.Model(x, layers.Dense(2, name="outer_dense")(inner(x)), name="nested_model")


class Block(layers.Layer):
    """generate.py's custom layer: sublayers in an attribute, a list, a nested list and a
    private attribute."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.d1 = layers.Dense(2, name="d1")
        self.items = [layers.Dense(2, name="i0"), layers.Dense(2, name="i1"),
                      [layers.Dense(2, name="i2")]]
        self._hidden = layers.Dense(2, name="hidden")

    def call(self, x):
        return self._hidden(self.items[2][0](self.items[1](self.items[0](self.d1(x)))))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (2,)


def custom_model():
    x = keras.Input((3,), name="x")
    return keras.Model(x, Block(name="blk")(x), name="custom_model")


BUILDERS = {"functional": functional_model, "sequential": sequential_model,
            "nested": nested_model, "custom": custom_model}


def built_optimizer(model):
    model.optimizer.build(model.trainable_variables)   # the slots fit() would create
    return model


def predict(model, x):
    return model(x, training=False).numpy()


# -- Keras' files into ndflow ----------------------------------------------------------------
@pytest.mark.parametrize("name", ["functional", "sequential", "nested"])
def test_load_model_from_keras_archive_reproduces_predictions(name):
    model = keras.models.load_model(fixture(f"{name}.keras"))
    assert [layer.name for layer in model.layers] == INFO["layers"][name]
    np.testing.assert_allclose(predict(model, ARRAYS[f"x_{name}"]), ARRAYS[f"y_{name}"],
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["functional", "sequential", "nested"])
def test_load_weights_from_keras_file_reproduces_predictions(name):
    model = BUILDERS[name]()
    if name != "nested":
        built_optimizer(model)   # else Keras' warning: the optimizer state is skipped
    model.load_weights(fixture(f"{name}.weights.h5"))
    np.testing.assert_allclose(predict(model, ARRAYS[f"x_{name}"]), ARRAYS[f"y_{name}"],
                               rtol=1e-5, atol=1e-6)
    with h5py.File(fixture(f"{name}.weights.h5")) as f:   # every layer variable, exactly
        for path, obj in weights_h5.object_tree.walk(model):
            own = (weights_h5.layer_variables(obj) if isinstance(obj, layers.Layer) else
                   weights_h5.optimizer_variables(obj))
            assert len(f[f"{path}/vars"]) == len(own), path
            for i, var in enumerate(own):
                np.testing.assert_array_equal(var.numpy(), f[f"{path}/vars/{i}"][()])


def test_load_model_restores_compile_and_optimizer_state():
    model = keras.models.load_model(fixture("functional.keras"))
    assert model.compiled and model.loss == "categorical_crossentropy"
    assert isinstance(model.optimizer, keras.optimizers.Adam)
    assert model.optimizer.name == "adam"
    assert model.optimizer.get_config()["learning_rate"] == pytest.approx(0.01)
    assert model._compile_metrics._specs == (["accuracy"], None)
    with h5py.File(fixture("functional.weights.h5")) as f:
        saved = [f[f"optimizer/vars/{i}"][()] for i in range(len(f["optimizer/vars"]))]
    mine = [v.numpy() for v in model.optimizer.variables]
    assert len(mine) == len(saved) == 2 + 2 * 7   # iterations, lr, Adam's m and v per weight
    assert int(mine[0]) == 8                      # 2 epochs of 4 batches
    for a, b in zip(mine, saved, strict=True):
        np.testing.assert_array_equal(a, b)

    seq = keras.models.load_model(fixture("sequential.keras"))
    assert isinstance(seq.loss, keras.losses.MeanSquaredError)
    assert isinstance(seq._compile_metrics._specs[0][0], keras.metrics.MeanAbsoluteError)
    assert seq.optimizer.get_config()["momentum"] == pytest.approx(0.9)
    assert int(seq.optimizer.iterations.numpy()) == 4
    assert not keras.models.load_model(fixture("sequential.keras"), compile=False).compiled


def test_loaded_model_trains_on():
    model = keras.models.load_model(fixture("functional.keras"))
    x = ARRAYS["x_functional"]
    y = np.eye(3, dtype=np.float32)[[0, 1, 2, 0, 1]]
    model.fit(x, y, epochs=1, batch_size=5, verbose=0)
    assert int(model.optimizer.iterations.numpy()) == 9


# -- ndflow's files have Keras' layout -------------------------------------------------------
@pytest.mark.parametrize("name", ["functional", "sequential", "nested", "custom"])
def test_weights_file_layout_equals_keras(name, tmp_path):
    model = BUILDERS[name]()
    if name in ("functional", "sequential"):
        built_optimizer(model)
    model.save_weights(tmp_path / "m.weights.h5")
    assert h5_tree(tmp_path / "m.weights.h5") == h5_tree(fixture(f"{name}.weights.h5"))


def test_layout_of_a_model_loaded_from_keras_config(tmp_path):
    model = keras.models.load_model(fixture("functional.keras"))
    model.save_weights(tmp_path / "m.weights.h5")
    assert h5_tree(tmp_path / "m.weights.h5") == h5_tree(fixture("functional.weights.h5"))
    # and the values too: Keras' file, rewritten by ndflow, is the same data
    with h5py.File(tmp_path / "m.weights.h5") as mine, \
            h5py.File(fixture("functional.weights.h5")) as theirs:
        def same(name, obj):
            if isinstance(obj, h5py.Dataset):
                np.testing.assert_array_equal(obj[()], theirs[name][()])
        mine.visititems(same)


def test_mixed_precision_loss_scale_optimizer_layout(tmp_path):
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = keras.Sequential([keras.Input((4,)), layers.Dense(3, name="dense")],
                                 name="mixed")
        model.compile(optimizer=keras.optimizers.SGD(0.01, name="sgd"), loss="mse")
    finally:
        keras.mixed_precision.set_global_policy("float32")
    built_optimizer(model)
    model.save_weights(tmp_path / "m.weights.h5")
    assert h5_tree(tmp_path / "m.weights.h5") == h5_tree(fixture("mixed.weights.h5"))
    model.load_weights(fixture("mixed.weights.h5"))   # Keras' scale state into ndflow's
    assert float(model.optimizer.loss_scale.numpy()) == 32768.0
    assert int(model.optimizer.dynamic_counter.numpy()) == 1
    assert int(model.optimizer.iterations.numpy()) == 1


def test_keras_archive_layout(tmp_path):
    model = keras.models.load_model(fixture("functional.keras"))
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as zf, \
            zipfile.ZipFile(fixture("functional.keras")) as theirs:
        assert zf.namelist() == theirs.namelist() == ["metadata.json", "config.json",
                                                       "model.weights.h5"]
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_STORED}
        metadata = json.loads(zf.read("metadata.json"))
        config, keras_config = (json.loads(z.read("config.json")) for z in (zf, theirs))
    assert metadata["keras_version"] == INFO["keras_version"]
    assert sorted(metadata) == ["date_saved", "keras_version"]
    for key in ("module", "class_name", "registered_name", "build_config", "compile_config"):
        assert config[key] == keras_config[key], key
    assert archive_weights_tree(tmp_path / "m.keras", tmp_path) == \
        h5_tree(fixture("functional.weights.h5"))


def test_sequential_archive_config_header(tmp_path):
    model = keras.models.load_model(fixture("sequential.keras"))
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as zf, \
            zipfile.ZipFile(fixture("sequential.keras")) as theirs:
        config, keras_config = (json.loads(z.read("config.json")) for z in (zf, theirs))
    for key in ("module", "class_name", "registered_name", "build_config", "compile_config"):
        assert config[key] == keras_config[key], key


# -- round trips -----------------------------------------------------------------------------
def test_weights_round_trip(tmp_path):
    model = functional_model()
    model.layers[2].moving_mean.assign(np.arange(6, dtype=np.float32))  # a non-trainable one
    model.save_weights(tmp_path / "w.weights.h5")
    other = functional_model()
    other.load_weights(str(tmp_path / "w.weights.h5"))
    for a, b in zip(other.get_weights(), model.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    x = ARRAYS["x_functional"]
    np.testing.assert_array_equal(predict(other, x), predict(model, x))


def test_keras_archive_round_trip(tmp_path):
    model = built_optimizer(sequential_model())
    model.optimizer.variables[-1].assign(np.full((2,), 0.25, np.float32))   # a momentum
    model.save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras")
    assert type(loaded) is keras.Sequential and loaded.name == "sequential_model"
    assert loaded.get_config() == model.get_config()
    for a, b in zip(loaded.get_weights(), model.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(loaded.optimizer.variables, model.optimizer.variables, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    x = ARRAYS["x_sequential"]
    np.testing.assert_array_equal(predict(loaded, x), predict(model, x))
    # load_weights also reads an archive
    fresh = built_optimizer(sequential_model())
    fresh.load_weights(tmp_path / "m.keras")
    np.testing.assert_array_equal(predict(fresh, x), predict(model, x))


def test_bfloat16_weights_round_trip(tmp_path):
    model = keras.Sequential([keras.Input((3,)), layers.Dense(2, dtype="bfloat16", name="d")])
    model.save_weights(tmp_path / "b.weights.h5")
    with h5py.File(tmp_path / "b.weights.h5") as f:
        ds = f["layers/dense/vars/0"]
        assert ds.dtype.str == "|V2" and ds.attrs["dtype"] == "bfloat16"   # as Keras 3
    other = keras.Sequential([keras.Input((3,)), layers.Dense(2, dtype="bfloat16", name="d")])
    other.load_weights(tmp_path / "b.weights.h5")
    np.testing.assert_array_equal(other.weights[0].numpy(), model.weights[0].numpy())


def test_custom_layer_archive_needs_custom_objects(tmp_path):
    model = custom_model()
    model.save(tmp_path / "c.keras")
    with pytest.raises(TypeError, match="Could not locate class 'Block'"):
        keras.models.load_model(tmp_path / "c.keras")
    loaded = keras.models.load_model(tmp_path / "c.keras", custom_objects={"Block": Block})
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(predict(loaded, x), predict(model, x))


def test_lambda_layer_loads_only_with_safe_mode_off(tmp_path):
    x = keras.Input((2,), name="x")
    model = keras.Model(x, layers.Lambda(lambda t: t * 3.0, name="triple")(x))
    model.save(tmp_path / "l.keras")
    with pytest.raises(ValueError, match="safe_mode=False"):
        keras.models.load_model(tmp_path / "l.keras")
    loaded = keras.models.load_model(tmp_path / "l.keras", safe_mode=False)
    np.testing.assert_array_equal(predict(loaded, np.ones((1, 2), np.float32)), [[3.0, 3.0]])


def test_public_names():
    # TF 2.21's tf.keras.saving appears once imported (`from tensorflow.keras import saving`);
    # ndflow's is always there, with TF's public names (test_saving_registered.py)
    assert callable(keras.saving.load_model) and callable(keras.saving.save_model)
    assert callable(keras.models.save_model) and callable(keras.models.load_model)
    model = keras.models.model_from_json(json.dumps(
        json.loads(zipfile.ZipFile(fixture("nested.keras")).read("config.json"))))
    assert [layer.name for layer in model.layers] == INFO["layers"]["nested"]


# -- errors ----------------------------------------------------------------------------------
def test_wrong_suffixes(tmp_path):
    model = nested_model()
    with pytest.raises(ValueError, match=r"^The filename must end in `\.weights\.h5`\. "
                                         r"Received: filepath=.*w\.h5$"):
        model.save_weights(tmp_path / "w.h5")
    with pytest.raises(ValueError, match=r"^File format not supported: filepath=.*w\.h6\. "
                                         "Keras 3 only supports V3 `.keras` files, "
                                         "`.weights.h5` files"):
        model.load_weights(tmp_path / "w.h6")
    with pytest.raises(ValueError, match="^Invalid filepath extension for saving"):
        model.save(tmp_path / "m.tf")
    with pytest.raises(ValueError, match="^File format not supported: filepath=.*m.pb"):
        keras.models.load_model(tmp_path / "m.pb")
    assert list(tmp_path.iterdir()) == []


def test_unbuilt_models_raise_keras_errors(tmp_path):
    model = keras.Sequential([layers.Dense(2)])
    with pytest.raises(ValueError, match="^You are saving a model that has not yet been built"):
        model.save_weights(tmp_path / "u.weights.h5")
    with pytest.raises(ValueError, match="^You are loading weights into a model that has not "
                                         "yet been built"):
        model.load_weights(fixture("nested.weights.h5"))


def test_mismatched_architecture_names_the_layer():
    model = keras.Sequential([keras.Input((3,)), layers.Dense(3, activation="relu", name="a")],
                             name="inner")
    x = keras.Input((3,), name="x")
    wrong = keras.Model(x, layers.Dense(5, name="wide")(model(x)))
    before = wrong.layers[-1].kernel.numpy()
    with pytest.raises(ValueError) as info:
        wrong.load_weights(fixture("nested.weights.h5"))
    assert str(info.value).startswith(
        "A total of 1 objects could not be loaded. Example error message for object "
        "<Dense name=wide, built=True>:\n\nThe shape of the target variable and the shape of "
        "the target value in `variable.assign(value)` must match. variable.shape=(3, 5), "
        "Received: value.shape=(3, 2). Target variable: ")
    assert str(info.value).endswith("List of objects that could not be loaded:\n"
                                    "[<Dense name=wide, built=True>]")
    np.testing.assert_array_equal(wrong.layers[-1].kernel.numpy(), before)  # untouched
    with h5py.File(fixture("nested.weights.h5")) as f:   # the other layers did load
        np.testing.assert_array_equal(model.layers[0].kernel.numpy(),
                                      f["layers/sequential/layers/dense/vars/0"][()])

    no_bias = keras.Model(x, layers.Dense(2, use_bias=False, name="nb")(model(x)))
    with pytest.raises(ValueError, match=r"Layer 'nb' expected 1 variables, but received 2 "
                                         r"variables during loading\. Expected: \['kernel'\]"):
        no_bias.load_weights(fixture("nested.weights.h5"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wrong.load_weights(fixture("nested.weights.h5"), skip_mismatch=True)
    assert any("A total of 1 objects could not be loaded" in str(w.message) for w in caught)


def test_extra_layer_reports_missing_variables():
    inner = keras.Sequential([keras.Input((3,)), layers.Dense(3, name="a")], name="inner")
    x = keras.Input((3,), name="x")
    y = layers.Dense(1, name="extra")(layers.Dense(2, name="outer")(inner(x)))
    bigger = keras.Model(x, y)   # the file has no layers/dense_1
    with pytest.raises(ValueError, match=r"Layer 'extra' expected 2 variables, but received 0 "
                                         r"variables during loading"):
        bigger.load_weights(fixture("nested.weights.h5"))


def test_corrupted_and_truncated_files(tmp_path):
    model = nested_model()
    data = open(fixture("nested.weights.h5"), "rb").read()
    (tmp_path / "t.weights.h5").write_bytes(data[: len(data) // 2])
    with pytest.raises(OSError, match=r"Unable to read the weights file .*t\.weights\.h5.*"
                                      "truncated"):
        model.load_weights(tmp_path / "t.weights.h5")
    (tmp_path / "g.weights.h5").write_bytes(b"not hdf5 at all")
    with pytest.raises(OSError, match="not an HDF5 file"):
        model.load_weights(tmp_path / "g.weights.h5")
    with pytest.raises(FileNotFoundError):
        model.load_weights(tmp_path / "missing.weights.h5")

    archive = open(fixture("nested.keras"), "rb").read()
    (tmp_path / "t.keras").write_bytes(archive[: len(archive) // 2])
    with pytest.raises(ValueError, match=r"^Invalid `\.keras` file: .*truncated or corrupted"):
        keras.models.load_model(tmp_path / "t.keras")
    with pytest.raises(ValueError, match=r"^File not found: filepath=.*missing\.keras\. Please "
                                         r"ensure the file is an accessible `\.keras` zip file"):
        keras.models.load_model(tmp_path / "missing.keras")
    with zipfile.ZipFile(tmp_path / "partial.keras", "w") as zf:   # no weights member
        with zipfile.ZipFile(fixture("nested.keras")) as src:
            zf.writestr("config.json", src.read("config.json"))
    with pytest.raises(ValueError, match="has no 'model.weights.h5'"):
        keras.models.load_model(tmp_path / "partial.keras")


@pytest.mark.parametrize("suffix", [".weights.h5", ".keras"])
def test_failed_save_leaves_no_partial_file(tmp_path, monkeypatch, suffix):
    model = nested_model()
    target = tmp_path / f"m{suffix}"
    target.write_bytes(b"previous contents")
    calls = []

    def failing(obj, store):
        calls.append(obj)
        if len(calls) == 3:        # part-way through the model's objects
            raise RuntimeError("disk full")
        return original(obj, store)

    original = weights_h5._save_own
    monkeypatch.setattr(weights_h5, "_save_own", failing)
    save = model.save_weights if suffix == ".weights.h5" else model.save
    with pytest.raises(RuntimeError, match="disk full"):
        save(target)
    assert target.read_bytes() == b"previous contents"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]   # no temporary left
    monkeypatch.setattr(weights_h5, "_save_own", original)
    save(target)
    assert h5py.is_hdf5(target) if suffix == ".weights.h5" else zipfile.is_zipfile(target)
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_failed_archive_write_leaves_no_partial_file(tmp_path, monkeypatch):
    model = nested_model()
    real_writestr = zipfile.ZipFile.writestr

    def writestr(self, name, data, *args, **kwargs):
        if name == "model.weights.h5":     # config.json already written
            raise OSError(28, "No space left on device")
        return real_writestr(self, name, data, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "writestr", writestr)
    with pytest.raises(OSError, match="No space left"):
        model.save(tmp_path / "new.keras")
    assert list(tmp_path.iterdir()) == []


def test_model_checkpoint_saves_keras_archives(tmp_path):
    model = nested_model()
    checkpoint = keras.callbacks.ModelCheckpoint(str(tmp_path / "ckpt" / "{epoch}.keras"))
    callbacks = keras.callbacks.CallbackList([checkpoint], model=model)
    callbacks.on_train_begin()
    callbacks.on_epoch_begin(0)
    callbacks.on_epoch_end(0, {"loss": 1.0})
    loaded = keras.models.load_model(tmp_path / "ckpt" / "1.keras")
    x = ARRAYS["x_nested"]
    np.testing.assert_array_equal(predict(loaded, x), predict(model, x))


def test_overwrite_false_asks_like_keras(tmp_path, monkeypatch, capsys):
    model = nested_model()
    target = tmp_path / "m.weights.h5"
    target.write_bytes(b"keep")
    prompts = []
    answers = iter(["maybe", "n"])
    monkeypatch.setattr(builtins, "input", lambda p: prompts.append(p) or next(answers))
    model.save_weights(target, overwrite=False)
    assert target.read_bytes() == b"keep"
    assert prompts == [f"[WARNING] {target} already exists - overwrite? [y/n]",
                       'Enter "y" (overwrite) or "n" (cancel).']
    monkeypatch.setattr(builtins, "input", lambda p: "y")
    model.save_weights(target, overwrite=False)
    assert h5py.is_hdf5(target)
    assert "[TIP] Next time specify overwrite=True!" in capsys.readouterr().out

    def no_terminal(prompt):
        raise EOFError("EOF when reading a line")

    monkeypatch.setattr(builtins, "input", no_terminal)   # as Keras without a terminal
    with pytest.raises(EOFError):
        model.save_weights(target, overwrite=False)


def test_subclassed_model_round_trips_through_a_keras_archive(tmp_path):
    """The first call records the build shape, so `load_model` can rebuild the weights."""
    class Net(tf.keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.hidden = tf.keras.layers.Dense(4, activation="tanh")
            self.out = tf.keras.layers.Dense(2)

        def call(self, x):
            return self.out(self.hidden(x))

    net = Net()
    x = np.random.default_rng(0).normal(size=(3, 5)).astype(np.float32)
    want = net(x).numpy()
    assert net.get_build_config() == {"input_shape": (3, 5)}
    net.save(tmp_path / "net.keras")
    loaded = tf.keras.models.load_model(tmp_path / "net.keras", custom_objects={"Net": Net})
    np.testing.assert_allclose(loaded(x).numpy(), want, rtol=1e-6)
    built = Net()
    built.build((None, 5))  # Keras 3: build a subclassed model from a shape
    assert [w.shape.as_list() for w in built.weights] == [[5, 4], [4], [4, 2], [2]]
