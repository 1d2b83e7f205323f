"""Variables inside compiled clusters (issue 54): a `jit_compile=True` training step is one
cluster holding its variable reads, optimizer updates, batch-norm statistics and dropout's
stateless random numbers, as XLA compiles one computation, and it computes what the
uncompiled step computes."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf


def _ops(graph):
    return [op.type for op in graph.get_operations()]


def _model(seed):
    tf.keras.utils.set_random_seed(seed)
    layers = tf.keras.layers
    # (no bias before the batch norm: its gradient is 0 up to rounding, which Adam would
    # turn into whole learning-rate steps in either order of summation)
    return tf.keras.Sequential([
        tf.keras.Input((6,)), layers.Dense(8, use_bias=False), layers.BatchNormalization(),
        layers.ReLU(), layers.Dropout(0.25, seed=2), layers.Dense(3)])


def _train(optimizer: str, jit: bool, x, y):
    """(losses of 4 steps, weights after them, the step's optimized graph)."""
    model = _model(1)
    opt = (tf.keras.optimizers.SGD(0.05, momentum=0.9) if optimizer == "sgd_momentum"
           else tf.keras.optimizers.Adam(0.01))
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function(jit_compile=jit)
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    losses = [float(step(x, y)) for _ in range(4)]
    return (losses, [w.copy() for w in model.get_weights()],
            step.get_concrete_function(x, y).optimized_graph())


@pytest.mark.parametrize("optimizer", ["sgd_momentum", "adam"])
def test_a_compiled_training_step_is_one_cluster_and_trains_as_the_plain_one(optimizer):
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((16, 6)).astype(np.float32))
    y = tf.constant(rng.integers(0, 3, 16))
    plain_losses, plain_weights, _ = _train(optimizer, False, x, y)
    jit_losses, jit_weights, graph = _train(optimizer, True, x, y)
    np.testing.assert_allclose(jit_losses, plain_losses, rtol=1e-5, atol=1e-6)
    for got, want in zip(jit_weights, plain_weights):   # BN statistics included
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    types = _ops(graph)
    assert types.count("_XlaClusterCall") == 1, types
    outside = {"ReadVariableOp", "AssignVariableOp", "AssignAddVariableOp",
               "AssignSubVariableOp", "StatelessRandomUniformV2", "StatelessRandomUniform"}
    assert not outside & set(types), types
    assert not any(t.startswith("ResourceApply") or t.startswith("_Grouped") for t in types)


def test_a_read_after_a_write_in_one_cluster_sees_the_write():
    v = tf.Variable([1.0, 2.0])

    @tf.function(jit_compile=True)
    def f():
        before = v.read_value()
        v.assign_add([10.0, 10.0])
        after = v.read_value() * 2.0
        v.assign_sub([1.0, 1.0])
        return before, after

    before, after = f()
    np.testing.assert_array_equal(before.numpy(), [1.0, 2.0])     # read before the write
    np.testing.assert_array_equal(after.numpy(), [22.0, 24.0])
    np.testing.assert_array_equal(v.numpy(), [10.0, 11.0])
    types = _ops(f.get_concrete_function().optimized_graph())
    assert types.count("_XlaClusterCall") == 1 and "AssignAddVariableOp" not in types


def test_auto_clustering_keeps_tensorflows_read_before_write_rule():
    # Under auto-jit ndflow's clusters stay TensorFlow's: a write and a later read of a
    # variable are never one cluster (XLA reads variables at entry).
    v = tf.Variable(np.ones((4, 4), np.float32))
    tf.config.optimizer.set_jit("autoclustering")
    try:
        @tf.function
        def f(x):
            v.assign(tf.nn.relu(x) * 2.0 + 1.0)
            return tf.nn.relu(v.read_value() * 3.0) + 1.0 - x

        x = tf.constant(np.full((4, 4), 0.5, np.float32))
        np.testing.assert_allclose(f(x).numpy(), np.full((4, 4), 6.5, np.float32))
        graph = f.get_concrete_function(x).optimized_graph()
        calls = [op for op in graph.get_operations() if op.type == "_XlaClusterCall"]
        for call in calls:
            inner = _ops(call.get_attr("function"))
            assert not ("AssignVariableOp" in inner and "ReadVariableOp" in inner), inner
    finally:
        tf.config.optimizer.set_jit(False)
