"""SavedModels written by TensorFlow 2.21 whose functions capture more than variables
(tests/fixtures/saved_model, made by generate.py there): Keras models whose functions
capture constants and non-trainable variables (export and tf.saved_model.save), a custom
gradient (its captured tensor, and the gradient itself, used as TensorFlow uses it), and
tf.lookup table resources (Keras' StringLookup among them); a resource whose op ndflow lacks
is refused naming the node."""

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


def test_keras_export_with_captured_constants_and_batch_norm_state():
    m = tf.saved_model.load(fixture("keras_preprocessing_export"))
    np.testing.assert_allclose(m.serve(X).numpy(), EXPECTED["keras_preprocessing"],
                               rtol=1e-5, atol=1e-6)
    (out,) = m.signatures["serving_default"](X).values()
    np.testing.assert_allclose(out.numpy(), EXPECTED["keras_preprocessing"], rtol=1e-5,
                               atol=1e-6)
    # the serving function reads BatchNormalization's moving statistics, not batch ones
    assert sum(not v.trainable for v in m.signatures["serving_default"].variables) == 2


def test_tf_saved_keras_model_with_captured_constants():
    m = tf.saved_model.load(fixture("keras_preprocessing_saved_model"))
    (out,) = m.signatures["serving_default"](tf.constant(X)).values()
    np.testing.assert_allclose(out.numpy(), EXPECTED["keras_preprocessing"], rtol=1e-5,
                               atol=1e-6)


def test_custom_gradient_captured_tensor_loads_and_the_forward_function_runs():
    m = tf.saved_model.load(fixture("tf_custom_gradient"))
    np.testing.assert_allclose(m.f(X[0]).numpy(), EXPECTED["custom_gradient"], rtol=1e-6)
    out = m.signatures["serving_default"](x=X[0])
    np.testing.assert_allclose(out["output_0"].numpy(), EXPECTED["custom_gradient"],
                               rtol=1e-6)
    assert float(m.v.numpy()) == 2.0


def _tape_gradient(m, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = m.f(x)
    return tape.gradient(y, [x, m.v])


def test_saved_custom_gradient_is_used_eagerly_and_in_graphs():
    # f(x) = exp3(x) * v whose saved gradient is dy * exp(x) * 3 (TensorFlow computes these
    # same values for the fixture); the ops' own gradient would give dy * exp(x)
    m = tf.saved_model.load(fixture("tf_custom_gradient"))
    x = tf.constant(X[0])
    want_dx, want_dv = 3.0 * np.exp(X[0]) * 2.0, np.exp(X[0]).sum()
    for dx, dv in (_tape_gradient(m, x),
                   tf.function(lambda t: _tape_gradient(m, t), autograph=False)(x)):
        np.testing.assert_allclose(dx.numpy(), want_dx, rtol=1e-6)
        np.testing.assert_allclose(dv.numpy(), want_dv, rtol=1e-6)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = m.signatures["serving_default"](x=x)["output_0"]
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want_dx, rtol=1e-6)


def test_loaded_functions_run_inside_a_tf_function():
    m = tf.saved_model.load(fixture("keras_preprocessing_export"))
    out = tf.function(lambda x: m.serve(x) * 2.0, autograph=False)(tf.constant(X))
    np.testing.assert_allclose(out.numpy(), EXPECTED["keras_preprocessing"] * 2.0, rtol=1e-5,
                               atol=1e-6)


def test_lookup_table_resource_is_created_initialized_and_read():
    m = tf.saved_model.load(fixture("tf_lookup_table"))
    out = m.lookup(tf.constant(["a", "c", "zz", "b"]))   # TensorFlow: [1, 3, -1, 2]
    assert out.dtype == tf.int64 and out.numpy().tolist() == [1, 3, -1, 2]
    out = m.signatures["serving_default"](k=tf.constant(["b", "q"]))["output_0"]
    assert out.numpy().tolist() == [2, -1]
    again = tf.saved_model.load(fixture("tf_lookup_table"))   # its own table, not shared
    assert again.table.resource_handle._value is not m.table.resource_handle._value
    assert again.lookup(tf.constant(["a"])).numpy().tolist() == [1]


