"""Remapper: a loss-scale step's large-layer update applied with the layer's input gradient
when every gradient is proven finite at run time (ndflow/passes/speculative_backprop.py).

Checked: the MNIST example's loss-scale training step (Keras LossScaleOptimizer, SGD with
momentum) is rewritten — fc1's input-gradient MatMul becomes `_ProvenMatMulApplyMomentum`,
read by the speculative update — and trains bit for bit as the graph without the rewrite,
through steps whose gradients overflow or are NaN (skipped: nothing written) and a step
whose gradients are finite but too large for the proof (applied by the speculative op); each
bound rule holds on the inputs that make it tightest; and no rewrite where it would be
unsafe or the chain has an op without a rule.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import gemm_epilogue, speculative_numba, training_speculative, value_bounds
from ndflow.models.image.mnist.model import model, regularized_loss
from ndflow.ops import nn_fused
from ndflow.ops.apply import apply_op
from ndflow.passes import speculative_backprop
from tests.passes.remapping_toggle import RemapperStep

INF, NAN = float("inf"), float("nan")
BATCH = 8


def _ops(graph, op_type: str) -> list:
    return [op for op in graph.get_operations() if op.type == op_type]


def _params(rng):
    shapes = {"conv1_weights": (5, 5, 1, 32), "conv1_biases": (32,),
              "conv2_weights": (5, 5, 32, 64), "conv2_biases": (64,),
              "fc1_weights": (3136, 512), "fc1_biases": (512,),
              "fc2_weights": (512, 10), "fc2_biases": (10,)}
    return {k: tf.Variable((rng.normal(0, 0.1, s)).astype(np.float32))
            for k, s in shapes.items()}


def _mnist_lso(rewrite: bool, factors, extra=None):
    """The MNIST model's loss-scale step on `loss * f` for each f of `factors`: every
    variable and slot after each step, and the optimized graph. `extra(p, grads)` adds ops
    to the step (the cases that must not be rewritten)."""
    rng = np.random.default_rng(3)
    x = tf.constant(rng.uniform(-0.5, 0.5, (BATCH, 28, 28, 1)).astype(np.float32))
    y = tf.constant(rng.integers(0, 10, BATCH).astype(np.int64))
    p = _params(rng)
    variables = list(p.values())
    opt = tf.keras.mixed_precision.LossScaleOptimizer(
        tf.keras.optimizers.SGD(0.01, momentum=0.9), initial_scale=2 ** 10,
        dynamic_growth_steps=3)

    @tf.function
    def step(f):
        with tf.GradientTape() as tape:
            loss = regularized_loss(p, model(p, x, train=False), y) * f
            scaled = opt.get_scaled_loss(loss)
        grads = opt.get_unscaled_gradients(tape.gradient(scaled, variables))
        out = extra(p, grads) if extra is not None else loss
        opt.apply_gradients(zip(grads, variables))
        return out

    states = []
    with RemapperStep("speculate_backprop", rewrite):
        for f in factors:
            step(tf.constant(f))
            states.append([t.numpy().copy() for t in variables + opt.inner_optimizer.variables]
                          + [opt.loss_scale.numpy()])
        graph = step.get_concrete_function(tf.constant(1.0)).optimized_graph()
    return states, graph


@pytest.fixture
def blocked_path():
    if speculative_numba._callback() is None or not gemm_epilogue.available():
        pytest.skip("numba, ATen's OpenMP launcher or MKL's sgemm is missing")


def test_mnist_loss_scale_step_equals_the_graph_without_the_rewrite(blocked_path, monkeypatch):
    calls = []
    speculate = gemm_epilogue.matmul_speculate

    def spy(*args, backprop=None, **kw):
        calls.append("with dx" if backprop is not None else "alone")
        return speculate(*args, backprop=backprop, **kw)

    monkeypatch.setattr(gemm_epilogue, "matmul_speculate", spy)
    # finite, finite, overflowing, finite, NaN, finite, finite gradients too large for the
    # proof (about 1e28: its chain's bound passes 2^120)
    factors = [1.0, 1.0, INF, 1.0, NAN, 1.0, 1e25]
    on, graph = _mnist_lso(True, factors)
    steps, calls[:] = list(calls), []
    off, graph_off = _mnist_lso(False, factors)
    (proven,) = _ops(graph, "_ProvenMatMulApplyMomentum")
    (spec,) = _ops(graph, "_SpeculativeApplyMomentum")
    assert spec.inputs[-1] is proven.outputs[1] and spec.attrs["D"] == 1
    assert spec.attrs["N"] == 8 and spec.attrs["applied_entry"] == 4     # fc1's weights
    assert len(_ops(graph, "MatMul")) == len(_ops(graph_off, "MatMul")) - 1
    assert not _ops(graph_off, "_ProvenMatMulApplyMomentum")
    # the leaves: conv2's filter, conv1's pooled output and the data (the conv gradients),
    # the gradients made before dx, the L2 terms' scale and variables
    assert proven.attrs["L"] >= 3 and proven.attrs["V"] == 3
    # proven: steps 1, 2, 4 and 6 (fc1 updated with dx); the 1e25 step went to the
    # speculative op (new buffers: its in-place path needs a bound too); nothing for the
    # skipped ones
    assert steps == ["with dx"] * 4 + ["alone"]
    assert [float(s[-1]) for s in on] == [2.0 ** 10, 2.0 ** 10, 2.0 ** 9, 2.0 ** 9, 2.0 ** 8,
                                          2.0 ** 8, 2.0 ** 8]
    for k, f in enumerate(factors):
        moved = not np.array_equal(on[k][4], on[k - 1][4]) if k else True
        assert moved == bool(np.isfinite(f))      # fc1's weights: skipped steps write nothing
    for got, want in zip(on, off):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_no_rewrite_when_a_read_of_the_weight_follows_the_input_gradient():
    def read_after(p, grads):   # reads fc1's weights after its input gradient was made
        return tf.reduce_sum(grads[0]) + tf.reduce_sum(p["fc1_weights"])
    _, graph = _mnist_lso(True, [1.0], read_after)
    assert _ops(graph, "_SpeculativeApplyMomentum")
    assert not _ops(graph, "_ProvenMatMulApplyMomentum")


def test_no_rewrite_when_the_chain_has_an_op_without_a_rule():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(4, 64)).astype(np.float32))
    w0 = tf.Variable(rng.normal(size=(64, 320)).astype(np.float32) * 0.1)
    w1 = tf.Variable(rng.normal(size=(320, 256)).astype(np.float32) * 0.1)
    opt = tf.keras.mixed_precision.LossScaleOptimizer(
        tf.keras.optimizers.SGD(0.01, momentum=0.9))

    def train(activation):
        @tf.function
        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.matmul(activation(tf.matmul(x, w0)), w1) ** 2)
                scaled = opt.get_scaled_loss(loss)
            grads = opt.get_unscaled_gradients(tape.gradient(scaled, [w0, w1]))
            opt.apply_gradients(zip(grads, [w0, w1]))
        step()
        return step.get_concrete_function().optimized_graph()

    # relu's gradient has a rule: w1's update takes x0's input gradient; tanh's has none
    assert _ops(train(tf.nn.relu), "_ProvenMatMulApplyMomentum")
    assert not _ops(train(tf.tanh), "_ProvenMatMulApplyMomentum")


# -- the rules: each bound holds where it is tightest (every term of the sum at its largest,
#    of one sign) and on random values ----------------------------------------------------------

def _bound_of(rule_op, at, leaves_max, value_bound):
    outs = speculative_backprop.RULES[rule_op.type](rule_op, at)
    bounds = []
    for factor, leaves, terms in outs:
        total = value_bound * len(at) + sum(leaves_max[k] for k in terms)
        for k in leaves:
            total *= leaves_max[k]
        bounds.append(factor * total)
    return bounds


def _graph_op(fn, *specs):
    g = tf.Graph()
    with g.as_default():
        args = [tf.compat.v1.placeholder(dtype, shape) for dtype, shape in specs]
        out = fn(*args)
    return (out if isinstance(out, list) else [out])[0].op


@pytest.mark.parametrize("case", ["conv_filter", "conv_input", "matmul", "bias_grad", "sum",
                                  "pool_grad", "add"])
def test_each_rule_bounds_its_output(case):
    rng = np.random.default_rng(1)
    f32 = tf.float32
    if case == "conv_filter":
        x, g = np.full((2, 6, 6, 3), 3.0, np.float32), np.full((2, 6, 6, 4), -2.0, np.float32)
        op = _graph_op(lambda a, b: tf.compat.v1.nn.conv2d_backprop_filter(
            a, [3, 3, 3, 4], b, [1, 1, 1, 1], "SAME"), (f32, x.shape), (f32, g.shape))
        got = tf.compat.v1.nn.conv2d_backprop_filter(x, [3, 3, 3, 4], g, [1, 1, 1, 1], "SAME")
        at, leaves, value = {2}, {0: 3.0}, 2.0
    elif case == "conv_input":
        w, g = np.full((3, 3, 3, 4), 0.5, np.float32), np.full((2, 6, 6, 4), 2.0, np.float32)
        op = _graph_op(lambda a, b: tf.compat.v1.nn.conv2d_backprop_input(
            [2, 6, 6, 3], a, b, [1, 1, 1, 1], "SAME"), (f32, w.shape), (f32, g.shape))
        got = tf.compat.v1.nn.conv2d_backprop_input([2, 6, 6, 3], w, g, [1, 1, 1, 1], "SAME")
        at, leaves, value = {2}, {1: 0.5}, 2.0
    elif case == "matmul":
        a, b = np.full((3, 7), 1.5, np.float32), rng.uniform(-4, 4, (5, 7)).astype(np.float32)
        b[0, :] = -4   # one output sums 7 terms of 1.5 x -4
        op = _graph_op(lambda u, v: tf.matmul(u, v, transpose_b=True), (f32, a.shape),
                       (f32, b.shape))
        got = tf.matmul(a, b, transpose_b=True)
        at, leaves, value = {0}, {1: float(np.abs(b).max())}, 1.5
    elif case == "bias_grad":
        g = np.full((4, 5, 5, 6), 7.0, np.float32)
        op = _graph_op(lambda t: tf.raw_ops.BiasAddGrad(out_backprop=t), (f32, g.shape))
        got = tf.raw_ops.BiasAddGrad(out_backprop=g)
        at, leaves, value = {0}, {}, 7.0
    elif case == "sum":
        g = np.full((4, 5, 5, 6), -7.0, np.float32)
        op = _graph_op(lambda t: tf.reduce_sum(t, [0, 1]), (f32, g.shape))
        got = tf.reduce_sum(g, [0, 1])
        at, leaves, value = {0}, {}, 7.0
    elif case == "pool_grad":   # overlapping 3x3 windows, stride 1
        x = rng.uniform(-1, 1, (1, 6, 6, 2)).astype(np.float32)
        g = np.full((1, 6, 6, 2), 5.0, np.float32)
        op = _graph_op(lambda a, b, c: tf.raw_ops.MaxPoolGrad(
            orig_input=a, orig_output=b, grad=c, ksize=[1, 3, 3, 1], strides=[1, 1, 1, 1],
            padding="SAME"), (f32, x.shape), (f32, x.shape), (f32, g.shape))
        y = tf.nn.max_pool2d(x, 3, 1, "SAME")
        got = tf.raw_ops.MaxPoolGrad(orig_input=x, orig_output=y, grad=g, ksize=[1, 3, 3, 1],
                                     strides=[1, 1, 1, 1], padding="SAME")
        at, leaves, value = {2}, {}, 5.0
    else:   # AddN of a bounded value and another tensor
        a, b = np.full((3, 4), 2.0, np.float32), np.full((3, 4), 6.0, np.float32)
        op = _graph_op(lambda u, v: tf.math.add_n([u, v]), (f32, a.shape), (f32, b.shape))
        got = tf.math.add_n([a, b])
        at, leaves, value = {0}, {1: 6.0}, 2.0
    (bound,) = _bound_of(op, at, leaves, value)
    if case.startswith("conv"):   # the direct sum's bound (the slack covers other algorithms)
        bound /= speculative_backprop.CONV_SLACK
    actual = float(np.abs(got.numpy()).max())
    assert 0 < actual <= bound <= 4 * actual


def test_the_bound_program_fails_on_nan_inf_and_overflow():
    program = [(2.0, [0], [0]), (4.0, [1], []), (1.0, [], [1])]   # 2 dx |l0|, 8 dx |l0|, |l1|
    mags = {0: 3.0, 1: 1.0}
    run = training_speculative.run_bound_program
    assert run(program, 1e10, mags.__getitem__)
    assert not run(program, NAN, mags.__getitem__)
    assert not run(program, INF, mags.__getitem__)
    assert not run(program, value_bounds.LIMIT / 4, mags.__getitem__)   # x24 passes it
    assert not run(program, 0.0, {0: INF, 1: 1.0}.__getitem__)            # 0 * inf
    assert not run(program, 1.0, {0: 3.0, 1: NAN}.__getitem__)            # a NaN leaf alone
    assert not run([(1.0, [], [0])], 0.0, {0: value_bounds.LIMIT}.__getitem__)
    assert value_bounds.max_abs(torch.tensor([1.0, NAN, -2.0])) != \
        value_bounds.max_abs(torch.tensor([1.0, NAN, -2.0]))              # NaN stays NaN


# -- the op alone: applied only when its program's bounds hold; dx either way -------------------

def _proven(w, acc, x, dy, leaf, var_leaf, program):
    f = tf.constant
    attrs = {"T": tf.float32, "keras": True, "decay": True, "L": 1, "V": 1,
             "step_factors": [p[0] for p in program],
             "step_values": [v for p in program for v in p[1]],
             "step_value_counts": [len(p[1]) for p in program],
             "step_leaves": [v for p in program for v in p[2]],
             "step_leaf_counts": [len(p[2]) for p in program]}
    op = apply_op(nn_fused.ProvenMatMulApplyMomentum,
                  [w.handle, acc.handle, f(np.float32(0.1)), f(x), f(dy), f(np.float32(0.05)),
                   f(np.float32(0.9)), [f(leaf)], [var_leaf.handle]], attrs)
    return op.outputs[0].numpy(), bool(op.outputs[1])


@pytest.mark.parametrize("poison", [None, NAN, INF, 1e36])
def test_the_op_applies_the_update_only_when_proven(poison, blocked_path):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(8, 320)).astype(np.float32)
    dy = rng.normal(size=(8, 256)).astype(np.float32)
    w0 = rng.normal(size=(320, 256)).astype(np.float32)
    a0 = rng.normal(size=(320, 256)).astype(np.float32) * 0.1
    w, acc = tf.Variable(w0), tf.Variable(a0)
    leaf = rng.normal(size=(4, 5)).astype(np.float32)
    if poison is not None:
        leaf[2, 3] = poison
    other = tf.Variable(np.ones(3, np.float32))
    # dx |leaf| over 9 terms, then |leaf| |other| (the L2 term of another entry)
    program = [(18.0, [0], [0]), (1.0, [], [0, 1])]
    dx, applied = _proven(w, acc, x, dy, leaf, other, program)
    np.testing.assert_allclose(dx, dy.astype(np.float64) @ w0.T, rtol=1e-5, atol=1e-4)
    assert applied == (poison is None)
    if poison is None:   # Keras' momentum of g = x^T dy + 0.05 w, lr 0.1
        g = x.astype(np.float64).T @ dy + 0.05 * w0
        new_acc = 0.9 * a0 - 0.1 * g
        np.testing.assert_allclose(acc.numpy(), new_acc, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(w.numpy(), w0 + new_acc, rtol=1e-5, atol=1e-5)
    else:                # the variables as they were
        np.testing.assert_array_equal(w.numpy(), w0)
        np.testing.assert_array_equal(acc.numpy(), a0)
