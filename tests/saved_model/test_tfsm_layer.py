"""keras.layers.TFSMLayer over SavedModels written by TensorFlow 2.21 (model.export,
tf.saved_model.save: tests/fixtures/saved_model) and by ndflow, alone and inside models, and
Keras 3's error for `load_model` on a SavedModel directory."""

import os

import numpy as np
import pytest

import ndflow as tf

keras = tf.keras
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "saved_model")
EXPECTED = np.load(os.path.join(FIXTURES, "expected.npz"))
X = np.array([[1.0, 1.0, 1.0], [2.0, 0.0, -1.0]], np.float32)


def fixture(name):
    return os.path.join(FIXTURES, name)


def test_export_endpoint_serve_with_the_functions_variables_as_weights():
    layer = keras.layers.TFSMLayer(fixture("keras_preprocessing_export"))
    assert layer.built and layer.call_endpoint == "serve"
    np.testing.assert_allclose(layer(X).numpy(), EXPECTED["keras_preprocessing"], rtol=1e-5,
                               atol=1e-6)
    # Dense x2 + BatchNormalization's gamma/beta trainable, its moving statistics not
    assert (len(layer.weights), len(layer.trainable_weights),
            len(layer.non_trainable_weights)) == (8, 6, 2)
    frozen = keras.layers.TFSMLayer(fixture("keras_export"), trainable=False)
    assert frozen.trainable_weights == [] and len(frozen.non_trainable_weights) == 4


def test_saved_model_signature_endpoint_returns_its_dict():
    layer = keras.layers.TFSMLayer(fixture("keras_saved_model"),
                                   call_endpoint="serving_default")
    (out,) = layer(X).values()
    np.testing.assert_allclose(out.numpy(), EXPECTED["keras"], rtol=1e-5, atol=1e-6)


def test_missing_endpoints_are_keras_value_errors():
    with pytest.raises(ValueError, match=r"The endpoint 'nope' is neither an attribute of the "
                       r"reloaded SavedModel.*Select another endpoint via the `call_endpoint`"
                       r".*\['serve', 'serving_default'\]"):
        keras.layers.TFSMLayer(fixture("keras_export"), call_endpoint="nope")
    with pytest.raises(ValueError, match=r"The endpoint 'train' is neither.*SavedModel\. "
                       r"Available endpoints"):
        keras.layers.TFSMLayer(fixture("keras_export"), call_training_endpoint="train")


def test_inside_sequential_and_functional_models_and_trains():
    layer = keras.layers.TFSMLayer(fixture("keras_export"))
    seq = keras.Sequential([keras.Input((3,)), layer, keras.layers.Dense(1)])
    assert tuple(seq.outputs[0].shape) == (None, 1) and len(seq.weights) == 6
    inp = keras.Input((3,))
    hidden = layer(inp)
    assert tuple(hidden.shape) == (None, 2)   # the saved output signature's shape
    model = keras.Model(inp, keras.layers.Dense(1)(hidden))
    model.compile("sgd", "mse")
    before = [w.numpy().copy() for w in layer.trainable_weights]
    rng = np.random.RandomState(0)
    model.fit(rng.randn(16, 3).astype(np.float32), rng.randn(16, 1).astype(np.float32),
              epochs=1, batch_size=8, verbose=0)
    # the weights trained are the ones the endpoint computes with
    assert any(np.abs(w.numpy() - b).max() > 0 for w, b in zip(layer.trainable_weights, before))
    np.testing.assert_allclose(layer(X).numpy(), layer.call_endpoint_fn(X).numpy())


def test_ndflow_written_saved_models(tmp_path):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, activation="relu")])
    model.export(str(tmp_path / "exported"), verbose=False)
    tf.saved_model.save(model, str(tmp_path / "saved"))
    exported = keras.layers.TFSMLayer(str(tmp_path / "exported"))
    np.testing.assert_allclose(exported(X).numpy(), model(X).numpy(), rtol=1e-6)
    saved = keras.layers.TFSMLayer(str(tmp_path / "saved"), call_endpoint="serving_default")
    (out,) = saved(X).values()
    np.testing.assert_allclose(out.numpy(), model(X).numpy(), rtol=1e-6)


def test_config_round_trip_needs_unsafe_mode(tmp_path):
    layer = keras.layers.TFSMLayer(fixture("keras_export"), name="reloaded")
    config = layer.get_config()
    assert config["filepath"] == fixture("keras_export") and config["call_endpoint"] == "serve"
    with pytest.raises(ValueError, match="Requested the deserialization of a `TFSMLayer`"):
        keras.layers.TFSMLayer.from_config(config)
    again = keras.layers.TFSMLayer.from_config(config, safe_mode=False)
    np.testing.assert_allclose(again(X).numpy(), layer(X).numpy())
    model = keras.Sequential([keras.Input((3,)), layer])
    model.save(str(tmp_path / "m.keras"))
    with pytest.raises(ValueError, match="TFSMLayer"):
        keras.models.load_model(str(tmp_path / "m.keras"))
    back = keras.models.load_model(str(tmp_path / "m.keras"), safe_mode=False)
    np.testing.assert_allclose(back(X).numpy(), model(X).numpy())


def test_load_model_on_a_saved_model_directory_is_keras_3s_error():
    path = fixture("keras_export")
    message = (f"File format not supported: filepath={path}. Keras 3 only supports V3 "
               "`.keras` files, legacy H5 format files (`.h5` extension). Note that the legacy "
               "SavedModel format is not supported by `load_model()` in Keras 3. In order to "
               "reload a TensorFlow SavedModel as an inference-only layer in Keras 3, use "
               f"`keras.layers.TFSMLayer({path}, call_endpoint='serving_default')` (note that "
               "your `call_endpoint` might have a different name).")
    with pytest.raises(ValueError) as info:
        keras.models.load_model(path)
    assert str(info.value) == message
