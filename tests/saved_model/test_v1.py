"""TF1 SavedModels: `tf.compat.v1.saved_model.simple_save` writes a Session's graph with a
graph-level saver (the layout TensorFlow's TF1 loader restores), and
`tf.compat.v1.saved_model.load(sess, tags, dir)` imports SavedModels — ndflow's TF1 ones,
and TF2 ones from ndflow and TensorFlow 2.21 — into a Session."""

import os

import numpy as np
import pytest

import ndflow as tf
from ndflow.checkpoint.tensor_bundle import BundleReader
from ndflow.core.protos.saved_model_pb import SavedModel

tf1 = tf.compat.v1
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "saved_model")
EXPECTED = np.load(os.path.join(FIXTURES, "expected.npz"))
X = np.array([[1.0, 1.0, 1.0], [2.0, 0.0, -1.0]], np.float32)


def simple_model(path):
    with tf.Graph().as_default():
        x = tf1.placeholder(tf.float32, [None, 3], name="x")
        w = tf1.get_variable("w", initializer=tf.constant([[1.0], [2.0], [3.0]]))
        b = tf1.Variable(0.5, name="b")
        y = tf.identity(tf.matmul(x, w) + b, name="y")
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            sess.run(b.assign(1.5))
            expected = sess.run(y, {x: X})
            tf1.saved_model.simple_save(sess, str(path), {"x": x}, {"y": y})
    return expected


def run_signature(path, key, tags=("serve",)):
    with tf.Graph().as_default(), tf1.Session() as sess:
        mg = tf1.saved_model.load(sess, list(tags), str(path))
        sd = mg.signature_def[key]
        return sess.run({k: v.name for k, v in sd.outputs.items()},
                        {sd.inputs["x"].name: X})


def test_simple_save_layout(tmp_path):
    simple_model(tmp_path / "m")
    sm = SavedModel()
    sm.ParseFromString((tmp_path / "m" / "saved_model.pb").read_bytes())
    mg = sm.meta_graphs[0]
    assert list(mg.meta_info_def.tags) == ["serve"] and not len(mg.object_graph_def.nodes)
    sd = mg.signature_def["serving_default"]
    assert sd.inputs["x"].name == "x:0" and sd.outputs["y"].name == "y:0"
    assert mg.saver_def.restore_op_name == "save/restore_all"
    assert {n.op for n in mg.graph_def.node} >= {"RestoreV2", "SaveV2", "AssignVariableOp"}
    reader = BundleReader(str(tmp_path / "m" / "variables" / "variables"))
    assert sorted(reader.keys()) == ["b", "w"]  # TF1 Saver keys: the variables' names
    assert float(reader.read("b")) == 1.5


def test_simple_save_round_trip(tmp_path):
    expected = simple_model(tmp_path / "m")
    np.testing.assert_allclose(run_signature(tmp_path / "m", "serving_default")["y"],
                               expected)


def test_simple_save_refuses_a_non_empty_directory(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "f").write_text("x")
    with pytest.raises(AssertionError, match="already exists"):
        simple_model(tmp_path / "m")


def test_v1_load_of_tensorflows_tf2_saved_model():
    out = run_signature(os.path.join(FIXTURES, "tf_module"), "scaled")
    np.testing.assert_allclose(out["scaled"], EXPECTED["module_scaled_scaled"])
    np.testing.assert_allclose(out["relu"], EXPECTED["module_scaled_relu"])


def test_v1_load_of_ndflows_tf2_saved_model(tmp_path):
    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable([1.0, 2.0, 3.0])

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
        def __call__(self, x):
            return x * self.v

    tf.saved_model.save(M(), str(tmp_path / "m"))
    out = run_signature(tmp_path / "m", "serving_default")
    np.testing.assert_allclose(out["output_0"], X * [1.0, 2.0, 3.0])


def test_v1_load_needs_matching_tags_and_a_session(tmp_path):
    with pytest.raises(ValueError, match="tags"):
        run_signature(os.path.join(FIXTURES, "tf_module"), "scaled", tags=("train",))
    with pytest.raises(RuntimeError, match="needs a Session"):
        tf1.saved_model.load(None, ["serve"], os.path.join(FIXTURES, "tf_module"))


def test_predict_signature_def_needs_inputs_and_outputs():
    with tf.Graph().as_default():
        x = tf1.placeholder(tf.float32, [2], name="x")
        with pytest.raises(ValueError, match="inputs"):
            tf1.saved_model.predict_signature_def({}, {"y": x})
        sd = tf1.saved_model.predict_signature_def({"x": x}, {"y": x})
        assert sd.method_name == "tensorflow/serving/predict"
        assert tf1.saved_model.build_tensor_info(x).name == "x:0"


