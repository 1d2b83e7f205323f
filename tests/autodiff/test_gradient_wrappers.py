"""tf.recompute_grad, tf.grad_pass_through, tf.AggregationMethod, and custom_gradient's
variable gradients inside tf.function (which recompute_grad relies on)."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf

X = np.array([0.3, -1.2, 2.0])
W0 = np.array([1.5, 0.5, -0.7])


def _block_and_calls(w):
    calls = []

    def block(x):
        calls.append(1)
        return tf.sin(x * w) * x + w

    return block, calls


def _grads(fn, w, graph: bool):
    def run(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(fn(x) ** 2)
        return tape.gradient(y, [x, w])
    run = tf.function(run) if graph else run
    return [g.numpy() for g in run(tf.constant(X))]


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "tf_function"])
def test_recompute_grad_equals_the_plain_gradient_and_recomputes(graph):
    w = tf.Variable(W0)
    block, calls = _block_and_calls(w)
    want = _grads(block, w, graph)
    calls.clear()
    got = _grads(tf.recompute_grad(block), w, graph)
    for g, r in zip(got, want):
        np.testing.assert_allclose(g, r, rtol=1e-12)
    assert len(calls) == 2  # the forward pass, and again under the gradient's tape
    # finite differences of the loss in x, float64
    loss = lambda v: float(np.sum((np.sin(v * W0) * v + W0) ** 2))  # noqa: E731
    fd = [(loss(X + e) - loss(X - e)) / 2e-6 for e in np.eye(3) * 1e-6]
    np.testing.assert_allclose(got[0], fd, rtol=1e-6)


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "tf_function"])
def test_custom_gradient_variables_inside_tf_function(graph):
    w = tf.Variable([2.0, 3.0])

    @tf.custom_gradient
    def scaled(x):
        def grad(dy, variables=None):
            return dy * w, [dy * x * 10.0 for _ in variables]
        return x * w, grad

    def run(x):
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(scaled(x))
        return tape.gradient(y, w)
    run = tf.function(run) if graph else run
    np.testing.assert_allclose(run(tf.constant([1.0, 4.0])).numpy(), [10.0, 40.0])


def test_grad_pass_through_is_the_identity_backward():
    x = tf.constant([0.26, 1.74])
    rounded = tf.grad_pass_through(tf.round)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(rounded(x * 3.0) * [2.0, 5.0])
    np.testing.assert_allclose(y.numpy(), 2.0 * 1 + 5.0 * 5)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [6.0, 15.0])


def test_aggregation_method_names_are_accepted():
    assert tf.AggregationMethod.DEFAULT == tf.AggregationMethod.ADD_N == 0
    with tf.Graph().as_default():
        a = tf.constant(2.0)
        (g,) = tf.compat.v1.gradients(a * a + a, [a],
                                      aggregation_method=tf.AggregationMethod.EXPERIMENTAL_TREE)
        with tf.compat.v1.Session() as sess:
            assert sess.run(g) == 5.0


def test_custom_gradient_reading_variables_must_take_them():
    w = tf.Variable(2.0)

    @tf.custom_gradient
    def f(x):
        return x * w, lambda dy: dy * w

    with tf.GradientTape(), pytest.raises(TypeError, match="must accept keyword argument "
                                          "'variables', since function uses variables"):
        f(tf.constant(1.0))
