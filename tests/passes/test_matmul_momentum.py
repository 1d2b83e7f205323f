"""Remapper: a large weight's momentum update (Keras `SGD(momentum=...)`, TF1
`MomentumOptimizer`) of its gradient's MatMul, with or without the L2 term of the weight
itself, becomes one `_MatMulApplyMomentum`: the GEMM accumulates the product into the
accumulator, one pass applies the L2 term and the step (where oneDNN's product is the faster:
the product, then one pass). Weights and accumulators equal a float64 NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.ops import nn_fused
from ndflow.ops.apply import apply_op
from ndflow.passes import remapper

LR, MU, DECAY = 0.5, 0.9, 5e-2
N = 256   # a 256x256 weight: remapper.MATMUL_MOMENTUM_MIN elements


def _data(seed, dtype=np.float32, n=N):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((8, n)).astype(dtype)
    w = (rng.standard_normal((n, n)) * 0.05).astype(dtype)
    y = rng.standard_normal((8, n)).astype(dtype)
    return x, w, y


def _grad(x, w, y, decay):
    """d/dw of mean((x @ w - y)^2) + decay * l2_loss(w), in float64."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    return 2 * x.T @ (x @ w - y) / y.size + decay * w


def _keras_reference(x, w, y, decay, steps):
    mu = float(np.float32(MU))   # Keras keeps its hyperparameters as float32 variables
    m = np.zeros_like(w, np.float64)
    w = w.astype(np.float64)
    for _ in range(steps):
        m = mu * m - LR * _grad(x, w, y, decay)
        w = w + m
    return w, m


def _tf1_reference(x, w, y, decay, steps):
    a = np.zeros_like(w, np.float64)
    w = w.astype(np.float64)
    for _ in range(steps):
        a = MU * a + _grad(x, w, y, decay)
        w = w - LR * a
    return w, a


def _loss(x, w, y, decay):
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    return loss + decay * tf.nn.l2_loss(w) if decay else loss


def _keras_step(w, opt, decay):
    """A tf.function step applying `opt` (a Keras SGD with momentum) to `w`."""
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = _loss(x, w, y, decay)
        opt.apply_gradients([(tape.gradient(loss, w), w)])
    return step


def _types(fn, *args):
    return [op.type for op in fn.get_concrete_function(*args).optimized_graph().get_operations()]


@pytest.mark.parametrize("decay", [DECAY, 0.0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_keras_momentum_takes_the_gradient_product_into_the_accumulator(decay, dtype,
                                                                         gemm_library):
    # float32: the numba pass after the GEMM (MKL's, or oneDNN's where it is the faster);
    # float64: ATen's
    x, w0, y = _data(1, dtype)
    w = tf.Variable(w0)
    opt = tf.keras.optimizers.SGD(LR, momentum=MU)
    step = _keras_step(w, opt, decay)
    for _ in range(3):
        step(x, y)
    types = _types(step, x, y)
    assert types.count("_MatMulApplyMomentum") == 1 and "ResourceApplyKerasMomentum" not in types
    want_w, want_m = _keras_reference(x, w0, y, decay, 3)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(w.numpy(), want_w, rtol=tol, atol=tol)
    np.testing.assert_allclose(opt.variables[-1].numpy(), want_m, rtol=tol, atol=tol)


@pytest.mark.parametrize("decay", [DECAY, 0.0])
def test_tf1_momentum_optimizer_in_a_session(decay, gemm_library):
    x, w0, y = _data(2)
    g = tf.Graph()
    with g.as_default():
        xs = tf.compat.v1.placeholder(tf.float32, [8, N])
        wv = tf.compat.v1.get_variable("w", initializer=w0, use_resource=True)
        opt = tf.compat.v1.train.MomentumOptimizer(LR, MU)
        train = opt.minimize(_loss(xs, wv, y, decay))
        accum = opt.get_slot(wv, "momentum")
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for _ in range(2):
                sess.run(train, {xs: x})
            got_w, got_a = sess.run([wv, accum])
    want_w, want_a = _tf1_reference(x, w0, y, decay, 2)
    np.testing.assert_allclose(got_w, want_w, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(got_a, want_a, rtol=2e-5, atol=2e-5)


def test_a_value_read_before_the_update_keeps_its_value():
    # the variable's buffer is shared with an eager tensor: the update writes new buffers
    x, w0, y = _data(3)
    w = tf.Variable(w0)
    step = _keras_step(w, tf.keras.optimizers.SGD(LR, momentum=MU), DECAY)
    step(x, y)
    held = w.value()
    before = held.numpy().copy()
    step(x, y)
    np.testing.assert_array_equal(held.numpy(), before)
    np.testing.assert_allclose(w.numpy(), _keras_reference(x, w0, y, DECAY, 2)[0],
                               rtol=2e-5, atol=2e-5)


def test_small_weights_nesterov_and_shared_gradients_are_left_alone():
    x, w0, y = _data(4, n=64)    # 4096 elements: grouped with the other small updates
    small = tf.Variable(w0)
    big = tf.Variable(_data(4)[1])
    small_step = _keras_step(small, tf.keras.optimizers.SGD(LR, momentum=MU), DECAY)
    nesterov_step = _keras_step(big, tf.keras.optimizers.SGD(LR, momentum=MU, nesterov=True),
                                DECAY)
    plain = tf.keras.optimizers.SGD(LR, momentum=MU)
    xb, _, yb = _data(4)

    @tf.function
    def returns_gradient(x, y):
        with tf.GradientTape() as tape:
            loss = _loss(x, big, y, 0.0)
        g = tape.gradient(loss, big)
        plain.apply_gradients([(g, big)])
        return g          # the product is needed on its own

    for fn, args in ((small_step, (x, y)), (nesterov_step, (xb, yb)),
                     (returns_gradient, (xb, yb))):
        assert "_MatMulApplyMomentum" not in _types(fn, *args)
    assert remapper.MATMUL_MOMENTUM_MIN == N * N


def test_the_fused_update_checks_its_variables():
    w = tf.Variable(np.zeros((2, 2), np.float32))
    m = tf.Variable(np.zeros((2, 2), np.float32))
    short = tf.Variable(np.zeros((2,), np.float32))
    s = [tf.constant(0.1), tf.constant(0.0), tf.constant(0.9)]

    def apply(var, accum, a, b):
        apply_op(nn_fused.MatMulApplyMomentum, [var.handle, accum.handle, s[0], a, b, s[1],
                                                s[2]], {"keras": True})
    with pytest.raises(InvalidArgumentError, match=r"var and grad do not have the same "
                                                   r"shape\[2,2\] \[2,5\]"):
        apply(w, m, tf.ones([2, 3]), tf.ones([3, 5]))
    with pytest.raises(InvalidArgumentError, match=r"var and accum do not have the same "
                                                   r"shape\[2,2\] \[2\]"):
        apply(w, short, tf.ones([2, 3]), tf.ones([3, 2]))
    apply(w, m, tf.ones([2, 3]), tf.ones([3, 2]))     # Keras: m = -lr * 3; w += m
    np.testing.assert_allclose(m.numpy(), np.full((2, 2), -0.3), rtol=1e-6)
    np.testing.assert_allclose(w.numpy(), np.full((2, 2), -0.3), rtol=1e-6)
