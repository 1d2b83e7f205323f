"""Remapper: a dynamic loss scale's update becomes one `_UpdateDynamicLossScale`
(ndflow/passes/dynamic_loss_scale.py, kernels/loss_scale_update.py).

Checked: the kernel's rule against NumPy float32/int64 arithmetic (growth, growth to
infinity, the halving floor, multipliers that round, int64 wrap); Keras and TF1 loss-scale
training with finite, overflowing and NaN steps bit for bit equal with the fusion on and off
(the scale, the counter, every variable); a read of the scale after the update seeing the new
value; and no rewrite when the remapper is off.
"""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.kernels import loss_scale_update
from ndflow.kernels.loss_scale_update import float32, next_values
from tests.passes.remapping_toggle import RemapperStep, Remapping

INF, NAN = float("inf"), float("nan")


def _ops(graph, op_type: str) -> list:
    return [op for op in graph.get_operations() if op.type == op_type]


def _numpy_rule(scale, steps, finite, period, multiplier):
    """The unfused ops' arithmetic in NumPy float32 / int64."""
    s, m = np.float32(scale), np.float32(multiplier)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        n1 = np.int64(steps) + np.int64(1)
        grow = n1 >= np.int64(period)
        grown = s * m
        finite_scale = grown if grow and np.isfinite(grown) else s
        shrunk = np.maximum(s / m, np.float32(1.0))
    if finite:
        return float(finite_scale), int(0 if grow else n1)
    return float(shrunk), 0


@pytest.mark.parametrize("scale,steps,finite,period,multiplier", [
    (2.0 ** 15, 0, True, 2000, 2.0),          # counts the step
    (2.0 ** 15, 1999, True, 2000, 2.0),       # grows
    (3.0e38, 4, True, 5, 2.0),                # growth would overflow: kept
    (2.0 ** 15, 7, False, 2000, 2.0),         # halves, the count restarts
    (1.5, 3, False, 2000, 2.0),               # never below 1
    (1000.0, 2, True, 3, 3.0),                # a product that rounds
    (1000.0, 2, False, 3, 3.0),               # a quotient that rounds
    (0.7, 0, True, 1, 1.1),
    (7.0, 2 ** 63 - 1, True, 2000, 2.0),      # int64 wraps, as AddV2's
])
def test_the_rule_matches_float32_ops(scale, steps, finite, period, multiplier):
    scale = float32(scale)
    got = next_values(scale, steps, finite, period, multiplier)
    want = _numpy_rule(scale, steps, finite, period, multiplier)
    assert got[1] == want[1]
    np.testing.assert_array_equal(np.float32(got[0]), np.float32(want[0]))


def test_float32_rounds_and_overflows_as_a_cast():
    assert float32(1.0 + 2.0 ** -30) == 1.0
    assert float32(3.5e38) == INF and float32(-3.5e38) == -INF
    assert np.isnan(float32(NAN))


FACTORS = [1.0, 1.0, 1.0, INF, 1.0, NAN, 1.0, 1.0, 1.0]


def _keras_training(fused: bool):
    """Steps of `loss * f` (inf/NaN: skipped, the scale halves) with growth every 2 good
    steps; after each step: the variables, the scale, the counter and the scale read back
    in the step after the update; and the optimized graph."""
    rng = np.random.default_rng(3)
    x = tf.constant(rng.normal(size=(8, 5)).astype(np.float32))
    w = tf.Variable(rng.normal(size=(5, 3)).astype(np.float32))
    b = tf.Variable(np.zeros(3, np.float32))
    opt = tf.keras.mixed_precision.LossScaleOptimizer(
        tf.keras.optimizers.SGD(0.05, momentum=0.9), initial_scale=2.0 ** 10,
        dynamic_growth_steps=2)

    @tf.function
    def step(f):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w) + b)) * f
            scaled = opt.get_scaled_loss(loss)
        grads = opt.get_unscaled_gradients(tape.gradient(scaled, [w, b]))
        opt.apply_gradients(zip(grads, [w, b]))
        return opt.loss_scale

    out = []
    with RemapperStep("fuse_dynamic_loss_scale", fused):
        for f in FACTORS:
            after = step(tf.constant(f))
            counter = opt.dynamic_counter
            out.append([w.numpy().copy(), b.numpy().copy(), opt.loss_scale.numpy(),
                        counter.numpy(), after.numpy()])
        graph = step.get_concrete_function(tf.constant(1.0)).optimized_graph()
    return out, graph


def test_keras_loss_scale_training_equals_the_unfused_graph():
    on, graph = _keras_training(True)
    off, graph_off = _keras_training(False)
    (fused,) = _ops(graph, "_UpdateDynamicLossScale")
    assert fused.attrs["increment_period"] == 2 and fused.attrs["multiplier"] == 2.0
    assert not _ops(graph, "IsFinite") and not _ops(graph, "LogicalAnd")
    assert not _ops(graph_off, "_UpdateDynamicLossScale") and _ops(graph_off, "IsFinite")
    scales = [float(s[2]) for s in on]
    assert scales == [2.0 ** 10, 2.0 ** 11, 2.0 ** 11, 2.0 ** 10, 2.0 ** 10, 2.0 ** 9,
                      2.0 ** 9, 2.0 ** 10, 2.0 ** 10]
    assert [int(s[3]) for s in on] == [1, 0, 1, 0, 1, 0, 1, 0, 1]
    for got, want in zip(on, off):
        assert float(got[4]) == float(got[2])   # the read after the update: the new scale
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_tf1_loss_scale_optimizer_session_equals_the_unfused_graph(monkeypatch):
    calls = []
    monkeypatch.setattr(loss_scale_update, "next_values",
                        lambda *a: calls.append(a) or next_values(*a))

    def run(fused: bool):
        with RemapperStep("fuse_dynamic_loss_scale", fused), tf.Graph().as_default():
            f = tf.compat.v1.placeholder(tf.float32, [])
            w = tf.compat.v1.get_variable("w", initializer=np.arange(6, dtype=np.float32)
                                          .reshape(2, 3) / 10)
            loss = tf.reduce_sum(tf.square(w)) * f
            scale = tf.compat.v1.mixed_precision.DynamicLossScale(
                initial_loss_scale=8.0, increment_period=2, multiplier=4.0)
            opt = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(
                tf.compat.v1.train.GradientDescentOptimizer(0.1), scale)
            train = opt.minimize(loss)
            out = []
            with tf.compat.v1.Session() as sess:
                sess.run(tf.compat.v1.global_variables_initializer())
                for v in FACTORS:
                    sess.run(train, {f: v})
                    out.append([sess.run(w), sess.run(scale())])
            return out

    on = run(True)
    assert len(calls) == len(FACTORS)   # the Session ran the fused op
    off = run(False)
    assert len(calls) == len(FACTORS)
    assert [float(s[1]) for s in on][:4] == [8.0, 32.0, 32.0, 8.0]
    for got, want in zip(on, off):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_no_fusion_with_remapping_off():
    with Remapping(False):
        _, graph = _keras_training(True)
    assert not _ops(graph, "_UpdateDynamicLossScale") and _ops(graph, "IsFinite")
