"""Keras' RMSprop without momentum, written as ops, as one `_GroupedApplyKerasRMSProp` a
variable (ndflow/passes/keras_rmsprop.py) merged by the grouping pass into one op
(kernels/training_rmsprop.py): the ops Keras emits bit for bit (float32's numba launch: but
for its IEEE square root), and a float64 NumPy check."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import rmsprop_numba

SHAPES = [(5, 5, 1, 8), (8,), (3, 7), (7,), (160, 128), (128,), (33,)]


@pytest.fixture
def unfused():
    """Switches the pattern off (the rest of the remapper unchanged): its pass by name."""
    def off():
        tf.config.optimizer.set_experimental_options({"keras_rmsprop": False})
    yield off
    tf.config.optimizer.set_experimental_options({"keras_rmsprop": True})


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
    if dtype == tf.float32:
        # numba's IEEE square root against ATen's: the first step's accumulators are the
        # same bits, its variables within an ulp of the update (later steps feed such
        # differences back through the gradients); the kernel's own bits are checked below
        step_params = len(SHAPES)
        for k, (a, b) in enumerate(zip(fused[0], separate[0])):
            if k >= step_params and b.shape != ():
                np.testing.assert_array_equal(a, b)
            else:
                np.testing.assert_allclose(a, b, rtol=2.4e-7, atol=4e-9)
    else:                         # the same ATen ops over lists: bit for bit
        for got, want in zip(fused, separate):
            for a, b in zip(got, want):
                np.testing.assert_array_equal(a, b)
    assert not np.array_equal(fused[-1][0], fused[0][0])


def test_the_float32_launch_rounds_each_op_as_float32_with_an_ieee_square_root():
    rng = np.random.default_rng(2)
    f32 = np.float32
    g, v = (rng.standard_normal(5000).astype(f32) for _ in range(2))
    ms = np.abs(rng.standard_normal(5000)).astype(f32)
    lr, rho, omr, eps = (float(f32(x)) for x in (0.01, 0.9, 0.1, 1e-7))
    want_ms = f32(rho) * ms + f32(omr) * (g * g)
    want_v = v - (f32(lr) * g) / np.sqrt(want_ms + f32(eps))
    t = [torch.from_numpy(a.copy()) for a in (g, v, ms)]
    v_out, ms_out = torch.empty(5000), torch.empty(5000)
    rmsprop_numba.update_many([t[0].data_ptr(), t[1].data_ptr(), t[2].data_ptr(),
                               v_out.data_ptr(), ms_out.data_ptr(), 5000], 5000,
                              lr, rho, omr, eps)
    np.testing.assert_array_equal(ms_out.numpy(), want_ms)
    np.testing.assert_array_equal(v_out.numpy(), want_v)
    rmsprop_numba.update_many([t[0].data_ptr(), t[1].data_ptr(), t[2].data_ptr(),
                               t[1].data_ptr(), t[2].data_ptr(), 5000], 5000,
                              lr, rho, omr, eps)   # in place
    np.testing.assert_array_equal(t[1].numpy(), want_v)


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
