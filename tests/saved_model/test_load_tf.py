"""ndflow loads SavedModels written by TensorFlow 2.21 (tests/fixtures/saved_model, made by
generate.py there): attributes, variables, functions and serving signatures, with
TensorFlow's outputs; bad files give TensorFlow-typed errors naming what is wrong."""

import os
import shutil

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.protos.saved_model_pb import SavedModel

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "saved_model")
EXPECTED = np.load(os.path.join(FIXTURES, "expected.npz"))
X = np.array([[1.0, 1.0, 1.0], [2.0, 0.0, -1.0]], np.float32)


def fixture(name):
    return os.path.join(FIXTURES, name)


def test_tf_module_attributes_variables_and_functions():
    m = tf.saved_model.load(fixture("tf_module"))
    np.testing.assert_array_equal(m.v.numpy(), [1.0, 2.0, 3.0])
    assert float(m.w.numpy()) == 2.0 and not m.w.trainable and m.v.trainable
    assert float(m.child.scale.numpy()) == 0.5
    np.testing.assert_allclose(m(tf.constant(X)).numpy(), EXPECTED["module_call"])
    out = m.scaled(X)
    assert sorted(out) == ["relu", "scaled"]
    np.testing.assert_allclose(out["scaled"].numpy(), EXPECTED["module_scaled_scaled"])
    np.testing.assert_allclose(out["relu"].numpy(), EXPECTED["module_scaled_relu"])


def test_tf_module_signatures_return_dicts():
    m = tf.saved_model.load(fixture("tf_module"))
    assert sorted(m.signatures) == ["scaled", "serving_default"]
    out = m.signatures["serving_default"](x=tf.constant(X))
    assert list(out) == ["output_0"]
    np.testing.assert_allclose(out["output_0"].numpy(), EXPECTED["module_call"])
    out = m.signatures["scaled"](x=tf.constant(X))
    np.testing.assert_allclose(out["relu"].numpy(), EXPECTED["module_scaled_relu"])


def test_loaded_function_uses_the_live_variables():
    m = tf.saved_model.load(fixture("tf_module"))
    m.w.assign(10.0)
    np.testing.assert_allclose(m(tf.constant(X)).numpy(), EXPECTED["module_call"] + 8.0)


def test_loaded_function_rejects_incompatible_input():
    m = tf.saved_model.load(fixture("tf_module"))
    with pytest.raises(ValueError, match="Could not find matching concrete function"):
        m(tf.ones([2, 4]))


@pytest.mark.parametrize("name", ["keras_export", "keras_saved_model"])
def test_keras_models_serve_keras_outputs(name):
    m = tf.saved_model.load(fixture(name))
    out = m.signatures["serving_default"](tf.constant(X))
    (value,) = out.values()
    np.testing.assert_allclose(value.numpy(), EXPECTED["keras"], rtol=1e-5, atol=1e-6)


def test_keras_export_serve_endpoint_and_variables():
    m = tf.saved_model.load(fixture("keras_export"))
    np.testing.assert_allclose(m.serve(X).numpy(), EXPECTED["keras"], rtol=1e-5, atol=1e-6)
    assert len(m.variables) == 4 and len(m.trainable_variables) == 4


def test_contains_saved_model_and_constants(tmp_path):
    assert tf.saved_model.contains_saved_model(fixture("tf_module"))
    assert not tf.saved_model.contains_saved_model(str(tmp_path))
    assert tf.saved_model.SERVING == "serve"
    assert tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY == "serving_default"
    tf.saved_model.LoadOptions(allow_partial_checkpoint=True)
    tf.saved_model.SaveOptions(namespace_whitelist=["x"])


def test_missing_directory_is_an_os_error(tmp_path):
    with pytest.raises(OSError, match="SavedModel file does not exist at"):
        tf.saved_model.load(str(tmp_path / "nothing"))


def test_corrupted_saved_model_pb_is_data_loss_naming_the_file(tmp_path):
    d = tmp_path / "m"
    shutil.copytree(fixture("tf_module"), d)
    pb = d / "saved_model.pb"
    pb.write_bytes(pb.read_bytes()[:1000])
    with pytest.raises(tf.errors.DataLossError, match="saved_model.pb"):
        tf.saved_model.load(str(d))


def test_corrupted_variables_are_data_loss(tmp_path):
    d = tmp_path / "m"
    shutil.copytree(fixture("tf_module"), d)
    data = d / "variables" / "variables.data-00000-of-00001"
    raw = bytearray(data.read_bytes())
    raw[-3] ^= 0xFF
    data.write_bytes(bytes(raw))
    with pytest.raises(tf.errors.DataLossError):
        tf.saved_model.load(str(d))


