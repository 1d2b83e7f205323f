"""TF1 optimizers in `tf.train.Checkpoint`: non-slot variables by name and slot variables
under `<variable>/.OPTIMIZER_SLOT/<optimizer>/<slot>`, against TensorFlow 2.21's file
(tests/fixtures/checkpoints/tf1_optimizer, generate.py beside)."""

import os

import numpy as np

import ndflow as tf
from ndflow.checkpoint.tensor_bundle import BundleReader

TF_ADAM_CKPT = os.path.join(os.path.dirname(__file__), "..", "fixtures", "checkpoints",
                            "tf1_optimizer", "adam")
SLOT_M = "model/w/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE"


def _holder(w):
    holder = tf.Module()
    holder.w = w
    return holder


def test_writes_slots_as_tensorflow(tmp_path):
    w = tf.Variable([1.0, 2.0], name="w")
    adam = tf.compat.v1.train.AdamOptimizer(0.1)
    adam.minimize(lambda: tf.reduce_sum(w * w), var_list=[w])
    path = tf.train.Checkpoint(model=_holder(w), optimizer=adam).write(str(tmp_path / "adam"))
    ours, theirs = BundleReader(path), BundleReader(TF_ADAM_CKPT)
    assert ours.keys() == theirs.keys()
    assert ours.read("_CHECKPOINTABLE_OBJECT_GRAPH") == \
        theirs.read("_CHECKPOINTABLE_OBJECT_GRAPH")
    for key in ours.keys()[1:]:
        np.testing.assert_allclose(ours.read(key), theirs.read(key), rtol=1e-5)


def test_restores_tensorflows_slots_when_the_optimizer_creates_them():
    saved_m = tf.train.load_variable(TF_ADAM_CKPT, SLOT_M)
    w = tf.Variable([0.0, 0.0], name="w")
    adam = tf.compat.v1.train.AdamOptimizer(0.1)
    status = tf.train.Checkpoint(model=_holder(w), optimizer=adam).restore(TF_ADAM_CKPT)
    np.testing.assert_allclose(w.numpy(), [0.9, 1.9], rtol=1e-6)
    adam.apply_gradients([(tf.zeros([2]), w)])  # creates the slots: restored, then updated
    status.assert_consumed()
    np.testing.assert_allclose(adam.get_slot(w, "m").numpy(), 0.9 * saved_m, rtol=1e-6)
    beta1_power = adam._get_non_slot_variable("beta1_power")
    np.testing.assert_allclose(beta1_power.numpy(), 0.81 * 0.9, rtol=1e-5)
