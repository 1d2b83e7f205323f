"""TF1 optimizers (`tf.compat.v1.train.*Optimizer`): updates, slots, global step, errors."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow  # noqa: F401 - registers ops and kernels
import ndflow as tf
from ndflow.core import dtypes
from ndflow.core.graph import Graph, GraphKeys
from ndflow.core.tensor import EagerTensor
from ndflow.ops import variables
from ndflow.ops.array_core import placeholder
from ndflow.runtime.function import function
from ndflow.runtime.session import Session
from tests.train import reference as R

W0 = np.array([1.0, -2.0, 0.5])
C = np.array([0.5, 1.5, -3.0])   # loss = 0.5 * sum(C * w^2)  ->  grad = C * w
STEPS = 4


def f32(x: float) -> float:
    """A Python float as TF sees it after converting to a float32 tensor."""
    return float(np.float32(x))


def _loss(w):
    return tf.reduce_sum(w * w * C) * 0.5


def _ref_states(kind: str, steps: int = STEPS, **kw):
    """NumPy trajectory of `w` (float64) for each optimizer, TF's float32 hyperparameters."""
    w = W0.copy()
    lr = f32(kw.get("lr", 0.1))
    if kind == "gd":
        for _ in range(steps):
            w = R.gradient_descent(w, lr, C * w)
    elif kind in ("momentum", "nesterov"):
        a = np.zeros(3)
        for _ in range(steps):
            w, a = R.momentum(w, a, lr, C * w, f32(0.9), kind == "nesterov")
    elif kind == "adam":
        m, v = np.zeros(3), np.zeros(3)
        b1p, b2p = np.float32(0.9), np.float32(0.999)   # float32 non-slot variables
        for _ in range(steps):
            w, m, v = R.adam(w, m, v, float(b1p), float(b2p), lr, f32(0.9), f32(0.999),
                             f32(1e-8), C * w)
            b1p, b2p = b1p * np.float32(0.9), b2p * np.float32(0.999)
    elif kind == "rmsprop":
        ms, mom = np.ones(3), np.zeros(3)
        for _ in range(steps):
            w, ms, mom = R.rms_prop(w, ms, mom, lr, f32(0.9), f32(0.5), f32(1e-10), C * w)
    elif kind == "centered":
        mg, ms, mom = np.zeros(3), np.ones(3), np.zeros(3)
        for _ in range(steps):
            w, mg, ms, mom = R.centered_rms_prop(w, mg, ms, mom, lr, f32(0.9), f32(0.5),
                                                 f32(1e-10), C * w)
    return w


OPTIMIZERS = {
    "gd": lambda: tf.compat.v1.train.GradientDescentOptimizer(0.1),
    "momentum": lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "adam": lambda: tf.compat.v1.train.AdamOptimizer(0.1),
    "rmsprop": lambda: tf.compat.v1.train.RMSPropOptimizer(0.1, momentum=0.5),
    "centered": lambda: tf.compat.v1.train.RMSPropOptimizer(0.1, momentum=0.5, centered=True),
}


