"""`tf.compat.v1.train.Saver` against TensorFlow 2.21's TF1 checkpoint
(tests/fixtures/checkpoints/saver: dense/kernel, dense/bias, global_step=3, with .meta)."""

import os
import pathlib

import numpy as np
import pytest
from tensorboard.compat.proto import meta_graph_pb2, variable_pb2

import ndflow as tf
from ndflow.checkpoint.tensor_bundle import BundleReader
from ndflow.core import errors

TF_SAVER_CKPT = os.path.join(os.path.dirname(__file__), "..", "fixtures", "checkpoints",
                             "saver", "model-3")
v1 = tf.compat.v1


def _graph(kernel=((0.0, 0.0),), bias=0.0):
    kernel_var = v1.get_variable("dense/kernel", initializer=[list(r) for r in kernel])
    bias = v1.get_variable("dense/bias", initializer=[bias])
    return kernel_var, bias, v1.train.get_or_create_global_step()


def test_restores_tensorflows_tf1_checkpoint():
    with tf.Graph().as_default():
        kernel, bias, step = _graph()
        saver = v1.train.Saver()
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            saver.restore(sess, TF_SAVER_CKPT)
            got = sess.run([kernel, bias, step])
    np.testing.assert_array_equal(got[0], [[1.0, 2.0]])
    np.testing.assert_array_equal(got[1], [0.25])
    assert got[2] == 3


def test_save_writes_tf_keys_meta_graph_and_state(tmp_path):
    with tf.Graph().as_default():
        kernel, _, step = _graph(((1.0, 2.0),), 0.25)
        saver = v1.train.Saver(max_to_keep=2)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            paths = []
            for i in range(3):
                sess.run(step.assign(i + 1))
                paths.append(saver.save(sess, str(tmp_path / "model"), global_step=step))
            sess.run(kernel.assign([[0.0, 0.0]]))
            saver.restore(sess, paths[-1])
            np.testing.assert_array_equal(sess.run(kernel), [[1.0, 2.0]])
    assert paths[-1] == str(tmp_path / "model-3")
    assert saver.last_checkpoints == paths[1:]
    assert not os.path.exists(paths[0] + ".index")
    assert not os.path.exists(paths[0] + ".meta")
    ours, theirs = BundleReader(paths[-1]), BundleReader(TF_SAVER_CKPT)
    assert ours.keys() == theirs.keys() == ["dense/bias", "dense/kernel", "global_step"]
    for key in ours.keys():
        np.testing.assert_array_equal(ours.read(key), theirs.read(key))
    state = pathlib.Path(tmp_path / "checkpoint").read_text()
    assert state == (f'model_checkpoint_path: "{paths[2]}"\n'
                     f'all_model_checkpoint_paths: "{paths[1]}"\n'
                     f'all_model_checkpoint_paths: "{paths[2]}"\n')
    meta = meta_graph_pb2.MetaGraphDef.FromString(pathlib.Path(paths[-1] + ".meta").read_bytes())
    assert {"dense/kernel", "dense/bias", "global_step"} <= {n.name for n in meta.graph_def.node}
    names = [variable_pb2.VariableDef.FromString(b).variable_name
             for b in meta.collection_def["variables"].bytes_list.value]
    assert names == ["dense/kernel:0", "dense/bias:0", "global_step:0"]


def test_eager_saver_needs_var_list(tmp_path):
    with pytest.raises(RuntimeError, match="var_list"):
        v1.train.Saver()
    v = tf.Variable([3.0], name="v")
    saver = v1.train.Saver([v])
    path = saver.save(None, str(tmp_path / "e"))
    v.assign([0.0])
    saver.restore(None, path)
    np.testing.assert_array_equal(v.numpy(), [3.0])
    assert tf.train.list_variables(path) == [("v", [1])]


def test_bad_restores_are_typed_errors(tmp_path):
    with tf.Graph().as_default():
        v1.get_variable("dense/kernel", initializer=[[1.0, 2.0, 3.0]])  # wrong shape
        v1.get_variable("other", initializer=[1.0])
        with v1.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError,
                               match=r"Shape of variable dense/kernel \(\(1, 3\)\) doesn't "
                                     r"match the shape \[1, 2\]"):
                v1.train.Saver({"dense/kernel": v1.global_variables()[0]}).restore(
                    sess, TF_SAVER_CKPT)
            with pytest.raises(errors.NotFoundError, match="Key other not found in checkpoint"):
                v1.train.Saver({"other": v1.global_variables()[1]}).restore(sess,
                                                                           TF_SAVER_CKPT)
            with pytest.raises(ValueError, match="not a valid checkpoint"):
                v1.train.Saver().restore(sess, str(tmp_path / "missing"))
            with pytest.raises(ValueError, match="Parent directory of"):
                v1.train.Saver().save(sess, str(tmp_path / "no" / "dir" / "m"))
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="No variables to save"):
            v1.train.Saver()


def test_import_meta_graph_of_tensorflows_saver_and_its_ops(tmp_path):
    meta_file = TF_SAVER_CKPT + ".meta"
    saver_def = meta_graph_pb2.MetaGraphDef.FromString(
        pathlib.Path(meta_file).read_bytes()).saver_def
    with tf.Graph().as_default():
        saver = v1.train.import_meta_graph(meta_file)
        assert [v.name for v in v1.trainable_variables()] == ["dense/kernel:0", "dense/bias:0"]
        with v1.Session() as sess:
            saver.restore(sess, TF_SAVER_CKPT)
            assert sess.run(v1.global_variables())[2] == 3
            # TensorFlow's own save/restore ops (SaveV2, RestoreV2) run here too
            sess.run(saver_def.save_tensor_name,
                     {saver_def.filename_tensor_name: str(tmp_path / "again")})
            sess.run(v1.global_variables()[0].assign([[0.0, 0.0]]))
            sess.run(saver_def.restore_op_name,
                     {saver_def.filename_tensor_name: str(tmp_path / "again")})
            np.testing.assert_array_equal(sess.run(v1.global_variables()[0]), [[1.0, 2.0]])
    assert tf.train.list_variables(str(tmp_path / "again")) == \
        tf.train.list_variables(TF_SAVER_CKPT)


def test_import_meta_graph_of_ndflows_saver(tmp_path):
    with tf.Graph().as_default():
        _graph(((4.0, 5.0),))
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            path = v1.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default() as graph:
        saver = v1.train.import_meta_graph(path + ".meta")
        with v1.Session() as sess:
            saver.restore(sess, path)
            kernel = graph.get_tensor_by_name("dense/kernel/Read/ReadVariableOp:0")
            np.testing.assert_array_equal(sess.run(kernel), [[4.0, 5.0]])


def test_save_makes_a_missing_directory(tmp_path):
    """TF's SaveV2 kernel makes the checkpoint's directory when its parent exists (a deeper
    missing path is Saver.save's ValueError, test_bad_restores_are_typed_errors)."""
    v = tf.Variable(3.0, name="v")
    saver = v1.train.Saver(var_list=[v])
    path = saver.save(None, str(tmp_path / "new" / "model.ckpt"), global_step=2)
    assert sorted(os.listdir(tmp_path / "new")) == [
        "checkpoint", "model.ckpt-2.data-00000-of-00001", "model.ckpt-2.index"]
    v.assign(0.0)
    saver.restore(None, path)
    assert float(v.numpy()) == 3.0
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="Parent directory of .* doesn't exist, can't save"):
        saver.save(None, str(tmp_path / "file" / "model.ckpt"))
