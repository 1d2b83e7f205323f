"""serialize/deserialize_keras_object, registered names, get_source_inputs, standardize_dtype
and the interactive logging switch, as Keras 3.15 (values read from Keras)."""

import logging

import numpy as np
import pytest

import ndflow as tf

U = tf.keras.utils


def test_serialize_matches_keras_records():
    dense = U.serialize_keras_object(tf.keras.layers.Dense(2, name="d"))
    assert (dense["module"], dense["class_name"], dense["registered_name"]) == \
        ("keras.layers", "Dense", None)
    assert dense["config"]["units"] == 2
    assert U.serialize_keras_object(tf.keras.activations.relu) == {
        "module": "builtins", "class_name": "function", "config": "relu",
        "registered_name": "function"}
    assert U.serialize_keras_object(np.arange(3)) == {
        "class_name": "__numpy__", "config": {"value": [0, 1, 2], "dtype": "int64"}}
    assert U.serialize_keras_object(tf.keras.regularizers.L2(0.5)) == {
        "module": "keras.regularizers", "class_name": "L2", "config": {"l2": 0.5},
        "registered_name": None}
    assert U.serialize_keras_object((1, [2, np.float32(2.5)], {"a": None})) == \
        (1, [2, 2.5], {"a": None})
    opt = U.serialize_keras_object(tf.keras.optimizers.SGD(0.5))
    assert (opt["module"], opt["class_name"]) == ("keras.optimizers", "SGD")


def test_round_trips():
    layer = U.deserialize_keras_object(U.serialize_keras_object(
        tf.keras.layers.Dense(3, activation="relu", name="d")))
    assert isinstance(layer, tf.keras.layers.Dense) and layer.units == 3
    assert U.deserialize_keras_object(U.serialize_keras_object(
        tf.keras.activations.relu)) is tf.keras.activations.relu
    np.testing.assert_array_equal(U.deserialize_keras_object(
        U.serialize_keras_object(np.arange(3))), np.arange(3))
    loss = U.deserialize_keras_object(U.serialize_keras_object(
        tf.keras.losses.MeanSquaredError()))
    assert isinstance(loss, tf.keras.losses.MeanSquaredError)
    init = U.deserialize_keras_object(U.serialize_keras_object(
        tf.keras.initializers.GlorotUniform(seed=1)))
    assert isinstance(init, tf.keras.initializers.GlorotUniform)
    assert U.deserialize_keras_object("relu") == "relu"  # strings stay strings, as Keras
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    clone = U.deserialize_keras_object(U.serialize_keras_object(model))
    assert [type(x).__name__ for x in clone.layers] == ["Dense"]


def test_registered_names_and_objects():
    @tf.keras.utils.register_keras_serializable("pk_utils_test")
    class Scale(tf.keras.layers.Layer):
        def get_config(self):
            return super().get_config()

    try:
        assert U.get_registered_name(Scale) == "pk_utils_test>Scale"
        assert U.get_registered_name(tf.keras.layers.Dense) == "Dense"
        assert U.get_registered_object("pk_utils_test>Scale") is Scale
        assert U.get_registered_object("X", custom_objects={"X": 1}) == 1
        assert U.get_registered_object("Z", module_objects={"Z": 2}) == 2
        assert U.get_registered_object("nothing") is None
        record = U.serialize_keras_object(Scale(name="s"))
        # Keras 3 writes the class's module (None only for a `__main__` class)
        assert (record["module"], record["registered_name"]) == (__name__, "pk_utils_test>Scale")
        assert isinstance(U.deserialize_keras_object(record), Scale)
    finally:
        U.get_custom_objects().pop("pk_utils_test>Scale", None)


def test_get_source_inputs():
    a, b = tf.keras.Input((3,)), tf.keras.Input((3,))
    x = tf.keras.layers.Add()([tf.keras.layers.Dense(3)(a), b])
    sources = U.get_source_inputs(tf.keras.layers.Dense(1)(x))
    assert len(sources) == 2 and sources[0] is a and sources[1] is b
    assert U.get_source_inputs(a)[0] is a


@pytest.mark.parametrize("given, want", [
    ("float32", "float32"), (int, "int64"), (float, "float32"), (np.float64, "float64"),
    ("bool", "bool"), ("string", "string"), (None, "float32"), (tf.float16, "float16"),
    (np.dtype("uint8"), "uint8")])
def test_standardize_dtype(given, want):
    assert U.standardize_dtype(given) == want


def test_standardize_dtype_rejects_unknown():
    with pytest.raises(ValueError, match="Invalid dtype: float$"):
        U.standardize_dtype("float")


def test_interactive_logging_switch(tmp_path, capsys, caplog):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.txt").write_text("hi")
    assert U.is_interactive_logging_enabled()
    U.disable_interactive_logging()
    try:
        assert not tf.keras.config.is_interactive_logging_enabled()
        with caplog.at_level(logging.INFO, logger="ndflow.keras"):
            U.text_dataset_from_directory(str(tmp_path))
        assert capsys.readouterr().out == ""
        assert "Found 1 files belonging to 1 classes." in caplog.text
    finally:
        U.enable_interactive_logging()
    assert U.is_interactive_logging_enabled()


def test_config_attribute_dict():
    config = U.Config(learning_rate=0.1, momentum=0.9)
    config.optimizer = "sgd"
    config["seed"] = 1
    assert config.learning_rate == 0.1 and config["optimizer"] == "sgd"
    assert list(config) == ["learning_rate", "momentum", "optimizer", "seed"]
    assert config.as_dict() == {"learning_rate": 0.1, "momentum": 0.9, "optimizer": "sgd",
                                "seed": 1}
    assert config.to_json().startswith('{"learning_rate": 0.1') and len(config) == 4
    with pytest.raises(AttributeError, match="Unknown attribute: 'learning_rat'. Did you "
                                             "mean 'learning_rate'?"):
        _ = config.learning_rat
    config.freeze()
    assert config.frozen
    with pytest.raises(ValueError, match="the config is frozen"):
        config.momentum = 0.5
    with pytest.raises(ValueError, match="the config is frozen"):
        config.update(seed=2)
    config.unfreeze()
    del config["seed"]
    assert "seed" not in config and config.pop("momentum") == 0.9
    assert repr(config) == "<Config {'learning_rate': 0.1, 'optimizer': 'sgd'}>"