@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_graph_minimize_matches_reference(kind):
    g = Graph()
    with g.as_default():
        w = variables.Variable(W0, name="w")
        step = tf.compat.v1.train.get_or_create_global_step()
        train_op = OPTIMIZERS[kind]().minimize(_loss(w), global_step=step)
        init = variables.global_variables_initializer()
    with Session(graph=g) as sess:
        sess.run(init)
        for i in range(STEPS):
            sess.run(train_op)
            assert sess.run(step) == i + 1
        np.testing.assert_allclose(sess.run(w), _ref_states(kind), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_eager_minimize_matches_reference(kind):
    w = variables.Variable(W0, name="w")
    step = variables.Variable(np.int64(0), trainable=False, name="step")
    opt = OPTIMIZERS[kind]()
    for _ in range(STEPS):
        assert opt.minimize(lambda: _loss(w), global_step=step) is None
    np.testing.assert_allclose(w.numpy(), _ref_states(kind), rtol=1e-12, atol=1e-12)
    assert int(step.numpy()) == STEPS


def test_train_op_graph_is_tensorflows():
    g = Graph()
    with g.as_default():
        with g.name_scope("layer"):
            w = variables.Variable(W0, name="w")
        b = variables.Variable(np.float64(3.0), name="Variable")
        loss = _loss(w) + b * b
        step = tf.compat.v1.train.get_or_create_global_step()
        opt = tf.compat.v1.train.AdamOptimizer(0.1)
        train_op = opt.minimize(loss, global_step=step)
        assert (train_op.name, train_op.type) == ("Adam", "AssignAddVariableOp")
        assert [c.name for c in train_op.control_inputs] == ["Adam/update"]
        update = g.get_operation_by_name("Adam/update")
        assert update.type == "NoOp"
        names = sorted(c.name for c in update.control_inputs)
        assert "Adam/update_layer/w/ResourceApplyAdam" in names
        assert "Adam/update_Variable/ResourceApplyAdam" in names
        assert [v.name for v in variables.global_variables()] == [
            "layer/w:0", "Variable:0", "global_step:0", "beta1_power:0", "beta2_power:0",
            "layer/w/Adam:0", "layer/w/Adam_1:0", "Variable/Adam:0", "Variable/Adam_1:0"]
        assert opt.get_slot_names() == ["m", "v"]
        assert opt.get_slot(w, "m").name == "layer/w/Adam:0"
        assert opt.get_slot(w, "v").name == "layer/w/Adam_1:0"
        assert opt.get_slot(w, "nope") is None
        assert [v.name for v in opt.variables()] == [
            "Variable/Adam:0", "Variable/Adam_1:0", "beta1_power:0", "beta2_power:0",
            "layer/w/Adam:0", "layer/w/Adam_1:0"]
        assert train_op in g.get_collection(GraphKeys.TRAIN_OP)
        # slots are not trainable
        assert [v.name for v in variables.trainable_variables()] == ["layer/w:0", "Variable:0"]

        mom = tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)
        op2 = mom.minimize(loss, name="mom")
        assert (op2.name, op2.type) == ("mom", "NoOp")
        assert sorted(c.name for c in op2.control_inputs) == [
            "mom/update_Variable/ResourceApplyMomentum",
            "mom/update_layer/w/ResourceApplyMomentum"]
        assert mom.get_slot(b, "momentum").name == "Variable/Momentum:0"

        rms = tf.compat.v1.train.RMSPropOptimizer(0.1, centered=True)
        rms.minimize(loss)
        assert rms.get_slot_names() == ["mg", "momentum", "rms"]
        assert rms.get_slot(w, "rms").name == "layer/w/RMSProp:0"
        assert rms.get_slot(w, "mg").name == "layer/w/RMSProp_1:0"
        assert rms.get_slot(w, "momentum").name == "layer/w/RMSProp_2:0"


def test_slots_are_created_once_and_rms_starts_at_one():
    g = Graph()
    with g.as_default():
        w = variables.Variable(W0, name="w")
        opt = tf.compat.v1.train.RMSPropOptimizer(0.1)
        op1 = opt.minimize(_loss(w))
        op2 = opt.minimize(_loss(w))
        assert len(opt.variables()) == 2
        init = variables.global_variables_initializer()
    with Session(graph=g) as sess:
        sess.run(init)
        np.testing.assert_array_equal(sess.run(opt.get_slot(w, "rms")), np.ones(3))
        sess.run(op1)
        sess.run(op2)  # the second train op shares the first one's slots
        w_ref, ms, mom = W0, np.ones(3), np.zeros(3)
        for _ in range(2):
            w_ref, ms, mom = R.rms_prop(w_ref, ms, mom, f32(0.1), f32(0.9), 0.0, f32(1e-10),
                                        C * w_ref)
        np.testing.assert_allclose(sess.run(w), w_ref, rtol=1e-12)


def test_learning_rate_tensor_and_callable():
    g = Graph()
    with g.as_default():
        w = variables.Variable(W0, name="w")
        lr = placeholder(dtypes.float32, [], name="lr")
        op = tf.compat.v1.train.GradientDescentOptimizer(lr).minimize(_loss(w))
        init = variables.global_variables_initializer()
    with Session(graph=g) as sess:
        sess.run(init)
        sess.run(op, feed_dict={lr: 0.5})
        sess.run(op, feed_dict={lr: 0.25})
        expected = R.gradient_descent(W0, 0.5, C * W0)
        expected = R.gradient_descent(expected, 0.25, C * expected)
        np.testing.assert_allclose(sess.run(w), expected, rtol=1e-12)
    # eagerly, a callable learning rate is called on every step
    w = variables.Variable(W0, name="w")
    rates = iter([0.5, 0.25])
    opt = tf.compat.v1.train.GradientDescentOptimizer(lambda: next(rates))
    opt.minimize(lambda: _loss(w))
    opt.minimize(lambda: _loss(w))
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-12)


