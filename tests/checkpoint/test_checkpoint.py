"""`tf.train.Checkpoint` and `CheckpointManager` against TensorFlow 2.21's files
(tests/fixtures/checkpoints/module, written by generate.py)."""

import os
import pathlib
import shutil

import numpy as np
import pytest

import ndflow as tf
from ndflow.checkpoint.tensor_bundle import BundleReader
from ndflow.core import errors

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "checkpoints")
TF_MODULE_CKPT = os.path.join(FIXTURES, "module", "ckpt-1")


class Net(tf.Module):  # the module generate.py saved
    def __init__(self, scale=0.0):
        super().__init__()
        self.w = tf.Variable(np.zeros((2, 2), np.float32), name="w")
        self.layers = [tf.Variable([0.0], name="b0"), tf.Variable([0.0], name="b1")]
        self.config = {"scale": tf.Variable(scale, name="scale")}
        self.step = tf.Variable(0, dtype=tf.int64, name="step")


def _set_fixture_values(net):
    net.w.assign([[1.0, 2.0], [3.0, 4.0]])
    net.layers[0].assign([0.5])
    net.layers[1].assign([1.5])
    net.config["scale"].assign(3.0)
    net.step.assign(5)


def test_restores_tensorflows_checkpoint():
    net = Net()
    ckpt = tf.train.Checkpoint(model=net)
    ckpt.restore(TF_MODULE_CKPT).assert_consumed()
    np.testing.assert_array_equal(net.w.numpy(), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(net.layers[1].numpy(), [1.5])
    assert float(net.config["scale"].numpy()) == 3.0
    assert int(net.step.numpy()) == 5
    assert int(ckpt.save_counter.numpy()) == 1


def test_writes_the_object_graph_and_keys_tensorflow_writes(tmp_path):
    net = Net()
    _set_fixture_values(net)
    path = tf.train.Checkpoint(model=net).save(str(tmp_path / "ckpt"))
    assert path == str(tmp_path / "ckpt-1")
    ours, theirs = BundleReader(path), BundleReader(TF_MODULE_CKPT)
    assert ours.keys() == theirs.keys()
    for key in theirs.keys():  # the object graph proto is byte-identical too
        np.testing.assert_array_equal(ours.read(key), theirs.read(key))
    assert pathlib.Path(tmp_path / "checkpoint").read_text() == \
        pathlib.Path(os.path.join(FIXTURES, "module", "checkpoint")).read_text()


def test_save_numbers_and_latest_checkpoint(tmp_path):
    v = tf.Variable(1.0)
    ckpt = tf.train.Checkpoint(v=v)
    assert ckpt.save(str(tmp_path / "x")).endswith("x-1")
    v.assign(2.0)
    second = ckpt.save(str(tmp_path / "x"))
    assert second.endswith("x-2")
    assert tf.train.latest_checkpoint(str(tmp_path)) == second
    assert ckpt.write(str(tmp_path / "plain")) == str(tmp_path / "plain")
    v.assign(0.0)
    ckpt.restore(str(tmp_path))  # a directory: its latest checkpoint
    assert float(v.numpy()) == 2.0
    ckpt.read(str(tmp_path / "x-1")).assert_consumed()
    assert float(v.numpy()) == 1.0
    assert int(ckpt.save_counter.numpy()) == 1  # restored with the values


def test_later_assigned_attribute_is_saved(tmp_path):
    ckpt = tf.train.Checkpoint()
    ckpt.extra = tf.Variable([7.0])
    path = ckpt.write(str(tmp_path / "a"))
    assert "extra/.ATTRIBUTES/VARIABLE_VALUE" in dict(tf.train.list_variables(path))


def test_checkpoint_of_another_model_names_missing_and_unexpected(tmp_path):
    class Small(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(np.zeros((2, 2), np.float32))
            self.other = tf.Variable([1.0], name="other")

    status = tf.train.Checkpoint(model=Small()).read(TF_MODULE_CKPT)
    # TF checks the program's objects first, then the checkpoint's values
    for check in (status.assert_consumed, status.assert_existing_objects_matched):
        with pytest.raises(AssertionError, match=r"Found 1 Python objects that were not "
                                                 r"bound to checkpointed values.*'other:0'"):
            check()
    status.expect_partial()
    status.assert_nontrivial_match()

    class Smaller(tf.Module):   # every object matched, but the checkpoint holds more
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(np.zeros((2, 2), np.float32))

    status = tf.train.Checkpoint(model=Smaller()).read(TF_MODULE_CKPT)
    status.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match=r"Unresolved object in checkpoint "
                                             r"\(root\)\.model\.step"):
        status.assert_consumed()


def test_shape_mismatch_names_variable_and_shapes():
    class Wrong(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(np.zeros((3,), np.float32), name="w")

    with pytest.raises(ValueError, match=r"Received incompatible tensor with shape \(2, 2\) "
                                         r"when attempting to restore variable with shape "
                                         r"\(3,\) and name w:0"):
        tf.train.Checkpoint(model=Wrong()).read(TF_MODULE_CKPT)


def test_missing_checkpoint_and_restore_none(tmp_path):
    with pytest.raises(errors.NotFoundError, match="missing the checkpoint suffix"):
        tf.train.Checkpoint(v=tf.Variable(1.0)).restore(str(tmp_path / "nothere"))
    status = tf.train.Checkpoint(v=tf.Variable(1.0)).restore(None)
    with pytest.raises(AssertionError):
        status.assert_consumed()
    with pytest.raises(ValueError, match="expecting thing to be a trackable object"):
        tf.train.Checkpoint(thing=3)


def test_corrupted_checkpoint_is_data_loss_naming_the_file(tmp_path):
    shutil.copytree(os.path.join(FIXTURES, "module"), tmp_path / "m")
    index = tmp_path / "m" / "ckpt-1.index"
    data = bytearray(index.read_bytes())
    data[20] ^= 1
    index.write_bytes(bytes(data))
    with pytest.raises(errors.DataLossError, match="ckpt-1.index"):
        tf.train.Checkpoint(model=Net()).restore(str(tmp_path / "m" / "ckpt-1"))
    index.write_bytes(b"")
    with pytest.raises(errors.DataLossError, match="ckpt-1.index"):
        tf.train.load_checkpoint(str(tmp_path / "m"))


def test_tf1_saver_checkpoint_restores_by_variable_name():
    saver_ckpt = os.path.join(FIXTURES, "saver", "model-3")
    kernel = tf.Variable([[0.0, 0.0]], name="dense/kernel")
    tf.train.Checkpoint(v=kernel).restore(saver_ckpt).assert_consumed()
    np.testing.assert_array_equal(kernel.numpy(), [[1.0, 2.0]])
    status = tf.train.Checkpoint(v=tf.Variable([1.0], name="nothere")).restore(saver_ckpt)
    with pytest.raises(AssertionError, match=r"not restored: \n.*'nothere:0'.*\['nothere'\]"):
        status.assert_consumed()


def test_reader_functions_on_tensorflows_files():
    reader = tf.train.load_checkpoint(os.path.join(FIXTURES, "module"))
    assert reader.has_tensor("model/w/.ATTRIBUTES/VARIABLE_VALUE")
    shapes = reader.get_variable_to_shape_map()
    assert shapes["model/w/.ATTRIBUTES/VARIABLE_VALUE"] == [2, 2]
    assert reader.get_variable_to_dtype_map()["model/step/.ATTRIBUTES/VARIABLE_VALUE"] is \
        tf.int64
    assert isinstance(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"), bytes)
    names = [name for name, _ in tf.train.list_variables(TF_MODULE_CKPT)]
    assert names == sorted(names) and len(names) == 7
    saver_dir = os.path.join(FIXTURES, "saver")
    assert tf.train.list_variables(saver_dir) == [("dense/bias", [1]),
                                                  ("dense/kernel", [1, 2]),
                                                  ("global_step", [])]
    np.testing.assert_array_equal(tf.train.load_variable(saver_dir, "dense/kernel:0"),
                                  [[1.0, 2.0]])
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.load_checkpoint(FIXTURES)


def test_manager_keeps_max_to_keep_and_writes_state(tmp_path):
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
    paths = [manager.save() for _ in range(3)]
    assert [os.path.basename(p) for p in paths] == ["ckpt-1", "ckpt-2", "ckpt-3"]
    assert manager.checkpoints == paths[1:]
    assert manager.latest_checkpoint == paths[2]
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-2.data-00000-of-00001",
                                            "ckpt-2.index", "ckpt-3.data-00000-of-00001",
                                            "ckpt-3.index"]
    state = pathlib.Path(tmp_path / "checkpoint").read_text().splitlines()
    assert state[:3] == ['model_checkpoint_path: "ckpt-3"',
                         'all_model_checkpoint_paths: "ckpt-2"',
                         'all_model_checkpoint_paths: "ckpt-3"']
    assert [line.split(":")[0] for line in state[3:]] == \
        ["all_model_checkpoint_timestamps"] * 2 + ["last_preserved_timestamp"]
    assert manager.save(checkpoint_number=10).endswith("ckpt-10")
    again = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
    assert again.checkpoints == [paths[2], str(tmp_path / "ckpt-10")]
    assert int(ckpt.save_counter.numpy()) == 4


def test_manager_keep_every_n_hours_and_interval(tmp_path, monkeypatch):
    import ndflow.checkpoint.checkpoint_manager as cm
    clock = [1000.0]
    monkeypatch.setattr(cm.time, "time", lambda: clock[0])
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=1,
                                         keep_checkpoint_every_n_hours=1)
    for _ in range(3):
        clock[0] += 1900  # ckpt-2 is more than an hour after the last preserved time
        manager.save()
    assert sorted(p for p in os.listdir(tmp_path) if p.endswith(".index")) == \
        ["ckpt-2.index", "ckpt-3.index"]
    step = tf.Variable(0, dtype=tf.int64)
    interval = tf.train.CheckpointManager(ckpt, str(tmp_path / "i"), max_to_keep=None,
                                          step_counter=step, checkpoint_interval=10)
    assert interval.save() is not None
    step.assign(5)
    assert interval.save() is None
    step.assign(10)
    assert interval.save() is not None
    with pytest.raises(ValueError, match="step_counter"):
        tf.train.CheckpointManager(ckpt, str(tmp_path), 1, checkpoint_interval=3)


def test_checkpoints_iterator_and_state_helpers(tmp_path):
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    assert list(tf.train.checkpoints_iterator(str(tmp_path), timeout=0.01)) == []
    path = ckpt.save(str(tmp_path / "c"))
    assert list(tf.train.checkpoints_iterator(str(tmp_path), timeout=0.01)) == [path]
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == path
    assert list(state.all_model_checkpoint_paths) == [path]
    assert tf.compat.v1.train.checkpoint_exists(path)
    tf.compat.v1.train.remove_checkpoint(path)
    assert not tf.compat.v1.train.checkpoint_exists(path)
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    (tmp_path / "checkpoint").write_bytes(b"model_checkpoint_path: \xff")
    with pytest.raises(errors.DataLossError, match="not a checkpoint state file"):
        tf.train.get_checkpoint_state(str(tmp_path))


def test_checkpoint_in_a_tf1_graph_with_a_session(tmp_path):
    v1 = tf.compat.v1
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        ckpt = v1.train.Checkpoint(w=w)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            assert ckpt.save(str(tmp_path / "c"), session=sess).endswith("c-1")
            sess.run(w.assign([5.0, 6.0]))
            latest = ckpt.save(str(tmp_path / "c"))  # the default session
    assert latest.endswith("c-2")
    with tf.Graph().as_default():
        w = tf.Variable([0.0, 0.0], name="w")
        ckpt = v1.train.Checkpoint(w=w)
        status = ckpt.restore(tf.train.latest_checkpoint(str(tmp_path)))
        with v1.Session() as sess:
            status.initialize_or_restore(sess)  # values are assigned in the session
            np.testing.assert_array_equal(sess.run(w), [5.0, 6.0])
            assert sess.run(ckpt.save_counter) == 2
        status.assert_consumed()
        with pytest.raises(ValueError, match="needs a session"):
            ckpt.restore(latest).run_restore_ops()
