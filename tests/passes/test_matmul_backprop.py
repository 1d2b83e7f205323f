"""Remapper (passes/matmul_backprop.py): a large layer's input gradient `dy @ W^T` becomes an
output of W's `_MatMulApplyMomentum`, computed from W's value before the update as the update
passes each block. Checked: where it applies (a Keras step in a tf.function, a TF1 Session),
the trained weights against a float64 NumPy reference and bit for bit against the unfused
graph, the input gradient returned or fetched (W's value before the update), and where it
must not apply (a read of W between the gradient and the update)."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.ops import nn_fused
from ndflow.ops.apply import apply_op
from ndflow.passes import matmul_backprop
from tests.passes.remapping_toggle import PassOff

LR, MU, DECAY = 0.5, 0.9, 5e-2
N = 256   # 256x256 weights: large enough for _MatMulApplyMomentum


def _data(seed, batch=8):
    rng = np.random.default_rng(seed)
    x, y = (rng.standard_normal((batch, N)).astype(np.float32) for _ in range(2))
    w0, w1 = ((rng.standard_normal((N, N)) * 0.05).astype(np.float32) for _ in range(2))
    return x, y, w0, w1


def _reference(x, y, w0, w1, decay, steps, keras):
    """The momentum steps of both weights in float64."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    w = [w0.astype(np.float64), w1.astype(np.float64)]
    m = [np.zeros_like(w[0]), np.zeros_like(w[1])]
    mu = float(np.float32(MU)) if keras else MU
    for _ in range(steps):
        h = np.tanh(x @ w[0])
        d_out = 2 * (h @ w[1] - y) / y.size
        g1 = h.T @ d_out + decay * w[1]
        g0 = x.T @ ((d_out @ w[1].T) * (1 - h * h))
        for i, g in enumerate((g0, g1)):
            if keras:
                m[i] = mu * m[i] - LR * g
                w[i] = w[i] + m[i]
            else:
                m[i] = mu * m[i] + g
                w[i] = w[i] - LR * m[i]
    return w


@pytest.fixture
def unfused():
    """Runs the body with the rewrite switched off."""
    with PassOff("matmul_backprop"):
        yield


def _keras_train(decay, steps, returns=None, seed=1, batch=8):
    """Trains both weights with Keras' SGD in a tf.function for `steps` steps: (the optimized
    graph, the weights, what each step returned, the data). A step returns the sum of w1 read
    between the gradients and the update (`returns="read"`) or after it ("read_after"), the
    loss's gradient with respect to w1's layer input ("input_grad"), or 0."""
    x, y, w0_init, w1_init = _data(seed, batch)
    w0, w1 = tf.Variable(w0_init), tf.Variable(w1_init)
    opt = tf.keras.optimizers.SGD(LR, momentum=MU)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            h = tf.tanh(tf.matmul(x, w0))
            tape.watch(h)
            loss = tf.reduce_mean(tf.square(tf.matmul(h, w1) - y))
            if decay:
                loss += decay * tf.nn.l2_loss(w1)
        g0, g1, gh = tape.gradient(loss, [w0, w1, h])
        out = {"read": lambda: tf.reduce_sum(w1), "input_grad": lambda: gh}.get(
            returns, lambda: tf.constant(0.0))()
        opt.apply_gradients(zip([g0, g1], [w0, w1]))
        return tf.reduce_sum(w1) if returns == "read_after" else out

    outs = [step(x, y).numpy() for _ in range(steps)]
    graph = step.get_concrete_function(x, y).optimized_graph()
    return graph, [w0.numpy(), w1.numpy()], outs, (x, y, w0_init, w1_init)


def _fused(graph) -> list:
    return [op for op in graph.get_operations()
            if op.type == "_MatMulApplyMomentum" and op.attrs.get("num_backprop")]


@pytest.mark.parametrize("decay", [DECAY, 0.0])   # the blocked GEMM path; ATen's
def test_a_keras_step_computes_the_input_gradient_in_the_update(decay):
    graph, got, _, (x, y, w0, w1) = _keras_train(decay, 3)
    (fused,) = _fused(graph)
    assert not [op for op in graph.get_operations()
                if op.type == "MatMul" and op.attrs.get("transpose_b")]
    assert fused.outputs[0].shape.as_list() == [8, N]
    for g, want in zip(got, _reference(x, y, w0, w1, decay, 3, keras=True)):
        np.testing.assert_allclose(g, want, rtol=2e-5, atol=2e-5)


