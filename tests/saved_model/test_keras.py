"""Keras models as SavedModels: `tf.saved_model.save(model)` gets Keras' default
`serving_default(inputs)` signature and `model.export()` Keras 3's inference artifact
(`serve` endpoint, `serve`/`serving_default` signatures) — the signature defs TensorFlow
2.21 / Keras 3.15 write for the same model (tests/fixtures/saved_model)."""

import os

import numpy as np
import pytest

import ndflow as tf
from ndflow.checkpoint.tensor_bundle import BundleReader
from ndflow.core.protos.saved_model_pb import SavedModel

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "saved_model")
X = np.array([[1.0, 1.0, 1.0], [2.0, 0.0, -1.0]], np.float32)


def meta_graph(path):
    sm = SavedModel()
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        sm.ParseFromString(f.read())
    return sm.meta_graphs[0]


def small_model():
    tf.keras.utils.set_random_seed(1)
    return tf.keras.Sequential([tf.keras.Input((3,)),
                                tf.keras.layers.Dense(4, activation="relu"),
                                tf.keras.layers.Dense(2)])


def assert_same_signatures(ours, theirs):
    assert sorted(ours.signature_def) == sorted(theirs.signature_def)
    for key, b in theirs.signature_def.items():
        a = ours.signature_def[key]
        # input keys are the Keras input names, numbered per process (keras_tensor_<n>)
        assert len(a.inputs) == len(b.inputs) and sorted(a.outputs) == sorted(b.outputs)
        for ka, kb in zip(sorted(a.inputs), sorted(b.inputs)):
            assert ka.split("_")[:2] == kb.split("_")[:2]
            assert (a.inputs[ka].dtype, a.inputs[ka].tensor_shape) == (
                b.inputs[kb].dtype, b.inputs[kb].tensor_shape)
        for k in b.outputs:
            assert (a.outputs[k].dtype, a.outputs[k].tensor_shape) == (
                b.outputs[k].dtype, b.outputs[k].tensor_shape)


def test_saved_model_save_of_a_keras_model(tmp_path):
    model = small_model()
    tf.saved_model.save(model, str(tmp_path / "m"))
    assert_same_signatures(meta_graph(str(tmp_path / "m")),
                           meta_graph(os.path.join(FIXTURES, "keras_saved_model")))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    out = loaded.signatures["serving_default"](inputs=X)
    np.testing.assert_allclose(out["output_0"].numpy(), model(X).numpy(), rtol=1e-6)


def test_model_export(tmp_path, capsys):
    model = small_model()
    model.export(str(tmp_path / "m"), verbose=False)
    assert capsys.readouterr().out == ""
    ours = meta_graph(str(tmp_path / "m"))
    assert_same_signatures(ours, meta_graph(os.path.join(FIXTURES, "keras_export")))
    root = {r.local_name for r in ours.object_graph_def.nodes[0].children}
    assert {"variables", "trainable_variables", "non_trainable_variables", "serve",
            "signatures"} <= root
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    np.testing.assert_allclose(loaded.serve(X).numpy(), model(X).numpy(), rtol=1e-6)
    assert len(loaded.variables) == 4
    with pytest.raises(ValueError, match="format"):
        model.export(str(tmp_path / "n"), format="onnx")


def test_export_of_an_uncalled_model_is_an_error(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="never been called"):
        model.export(str(tmp_path / "m"), verbose=False)
    model.export(str(tmp_path / "m"), verbose=False,
                 input_signature=[tf.TensorSpec([None, 3], tf.float32, "x")])
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert loaded.serve(X).shape == (2, 2)


def test_keras_variables_keep_keras_checkpoint_keys(tmp_path):
    tf.saved_model.save(small_model(), str(tmp_path / "m"))
    keys = set(BundleReader(str(tmp_path / "m" / "variables" / "variables")).keys())
    # the names Keras 3 layers get in TensorFlow checkpoints
    assert "_functional/_operations/1/_kernel/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert "_functional/_operations/2/bias/.ATTRIBUTES/VARIABLE_VALUE" in keys


def test_subclassed_model_signature_uses_its_build_shape(tmp_path):
    class Sub(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d = tf.keras.layers.Dense(2)

        def call(self, x):
            return self.d(x) * 2.0

    m = Sub()
    expected = m(X[:1]).numpy()
    tf.saved_model.save(m, str(tmp_path / "s"))
    sd = meta_graph(str(tmp_path / "s")).signature_def["serving_default"]
    assert [d.size for d in sd.inputs["inputs"].tensor_shape.dim] == [1, 3]  # as Keras 3
    loaded = tf.saved_model.load(str(tmp_path / "s"))
    out = loaded.signatures["serving_default"](inputs=X[:1])["output_0"]
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    m.export(str(tmp_path / "e"), verbose=False)
    np.testing.assert_allclose(tf.saved_model.load(str(tmp_path / "e")).serve(X[:1]).numpy(),
                               expected, rtol=1e-6)
