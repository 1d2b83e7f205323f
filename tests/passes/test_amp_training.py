"""Auto mixed precision on a real training step: the gradient graph follows the lists and a
bfloat16-rewritten MNIST-like CNN step gives losses close to float32."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import optimizer_options

B, F = tf.bfloat16, tf.float32


@pytest.fixture(autouse=True)
def _reset():
    optimizer_options.reset()
    yield
    optimizer_options.reset()


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-0.5, 0.5, (16, 12, 12, 1)).astype(np.float32)
    y = rng.integers(0, 10, (16,)).astype(np.int64)
    params = {"w1": rng.normal(0, 0.1, (3, 3, 1, 8)), "b1": np.zeros(8),
              "w2": rng.normal(0, 0.1, (3, 3, 8, 16)), "b2": np.full(16, 0.1),
              "fc": rng.normal(0, 0.1, (3 * 3 * 16, 10)), "fb": np.zeros(10)}
    return x, y, {k: v.astype(np.float32) for k, v in params.items()}


def _step_fn(params):
    p = {k: tf.Variable(v) for k, v in params.items()}
    variables = list(p.values())
    opt = tf.keras.optimizers.SGD(0.1, momentum=0.9)

    def model(x, y):
        h = tf.nn.conv2d(x, p["w1"], strides=[1, 1, 1, 1], padding="SAME")
        h = tf.nn.max_pool(tf.nn.relu(tf.nn.bias_add(h, p["b1"])), 2, 2, "SAME")
        h = tf.nn.conv2d(h, p["w2"], strides=[1, 1, 1, 1], padding="SAME")
        h = tf.nn.max_pool(tf.nn.relu(tf.nn.bias_add(h, p["b2"])), 2, 2, "SAME")
        logits = tf.matmul(tf.reshape(h, [16, -1]), p["fc"]) + p["fb"]
        return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=logits))

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = model(x, y)
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss
    return step


def _types(graph) -> dict:
    out: dict = {}
    for o in graph.get_operations():
        t = o.attrs.get("T")
        if t is not None:
            out.setdefault(o.type, set()).add(t)
    return out


def test_gradient_graph_follows_the_lists():
    x, y, params = _data()
    xt, yt = tf.constant(x), tf.constant(y)
    optimizer_options.set_experimental_options({"auto_mixed_precision_onednn_bfloat16": True,
                                               "remapping": False})
    cf = _step_fn(params).get_concrete_function(xt, yt)
    before = _types(cf.graph)
    assert before["Conv2DBackpropFilter"] == {F}
    g = cf.optimized_graph()
    types = _types(g)
    for op_type in ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MatMul",
                    "BiasAdd", "BiasAddGrad", "Relu", "ReluGrad", "MaxPool", "MaxPoolGrad"):
        if op_type in types:
            assert types[op_type] == {B}, (op_type, types[op_type])
    for op_type in ("SparseSoftmaxCrossEntropyWithLogits", "ResourceApplyKerasMomentum"):
        assert types[op_type] == {F}
    assert "Conv2DBackpropFilter" in types and "BiasAddGrad" in types
    assert sum(o.type == "Cast" for o in g.get_operations()) > 0
    # the traced graph itself is never modified
    assert _types(cf.graph) == before


def test_bf16_training_losses_close_to_float32():
    x, y, params = _data()
    xt, yt = tf.constant(x), tf.constant(y)
    step32 = _step_fn(params)
    losses32 = [float(step32(xt, yt).numpy()) for _ in range(8)]
    optimizer_options.set_experimental_options({"auto_mixed_precision_onednn_bfloat16": True})
    step16 = _step_fn(params)
    assert _types(step16.get_concrete_function(xt, yt).optimized_graph()).get("MatMul", {B}) \
        != {F}
    losses16 = [float(step16(xt, yt).numpy()) for _ in range(8)]
    assert losses32[-1] < losses32[0]
    assert losses16[-1] < losses16[0]
    np.testing.assert_allclose(losses16, losses32, rtol=0.05, atol=0.02)
    assert losses16 != losses32      # it really ran in bfloat16
