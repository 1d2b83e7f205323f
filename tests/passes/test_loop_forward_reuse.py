"""passes/loop_forward_reuse.py: a While loop whose gradient was taken runs once; its
accumulating copy takes its place. Values and gradients equal the unoptimized graph's and a
float64 NumPy reference with finite differences; loops with side effects the copy would drop
keep their forward loop; fetches of the forward loop's outputs are renamed."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import optimizer_options
from ndflow.passes.loop_forward_reuse import TAG, loop_forward_reuse
from ndflow.passes.pass_context import PassContext

STEPS = 7


@pytest.fixture(autouse=True)
def _fresh_options():
    optimizer_options.reset()
    yield
    optimizer_options.reset()


def _loop(x, w):
    return tf.while_loop(lambda i, h: i < STEPS,
                         lambda i, h: (i + 1, tf.tanh(h * w + 0.3 * tf.sin(h))), [0, x])[1]


def _numpy_loss(x, w):
    h = x
    for _ in range(STEPS):
        h = np.tanh(h * w + 0.3 * np.sin(h))
    return float(np.sum(h * h))


def _numeric(f, v, eps=1e-6):
    g = np.zeros_like(v)
    for i in range(v.size):
        d = np.zeros_like(v)
        d.flat[i] = eps
        g.flat[i] = (f(v + d) - f(v - d)) / (2 * eps)
    return g


def _train_step_values(reuse: bool):
    optimizer_options.set_experimental_options({"loop_optimization": reuse})
    x0 = np.linspace(-1.0, 1.0, 5)
    w = tf.Variable(np.full(5, 0.8))

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            h = _loop(x, w)
            loss = tf.reduce_sum(h * h)
        return loss, tape.gradient(loss, [x, w])
    loss, (gx, gw) = step(tf.constant(x0))
    return x0, float(loss), gx.numpy(), gw.numpy()


def test_values_and_gradients_match_numpy_and_the_unoptimized_graph():
    x0, loss, gx, gw = _train_step_values(True)
    w0 = np.full(5, 0.8)
    assert loss == pytest.approx(_numpy_loss(x0, w0), rel=1e-12)
    np.testing.assert_allclose(gx, _numeric(lambda v: _numpy_loss(v, w0), x0), rtol=1e-7)
    np.testing.assert_allclose(gw, _numeric(lambda v: _numpy_loss(x0, v), w0), rtol=1e-7)
    _, loss_off, gx_off, gw_off = _train_step_values(False)
    assert loss == loss_off
    np.testing.assert_array_equal(gx, gx_off)
    np.testing.assert_array_equal(gw, gw_off)


def _gradient_graph(body_effect=None):
    """A function graph with a loop and its gradient: (graph, the loss's name)."""
    w = tf.Variable(np.full(3, 0.5))
    counter = tf.Variable(0)

    def body(i, h):
        if body_effect == "assign":
            counter.assign_add(1)     # a side effect no output needs
        return i + 1, h * w + 1.0

    @tf.function
    def f(x):
        with tf.GradientTape() as tape:
            h = tf.while_loop(lambda i, h: i < STEPS, body, [0, x])[1]
            loss = tf.reduce_sum(h)
        return loss, tape.gradient(loss, w)
    x = tf.constant(np.ones(3))
    return f, f.get_concrete_function(x).graph, x, counter


def _loops(graph):
    return [op for op in graph.get_operations() if op.type in ("While", "StatelessWhile")]


def test_the_copy_replaces_the_forward_loop():
    _, graph, _, _ = _gradient_graph()
    loops = _loops(graph)
    copies = [op for op in loops if op.attrs.get(TAG)]
    assert len(loops) == 3 and len(copies) == 1   # forward, its accumulating copy, backward
    forward = copies[0].attrs[TAG]
    targets = [op.name for op in graph.get_operations() if op.is_stateful]
    ctx = PassContext(fetches=[t.name for t in graph.outputs], targets=targets)
    out = loop_forward_reuse(graph, ctx)
    names = {op.name for op in _loops(out)}
    assert forward not in names and copies[0].name in names and len(names) == 2
    assert ctx.current_name(forward) == copies[0].name   # the target follows the copy


def test_a_body_with_an_unneeded_side_effect_keeps_its_loop():
    f, graph, x, counter = _gradient_graph("assign")
    targets = [op.name for op in graph.get_operations() if op.is_stateful]
    out = loop_forward_reuse(graph, PassContext(fetches=[t.name for t in graph.outputs],
                                                targets=targets))
    assert out is graph
    f(x)
    assert int(counter.numpy()) == STEPS      # the forward loop ran its updates, once


def test_a_fetched_loop_output_is_renamed_in_a_session():
    with tf.Graph().as_default() as g:
        x = tf.compat.v1.placeholder(tf.float64, [3])
        w = tf.constant(np.array([0.5, 0.9, 1.1]))
        h = _loop(x, w)
        forward = h.op.inputs[0].op         # the While behind the loop's Identity
        raw = forward.outputs[3]
        grad = tf.gradients(tf.reduce_sum(h * h), x)[0]
        assert any(op.attrs.get(TAG) == forward.name for op in _loops(g))
        with tf.compat.v1.Session(graph=g) as sess:
            got_h, got_raw, got_grad = sess.run([h, raw, grad], {x: np.ones(3)})
    want = np.ones(3)
    for _ in range(STEPS):
        want = np.tanh(want * np.array([0.5, 0.9, 1.1]) + 0.3 * np.sin(want))
    np.testing.assert_allclose(got_h, want, rtol=1e-12)
    np.testing.assert_array_equal(got_raw, got_h)
    assert np.all(np.isfinite(got_grad))