def test_the_same_weights_as_the_unfused_graph(request):
    _, fused, _, _ = _keras_train(DECAY, 3)
    request.getfixturevalue("unfused")
    graph, plain, _, _ = _keras_train(DECAY, 3)
    assert not _fused(graph)
    for a, b in zip(fused, plain):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def _tf1_train(decay, steps, seed, fetch_input_grad=False):
    """Trains both weights with TF1's MomentumOptimizer in a Session: (the weights, the
    loss's gradient with respect to w1's layer input fetched with the first step or None,
    the data)."""
    x, y, w0_init, w1_init = _data(seed)
    g = tf.Graph()
    with g.as_default():
        xs = tf.compat.v1.placeholder(tf.float32, [8, N])
        w0 = tf.compat.v1.get_variable("w0", initializer=w0_init, use_resource=True)
        w1 = tf.compat.v1.get_variable("w1", initializer=w1_init, use_resource=True)
        h = tf.tanh(tf.matmul(xs, w0))
        loss = tf.reduce_mean(tf.square(tf.matmul(h, w1) - y))
        if decay:
            loss += decay * tf.nn.l2_loss(w1)
        train = tf.compat.v1.train.MomentumOptimizer(LR, MU).minimize(loss)
        fetches = [train] + (tf.compat.v1.gradients(loss, [h]) if fetch_input_grad else [])
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            firsts = [sess.run(fetches, {xs: x})[1:] for _ in range(steps)][0]
            got = sess.run([w0, w1])
    return got, (firsts or [None])[0], (x, y, w0_init, w1_init)


@pytest.mark.parametrize("decay", [DECAY, 0.0])
def test_a_tf1_session(decay):
    got, _, data = _tf1_train(decay, 3, seed=2)
    for a, want in zip(got, _reference(*data, decay, 3, keras=False)):
        np.testing.assert_allclose(a, want, rtol=2e-5, atol=2e-5)


def test_a_read_between_the_gradient_and_the_update_is_left_alone():
    # the read must see w1 before its update: the update stays where it was
    graph, got, reads, (x, y, w0, w1) = _keras_train(DECAY, 2, returns="read")
    assert not _fused(graph)
    want = _reference(x, y, w0, w1, DECAY, 1, keras=True)[1]
    np.testing.assert_allclose(reads[1], want.astype(np.float32).sum(), rtol=1e-4)
    np.testing.assert_allclose(got[1], _reference(x, y, w0, w1, DECAY, 2, keras=True)[1],
                               rtol=2e-5, atol=2e-5)


def test_a_read_after_the_update_sees_it():
    graph, got, reads, (x, y, w0, w1) = _keras_train(DECAY, 2, returns="read_after")
    assert _fused(graph)
    want = _reference(x, y, w0, w1, DECAY, 2, keras=True)[1]
    np.testing.assert_allclose(reads[1], want.astype(np.float32).sum(), rtol=1e-4)
    np.testing.assert_allclose(got[1], want, rtol=2e-5, atol=2e-5)


def test_a_large_output_gradient_is_left_alone():
    # dy of 256x256 (more than MAX_DY_ELEMENTS): each block would pack it anew
    assert 256 * N > matmul_backprop.MAX_DY_ELEMENTS
    graph, got, _, data = _keras_train(DECAY, 2, batch=256)
    assert not _fused(graph)
    for g, want in zip(got, _reference(*data, DECAY, 2, keras=True)):
        np.testing.assert_allclose(g, want, rtol=2e-5, atol=2e-5)


def test_a_returned_input_gradient_is_the_fused_value():
    # returned through the function's output Identity, the gradient is the fused op's output,
    # of w1 before the update
    graph, _, (gh,), (x, y, w0, w1) = _keras_train(DECAY, 1, returns="input_grad", seed=3)
    assert _fused(graph)
    h = np.tanh(x.astype(np.float64) @ w0)
    want = 2 * (h @ w1 - y) / y.size @ w1.T.astype(np.float64)
    np.testing.assert_allclose(gh, want, rtol=1e-5, atol=1e-7)


def test_a_fetched_input_gradient_has_the_value_before_the_update():
    got, gh, (x, y, w0, w1) = _tf1_train(DECAY, 2, seed=4, fetch_input_grad=True)
    h = np.tanh(x.astype(np.float64) @ w0)
    np.testing.assert_allclose(gh, 2 * (h @ w1 - y) / y.size @ w1.T.astype(np.float64),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got[1], _reference(x, y, w0, w1, DECAY, 2, keras=False)[1],
                               rtol=2e-5, atol=2e-5)


def test_backprop_needs_the_gradient_form_of_the_update():
    w = tf.Variable(np.zeros((4, 3), np.float32))
    m = tf.Variable(np.zeros((4, 3), np.float32))
    s = [tf.constant(0.1), tf.constant(0.0), tf.constant(0.9)]
    with pytest.raises(InvalidArgumentError, match="num_backprop needs transpose_a"):
        apply_op(nn_fused.MatMulApplyMomentum, [w.handle, m.handle, s[0], tf.ones([4, 2]),
                                                tf.ones([2, 3]), s[1], s[2]],
                 {"num_backprop": 1})
    dx = apply_op(nn_fused.MatMulApplyMomentum, [w.handle, m.handle, s[0], tf.ones([2, 4]),
                                                 tf.ones([2, 3]), s[1], s[2]],
                  {"num_backprop": 1, "transpose_a": True})
    np.testing.assert_array_equal(dx.outputs[0].numpy(), np.zeros((2, 4)))   # w before
    np.testing.assert_allclose(w.numpy(), np.full((4, 3), -0.2), rtol=1e-6)