def test_tensorflows_tf1_simple_save_loads_in_both_apis():
    path = os.path.join(FIXTURES, "tf1_simple_save")  # generate_tf1.py
    expected = np.load(os.path.join(FIXTURES, "tf1_expected.npy"))
    np.testing.assert_allclose(run_signature(path, "serving_default")["y"], expected)
    loaded = tf.saved_model.load(path)
    np.testing.assert_allclose(loaded.signatures["serving_default"](x=X)["y"].numpy(),
                               expected)
    with pytest.raises(TypeError, match="missing"):
        loaded.signatures["serving_default"]()


def test_v2_load_of_ndflows_simple_save(tmp_path):
    expected = simple_model(tmp_path / "m")
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    np.testing.assert_allclose(loaded.signatures["serving_default"](X)["y"].numpy(), expected)


def test_v1_load_of_tensorflows_asset_model_runs_its_init_op():
    with tf.Graph().as_default(), tf1.Session() as sess:
        mg = tf1.saved_model.load(sess, ["serve"], os.path.join(FIXTURES, "tf_asset"))
        out = mg.signature_def["serving_default"].outputs["output_0"].name
        assert sess.run(out) == b"alpha\nbeta\n"


@pytest.mark.parametrize("name, want", [("tf_lookup_table", [2, -1, -1]),
                                        ("tf_text_file_table", [-1, -1, 0])])
def test_session_loads_tables_and_runs_their_initializers(name, want):
    # the init op calls the tables' initializer functions (the text-file one reads the
    # SavedModel's asset); a loaded table is looked up through the signature
    with tf.Graph().as_default(), tf1.Session() as sess:
        mg = tf1.saved_model.load(sess, ["serve"], os.path.join(FIXTURES, name))
        sd = mg.signature_def["serving_default"]
        out = sess.run(sd.outputs["output_0"].name, {sd.inputs["k"].name: ["b", "?", "alpha"]})
    assert out.tolist() == want


def test_builder_writes_meta_graphs_under_their_tags(tmp_path):
    # tf.compat.v1.saved_model.builder.SavedModelBuilder (also `Builder`): one MetaGraphDef
    # with the variables, another added after it, each loadable by its tags; the module
    # aliases TF1 programs use (tag_constants, signature_constants, utils,
    # signature_def_utils, loader).
    sm = tf1.saved_model
    path = tmp_path / "built"
    with tf.Graph().as_default():
        x = tf1.placeholder(tf.float32, [None, 3], name="x")
        w = tf1.get_variable("w", initializer=tf.constant([[1.0], [2.0], [3.0]]))
        y = tf.identity(tf.matmul(x, w), name="y")
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            sess.run(w.assign([[2.0], [0.0], [1.0]]))
            want = sess.run(y, {x: X})
            builder = sm.builder.SavedModelBuilder(str(path))
            with pytest.raises(AssertionError, match="has not been saved yet"):
                builder.add_meta_graph(["train"])
            signature = sm.signature_def_utils.predict_signature_def(
                {"x": x}, {"y": y})
            builder.add_meta_graph_and_variables(
                sess, [sm.tag_constants.SERVING],
                signature_def_map={sm.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                                   signature})
            with pytest.raises(AssertionError, match="has already been saved"):
                builder.add_meta_graph_and_variables(sess, ["other"])
            builder.add_meta_graph([sm.tag_constants.TRAINING], {"predict": signature})
            with pytest.raises(AssertionError, match="already exists"):
                builder.add_meta_graph([sm.tag_constants.TRAINING])
            assert not path.exists()   # nothing is written before save()
            assert builder.save() == str(path / "saved_model.pb").encode()
    assert sm.Builder is sm.builder.SavedModelBuilder and sm.loader.load is sm.load
    assert sm.utils.build_tensor_info is sm.build_tensor_info
    np.testing.assert_array_equal(run_signature(path, "serving_default")["y"], want)
    np.testing.assert_array_equal(run_signature(path, "predict", ("train",))["y"], want)
    with pytest.raises(AssertionError, match="isn't empty"):
        sm.Builder(str(path))


def test_builder_as_text(tmp_path):
    path = tmp_path / "text"
    with tf.Graph().as_default():
        x = tf1.placeholder(tf.float32, [None, 3], name="x")
        v = tf1.Variable([[1.0], [1.0], [1.0]], name="v")
        y = tf.matmul(x, v, name="y")
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            builder = tf1.saved_model.Builder(str(path))
            builder.add_meta_graph_and_variables(
                sess, ["serve"], {"serving_default": tf1.saved_model.predict_signature_def(
                    {"x": x}, {"y": y})})
            assert builder.save(as_text=True).endswith(b"saved_model.pbtxt")
    assert sorted(os.listdir(path)) == ["saved_model.pbtxt", "variables"]
    np.testing.assert_array_equal(run_signature(path, "serving_default")["y"],
                                  X.sum(1, keepdims=True))
