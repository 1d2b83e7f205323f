"""`tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer`: scaling, skipped steps
(variables, slots and global_step untouched) eagerly, in tf.function and in Sessions, the
graph it builds (the step in an If op's branch), TF's errors."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import dtypes
from ndflow.core.graph import Graph, GraphKeys
from ndflow.ops import variables
from ndflow.ops.array_core import placeholder
from ndflow.runtime.session import Session
from ndflow.train import loss_scale as ls
from ndflow.train.loss_scale_optimizer import MixedPrecisionLossScaleOptimizer
from ndflow.train.momentum import MomentumOptimizer
from ndflow.train.optimizer import Optimizer

v1 = tf.compat.v1
W0 = np.array([1.0, -2.0, 0.5], np.float32)
C = np.array([0.5, 1.5, -3.0], np.float32)
NAN = float("nan")
FACTORS = [1.0, NAN, 1.0, float("inf"), 1.0, 1.0]   # the loss is multiplied by these


def _adam():
    return v1.train.AdamOptimizer(0.1)


def _reference(factors, make_opt=_adam):
    """Plain (unwrapped) optimizer run only on the finite steps, eagerly: the trajectory
    a skipping wrapper must reproduce bit for bit."""
    w = variables.Variable(W0)
    step = variables.Variable(0, dtype=dtypes.int64)
    opt = make_opt()
    out = []
    for f in factors:
        if np.isfinite(f):
            opt.minimize(lambda f=f: tf.reduce_sum(w * w * C) * 0.5 * f, global_step=step,
                         var_list=[w])
        out.append((w.numpy().copy(), int(step.numpy())))
    return out


def _check(got, factors, scales):
    ref = _reference(factors)
    for (w, step, scale), (w_ref, step_ref), s in zip(got, ref, scales):
        np.testing.assert_array_equal(w, w_ref)
        assert step == step_ref
        assert scale == s


# Dynamic scale 4, period 2: T F T F T T -> 4, 2, 2, 1, 1, 2
SCALES = [4.0, 2.0, 2.0, 1.0, 1.0, 2.0]


def test_skipped_steps_eager():
    w = variables.Variable(W0)
    step = variables.Variable(0, dtype=dtypes.int64)
    opt = MixedPrecisionLossScaleOptimizer(_adam(), ls.DynamicLossScale(4, 2, 2))
    got = []
    for f in FACTORS:
        assert opt.minimize(lambda f=f: tf.reduce_sum(w * w * C) * 0.5 * f,
                            global_step=step, var_list=[w]) is None
        got.append((w.numpy().copy(), int(step.numpy()), float(opt._loss_scale().numpy())))
    _check(got, FACTORS, SCALES)


def test_skipped_steps_tf_function():
    w = variables.Variable(W0)
    step = variables.Variable(0, dtype=dtypes.int64)
    opt = MixedPrecisionLossScaleOptimizer(_adam(), ls.DynamicLossScale(4, 2, 2))

    @tf.function
    def train(f):
        opt.minimize(lambda f=f: tf.reduce_sum(w * w * C) * 0.5 * f, global_step=step,
                     var_list=[w])

    got = []
    for f in FACTORS:
        train(tf.constant(f))
        got.append((w.numpy().copy(), int(step.numpy()), float(opt._loss_scale().numpy())))
    _check(got, FACTORS, SCALES)


def _session_run(factors, make_wrapped):
    g = Graph()
    with g.as_default():
        f = placeholder(dtypes.float32, [])
        w = variables.Variable(W0, name="w")
        step = v1.train.get_or_create_global_step()
        opt = make_wrapped()
        train_op = opt.minimize(tf.reduce_sum(w * w * C) * 0.5 * f, global_step=step)
        slots = opt.variables()
        init = v1.global_variables_initializer()
    got, slot_values = [], []
    with Session(graph=g) as sess:
        sess.run(init)
        for value in factors:
            sess.run(train_op, {f: value})
            got.append((sess.run(w.value()), int(sess.run(step.value())),
                        float(sess.run(opt._loss_scale()))))
            slot_values.append([sess.run(s.value()) for s in slots])
    return g, opt, train_op, got, slot_values


def test_skipped_steps_session_leave_variables_slots_and_global_step():
    g, opt, train_op, got, slot_values = _session_run(
        FACTORS, lambda: MixedPrecisionLossScaleOptimizer(_adam(), ls.DynamicLossScale(4, 2, 2)))
    _check(got, FACTORS, SCALES)
    # slots and Adam's beta powers are untouched by the skipped steps 2 and 4
    for before, after in ((0, 1), (2, 3)):
        for a, b in zip(slot_values[before][:4], slot_values[after][:4]):
            np.testing.assert_array_equal(a, b)
    # graph: group(step, update) named after the optimizer; the wrapped step "Adam-wrapped"
    assert train_op.type == "NoOp" and train_op.name == "Adam"
    names = [op.name for op in g.get_operations()]
    assert "Adam-wrapped" not in names   # it is in the If op's branch, as in TF
    assert [op.name for op in g.get_collection(GraphKeys.TRAIN_OP)] == ["Adam-wrapped"]
    assert sum(op.type == "SelectV2" for op in g.get_operations()) >= 1
    with g.as_default():
        names = [v.name for v in opt.variables()]
    assert names[-2:] == ["current_loss_scale:0", "good_steps:0"]
    assert len(names) == 6    # m, v, beta1_power, beta2_power + the loss scale's two


def test_momentum_slot_rolled_back_in_session():
    factors = [1.0, NAN, 1.0]
    g = Graph()
    with g.as_default():
        f = placeholder(dtypes.float32, [])
        w = variables.Variable(W0, name="w")
        opt = MixedPrecisionLossScaleOptimizer(MomentumOptimizer(0.1, 0.9), "dynamic")
        train_op = opt.minimize(tf.reduce_sum(w * w * C) * 0.5 * f)
        accum = opt._optimizer.get_slot(w, "momentum")
        init = v1.global_variables_initializer()
    with Session(graph=g) as sess:
        sess.run(init)
        seen = []
        for value in factors:
            sess.run(train_op, {f: value})
            seen.append((sess.run(w.value()), sess.run(accum.value())))
    np.testing.assert_array_equal(seen[0][0], seen[1][0])
    np.testing.assert_array_equal(seen[0][1], seen[1][1])
    assert not np.array_equal(seen[1][0], seen[2][0])
    assert np.all(np.isfinite(seen[2][0]))


def test_fixed_scale_delegates_and_scales_gradients():
    g = Graph()
    with g.as_default():
        w = variables.Variable(W0, name="w")
        opt = MixedPrecisionLossScaleOptimizer(v1.train.GradientDescentOptimizer(0.5), 1024)
        loss = tf.reduce_sum(w * w * C) * 0.5
        (grad, var), = opt.compute_gradients(loss)
        train_op = opt.apply_gradients([(grad, var)])
        init = v1.global_variables_initializer()
    assert var is w
    assert train_op.type == "NoOp" and train_op.name == "GradientDescent"
    # the loss is multiplied by the scale, the gradient by its reciprocal
    muls = [op for op in g.get_operations() if op.type == "Mul"]
    assert any(op.inputs[0] is loss for op in muls)
    with Session(graph=g) as sess:
        sess.run(init)
        np.testing.assert_allclose(sess.run(grad), C * W0, rtol=1e-6)
        sess.run(train_op)
        np.testing.assert_allclose(sess.run(w.value()), W0 - 0.5 * C * W0, rtol=1e-6)


def test_fixed_scale_never_skips():
    w = variables.Variable(W0)
    opt = MixedPrecisionLossScaleOptimizer(v1.train.GradientDescentOptimizer(0.1), 8)
    opt.minimize(lambda: tf.reduce_sum(w * w) * NAN, var_list=[w])
    assert np.all(np.isnan(w.numpy()))


def test_callable_loss_and_none_gradients():
    w = variables.Variable(W0)
    unused = variables.Variable(1.0)
    opt = MixedPrecisionLossScaleOptimizer(v1.train.GradientDescentOptimizer(1.0), 4)
    pairs = opt.compute_gradients(lambda: tf.reduce_sum(w * C), var_list=[w, unused])
    np.testing.assert_allclose(pairs[0][0].numpy(), C)
    assert pairs[1][0] is None


def test_errors():
    with pytest.raises(ValueError, match=r'^"opt" must be an instance of Optimizer, but got: '
                                         r"<class 'int'>$"):
        MixedPrecisionLossScaleOptimizer(3, "dynamic")
    keras_opt = tf.keras.optimizers.SGD()
    with pytest.raises(ValueError, match=r'"opt" must be an instance of Optimizer, but got: '
                                         r"<class 'ndflow.keras.optimizers.sgd.SGD'>"):
        MixedPrecisionLossScaleOptimizer(keras_opt, "dynamic")
    with pytest.raises(ValueError, match="^loss_scale cannot be None$"):
        MixedPrecisionLossScaleOptimizer(_adam(), None)
    with pytest.raises(ValueError, match="^Could not interpret loss scale identifier: x$"):
        MixedPrecisionLossScaleOptimizer(_adam(), "x")
    wrapped = MixedPrecisionLossScaleOptimizer(_adam(), 2)
    assert wrapped.get_name() == "Adam" and isinstance(wrapped, Optimizer)
    with pytest.raises(RuntimeError, match="never be called"):
        wrapped._resource_apply_dense(None, None)


def test_exported():
    assert v1.mixed_precision.MixedPrecisionLossScaleOptimizer is \
        MixedPrecisionLossScaleOptimizer
    assert v1.train.experimental.MixedPrecisionLossScaleOptimizer is \
        MixedPrecisionLossScaleOptimizer


def _skip_branch_ops(g) -> list:
    """The ops of the then-branch of the If op whose taken branch runs the wrapped step."""
    ifs = [op for op in g.get_operations() if op.type in ("If", "StatelessIf")]
    assert len(ifs) == 1
    return [op.name for op in ifs[0].attrs["then_branch"].get_operations()]


def test_tf1_graph_skips_the_step_with_an_if_op():
    # TF's construction: group(smart_cond(should_apply, apply_fn, no_op), update, name=name)
    g, _, train_op, got, _ = _session_run(
        FACTORS, lambda: MixedPrecisionLossScaleOptimizer(_adam(), ls.DynamicLossScale(4, 2, 2)))
    _check(got, FACTORS, SCALES)
    assert "Adam-wrapped" in _skip_branch_ops(g)
    assert [op.type for op in g.get_operations()].count("If") == 1
    assert not any(op.type == "If" for op in train_op.control_inputs) and any(
        "If" in [c.op.type for c in op.inputs] for op in train_op.control_inputs)


def test_nvidia_auto_loss_scaling_skips_the_step_with_an_if_op(monkeypatch):
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING", "1")
    g, opt, _, got, _ = _session_run(FACTORS, _adam)
    assert opt.doing_loss_scaling()
    assert [op.type for op in g.get_operations()].count("If") == 1
    assert "Adam" in _skip_branch_ops(g)
    assert [s for _, _, s in got] == [32768.0, 16384.0, 16384.0, 8192.0, 8192.0, 8192.0]