def test_mutable_table_contents_are_restored_from_the_checkpoint():
    m = tf.saved_model.load(fixture("tf_mutable_table"))
    assert m.lookup(tf.constant(["b", "a", "q"])).numpy().tolist() == [2, 1, -1]


def test_table_initialized_from_a_vocabulary_asset(tmp_path):
    d = tmp_path / "moved"
    shutil.copytree(fixture("tf_text_file_table"), d)   # the asset read from the new place
    m = tf.saved_model.load(str(d))
    assert m.lookup(tf.constant(["beta", "alpha", "gamma"])).numpy().tolist() == [1, 0, -1]


def test_keras_string_lookup_export_and_tfsm_layer():
    # Keras' StringLookup(vocabulary=["x", "y", "z"]): out-of-vocabulary 0, then 1, 2, 3
    words = tf.constant([["x", "q"], ["z", "y"]])
    m = tf.saved_model.load(fixture("keras_string_lookup_export"))
    assert m.serve(words).numpy().tolist() == [[1, 0], [3, 2]]
    layer = tf.keras.layers.TFSMLayer(fixture("keras_string_lookup_export"))
    assert layer(words).numpy().tolist() == [[1, 0], [3, 2]]


@pytest.mark.parametrize("name", ["tf_lookup_table", "keras_string_lookup_export",
                                  "tf_text_file_table"])
def test_loaded_tables_save_again_with_their_creator_and_initializer(tmp_path, name):
    m = tf.saved_model.load(fixture(name))
    tf.saved_model.save(m, str(tmp_path / "again"))
    again = tf.saved_model.load(str(tmp_path / "again"))
    words = tf.constant(["a", "beta", "x", "?"])
    fn = "lookup"
    if name.startswith("keras"):
        fn, words = "serve", tf.constant([["x", "?"], ["z", "y"]])
    assert getattr(again, fn)(words).numpy().tolist() == getattr(m, fn)(words).numpy().tolist()
    # the graph-level program (C++ and TF Serving loaders) creates the table and the init op
    # runs its initializer
    sm = SavedModel()
    sm.ParseFromString((tmp_path / "again" / "saved_model.pb").read_bytes())
    graph = sm.meta_graphs[0].graph_def
    assert any(n.op == "HashTableV2" for n in graph.node)
    init = next(n for n in graph.node if n.name == "NoOp")
    assert any(i.startswith("^StatefulPartitionedCall") for i in init.input)


def test_a_loaded_mutable_table_is_not_saved_again_without_its_contents(tmp_path):
    m = tf.saved_model.load(fixture("tf_mutable_table"))
    with pytest.raises(ValueError, match="Cannot save the loaded resource 'root.table'"):
        tf.saved_model.save(m, str(tmp_path / "again"))
    assert not (tmp_path / "again").exists()


def test_keras_discretization_export_buckets_as_tensorflow():
    m = tf.saved_model.load(fixture("keras_discretization_export"))
    out = m.serve(np.array([[-1.0, 0.5, 2.0], [1.0, 0.0, 3.0]], np.float32))
    assert out.numpy().tolist() == [[0, 1, 2], [2, 1, 2]]   # TensorFlow's output


def test_keras_text_vectorization_export_pads_token_ids_as_tensorflow():
    m = tf.saved_model.load(fixture("keras_text_vectorization_export"))
    out = m.serve(tf.constant(["the cat ran", "a dog", "fast fast fast fast fast"]))
    assert out.numpy().tolist() == [[2, 7, 4, 0], [1, 6, 0, 0], [5, 5, 5, 5]]   # TF's


def test_resource_whose_op_ndflow_lacks_is_refused_naming_the_node(tmp_path):
    d = tmp_path / "m"
    shutil.copytree(fixture("tf_lookup_table"), d)
    sm = SavedModel()
    sm.ParseFromString((d / "saved_model.pb").read_bytes())
    for fd in sm.meta_graphs[0].graph_def.library.function:
        for node in fd.node_def:
            if node.op == "HashTableV2":
                node.op = "FancyTableOp"
    (d / "saved_model.pb").write_bytes(sm.SerializeToString())
    with pytest.raises(tf.errors.NotFoundError,
                       match=r"node 1 \('root.table'\), a resource.*'FancyTableOp'"
                             r".*__inference__creator"):
        tf.saved_model.load(str(d))
