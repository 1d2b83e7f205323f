"""tf.gradients (symbolic, graph mode): values by finite differences, options, errors."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.autodiff.gradients import UnconnectedGradients, gradients
from ndflow.core import dtypes
from ndflow.core.graph import Graph
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor, numpy_to_torch
from ndflow.ops.array_core import constant, placeholder, stop_gradient
from ndflow.ops.op_def import op_def
from ndflow.runtime.plan import Plan
from ndflow.runtime.state import RuntimeContext

NoGradOp = op_def("NdflowTestNoGradient", inputs=["x: T"], outputs=["y: T"],
                  attrs=["T: {float, double}"], shape=lambda ctx: [ctx.shapes[0]])


def _run(g, fetches, feeds=(), values=()):
    plan = Plan(g, list(feeds), list(fetches), [], RuntimeContext())
    vals = [numpy_to_torch(np.asarray(v), p.dtype) for p, v in zip(feeds, values)]
    return [o.numpy() for o in plan.run(vals)]


def test_matches_finite_differences():
    rng = np.random.default_rng(0)
    x0, w0 = rng.normal(size=(2, 3)), rng.normal(size=(3, 3))
    g = Graph()
    with g.as_default():
        x = placeholder(dtypes.float64, [2, 3])
        w = placeholder(dtypes.float64, [3, 3])
        y = tf.reduce_sum(tf.tanh(tf.matmul(x, w)) * tf.exp(x), [0, 1])
        gx, gw = gradients(y, [x, w])
    assert gx.op.name.startswith("gradients/")

    def f(a, b):
        return float(np.sum(np.tanh(a @ b) * np.exp(a)))

    ax, aw = _run(g, [gx, gw], [x, w], [x0, w0])
    eps = 1e-6
    for got, base, which in ((ax, x0, 0), (aw, w0, 1)):
        num = np.zeros_like(base)
        for i in range(base.size):
            d = np.zeros_like(base)
            d.reshape(-1)[i] = eps
            args_p = [x0 + d, w0] if which == 0 else [x0, w0 + d]
            args_m = [x0 - d, w0] if which == 0 else [x0, w0 - d]
            num.reshape(-1)[i] = (f(*args_p) - f(*args_m)) / (2 * eps)
        np.testing.assert_allclose(got, num, rtol=1e-6, atol=1e-7)


def test_grad_ys_weights_the_outputs():
    g = Graph()
    with g.as_default():
        x = constant(np.array([1.0, 2.0]))
        y = x * x
        (gx,) = gradients([y], [x], grad_ys=[constant(np.array([10.0, 100.0]))])
    np.testing.assert_allclose(_run(g, [gx])[0], [20.0, 400.0])


def test_multiple_ys_are_summed():
    g = Graph()
    with g.as_default():
        x = constant(3.0)
        (gx,) = gradients([x * x, x * 2.0], x)
    np.testing.assert_allclose(_run(g, [gx])[0], 8.0)


def test_stop_gradients_block_flow_but_receive_gradients():
    g = Graph()
    with g.as_default():
        a = constant(0.0)
        b = 2.0 * a
        ga, gb = gradients(a + b, [a, b], stop_gradients=[a, b])
        ga2, gb2 = gradients(a + b, [a, b])
    np.testing.assert_allclose(_run(g, [ga, gb, ga2, gb2]), [1.0, 1.0, 3.0, 1.0])


def test_stop_gradient_op():
    g = Graph()
    with g.as_default():
        x = constant(2.0)
        y = x * stop_gradient(x)
        (gx,) = gradients(y, x)
    np.testing.assert_allclose(_run(g, [gx])[0], 2.0)


def test_unconnected_gradients():
    g = Graph()
    with g.as_default():
        x = constant(np.array([1.0, 2.0]))
        z = constant(np.array([[5.0]]))
        y = x * x
        gx, gz = gradients(y, [x, z])
        gx0, gz0 = gradients(y, [x, z], unconnected_gradients=UnconnectedGradients.ZERO)
        _, gz_str = gradients(y, [x, z], unconnected_gradients="zero")
    assert gz is None and gx is not None
    out = _run(g, [gz0, gz_str])
    np.testing.assert_array_equal(out[0], [[0.0]])
    np.testing.assert_array_equal(out[1], [[0.0]])
    assert gz0.shape == TensorShape([1, 1])


def test_target_that_is_a_source_and_integer_targets():
    g = Graph()
    with g.as_default():
        x = constant(4.0)
        i = constant(3)
        (gx,) = gradients(x, x)
        (gi,) = gradients(i * 2, i)
    np.testing.assert_allclose(_run(g, [gx])[0], 1.0)
    assert gi is None


def test_op_without_gradient_raises_lookup_error():
    g = Graph()
    with g.as_default():
        x = constant(1.0)
        y = apply_op(NoGradOp, [x]).outputs[0]
        with pytest.raises(LookupError, match="NdflowTestNoGradient"):
            gradients(y, x)


def test_eager_mode_is_rejected():
    with pytest.raises(RuntimeError, match="GradientTape"):
        gradients(convert_to_tensor(1.0), convert_to_tensor(1.0))


def test_second_order_symbolic():
    g = Graph()
    with g.as_default():
        x = constant(1.5)
        (dy,) = gradients(x ** 3.0, x)
        (d2y,) = gradients(dy, x)
    np.testing.assert_allclose(_run(g, [dy, d2y]), [3 * 1.5 ** 2, 6 * 1.5], rtol=1e-6)
