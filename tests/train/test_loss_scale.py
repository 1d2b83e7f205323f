"""TF1 loss scales: every sequence of amp.md section 5 case 10 (and the rest of TF's
loss_scale_test.py) eagerly, inside tf.function and in a Session graph; state, errors, get."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import dtypes
from ndflow.core.graph import Graph, GraphKeys
from ndflow.ops.array_core import placeholder
from ndflow.runtime.session import Session
from ndflow.train import loss_scale as ls

F32_MAX = float(np.finfo(np.float32).max)
T, F = True, False

# (inputs, expected scales after each update, initial scale, increment period, multiplier)
SEQUENCES = {
    "increase": ([T] * 6, [1, 2, 2, 4, 4, 8], 1, 2, 2),
    "decrease_every_step": ([F] * 6, [512, 256, 128, 64, 32, 16], 1024, 2, 2),
    "decrease_until_one": ([F] * 6, [8, 4, 2, 1, 1, 1], 16, 2, 2),
    "nan_clears_good_steps": ([T, T, T, F, T], [1, 2, 2, 1, 1], 1, 2, 2),
    "multiplier_3": ([T, T, F, T, T], [4, 12, 4, 4, 12], 4, 2, 3),
    "capped_at_float32_max": ([T] * 6, [F32_MAX / 4, F32_MAX / 2, F32_MAX / 2, F32_MAX,
                                        F32_MAX, F32_MAX], F32_MAX / 4, 2, 2),
    "random_mix": ([F, T, T, T, F, T, F, T, T, T, F], [2, 2, 4, 4, 2, 2, 1, 1, 2, 2, 1],
                   4, 2, 2),
    "period_1": ([T] * 3 + [F, T, T], [2, 4, 8, 4, 8, 16], 1, 1, 2),
    "alternating_period_1": ([T, F] * 4 + [T], [2, 1, 2, 1, 2, 1, 2, 1, 2], 1, 1, 2),
    "alternating_period_2": ([T, F] * 3 + [T], [32, 16, 16, 8, 8, 4, 4], 32, 2, 2),
}


def _grad(ok: bool, bad=float("nan")):
    return np.array([1.0, 2.0], np.float32) if ok else np.array([1.0, bad], np.float32)


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_sequence_eager(name):
    inputs, expected, init, period, mult = SEQUENCES[name]
    scale = ls.DynamicLossScale(init, period, mult)
    got = []
    for ok in inputs:
        update_op, should_apply = scale.update([tf.constant(_grad(ok)), None])
        assert update_op is None
        assert bool(should_apply.numpy()) is ok
        got.append(float(scale().numpy()))
    assert got == [float(np.float32(e)) for e in expected]


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_sequence_tf_function(name):
    inputs, expected, init, period, mult = SEQUENCES[name]
    scale = ls.DynamicLossScale(init, period, mult)

    @tf.function
    def update(g):
        _, should_apply = scale.update([g])
        return should_apply

    got = []
    for i, ok in enumerate(inputs):
        # alternate NaN and Inf so both non-finite kinds are exercised
        g = tf.constant(_grad(ok, float("inf") if i % 2 else float("nan")))
        assert bool(update(g).numpy()) is ok
        got.append(float(scale().numpy()))
    assert got == [float(np.float32(e)) for e in expected]


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_sequence_session(name):
    inputs, expected, init, period, mult = SEQUENCES[name]
    g = Graph()
    with g.as_default():
        grad = placeholder(dtypes.float32, [2])
        scale = ls.DynamicLossScale(init, period, mult)
        update_op, should_apply = scale.update([grad, None])
        current = scale()
        init_op = tf.compat.v1.global_variables_initializer()
    assert update_op.type == "NoOp"
    with Session(graph=g) as sess:
        sess.run(init_op)
        got = []
        for ok in inputs:
            _, applied = sess.run([update_op, should_apply], {grad: _grad(ok)})
            assert bool(applied) is ok
            got.append(float(sess.run(current)))
    assert got == [float(np.float32(e)) for e in expected]


def test_state_variables_are_tf_s():
    g = Graph()
    with g.as_default():
        scale = ls.DynamicLossScale()
        assert [v.name for v in scale.weights()] == ["current_loss_scale:0", "good_steps:0"]
        assert [v.dtype for v in scale.weights()] == [dtypes.float32, dtypes.int64]
        assert not g.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        assert len(g.get_collection(GraphKeys.GLOBAL_VARIABLES)) == 2
    eager = ls.DynamicLossScale()
    assert eager().dtype is dtypes.float32 and float(eager().numpy()) == 32768.0
    assert int(eager._num_good_steps.numpy()) == 0
    assert (eager.initial_loss_scale, eager.increment_period, eager.multiplier) == \
        (32768.0, 2000, 2.0)


def test_counter_counts_and_resets():
    scale = ls.DynamicLossScale(8, 3, 2)
    good = tf.constant(_grad(True))
    bad = tf.constant(_grad(False))
    counts = []
    for g in (good, good, good, good, bad, good):
        scale.update(g)                     # a single tensor is accepted (nest.flatten)
        counts.append(int(scale._num_good_steps.numpy()))
    assert counts == [1, 2, 0, 1, 0, 1]


def test_all_none_and_empty_gradients_are_finite():
    scale = ls.DynamicLossScale(4, 2, 2)
    _, ok = scale.update([None])
    assert bool(ok.numpy())
    _, ok = scale.update([])
    assert bool(ok.numpy())
    assert float(scale().numpy()) == 8.0


def test_nested_gradients_are_flattened():
    scale = ls.DynamicLossScale(4, 100, 2)
    _, ok = scale.update({"a": [tf.constant(1.0)], "b": (tf.constant(float("inf")),)})
    assert not bool(ok.numpy())
    assert float(scale().numpy()) == 2.0


def test_repr_and_config():
    scale = ls.DynamicLossScale(initial_loss_scale=1, increment_period=2, multiplier=3)
    assert repr(scale) == ("DynamicLossScale(current_loss_scale=1.0, num_good_steps=0, "
                           "initial_loss_scale=1.0, increment_period=2, multiplier=3.0)")
    config = scale.get_config()
    assert config == {"initial_loss_scale": 1.0, "increment_period": 2, "multiplier": 3.0}
    clone = ls.DynamicLossScale.from_config(config)
    assert float(clone().numpy()) == 1.0 and clone.multiplier == 3.0
    with Graph().as_default():
        assert repr(ls.DynamicLossScale(4)) == ("DynamicLossScale(initial_loss_scale=4.0, "
                                                "increment_period=2000, multiplier=2.0)")


def test_fixed_loss_scale():
    scale = ls.FixedLossScale(128)
    assert repr(scale) == "FixedLossScale(128.0)"
    value = scale()
    assert value.dtype is dtypes.float32 and float(value.numpy()) == 128.0
    _, should_apply = scale.update([tf.constant(float("nan"))])
    assert should_apply is True
    assert float(scale().numpy()) == 128.0
    assert scale.get_config() == {"loss_scale_value": 128.0}
    with Graph().as_default():
        op, ok = ls.FixedLossScale(2).update([])
        assert op.type == "NoOp" and ok is True


@pytest.mark.parametrize("bad,message", [
    ("8", "loss_scale_value must be a Python int or float."),
    ([1], "loss_scale_value must be a Python int or float."),
    (None, "loss_scale_value must be a Python int or float."),
    (0.5, "loss_scale_value must be at least 1."),
    (0, "loss_scale_value must be at least 1."),
])
def test_fixed_loss_scale_errors(bad, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        ls.FixedLossScale(bad)


def test_get():
    assert ls.get(None) is None
    fixed = ls.get(4)
    assert isinstance(fixed, ls.FixedLossScale) and float(fixed().numpy()) == 4.0
    assert isinstance(ls.get(2.5), ls.FixedLossScale)
    assert repr(ls.get(True)) == "FixedLossScale(1.0)"       # TF: bools are ints
    dynamic = ls.get("dynamic")
    assert isinstance(dynamic, ls.DynamicLossScale) and dynamic.initial_loss_scale == 2 ** 15
    assert ls.get(dynamic) is dynamic
    for bad in ("foo", [1], "Dynamic"):
        with pytest.raises(ValueError, match="^Could not interpret loss scale identifier: "):
            ls.get(bad)
    with pytest.raises(ValueError, match=r"identifier: \[1\]$"):
        ls.get([1])


def test_loss_scale_is_abstract():
    with pytest.raises(TypeError):
        ls.LossScale()


def test_public_names():
    v1 = tf.compat.v1
    for ns in (v1.mixed_precision, v1.train.experimental):
        assert ns.DynamicLossScale is ls.DynamicLossScale
        assert ns.FixedLossScale is ls.FixedLossScale
        assert ns.LossScale is ls.LossScale
    assert v1.mixed_precision.experimental.DynamicLossScale is ls.DynamicLossScale
