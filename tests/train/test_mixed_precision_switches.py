"""The switches: enable/disable_mixed_precision_graph_rewrite (wrapping, options, TF's errors,
config unchanged on error, Keras policy interplay) and NVIDIA's automatic loss scaling in
tf.train.Optimizer from TF_ENABLE_AUTO_MIXED_PRECISION[_LOSS_SCALING]."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import dtypes, optimizer_options
from ndflow.core.graph import Graph
from ndflow.keras.mixed_precision import LossScaleOptimizer, set_global_policy
from ndflow.keras.mixed_precision import policy as policy_module
from ndflow.ops import variables
from ndflow.ops.array_core import placeholder
from ndflow.runtime.session import Session
from ndflow.train import loss_scale as ls
from ndflow.train import mixed_precision as mp
from ndflow.train.loss_scale_optimizer import MixedPrecisionLossScaleOptimizer

v1 = tf.compat.v1
AMP_VARS = ("TF_ENABLE_AUTO_MIXED_PRECISION", "TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING",
            "TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE")


@pytest.fixture(autouse=True)
def _clean_state(monkeypatch):
    for name in AMP_VARS:
        monkeypatch.delenv(name, raising=False)
    optimizer_options.reset()
    saved_policy = policy_module._global_policy
    set_global_policy("float32")
    yield
    optimizer_options.reset()
    set_global_policy("float32")
    policy_module._global_policy = saved_policy   # unset again: the policy follows floatx


def _state():
    return (optimizer_options.get_experimental_options(),
            optimizer_options.mixed_precision_graph_rewrite_enabled(),
            mp.is_using_mixed_precision_policy())


def test_enable_wraps_a_tf1_optimizer_and_turns_the_rewrite_on():
    opt = v1.train.GradientDescentOptimizer(1.0)
    wrapped = v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)
    assert isinstance(wrapped, MixedPrecisionLossScaleOptimizer)
    assert wrapped._optimizer is opt
    assert isinstance(wrapped._loss_scale, ls.DynamicLossScale)
    assert wrapped._loss_scale.initial_loss_scale == 2 ** 15
    assert optimizer_options.get_experimental_options()["auto_mixed_precision"] is True
    assert optimizer_options.rewriter_toggle("auto_mixed_precision") is True
    assert mp.is_mixed_precision_graph_rewrite_enabled()


@pytest.mark.parametrize("loss_scale,kind,value", [
    (128, ls.FixedLossScale, 128.0), (2.5, ls.FixedLossScale, 2.5),
    ("dynamic", ls.DynamicLossScale, 32768.0)])
def test_enable_loss_scale_argument(loss_scale, kind, value):
    wrapped = v1.train.experimental.enable_mixed_precision_graph_rewrite(
        v1.train.AdamOptimizer(), loss_scale=loss_scale)
    assert isinstance(wrapped._loss_scale, kind)
    assert float(wrapped._loss_scale().numpy()) == value


def test_enable_wraps_a_keras_optimizer():
    inner = tf.keras.optimizers.SGD(0.1)
    wrapped = v1.mixed_precision.enable_mixed_precision_graph_rewrite(inner)
    assert isinstance(wrapped, LossScaleOptimizer) and wrapped.inner_optimizer is inner
    assert wrapped.dynamic and wrapped.initial_scale == 2 ** 15
    fixed = mp.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(), 64)
    assert not fixed.dynamic and fixed.initial_scale == 64.0
    fixed = mp.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(),
                                                    ls.FixedLossScale(8))
    assert not fixed.dynamic and fixed.initial_scale == 8.0
    dyn = mp.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD(),
                                                  ls.DynamicLossScale(16, 100))
    assert dyn.dynamic and dyn.initial_scale == 16.0 and dyn.dynamic_growth_steps == 100


def _expect_unchanged(fn, exc, message):
    before = _state()
    with pytest.raises(exc, match=message):
        fn()
    assert _state() == before


def test_errors_leave_the_config_unchanged():
    _expect_unchanged(lambda: mp.enable_mixed_precision_graph_rewrite(3), ValueError,
                      r'^"opt" must be an instance of a tf.train.Optimizer or a '
                      r"tf.keras.optimizers.Optimizer, but got: 3$")
    wrapped = MixedPrecisionLossScaleOptimizer(v1.train.AdamOptimizer(), "dynamic")
    _expect_unchanged(lambda: mp.enable_mixed_precision_graph_rewrite(wrapped), ValueError,
                      r'^"opt" must not already be an instance of a '
                      r"MixedPrecisionLossScaleOptimizer. `enable_mixed_precision_graph_"
                      r"rewrite` will automatically wrap the optimizer with a "
                      r"MixedPrecisionLossScaleOptimizer.$")
    keras_wrapped = LossScaleOptimizer(tf.keras.optimizers.SGD())
    _expect_unchanged(lambda: mp.enable_mixed_precision_graph_rewrite(keras_wrapped),
                      ValueError, r'^"opt" must not already be an instance of a '
                      r"LossScaleOptimizer. ")
    _expect_unchanged(lambda: mp.enable_mixed_precision_graph_rewrite(
        v1.train.AdamOptimizer(), loss_scale="bad"), ValueError,
        "^Could not interpret loss scale identifier: bad$")
    _expect_unchanged(lambda: mp.enable_mixed_precision_graph_rewrite(
        v1.train.AdamOptimizer(), loss_scale=None), ValueError, "^loss_scale cannot be None$")
    _expect_unchanged(lambda: mp.enable_mixed_precision_graph_rewrite(
        tf.keras.optimizers.SGD(), ls.DynamicLossScale(4, 2, 3)), ValueError,
        'DynamicLossScale.multiplier must be 2')
    _expect_unchanged(lambda: mp.enable_mixed_precision_graph_rewrite(
        tf.keras.optimizers.SGD(), "nope"), ValueError,
        "^Invalid value passed to loss_scale. loss_scale must be the string")
    assert optimizer_options.rewriter_toggle("auto_mixed_precision") is None


def test_errors_keep_an_enabled_config_enabled():
    mp.enable_mixed_precision_graph_rewrite(v1.train.AdamOptimizer())
    _expect_unchanged(lambda: mp.enable_mixed_precision_graph_rewrite("x"), ValueError,
                      '"opt" must be an instance')
    assert mp.is_mixed_precision_graph_rewrite_enabled()


def test_keras_mixed_policy_blocks_enable():
    set_global_policy("mixed_float16")
    assert mp.is_using_mixed_precision_policy()
    message = ("The mixed precision graph rewrite cannot be enabled, because the global Keras "
               "dtype Policy has been set to a mixed precision policy. At most, one of the "
               "following can be called:\n\n  1. tf.keras.mixed_precision.set_global_policy() "
               "with a mixed precision policy (You called this first)\n\n  2. tf.train."
               "experimental.enable_mixed_precision_graph_rewrite() (You called this second)\n"
               "You called both functions")
    before = _state()
    with pytest.raises(ValueError) as info:
        mp.enable_mixed_precision_graph_rewrite(v1.train.AdamOptimizer())
    assert str(info.value).startswith(message)
    assert _state() == before
    set_global_policy("float32")          # a non-mixed policy lifts the block
    assert not mp.is_using_mixed_precision_policy()
    mp.enable_mixed_precision_graph_rewrite(v1.train.AdamOptimizer())


def test_enabled_rewrite_blocks_a_mixed_keras_policy():
    mp.enable_mixed_precision_graph_rewrite(v1.train.AdamOptimizer())
    with pytest.raises(ValueError, match='^The global dtype policy cannot be set to '
                                         '"mixed_bfloat16", because the mixed precision graph '
                                         'rewrite has already been enabled.\n'):
        set_global_policy("mixed_bfloat16")
    assert tf.keras.mixed_precision.global_policy().name == "float32"
    set_global_policy("float64")           # not mixed: allowed
    mp.disable_mixed_precision_graph_rewrite()
    set_global_policy("mixed_bfloat16")


def test_disable(capfd):
    wrapped = mp.enable_mixed_precision_graph_rewrite(v1.train.AdamOptimizer())
    v1.mixed_precision.disable_mixed_precision_graph_rewrite()
    assert optimizer_options.get_experimental_options()["auto_mixed_precision"] is False
    assert not mp.is_mixed_precision_graph_rewrite_enabled()
    assert isinstance(wrapped._loss_scale, ls.DynamicLossScale)   # loss scaling stays
    assert "already disabled" not in capfd.readouterr().err
    v1.train.experimental.disable_mixed_precision_graph_rewrite()
    assert ("disable_mixed_precision_graph_rewrite() called when mixed precision is already "
            "disabled.") in capfd.readouterr().err


# -- NVIDIA's automatic loss scaling ------------------------------------------------------------

@pytest.mark.parametrize("env,expected", [
    ({}, False),
    ({"TF_ENABLE_AUTO_MIXED_PRECISION": "1"}, True),
    ({"TF_ENABLE_AUTO_MIXED_PRECISION": "0"}, False),
    ({"TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING": "1"}, True),
    ({"TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING": "0",
      "TF_ENABLE_AUTO_MIXED_PRECISION": "1"}, False),          # the specific switch wins
    ({"TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING": "1",
      "TF_ENABLE_AUTO_MIXED_PRECISION": "0"}, True),
    ({"TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE": "1"}, False),   # rewrite only
])
def test_env_precedence(monkeypatch, env, expected):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    opt = v1.train.MomentumOptimizer(0.1, 0.9)
    assert opt.doing_loss_scaling() is expected
    if expected:
        assert isinstance(opt._loss_scale, ls.DynamicLossScale)
        assert opt._loss_scale.initial_loss_scale == 2 ** 15


def test_env_malformed_value_is_an_error(monkeypatch):
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING", "maybe")
    with pytest.raises(ValueError, match="TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING"):
        v1.train.GradientDescentOptimizer(0.1)


def test_wrapper_does_not_add_automatic_scaling(monkeypatch):
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION", "1")
    wrapped = MixedPrecisionLossScaleOptimizer(v1.train.GradientDescentOptimizer(0.1), 4)
    assert isinstance(wrapped._loss_scale, ls.FixedLossScale)


def test_env_loss_scaling_skips_non_finite_steps_in_a_session(monkeypatch):
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION", "1")
    w0 = np.array([1.0, -2.0], np.float32)
    g = Graph()
    with g.as_default():
        f = placeholder(dtypes.float32, [])
        w = variables.Variable(w0, name="w")
        step = v1.train.get_or_create_global_step()
        opt = v1.train.GradientDescentOptimizer(0.5)
        loss = tf.reduce_sum(w * w) * f
        pairs = opt.compute_gradients(loss)
        train_op = opt.apply_gradients(pairs, global_step=step)
        init = v1.global_variables_initializer()
    assert train_op.type == "NoOp"
    muls = [op for op in g.get_operations() if op.type == "Mul"]
    assert any(op.inputs[0] is loss for op in muls)        # the loss is scaled
    with Session(graph=g) as sess:
        sess.run(init)
        np.testing.assert_allclose(sess.run(pairs[0][0], {f: 1.0}), 2 * w0)   # unscaled
        sess.run(train_op, {f: float("nan")})
        np.testing.assert_array_equal(sess.run(w.value()), w0)
        assert sess.run(step.value()) == 0
        assert sess.run(opt._loss_scale()) == 2 ** 14
        sess.run(train_op, {f: 1.0})
        np.testing.assert_allclose(sess.run(w.value()), w0 - 0.5 * 2 * w0)
        assert sess.run(step.value()) == 1


def test_env_loss_scaling_eager(monkeypatch):
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING", "1")
    w = variables.Variable([1.0, 2.0])
    step = variables.Variable(0, dtype=dtypes.int64)
    opt = v1.train.AdamOptimizer(0.1)
    opt.minimize(lambda: tf.reduce_sum(w * w) * float("inf"), global_step=step,
                 var_list=[w])
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    assert int(step.numpy()) == 0 and float(opt._loss_scale().numpy()) == 2 ** 14
    opt.minimize(lambda: tf.reduce_sum(w * w), global_step=step, var_list=[w])
    np.testing.assert_allclose(w.numpy(), [0.9, 1.9], rtol=1e-6)
    assert int(step.numpy()) == 1


def test_enable_warns_about_existing_sessions_without_mixed_precision(capfd):
    with Graph().as_default():
        Session().close()  # created while the rewrite is off
    mp.enable_mixed_precision_graph_rewrite(tf.compat.v1.train.GradientDescentOptimizer(0.1))
    assert "You already have existing Sessions that do not use mixed precision" in \
        capfd.readouterr().err


def test_enable_is_quiet_when_no_session_exists(capfd):
    mp.enable_mixed_precision_graph_rewrite(tf.compat.v1.train.GradientDescentOptimizer(0.1))
    with Graph().as_default():
        Session().close()  # created while the rewrite is on: no warning later either
    mp.enable_mixed_precision_graph_rewrite(tf.compat.v1.train.GradientDescentOptimizer(0.1))
    assert "existing Sessions" not in capfd.readouterr().err


def test_switch_is_exported_where_tf1_and_nvidia_users_call_it():
    for ns in (tf.train.experimental, tf.compat.v1.train.experimental,
               tf.compat.v1.mixed_precision):
        assert ns.enable_mixed_precision_graph_rewrite is mp.enable_mixed_precision_graph_rewrite
        assert ns.disable_mixed_precision_graph_rewrite is \
            mp.disable_mixed_precision_graph_rewrite
