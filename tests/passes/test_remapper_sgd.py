"""Remapper: a weight gradient's MatMul that only feeds its plain SGD update
(`ResourceApplyGradientDescent`, or `assign_sub(lr * g)` written by hand) becomes one
`_MatMulApplyGradientDescent`; the updated weights equal a float64 NumPy step, with its
product on either GEMM library (kernels/gemm.py)."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.ops import nn_fused, training
from ndflow.ops.apply import apply_op
from ndflow.passes.pass_config import PassConfig
from ndflow.passes.pass_context import PassContext
from ndflow.passes.pipeline import run_pipeline

RNG = np.random.default_rng(3)
LR = 0.05


def _data(ta=False):
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    w = RNG.standard_normal((4, 3)).astype(np.float32)
    y = RNG.standard_normal((6, 3)).astype(np.float32)
    return (x.T.copy() if ta else x), w, y


def _expected(x, w, y, ta=False):
    """w - LR * d/dw sum((x @ w - y)^2), in float64."""
    x64 = (x.T if ta else x).astype(np.float64)
    r = x64 @ w.astype(np.float64) - y
    return w - LR * 2 * x64.T @ r


def _ops(fn, *args):
    return [op.type for op in fn.get_concrete_function(*args).optimized_graph().get_operations()]


@pytest.mark.parametrize("form", ["assign_sub", "assign_sub_swapped", "apply"])
@pytest.mark.parametrize("ta", [False, True])
def test_sgd_updates_fuse_into_the_gradient_matmul(form, ta, gemm_library):
    x, w0, y = _data(ta)
    w = tf.Variable(w0)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w, transpose_a=ta) - y))
        g = tape.gradient(loss, w)
        if form == "apply":
            apply_op(training.ResourceApplyGradientDescent, [w.handle, tf.constant(LR), g])
        elif form == "assign_sub":
            w.assign_sub(LR * g)
        else:
            w.assign_sub(g * LR)

    step(x, y)
    np.testing.assert_allclose(w.numpy(), _expected(x, w0, y, ta), rtol=1e-5, atol=1e-6)
    types = _ops(step, x, y)
    assert types.count("_MatMulApplyGradientDescent") == 1
    assert "AssignSubVariableOp" not in types and "ResourceApplyGradientDescent" not in types


def test_keras_sgd_and_a_session_take_the_fused_update(gemm_library):
    x, w0, y = _data()
    model = tf.keras.Sequential([tf.keras.Input((4,)),
                                 tf.keras.layers.Dense(3, use_bias=False)])
    model.layers[0].kernel.assign(w0)
    model.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(LR))
    model.train_on_batch(x, y)
    step = model.train_function.get_concrete_function((tf.constant(x), tf.constant(y)))
    assert model.train_function.experimental_get_tracing_count() == 1   # the step that ran
    assert [op.type for op in step.optimized_graph().get_operations()].count(
        "_MatMulApplyGradientDescent") == 1
    mse_grad = 2 * x.T.astype(np.float64) @ (x.astype(np.float64) @ w0 - y) / y.size
    np.testing.assert_allclose(model.layers[0].kernel.numpy(), w0 - LR * mse_grad,
                               rtol=1e-5, atol=1e-6)

    g = tf.Graph()
    with g.as_default():
        xs = tf.compat.v1.placeholder(tf.float32, [6, 4])
        wv = tf.compat.v1.get_variable("w", initializer=w0, use_resource=True)
        loss = tf.reduce_sum(tf.square(tf.matmul(xs, wv) - y))
        train = tf.compat.v1.train.GradientDescentOptimizer(LR).minimize(loss)
        ctx = PassContext(fetches=[], feeds=[xs.name], targets=[train.name], config=PassConfig())
        optimized, _ = run_pipeline(g, ctx)
        assert "_MatMulApplyGradientDescent" in {op.type for op in optimized.get_operations()}
        with tf.compat.v1.Session() as sess:
            sess.run(wv.initializer)
            sess.run(train, {xs: x})
            np.testing.assert_allclose(sess.run(wv), _expected(x, w0, y), rtol=1e-5,
                                       atol=1e-6)


def test_a_gradient_used_elsewhere_or_a_tensor_alpha_is_left_alone():
    x, w0, y = _data()
    w = tf.Variable(w0)

    @tf.function
    def returns_gradient(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w) - y))
        g = tape.gradient(loss, w)
        w.assign_sub(LR * g)
        return g          # the product is needed on its own

    @tf.function
    def vector_scale(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w) - y))
        w.assign_sub(tf.fill([3], LR) * tape.gradient(loss, w))   # not a scalar alpha

    for fn in (returns_gradient, vector_scale):
        types = _ops(fn, x, y)
        assert "_MatMulApplyGradientDescent" not in types and "AssignSubVariableOp" in types
    returns_gradient(x, y)
    np.testing.assert_allclose(w.numpy(), _expected(x, w0, y), rtol=1e-5, atol=1e-6)


def test_the_fused_update_checks_its_variable():
    w = tf.Variable(np.zeros((2, 2), np.float32))
    a, b = tf.ones([2, 3]), tf.ones([3, 5])
    with pytest.raises(InvalidArgumentError, match=r"same shape\[2,2\] \[2,5\]"):
        apply_op(nn_fused.MatMulApplyGradientDescent, [w.handle, tf.constant(0.1), a, b])
    apply_op(nn_fused.MatMulApplyGradientDescent, [w.handle, tf.constant(0.5),
                                                  tf.ones([2, 3]), tf.ones([3, 2])])
    np.testing.assert_array_equal(w.numpy(), np.full((2, 2), -1.5, np.float32))
