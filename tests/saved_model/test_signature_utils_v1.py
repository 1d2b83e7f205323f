"""TF1 SignatureDef helpers against TF 2.21 (tests/fixtures/signature_defs_v1): the
classify/regress/predict signatures ndflow builds equal TF's protos for the same graph; a TF1
SavedModel TF saved with them loads in ndflow and its signature tensors (found through
get_tensor_from_tensor_info) compute TF's values; ndflow's own SavedModel with them loads back;
is_valid_signature agrees with TF on valid and altered signatures; MethodNameUpdater rewrites
a SavedModel on disk; main_op_with_restore and the argument errors are TF's."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import meta_graph_pb2

import ndflow as tf
from tests import fixture_modules

tf1 = tf.compat.v1
HERE = Path(__file__).parents[1] / "fixtures" / "signature_defs_v1"
WANT = json.loads((HERE / "expected.json").read_text())
model = fixture_modules.load("signature_defs_v1", "model")


def _proto(text):
    return text_format.Parse(text, meta_graph_pb2.SignatureDef())


def test_built_signatures_equal_tensorflows():
    with tf.Graph().as_default():
        sigs, _ = model.build(tf)
    assert sorted(sigs) == sorted(WANT["signatures"])
    for key, sd in sigs.items():
        assert sd == _proto(WANT["signatures"][key]), key


def _run_signatures(path):
    """Each signature's outputs on the fixture's examples, after a TF1 load of `path`."""
    out = {}
    with tf.Graph().as_default() as g, tf1.Session() as sess:
        mg = tf1.saved_model.load(sess, ["serve"], str(path))
        for key, sd in mg.signature_def.items():
            (inp,) = sd.inputs.values()
            feed = tf1.saved_model.get_tensor_from_tensor_info(inp)
            fetches = {k: tf1.saved_model.utils.get_tensor_from_tensor_info(v, graph=g)
                       for k, v in sd.outputs.items()}
            out[key] = sess.run(fetches, {feed: model.EXAMPLES})
    return out


def _check_values(got):
    want = WANT["values"]
    np.testing.assert_allclose(got["classify"]["scores"], want["scores"])
    assert [c.decode() for c in got["classify"]["classes"]] == want["classes"]
    np.testing.assert_allclose(got["classify_scores"]["scores"], want["scores"])
    np.testing.assert_allclose(got["regress"]["outputs"], want["predictions"])
    np.testing.assert_allclose(got["predict"]["y"], want["predictions"])


def test_tensorflows_saved_model_serves_in_ndflow():
    _check_values(_run_signatures(HERE / "tf_model"))


def test_ndflows_saved_model_round_trips(tmp_path):
    path = tmp_path / "m"
    with tf.Graph().as_default():
        sigs, _ = model.build(tf)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            builder = tf1.saved_model.Builder(str(path))
            builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map=sigs)
            builder.save()
    _check_values(_run_signatures(path))


def test_is_valid_signature_agrees_with_tensorflow():
    with tf.Graph().as_default():
        sigs, _ = model.build(tf)
    cases = {k: sigs[k] for k in sigs}
    cases.update({k: _proto(v) for k, v in WANT["altered"].items()})
    got = {k: tf1.saved_model.is_valid_signature(v) for k, v in cases.items()}
    assert got == WANT["valid"]
    assert tf1.saved_model.signature_def_utils.is_valid_signature(None) is False


def test_argument_errors_are_tensorflows():
    sm = tf1.saved_model
    with tf.Graph().as_default():
        s = tf1.placeholder(tf.string, [None])
        f = tf1.placeholder(tf.float32, [None])
        i = tf1.placeholder(tf.int32, [None])
        with pytest.raises(ValueError, match="Regression `examples` cannot be None"):
            sm.regression_signature_def(None, f)
        with pytest.raises(ValueError, match="Expected regression `examples` to be of type "
                                             "Tensor"):
            sm.regression_signature_def("x", f)
        with pytest.raises(ValueError, match="Regression input tensors must be of type "
                                             "string. Found tensors with type 1"):
            sm.regression_signature_def(f, f)
        with pytest.raises(ValueError, match="Regression output tensors must be of type "
                                             "float. Found tensors with type 3"):
            sm.regression_signature_def(s, i)
        with pytest.raises(ValueError, match="`classes` and `scores` cannot both be None"):
            sm.classification_signature_def(s, None, None)
        with pytest.raises(ValueError, match="Classification classes must be of type string"):
            sm.classification_signature_def(s, i, None)
        with pytest.raises(ValueError, match="Classification scores must be a float Tensor"):
            sm.classification_signature_def(s, None, i)


def test_build_signature_def_defaults():
    sm = tf1.saved_model
    sd = sm.build_signature_def(defaults={"k": tf.constant([1.5, 2.0])})  # eager tensor
    np.testing.assert_array_equal(tf.make_ndarray(sd.defaults["k"]), [1.5, 2.0])
    with tf.Graph().as_default():
        c = tf.constant(7, name="seven")
        sd = sm.build_signature_def(method_name="m", defaults={"k": c})
        assert sd.method_name == "m" and tf.make_ndarray(sd.defaults["k"]) == 7
        p = tf1.placeholder(tf.float32, [])
        with pytest.raises(ValueError, match="Unable to convert object"):
            sm.build_signature_def(defaults={"k": p})


def test_get_tensor_from_tensor_info_encodings():
    sm = tf1.saved_model
    with tf.Graph().as_default() as g:
        with tf.name_scope("scope"):
            x = tf.constant([1.0], name="x")
        info = sm.build_tensor_info(tf.constant(0.0, name="x"))
        assert sm.get_tensor_from_tensor_info(info, import_scope="scope") is x
        st = tf.sparse.SparseTensor([[0, 1]], [3.0], [2, 2])
        coo = meta_graph_pb2.TensorInfo()
        coo.coo_sparse.indices_tensor_name = st.indices.name
        coo.coo_sparse.values_tensor_name = st.values.name
        coo.coo_sparse.dense_shape_tensor_name = st.dense_shape.name
        got = sm.get_tensor_from_tensor_info(coo, graph=g)
        assert got.values is st.values and got.indices is st.indices
        with pytest.raises(ValueError, match="Invalid TensorInfo.encoding: None"):
            sm.get_tensor_from_tensor_info(meta_graph_pb2.TensorInfo())
        with pytest.raises(KeyError):
            sm.get_tensor_from_tensor_info(meta_graph_pb2.TensorInfo(name="nope:0"))


def test_method_name_updater(tmp_path):
    path = tmp_path / "m"
    shutil.copytree(HERE / "tf_model", path)
    assert tf1.saved_model.loader.maybe_saved_model_directory(str(path))
    assert not tf1.saved_model.loader.maybe_saved_model_directory(str(tmp_path))
    updater = tf1.saved_model.signature_def_utils.MethodNameUpdater(str(path))
    updater.replace_method_name("predict", "tensorflow/serving/regress")
    updater.replace_method_name("regress", "custom", tags="serve")
    with pytest.raises(ValueError, match="does not have a signature_def with key: 'nope'"):
        updater.replace_method_name("nope", "x")
    with pytest.raises(ValueError, match="could not be found in SavedModel"):
        updater.replace_method_name("predict", "x", tags=["train"])
    with pytest.raises(ValueError, match="`method_name` must be defined"):
        updater.replace_method_name("predict", "")
    out = tmp_path / "out"
    out.mkdir()
    updater.save(str(out))
    with tf.Graph().as_default(), tf1.Session() as sess:
        mg = tf1.saved_model.load(sess, ["serve"], str(path))  # the original is unchanged
        assert mg.signature_def["predict"].method_name == "tensorflow/serving/predict"
    shutil.copytree(path / "variables", out / "variables")
    with tf.Graph().as_default(), tf1.Session() as sess:
        mg = tf1.saved_model.load(sess, ["serve"], str(out))
        assert mg.signature_def["predict"].method_name == "tensorflow/serving/regress"
        assert mg.signature_def["regress"].method_name == "custom"
        assert mg.signature_def["classify"].method_name == "tensorflow/serving/classify"


def test_main_op_with_restore_runs_initializers_then_restore(tmp_path):
    with tf.Graph().as_default() as g:
        v = tf1.get_variable("v", initializer=tf.constant(3.0))
        local = tf1.get_variable("local", initializer=tf.constant(1.0),
                                 collections=[tf1.GraphKeys.LOCAL_VARIABLES])
        restore = tf.group(v.assign(v * 2.0), name="restore_all")
        with pytest.raises(TypeError):
            tf1.saved_model.main_op_with_restore("restore_all")  # a name: TF's TypeError too
        op = tf1.saved_model.main_op_with_restore(restore)
        assert op.type == "NoOp" and restore in op.control_inputs
        (main,) = [c for c in op.control_inputs if c is not restore]
        assert main.type == "NoOp" and len(main.control_inputs) == 3
        with tf1.Session(graph=g) as sess:
            sess.run(op)
            assert sess.run(local) == 1.0 and sess.run(v) == 6.0
