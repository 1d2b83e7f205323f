"""Manual float16 training as NVIDIA's TensorFlow user guide describes it: float32 master
variables cast to float16 inside the model, the loss taken in float32, and a fixed loss scale
applied by hand through `tf.gradients(loss * scale, params)` — in a Session, converging."""

from __future__ import annotations

import numpy as np

import ndflow as tf
from ndflow.core import dtypes
from ndflow.core.graph import Graph

v1 = tf.compat.v1
LOSS_SCALE = 128.0


def _data(n=256, d=16, classes=4, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0.0, 3.0, (classes, d)).astype(np.float32)
    labels = rng.integers(0, classes, n)
    x = centers[labels] + rng.normal(0.0, 1.0, (n, d)).astype(np.float32)
    return x, labels.astype(np.int32)


def test_float16_model_with_float32_master_weights_and_manual_loss_scale():
    x_np, y_np = _data()
    g = Graph()
    with g.as_default():
        v1.set_random_seed(1)
        x = v1.placeholder(dtypes.float32, [None, 16])
        y = v1.placeholder(dtypes.int32, [None])
        w1 = v1.get_variable("w1", [16, 32], dtypes.float32,
                             v1.glorot_uniform_initializer())       # float32 master weights
        b1 = v1.get_variable("b1", [32], dtypes.float32, v1.zeros_initializer())
        w2 = v1.get_variable("w2", [32, 4], dtypes.float32, v1.glorot_uniform_initializer())
        b2 = v1.get_variable("b2", [4], dtypes.float32, v1.zeros_initializer())
        params = [w1, b1, w2, b2]
        h = tf.nn.relu(tf.matmul(v1.cast(x, dtypes.float16), v1.cast(w1, dtypes.float16))
                       + v1.cast(b1, dtypes.float16))
        logits16 = tf.matmul(h, v1.cast(w2, dtypes.float16)) + v1.cast(b2, dtypes.float16)
        assert logits16.dtype is dtypes.float16
        loss = v1.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=v1.cast(logits16, dtypes.float32)))
        scaled_grads = v1.gradients(loss * LOSS_SCALE, params)
        assert [gr.dtype for gr in scaled_grads] == [dtypes.float32] * 4
        grads = [gr / LOSS_SCALE for gr in scaled_grads]
        train_op = v1.train.MomentumOptimizer(0.05, 0.9).apply_gradients(zip(grads, params))
        accuracy = v1.reduce_mean(v1.cast(v1.equal(v1.argmax(logits16, 1, output_type=dtypes.int32),
                                                   y), dtypes.float32))
        init = v1.global_variables_initializer()
    types = {op.type for op in g.get_operations()}
    assert "MatMul" in types and "Cast" in types
    assert any(op.type == "MatMul" and op.attrs["T"] is dtypes.float16
               for op in g.get_operations())
    with v1.Session(graph=g) as sess:
        sess.run(init)
        first = sess.run(loss, {x: x_np, y: y_np})
        for _ in range(60):
            sess.run(train_op, {x: x_np, y: y_np})
        last, acc = sess.run([loss, accuracy], {x: x_np, y: y_np})
        assert all(np.all(np.isfinite(sess.run(p.value()))) for p in params)
        assert sess.run(w1.value()).dtype == np.float32
    assert last < 0.2 * first
    assert acc >= 0.95
