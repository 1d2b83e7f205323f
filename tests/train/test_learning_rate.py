"""Learning-rate schedules and TF1 decay functions; the global step."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import ndflow  # noqa: F401 - registers ops and kernels
import ndflow as tf
from ndflow.core import context, dtypes
from ndflow.core.graph import Graph, GraphKeys
from ndflow.keras.optimizers import schedule_serialization
from ndflow.ops import variables
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import placeholder
from ndflow.runtime.session import Session
from ndflow.train import learning_rate_schedule as lrs


def f32(x: float) -> float:
    return float(np.float32(x))


def _value(t) -> float:
    return float(t.numpy())


@pytest.mark.parametrize("staircase", [False, True])
def test_exponential_decay_schedule_values(staircase):
    sched = lrs.ExponentialDecay(0.1, 4, 0.5, staircase=staircase)
    for step in [0, 1, 3, 4, 7, 9]:
        p = step // 4 if staircase else step / 4
        expected = np.float32(0.1) * np.float32(0.5) ** np.float32(p)
        got = sched(convert_to_tensor(np.int64(step)))
        assert got.dtype is dtypes.float32
        np.testing.assert_allclose(_value(got), expected, rtol=1e-6)


def test_exponential_decay_in_float64():
    sched = lrs.ExponentialDecay(np.float64(0.1), 3, 0.9)
    got = sched(convert_to_tensor(np.int64(5)))
    assert got.dtype is dtypes.float64
    # as TF: Python hyperparameters are float32 tensors cast to the schedule's dtype
    np.testing.assert_allclose(_value(got), 0.1 * f32(0.9) ** (5 / 3), rtol=1e-14)


def test_piecewise_constant_schedule_values():
    sched = lrs.PiecewiseConstantDecay([2, 5], [1.0, 0.5, 0.1])
    expected = {0: 1.0, 2: 1.0, 3: 0.5, 5: 0.5, 6: 0.1, 100: 0.1}
    for step, value in expected.items():
        np.testing.assert_allclose(_value(sched(convert_to_tensor(np.int64(step)))), value,
                                   rtol=1e-7)
    with pytest.raises(ValueError, match="The length of boundaries should be 1 less"):
        lrs.PiecewiseConstantDecay([1, 2], [1.0, 0.5])


def test_inverse_time_and_polynomial_decay():
    inv = lrs.InverseTimeDecay(np.float64(1.0), 2, 0.5)
    np.testing.assert_allclose(_value(inv(convert_to_tensor(np.int64(3)))), 1 / (1 + 0.5 * 1.5))
    inv_s = lrs.InverseTimeDecay(np.float64(1.0), 2, 0.5, staircase=True)
    np.testing.assert_allclose(_value(inv_s(convert_to_tensor(np.int64(3)))), 1 / 1.5)
    poly = lrs.PolynomialDecay(np.float64(1.0), 10, 0.1, power=2.0)
    for step in (0, 5, 10, 20):
        p = min(step, 10) / 10
        np.testing.assert_allclose(_value(poly(convert_to_tensor(np.int64(step)))),
                                   (1 - f32(0.1)) * (1 - p) ** 2 + f32(0.1),
                                   rtol=1e-14)


def test_schedules_validate_and_serialize():
    with pytest.raises(ValueError, match="Argument `decay_steps` must be > 0"):
        lrs.ExponentialDecay(0.1, 0, 0.5)
    sched = lrs.ExponentialDecay(0.1, 10, 0.5, staircase=True)
    config = schedule_serialization.serialize(sched)
    assert config == {"module": "keras.optimizers.schedules", "class_name": "ExponentialDecay",
                      "config": {"initial_learning_rate": 0.1, "decay_steps": 10,
                                 "decay_rate": 0.5, "staircase": True,
                                 "name": "ExponentialDecay"},
                      "registered_name": None}
    again = schedule_serialization.deserialize(config)
    assert isinstance(again, lrs.ExponentialDecay) and again.get_config() == sched.get_config()
    with pytest.raises(ValueError, match="Unknown learning rate schedule"):
        schedule_serialization.deserialize({"class_name": "Nope", "config": {}})
    with pytest.raises(NotImplementedError):
        lrs.LearningRateSchedule()(1)


@pytest.mark.parametrize("staircase", [False, True])
def test_tf1_exponential_decay_in_a_graph(staircase):
    g = Graph()
    with g.as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        lr = tf.compat.v1.train.exponential_decay(0.1, step, 3, 0.5, staircase=staircase)
        assert lr.dtype is dtypes.float32 and lr.shape.rank == 0
        value = placeholder(dtypes.int64, [])
        set_step = step.assign(value)
        init = variables.global_variables_initializer()
    with Session(graph=g) as sess:
        sess.run(init)
        for s in [0, 1, 2, 3, 5, 6, 10]:
            sess.run(set_step, feed_dict={value: s})
            p = s // 3 if staircase else s / 3
            np.testing.assert_allclose(sess.run(lr), 0.1 * 0.5 ** p, rtol=1e-6)


def test_tf1_decay_eagerly_returns_a_callable_bound_to_the_step():
    step = variables.Variable(np.int64(0), trainable=False, name="global_step")
    lr = tf.compat.v1.train.exponential_decay(0.1, step, 2, 0.5, staircase=True)
    assert isinstance(lr, functools.partial)
    np.testing.assert_allclose(_value(lr()), 0.1, rtol=1e-7)
    step.assign(np.int64(4))
    np.testing.assert_allclose(_value(lr()), 0.025, rtol=1e-7)
    pw = tf.compat.v1.train.piecewise_constant(step, [1, 3], [1.0, 0.5, 0.1])
    np.testing.assert_allclose(_value(pw()), 0.1, rtol=1e-7)
    with pytest.raises(ValueError, match="The length of boundaries should be 1 less"):
        tf.compat.v1.train.piecewise_constant(step, [1, 3], [1.0, 0.5])


def test_decayed_learning_rate_drives_an_optimizer():
    g = Graph()
    with g.as_default():
        w = variables.Variable(np.array([1.0]), name="w")
        step = tf.compat.v1.train.get_or_create_global_step()
        lr = tf.compat.v1.train.exponential_decay(0.5, step, 1, 0.5, staircase=True)
        op = tf.compat.v1.train.GradientDescentOptimizer(lr).minimize(
            variables.Variable(np.array([0.0]), name="unused").read_value() * 0.0 + w * 1.0,
            global_step=step, var_list=[w])
        init = variables.global_variables_initializer()
    with Session(graph=g) as sess:
        sess.run(init)
        for _ in range(3):
            sess.run(op)
        # lr is read before the increment: 0.5, 0.25, 0.125 (float32, cast to float64)
        expected = 1.0 - sum(float(np.float32(0.5 * 0.5 ** k)) for k in range(3))
        np.testing.assert_allclose(sess.run(w), [expected], rtol=1e-12)
        assert sess.run(step) == 3


def test_global_step_in_a_graph():
    g = Graph()
    with g.as_default():
        assert tf.compat.v1.train.get_global_step() is None
        step = tf.compat.v1.train.get_or_create_global_step()
        assert tf.compat.v1.train.get_or_create_global_step() is step
        assert tf.compat.v1.train.get_global_step(g) is step
        assert step.name == "global_step:0" and step.dtype is dtypes.int64
        assert step.shape.rank == 0 and not step.trainable
        assert g.get_collection(GraphKeys.GLOBAL_STEP) == [step]
        assert step in g.get_collection(GraphKeys.GLOBAL_VARIABLES)
        assert step not in g.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        with pytest.raises(ValueError, match='"global_step" already exists.'):
            tf.compat.v1.train.create_global_step()
        init = variables.global_variables_initializer()
    with Session(graph=g) as sess:
        sess.run(init)
        assert tf.compat.v1.train.global_step(sess, step) == 0


def test_global_step_is_created_at_the_root_scope():
    g = Graph()
    with g.as_default(), g.name_scope("model"):
        assert tf.compat.v1.train.get_or_create_global_step().name == "global_step:0"


def test_a_float_global_step_is_rejected():
    g = Graph()
    with g.as_default():
        variables.Variable(1.5, name="global_step")
        with pytest.raises(TypeError, match='Existing "global_step" does not have integer '
                                            'type'):
            tf.compat.v1.train.get_global_step()


def test_global_step_eagerly_is_one_variable():
    assert context.executing_eagerly()
    step = tf.compat.v1.train.get_or_create_global_step()
    assert tf.compat.v1.train.get_or_create_global_step() is step
    assert step.dtype is dtypes.int64 and int(step.numpy()) >= 0


_DECAYS = {"exponential_decay": (0.5,), "natural_exp_decay": (0.5,),
           "inverse_time_decay": (0.5,), "polynomial_decay": (), "cosine_decay": (),
           "cosine_decay_restarts": (), "linear_cosine_decay": (),
           "noisy_linear_cosine_decay": ()}


@pytest.mark.parametrize("name", sorted(_DECAYS))
def test_tf1_decay_of_a_none_step_fails_as_converting_none(name):
    # TF 2.21 (legacy_learning_rate_decay.py has no None check): eagerly the callable comes
    # back and raises ValueError "Attempt to convert a value (None) with an unsupported type
    # (<class 'NoneType'>) to a Tensor." when called; in a graph, ValueError "None values not
    # supported." at once:
    #   tf.compat.v1.train.<name>(0.1, None, 10, *extra)
    decay = getattr(tf.compat.v1.train, name)
    lr = decay(0.1, None, 10, *_DECAYS[name])
    with pytest.raises(ValueError, match=r"^Attempt to convert a value \(None\) with an "
                                         r"unsupported type \(<class 'NoneType'>\) to a "
                                         r"Tensor.$"):
        lr()
    with Graph().as_default():
        with pytest.raises(ValueError, match=r"^None values not supported.$"):
            decay(0.1, None, 10, *_DECAYS[name])