def test_unknown_op_names_the_op_and_the_function(tmp_path):
    d = tmp_path / "m"
    shutil.copytree(fixture("tf_module"), d)
    sm = SavedModel()
    sm.ParseFromString((d / "saved_model.pb").read_bytes())
    for fd in sm.meta_graphs[0].graph_def.library.function:
        for node in fd.node_def:
            if node.op == "Relu":
                node.op = "FancyNewOp"
                name = fd.signature.name
    (d / "saved_model.pb").write_bytes(sm.SerializeToString())
    with pytest.raises(tf.errors.NotFoundError,
                       match=f"Op type not registered 'FancyNewOp'.*{name}"):
        tf.saved_model.load(str(d))


def test_wrong_tags_are_a_value_error():
    with pytest.raises(ValueError, match="incompatible argument to `tags`"):
        tf.saved_model.load(fixture("tf_module"), tags=["train"])
    assert tf.saved_model.load(fixture("tf_module"), tags=["serve"]) is not None


@pytest.mark.parametrize("name", ["tf_module", "keras_export"])
def test_loaded_model_saves_again_with_its_functions_and_signatures(tmp_path, name):
    m = tf.saved_model.load(fixture(name))
    m.variables[0].assign(m.variables[0] * 2.0)  # the new values are what gets saved
    tf.saved_model.save(m, str(tmp_path / "again"))
    again = tf.saved_model.load(str(tmp_path / "again"))
    assert sorted(again.signatures) == sorted(m.signatures)
    for key, f in m.signatures.items():
        ours, theirs = again.signatures[key](X), f(X)
        assert sorted(ours) == sorted(theirs)
        for k in ours:
            np.testing.assert_allclose(ours[k].numpy(), theirs[k].numpy(), rtol=1e-6)
    endpoint = "serve" if name == "keras_export" else "__call__"
    np.testing.assert_allclose(getattr(again, endpoint)(X).numpy(),
                               getattr(m, endpoint)(X).numpy(), rtol=1e-6)


def test_function_capturing_a_constant():
    m = tf.saved_model.load(fixture("tf_constant_capture"))
    np.testing.assert_allclose(m.f(X).numpy(), EXPECTED["constant_capture"])
    np.testing.assert_allclose(m.signatures["serving_default"](x=X.tolist())["output_0"].numpy(),
                               EXPECTED["constant_capture"])


def test_keras_model_with_two_inputs_and_a_dict_of_outputs():
    m = tf.saved_model.load(fixture("keras_multi_io"))
    x2 = np.arange(8, dtype=np.float32).reshape(2, 4)
    out = m.signatures["serving_default"](inputs=X, inputs_1=x2)
    assert sorted(out) == ["o1", "o2"]
    for k in out:
        np.testing.assert_allclose(out[k].numpy(), EXPECTED[f"multi_{k}"], rtol=1e-6)


def test_keras_lstm_export_runs_its_while_loop():
    m = tf.saved_model.load(fixture("keras_lstm_export"))
    seq = np.linspace(-1.0, 1.0, 20, dtype=np.float32).reshape(2, 5, 2)
    np.testing.assert_allclose(m.serve(seq).numpy(), EXPECTED["lstm"], rtol=1e-5, atol=1e-6)


def test_missing_variables_are_not_found(tmp_path):
    d = tmp_path / "m"
    shutil.copytree(fixture("tf_module"), d)
    shutil.rmtree(d / "variables")
    with pytest.raises(tf.errors.NotFoundError, match="variables"):
        tf.saved_model.load(str(d))


def test_damaged_object_graph_is_a_value_error_naming_the_model(tmp_path):
    d = tmp_path / "m"
    shutil.copytree(fixture("tf_module"), d)
    sm = SavedModel()
    sm.ParseFromString((d / "saved_model.pb").read_bytes())
    sm.meta_graphs[0].object_graph_def.nodes[0].children[0].node_id = 999
    (d / "saved_model.pb").write_bytes(sm.SerializeToString())
    with pytest.raises(ValueError, match="refers to node 999"):
        tf.saved_model.load(str(d))


def test_asset_is_read_from_the_loaded_directory(tmp_path):
    d = tmp_path / "moved"
    shutil.copytree(fixture("tf_asset"), d)  # the path bound at load is the new one
    m = tf.saved_model.load(str(d))
    assert m.vocab.asset_path.numpy().decode() == str(
        d / "assets" / "saved_model_fixture_vocab.txt")
    assert m.read().numpy() == b"alpha\nbeta\n"
