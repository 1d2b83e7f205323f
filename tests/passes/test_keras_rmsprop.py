"""Keras' RMSprop without momentum, written as ops, as one `_GroupedApplyKerasRMSProp` a
variable (ndflow/passes/keras_rmsprop.py) merged by the grouping pass into one op
(kernels/training_rmsprop.py): bit for bit the ops Keras emits, and a float64 NumPy check."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.passes import remapper

SHAPES = [(5, 5, 1, 8), (8,), (3, 7), (7,), (160, 128), (128,), (33,)]


@pytest.fixture
def unfused(monkeypatch):
    """Switches the pattern off (the rest of the remapper unchanged)."""
    def off():
        monkeypatch.setattr(remapper, "fuse_keras_rmsprop", lambda graph, ctx: graph)
    return off


def _training(dtype, steps: int = 4, **kwargs):
    """`steps` Keras RMSprop steps on a loss touching every variable: the variables and
    slots after each step (float64), and the optimized graph."""
    rng = np.random.default_rng(5)
    params = [tf.Variable(rng.normal(size=s).astype(np.float32), dtype=dtype) for s in SHAPES]
    opt = tf.keras.optimizers.RMSprop(0.01, **kwargs)

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.add_n([tf.reduce_sum(tf.sin(p * x)) for p in params])
        opt.apply_gradients(zip(tape.gradient(loss, params), params))

    out = []
    for k in range(steps):
        step(tf.constant(1.0 + 0.1 * k, dtype))
        out.append([v.numpy().astype(np.float64) for v in params + opt.variables])
    return out, step.get_concrete_function(tf.constant(1.0, dtype)).optimized_graph()


def _fused(graph) -> list:
    return [op for op in graph.get_operations() if op.type == "_GroupedApplyKerasRMSProp"]


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16], ids=lambda d: d.name)
def test_keras_rmsprop_is_one_op_equal_to_the_ops_keras_writes(dtype, unfused):
    fused, graph = _training(dtype)
    (op,) = _fused(graph)
    assert op.attrs["N"] == len(SHAPES)
    assert not [o for o in graph.get_operations() if o.type.startswith("Assign")
                and o.type != "AssignAddVariableOp"]   # (the iteration count's)
    unfused()
    separate, graph = _training(dtype)
    assert not _fused(graph)
    for got, want in zip(fused, separate):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    assert not np.array_equal(fused[-1][0], fused[0][0])


def test_values_follow_keras_formula_in_float64():
    rng = np.random.default_rng(0)
    w0 = rng.normal(size=(4, 3))
    w = tf.Variable(w0, dtype=tf.float64)
    b = tf.Variable(np.zeros(3), dtype=tf.float64)
    opt = tf.keras.optimizers.RMSprop(0.05, rho=0.8, epsilon=1e-3)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(w)) + tf.reduce_sum(3.0 * b)
        opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))

    assert len(_fused(step.get_concrete_function().optimized_graph())) == 1
    lr = float(np.float32(0.05))   # Keras keeps the learning rate in a float32 variable
    ww, bb, mw, mb = w0.copy(), np.zeros(3), np.zeros((4, 3)), np.zeros(3)
    for _ in range(3):
        step()
        gw, gb = 2 * ww, np.full(3, 3.0)
        mw, mb = 0.8 * mw + 0.2 * gw * gw, 0.8 * mb + 0.2 * gb * gb
        ww = ww - lr * gw / np.sqrt(mw + 1e-3)
        bb = bb - lr * gb / np.sqrt(mb + 1e-3)
    np.testing.assert_allclose(w.numpy(), ww, rtol=1e-12)
    np.testing.assert_allclose(b.numpy(), bb, rtol=1e-12)


@pytest.mark.parametrize("kwargs", [{"momentum": 0.9}, {"centered": True}],
                         ids=["momentum", "centered"])
def test_other_forms_are_left_alone(kwargs):
    # with momentum Keras' update is TF's ResourceApplyRMSProp; centered has more ops
    _, graph = _training(tf.float32, steps=1, **kwargs)
    assert not _fused(graph)


def test_an_accumulator_read_elsewhere_stops_the_fusion():
    rng = np.random.default_rng(1)
    p0 = [rng.normal(size=4).astype(np.float32) for _ in range(2)]
    params = [tf.Variable(v) for v in p0]
    opt = tf.keras.optimizers.RMSprop(0.01)
    opt.build(params)
    ms = opt._velocities[0]

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.add_n([tf.reduce_sum(p * p) for p in params])
        opt.apply_gradients(zip(tape.gradient(loss, params), params))
        return ms + 0.0     # the first accumulator, read after its update

    got = step().numpy()
    (op,) = _fused(step.get_concrete_function().optimized_graph())
    assert op.attrs["N"] == 1                    # the second variable's update only
    g = 2 * p0[0]
    np.testing.assert_allclose(got, np.float32(0.1) * g * g, rtol=1e-6)   # from zero
    np.testing.assert_array_equal(got, ms.numpy())