def test_compute_gradients_pairs_and_unconnected_variables():
    g = Graph()
    with g.as_default():
        w = variables.Variable(W0, name="w")
        unused = variables.Variable(W0, name="unused")
        pairs = tf.compat.v1.train.GradientDescentOptimizer(0.1).compute_gradients(_loss(w))
        assert [v for _, v in pairs] == [w, unused]  # trainable variables collection
        assert pairs[0][0] is not None and pairs[1][0] is None
        init = variables.global_variables_initializer()
    with Session(graph=g) as sess:
        sess.run(init)
        np.testing.assert_allclose(sess.run(pairs[0][0]), C * W0)


def test_no_gradients_errors():
    g = Graph()
    with g.as_default():
        w = variables.Variable(W0, name="w")
        other = variables.Variable(W0, name="other")
        opt = tf.compat.v1.train.GradientDescentOptimizer(0.1)
        with pytest.raises(ValueError, match="No gradients provided for any variable, check "
                                             "your graph for ops that do not support"):
            opt.minimize(_loss(w), var_list=[other])
        with pytest.raises(ValueError, match="No variables provided."):
            opt.apply_gradients([])
        with pytest.raises(ValueError, match=r"No gradients provided for any variable: \["):
            opt.apply_gradients([(None, w)])
        with pytest.raises(TypeError, match="not a tf.Variable"):
            opt.apply_gradients([(_loss(w), _loss(w))])
    empty = Graph()
    with empty.as_default():
        x = placeholder(dtypes.float32, [])
        with pytest.raises(ValueError, match="No variables to optimize."):
            tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(x * x)


def test_eager_requires_callable_loss():
    w = variables.Variable(W0, name="w")
    with pytest.raises(RuntimeError, match="should be a function when eager execution"):
        tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(_loss(w))


def test_integer_loss_is_rejected():
    g = Graph()
    with g.as_default():
        variables.Variable(W0, name="w")
        x = placeholder(dtypes.int32, [])
        with pytest.raises(ValueError, match="Invalid type"):
            tf.compat.v1.train.GradientDescentOptimizer(0.1).compute_gradients(x)


def test_optimizer_requires_a_name():
    with pytest.raises(ValueError, match="Must specify the optimizer name"):
        tf.compat.v1.train.GradientDescentOptimizer(0.1, name="")


def test_adam_beta_powers_are_float32_non_slot_variables():
    w = variables.Variable(W0, name="w")
    opt = tf.compat.v1.train.AdamOptimizer(0.1)
    opt.minimize(lambda: _loss(w))
    opt.minimize(lambda: _loss(w))
    b1p, b2p = opt._get_beta_accumulators()
    assert b1p.dtype is dtypes.float32 and b1p.name == "beta1_power:0"
    assert float(b1p.numpy()) == float(np.float32(0.9) ** 3)
    assert float(b2p.numpy()) == float(np.float32(np.float32(0.999) ** 2) * np.float32(0.999))
    assert [v.name for v in opt.variables()] == ["beta1_power:0", "beta2_power:0", "w/Adam:0",
                                                 "w/Adam_1:0"]


def test_tf1_optimizer_inside_tf_function():
    w = variables.Variable(W0, name="w")
    opt = tf.compat.v1.train.AdamOptimizer(0.1)

    @function
    def step():
        opt.minimize(lambda: _loss(w))
        return w.read_value()

    for _ in range(STEPS):
        step()
    # the first trace made the slots, so (TF's rule) a second one, creating none, runs
    assert step.experimental_get_tracing_count() == 2
    np.testing.assert_allclose(w.numpy(), _ref_states("adam"), rtol=1e-12, atol=1e-12)
    # slots and beta powers were created outside the function, as eager variables
    assert [v.name for v in opt.variables()] == ["beta1_power:0", "beta2_power:0", "w/Adam:0",
                                                 "w/Adam_1:0"]
    assert all(isinstance(v.handle, EagerTensor) for v in opt.variables())
