"""Remapper: a momentum update of an L2-regularized weight becomes one pass over memory.

`ResourceApplyMomentum` / `ResourceApplyKerasMomentum` whose gradient is `AddN(g, Mul(
ReadVariableOp(var), s))` becomes `_ResourceApplyMomentumWithDecay` (numba on float32 CPU
variables, ATen otherwise). Checked: the rewrite happens (and not when something else writes
the variable), one step equals the NumPy float64 formulas, and several steps equal the
unfused graph bit for bit for TF's and Keras' forms, plain and Nesterov, on both kernel paths.
"""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.passes.pass_config import PassConfig
from ndflow.passes.pass_context import PassContext
from ndflow.passes.pipeline import run_pipeline
from ndflow.runtime.config_proto import ConfigProto, RewriterConfig

v1 = tf.compat.v1
LR, MU, DECAY = 0.1, 0.9, 0.05


def _session_graph(nesterov: bool, dtype=np.float32, other_writer: bool = False):
    rng = np.random.default_rng(3)
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(rng.normal(size=(16, 40)).astype(dtype))
        w = tf.Variable(rng.normal(size=(40, 30)).astype(dtype), name="w")
        loss = tf.reduce_sum(tf.square(tf.matmul(x, w))) * 0.01 + DECAY * tf.nn.l2_loss(w)
        opt = v1.train.MomentumOptimizer(LR, MU, use_nesterov=nesterov)
        train = opt.minimize(loss, var_list=[w])
        if other_writer:
            train = tf.group(train, w.assign_add(tf.zeros_like(w)))
        init = v1.global_variables_initializer()
    return g, w, train, init, x


def _train(g, w, train, init, remapping: bool, steps: int = 3):
    cfg = ConfigProto()
    cfg.graph_options.rewrite_options.remapping = (RewriterConfig.ON if remapping
                                                   else RewriterConfig.OFF)
    with v1.Session(graph=g, config=cfg) as sess:
        sess.run(init)
        w0 = sess.run(w)
        for _ in range(steps):
            sess.run(train)
        return w0, sess.run(w)


def _fused_ops(g, train) -> list:
    g2, _ = run_pipeline(g, PassContext(fetches=[], feeds=[], targets=[train.name],
                                        config=PassConfig()))
    return [op for op in g2.get_operations() if op.type == "_ResourceApplyMomentumWithDecay"]


@pytest.mark.parametrize("nesterov", [False, True])
def test_session_update_is_fused_and_equals_the_unfused_one(nesterov, kernel_path):
    g, w, train, init, _ = _session_graph(nesterov)
    fused = _fused_ops(g, train)
    assert len(fused) == 1
    assert fused[0].attrs["use_nesterov"] is nesterov and fused[0].attrs["keras"] is False
    w0, on = _train(g, w, train, init, True)
    w0_off, off = _train(g, w, train, init, False)
    np.testing.assert_array_equal(w0, w0_off)
    assert not np.allclose(on, w0)
    np.testing.assert_array_equal(on, off)


@pytest.mark.parametrize("nesterov", [False, True])
def test_one_step_equals_the_numpy_formula(nesterov, kernel_path):
    g, w, train, init, x = _session_graph(nesterov, np.float64 if kernel_path == "aten"
                                          else np.float32)
    with g.as_default():
        xv = v1.Session(graph=g).run(x)
    w0, w1 = _train(g, w, train, init, True, steps=1)
    w0d, xd = w0.astype(np.float64), xv.astype(np.float64)
    grad = 0.02 * xd.T @ (xd @ w0d) + DECAY * w0d
    accum = grad                                  # accum starts at zero
    step = grad + MU * accum if nesterov else accum
    np.testing.assert_allclose(w1, w0d - LR * step, rtol=1e-5, atol=1e-6)


def test_not_fused_when_another_op_writes_the_variable():
    g, w, train, init, _ = _session_graph(False, other_writer=True)
    assert _fused_ops(g, train) == []


def _keras_run(x, init, nesterov: bool, remapping: bool) -> np.ndarray:
    """Three Keras SGD steps in a tf.function; with `remapping`, checks the fused update."""
    tf.config.optimizer.set_experimental_options({"remapping": remapping})
    try:
        w = tf.Variable(init)
        opt = tf.keras.optimizers.SGD(LR, momentum=MU, nesterov=nesterov)

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.square(tf.matmul(x, w))) * 0.01 + \
                    DECAY * tf.nn.l2_loss(w)
            opt.apply_gradients([(tape.gradient(loss, w), w)])

        for _ in range(3):
            step()
        if remapping:
            graph = step.get_concrete_function().optimized_graph()
            fused = [op for op in graph.get_operations()
                     if op.type == "_ResourceApplyMomentumWithDecay"]
            assert len(fused) == 1 and fused[0].attrs["keras"] is True
        return w.numpy()
    finally:
        tf.config.optimizer.set_experimental_options({"remapping": True})


@pytest.mark.parametrize("nesterov", [False, True])
def test_keras_sgd_in_a_function_is_fused_and_equals_the_unfused_one(nesterov, kernel_path):
    rng = np.random.default_rng(5)
    x = tf.constant(rng.normal(size=(16, 40)).astype(np.float32))
    init = rng.normal(size=(40, 30)).astype(np.float32)
    on, off = (_keras_run(x, init, nesterov, remapping) for remapping in (True, False))
    assert not np.allclose(on, init)
    np.testing.assert_array_equal(on, off)
