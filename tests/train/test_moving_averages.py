"""tf.train.ExponentialMovingAverage against a NumPy float64 recurrence, its shadow-variable
names/collections as TensorFlow 2.21 creates them, and the evaluation path of the CIFAR-10
tutorial: checkpoint the averages, restore them into the model via variables_to_restore."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1


def _ema_reference(values, decay, num_updates=None):
    """shadow_t = d * shadow_{t-1} + (1 - d) * value_t in float64, d = min(decay, (1+n)/(10+n))."""
    shadow = np.asarray(values[0], np.float64)
    out = []
    for t, v in enumerate(values[1:]):
        d = decay if num_updates is None else min(decay, (1.0 + num_updates[t]) /
                                                  (10.0 + num_updates[t]))
        shadow = d * shadow + (1 - d) * np.asarray(v, np.float64)
        out.append(shadow)
    return out


def test_graph_apply_with_num_updates_matches_numpy():
    rng = np.random.RandomState(0)
    deltas = rng.randn(6, 4)
    with tf.Graph().as_default():
        w = tf.Variable(np.arange(4.0, dtype=np.float32), name="w")
        step = v1.train.get_or_create_global_step()
        ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step)
        update = ema.apply([w])
        delta = v1.placeholder(tf.float32, [4])
        train = tf.group(w.assign_add(delta), step.assign_add(1))
        values, steps, got = [np.arange(4.0)], [], []
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(ema.average(w)), np.arange(4.0))
            for d in deltas:
                sess.run(train, {delta: d})
                values.append(sess.run(w))
                steps.append(sess.run(step))
                sess.run(update)
                got.append(sess.run(ema.average(w)))
    np.testing.assert_allclose(got, _ema_reference(values, 0.9, steps), rtol=1e-6, atol=1e-6)


def test_shadow_names_collections_and_update_op_as_tensorflow():
    with tf.Graph().as_default() as g:
        with v1.variable_scope("conv1"):
            w = v1.get_variable("weights", [2], initializer=v1.zeros_initializer())
        other = tf.Variable(1.0, trainable=False, name="other")
        ema = tf.train.ExponentialMovingAverage(0.99)
        assert ema.average_name(w) == "conv1/weights/ExponentialMovingAverage"
        op = ema.apply()
        avg = ema.average(w)
        assert op.name == "ExponentialMovingAverage"
        assert avg.name == "conv1/weights/ExponentialMovingAverage:0"
        assert not avg.trainable and avg not in v1.trainable_variables()
        assert avg in v1.global_variables()
        assert g.get_collection(v1.GraphKeys.MOVING_AVERAGE_VARIABLES) == [w]
        assert ema.average(other) is None
        assert ema.variables_to_restore() == {
            "conv1/weights/ExponentialMovingAverage": w, "other": other}
        assert ema.variables_to_restore([]) == {
            "conv1/weights": w, "other": other,
            "conv1/weights/ExponentialMovingAverage": avg}


def test_shadow_starts_at_current_value_when_variable_already_initialized():
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0])
        with v1.Session() as sess:
            sess.run(w.initializer)
            sess.run(w.assign([7.0, 8.0]))
            ema = tf.train.ExponentialMovingAverage(0.5)
            ema.apply([w])
            sess.run(ema.average(w).initializer)
            np.testing.assert_array_equal(sess.run(ema.average(w)), [7.0, 8.0])


def test_tensor_averages_with_zero_debias():
    """Loss averages (the tutorial's `avg` EMA of tensors): zero-started, and with
    zero_debias the estimate divided by 1 - decay**t."""
    values = [3.0, 5.0, 4.0]
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [])
        loss = tf.identity(x, name="loss")
        plain = tf.train.ExponentialMovingAverage(0.9, name="avg")
        debiased = tf.train.ExponentialMovingAverage(0.9, zero_debias=True, name="dbg")
        ops = [plain.apply([loss]), debiased.apply([loss])]
        assert plain.average(loss).name == "loss/avg:0"
        assert {v.name for v in v1.global_variables()} >= {"loss/dbg/biased:0",
                                                          "loss/dbg/local_step:0"}
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            got = []
            for v in values:
                sess.run(ops, {x: v})
                got.append(sess.run([plain.average(loss), debiased.average(loss)]))
    want_plain = _ema_reference([0.0] + values, 0.9)
    want_debiased = [b / (1 - 0.9 ** (t + 1)) for t, b in enumerate(want_plain)]
    np.testing.assert_allclose(np.array(got), np.stack([want_plain, want_debiased], 1),
                               rtol=1e-6)


def test_eager_and_tf_function_apply():
    w = tf.Variable([1.0, 2.0])
    ema = tf.train.ExponentialMovingAverage(0.75)
    assert ema.apply([w]) is None
    np.testing.assert_array_equal(ema.average(w).numpy(), [1.0, 2.0])
    w.assign([5.0, 6.0])
    ema.apply([w])
    np.testing.assert_allclose(ema.average(w).numpy(), [2.0, 3.0])

    @tf.function
    def step():
        w.assign_add([4.0, 4.0])
        ema.apply([w])

    step()
    step()
    np.testing.assert_allclose(ema.average(w).numpy(),
                               _ema_reference([[2.0, 3.0], [9.0, 10.0], [13.0, 14.0]],
                                              0.75)[-1], rtol=1e-6)
    u = tf.Variable(1.0)  # same eager name as w: its shadow gets the `_1` suffix, as TF's
    ema.apply([u])
    assert ema.average(u).name == "Variable/ExponentialMovingAverage_1:0"


def test_bad_input_types():
    ema = tf.train.ExponentialMovingAverage(0.9)
    with pytest.raises(TypeError, match="half, float, or double"):
        ema.apply([tf.Variable(1)])
    with pytest.raises(TypeError, match="non-Variable tensors"):
        ema.apply([tf.constant(1.0)])


def test_checkpoint_round_trip_restores_averages_into_the_model(tmp_path):
    """Train with an EMA, save every variable; a fresh graph restores the averages into the
    model's variables through variables_to_restore (as cifar10_eval does)."""
    prefix = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        with v1.variable_scope("local3"):
            w = v1.get_variable("weights", [3], initializer=v1.ones_initializer())
        step = v1.train.get_or_create_global_step()
        ema = tf.train.ExponentialMovingAverage(0.5, num_updates=step)
        with tf.control_dependencies([w.assign_add([1.0, 2.0, 3.0]), step.assign_add(1)]):
            train = ema.apply([w])
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            want_avg, want_raw = sess.run([ema.average(w), w])
            path = v1.train.Saver().save(sess, prefix, global_step=3)
    assert not np.allclose(want_avg, want_raw)
    with tf.Graph().as_default():
        with v1.variable_scope("local3"):
            w = v1.get_variable("weights", [3], initializer=v1.zeros_initializer())
        v1.train.get_or_create_global_step()
        restore = tf.train.ExponentialMovingAverage(0.5).variables_to_restore()
        assert set(restore) == {"local3/weights/ExponentialMovingAverage", "global_step"}
        with v1.Session() as sess:
            v1.train.Saver(restore).restore(sess, path)
            np.testing.assert_allclose(sess.run(w), want_avg)


FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "ema_checkpoint"


def _fixture_graph():
    """The graph of fixtures/ema_checkpoint/generate.py (TensorFlow 2.21 wrote the fixture)."""
    with v1.variable_scope("local3"):
        w = v1.get_variable("weights", [3], initializer=v1.constant_initializer([1.0, -2.0, 0.5]))
    step = v1.train.get_or_create_global_step()
    loss = tf.reduce_sum(tf.square(w), name="total_loss")
    loss_avg = tf.train.ExponentialMovingAverage(0.9, name="avg")
    ema = tf.train.ExponentialMovingAverage(0.99, num_updates=step)
    with tf.control_dependencies([loss_avg.apply([loss])]):
        update = w.assign_sub(0.1 * w)
    with tf.control_dependencies([update, step.assign_add(1)]):
        train = ema.apply([w])
    return w, ema, train


def test_same_values_and_restore_names_as_tensorflow_and_reads_its_checkpoint():
    expected = json.loads((FIXTURE / "expected.json").read_text())
    with tf.Graph().as_default():
        w, ema, train = _fixture_graph()
        assert sorted(ema.variables_to_restore()) == expected["variables_to_restore"]
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            for _ in range(4):
                sess.run(train)
            got = {v.op.name: sess.run(v) for v in v1.global_variables()}
    assert got.keys() == expected["values"].keys()
    for name, value in expected["values"].items():
        np.testing.assert_allclose(got[name], value, rtol=1e-6, err_msg=name)
    with tf.Graph().as_default():  # evaluation: TF's averages restored into the weights
        with v1.variable_scope("local3"):
            w = v1.get_variable("weights", [3])
        saver = v1.train.Saver(tf.train.ExponentialMovingAverage(0.99).variables_to_restore())
        with v1.Session() as sess:
            saver.restore(sess, str(FIXTURE / "ckpt" / "model.ckpt-4"))
            np.testing.assert_allclose(
                sess.run(w), expected["values"]["local3/weights/ExponentialMovingAverage"])
