"""tf.train.Checkpoint attributes assigned after a restore get their checkpointed values
(an object, or an item appended to a list, which becomes TF's ListWrapper), and a restore
that leaves checkpointed values unused logs TF's warnings when it goes away unless
`expect_partial()` was called (TF 2.21's behaviour and text)."""

from __future__ import annotations

import gc
import logging

import numpy as np

import ndflow as tf

WARNING = ("Detecting that an object or model or tf.train.Checkpoint is being deleted with "
           "unrestored values.")


def _saved(tmp_path):
    v = tf.Variable([1.0, 2.0, 3.0])
    layer = tf.train.Checkpoint(kernel=v, bias=tf.Variable(4.0))
    return tf.train.Checkpoint(net=tf.train.Checkpoint(l1=layer)).save(str(tmp_path / "c"))


def test_attribute_assigned_after_restore_is_restored(tmp_path):
    path = _saved(tmp_path)
    layer = tf.train.Checkpoint()
    status = tf.train.Checkpoint(net=tf.train.Checkpoint(l1=layer)).restore(path)
    kernel = tf.Variable(tf.zeros([3]))
    layer.kernel = kernel
    np.testing.assert_array_equal(kernel.numpy(), [1.0, 2.0, 3.0])
    bias = tf.Variable(0.0)
    layer.bias = bias
    assert bias.numpy() == 4.0
    status.assert_consumed()


def test_list_attribute_is_a_list_wrapper_that_restores_appended_items(tmp_path):
    save = tf.train.Checkpoint()
    save.listed = [tf.Variable(1.0)]
    save.listed.append(tf.Variable(2.0))
    path = save.save(str(tmp_path / "l"))
    restore = tf.train.Checkpoint()
    restore.restore(path)
    restore.listed = []
    assert repr(restore.listed) == "ListWrapper([])"
    assert restore.listed == [] and isinstance(restore.listed, list)
    v1, v2 = tf.Variable(0.0), tf.Variable(0.0)
    restore.listed.append(v1)
    assert v1.numpy() == 1.0
    restore.listed.extend([v2])
    assert v2.numpy() == 2.0


def test_unused_checkpoint_values_are_logged(tmp_path, caplog):
    path = _saved(tmp_path)
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        layer = tf.train.Checkpoint(kernel=tf.Variable(tf.zeros([3])))
        tf.train.Checkpoint(net=tf.train.Checkpoint(l1=layer)).restore(path)
        assert not caplog.records   # the layer may still get its bias
        del layer
        gc.collect()
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith(WARNING)
    assert messages[1:] == ["Value in checkpoint could not be found in the restored object: "
                            "(root).net.l1.bias"]


def test_expect_partial_and_a_full_match_log_nothing(tmp_path, caplog):
    path = _saved(tmp_path)
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        tf.train.Checkpoint(net=tf.train.Checkpoint(l1=tf.train.Checkpoint())).restore(
            path).expect_partial()
        layer = tf.train.Checkpoint(kernel=tf.Variable(tf.zeros([3])), bias=tf.Variable(0.))
        tf.train.Checkpoint(net=tf.train.Checkpoint(l1=layer)).restore(path)
        gc.collect()
    assert not caplog.records
