"""The checkpoints of TF's "Migrate checkpoint saving" guide, written by TensorFlow 2.21
(tests/fixtures/migrate_guides): TF1 Saver checkpoints restored name-based in eager mode and
by tf.train.Checkpoint, a TF2 checkpoint saved in a Session restored in one, and the key
order TF's CheckpointReader lists (its C++ unordered_map's)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import ndflow as tf
from ndflow.checkpoint.unordered_key_order import string_hash, unordered_map_order

tf1 = tf.compat.v1
FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "migrate_guides")


def _path(name):
    return os.path.join(FIXTURE, name)


def _key_sets():
    with open(_path("key_order.json")) as f:
        return json.load(f)


def test_tf1_checkpoint_lists_keys_in_tensorflows_order():
    reader = tf.train.load_checkpoint(_path("tf1-ckpt"))
    assert list(reader.get_variable_to_shape_map()) == ["scoped/c", "b", "a"]
    assert list(reader.get_variable_to_dtype_map()) == ["scoped/c", "b", "a"]
    assert [float(reader.get_tensor(k)) for k in ("a", "b", "scoped/c")] == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("index", range(7))
def test_written_checkpoint_lists_keys_as_tensorflow_does(tmp_path, index):
    expected = _key_sets()[index]
    variables = {k: tf.Variable(1.0) for k in expected}
    path = tf1.train.Saver(variables).save(None, str(tmp_path / "ckpt"), write_state=False)
    reader = tf.train.load_checkpoint(path)
    assert list(reader.get_variable_to_shape_map()) == expected
    assert list(reader.get_variable_to_dtype_map()) == expected
    assert unordered_map_order(sorted(expected)) == expected


def test_string_hash_is_libstdcxx_murmur():
    # _Hash_bytes of "" is the seed mixed; distinct short keys differ
    assert string_hash(b"") == string_hash(b"")
    assert len({string_hash(k.encode()) for k in ("a", "b", "ab", "ba", "a" * 8, "a" * 9)}) == 6
    # the bucket of each of three keys is distinct under 13 buckets: TF lists them reversed
    assert unordered_map_order(["a", "b", "scoped/c"]) == ["scoped/c", "b", "a"]


def test_tf1_checkpoint_restores_in_eager_by_name():
    a = tf.Variable(0.0, name="a")
    b = tf.Variable(0.0, name="b")
    with tf.name_scope("scoped"):
        c = tf.Variable(0.0, name="c")
    tf1.train.Saver(var_list=[a, b, c]).restore(sess=None, save_path=_path("tf1-ckpt"))
    assert [a.numpy(), b.numpy(), c.numpy()] == [1.0, 2.0, 3.0]
    # and with the object-based API, matched by variable names
    d = tf.Variable(0.0, name="scoped/c")
    tf.train.Checkpoint(variables=[d]).restore(_path("tf1-ckpt"))
    assert d.numpy() == 3.0


def test_tf1_checkpoint_restores_into_new_scope_with_saver_dict():
    with tf1.variable_scope("new_scope"):
        a = tf1.get_variable("a", shape=[], initializer=tf1.zeros_initializer())
        c = tf1.get_variable("scoped/c", shape=[], initializer=tf1.zeros_initializer())
    tf1.train.Saver({"a": a, "scoped/c": c}).restore(sess=None, save_path=_path("tf1-ckpt"))
    assert [a.numpy(), c.numpy()] == [1.0, 3.0]


def test_tf2_checkpoint_saved_in_session_restores_in_session():
    with tf.Graph().as_default():
        a = tf1.get_variable("a", shape=[], initializer=tf1.constant_initializer(0))
        b = tf1.get_variable("b", shape=[], initializer=tf1.constant_initializer(0))
        with tf1.variable_scope("scoped"):
            c = tf1.get_variable("c", shape=[], initializer=tf1.constant_initializer(0))
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            ckpt = tf.train.Checkpoint(
                var_list={v.name.split(":")[0]: v for v in tf1.global_variables()})
            ckpt.restore(_path("tf2-ckpt-saved-in-session-1")).run_restore_ops()
            np.testing.assert_array_equal(sess.run([a, b, c]), [1.0, 2.0, 3.0])


def test_eager_saver_logs_tensorflows_deprecation(capsys, tmp_path):
    v = tf.Variable(1.0, name="v")
    tf1.train.Saver([v])
    assert ("WARNING:tensorflow:Saver is deprecated, please switch to tf.train.Checkpoint or "
            "tf.keras.Model.save_weights for training checkpoints. When executing eagerly "
            "variables do not necessarily have unique names, and so the variable.name-based "
            "lookups Saver performs are error-prone.\n") in capsys.readouterr().err
    with tf.Graph().as_default():   # a graph Saver does not warn
        tf1.get_variable("w", shape=[])
        tf1.train.Saver()
    assert "Saver is deprecated" not in capsys.readouterr().err
