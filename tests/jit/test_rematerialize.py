"""Rematerialization (ndflow.jit.rematerialize): a cheap value another kernel reads is
recomputed there instead of written and read back (XLA duplicates cheap producers, reference
section 4 rules 5-6), and compiled clusters still compute what uncompiled ones do."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core import dtypes, optimizer_options
from ndflow.jit import executable, fusion, rematerialize
from ndflow.jit.executable import compile_cluster, specialize_graph
from ndflow.jit.fusion import FusionGroup, plan_fusions
from tests.jit.cluster_graphs import CountingFallback, randn
from tests.jit.jit_graphs import (
    DEVICES,
    build,
    check_plan,
    checked_plan,
    kernel_cache_dir,
    no_row_kernels,  # noqa: F401 - a fixture
    raw,
    run_plan,
    run_reference,
)

F32 = dtypes.float32
CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def cache_dir(request):
    return kernel_cache_dir(request.config)


def _groups(plan):
    return [u for u in plan if isinstance(u, FusionGroup)]


def _minus_row_max(t):
    """t - max(t, axis=1): the max is a reduction, so t crosses from the reduction's kernel
    to the subtraction's."""
    return raw("Sub", t, raw("Max", t, tf.constant([1]), keep_dims=True))


def _run_both(fn, specs, cache_dir):
    """The checked plan of `fn`, after checking its generated kernels against op-by-op
    kernels."""
    g, phs, outs = build(fn, specs)
    ops = [op for op in g.get_operations() if op.type != "Placeholder"]
    plan = plan_fusions(ops, outs)
    check_plan(plan, ops, phs, outs)
    rng = np.random.default_rng(0)
    feeds = {p: torch.from_numpy(rng.uniform(-2, 2, p.shape.as_list()).astype(np.float32))
             for p in phs}
    want = run_reference(g.get_operations(), feeds)
    got = run_plan(plan, feeds, cache_dir)
    for t in outs:
        torch.testing.assert_close(got[t], want[t], rtol=1e-6, atol=1e-6)
    return plan


# (producer of t from a [4, 8], b [4, 8], c [4, 1]; whether the subtraction recomputes t)
PRODUCERS = {
    "mul_by_broadcast_operand": (lambda a, b, c: raw("Mul", a, c), True),
    "divide_by_constant": (lambda a, b, c: raw("RealDiv", a, tf.constant(4.0)), True),
    "divide": (lambda a, b, c: raw("RealDiv", a, b), False),       # expensive: never twice
    "exp": (lambda a, b, c: raw("Exp", a), False),
    "sum_of_two_inputs": (lambda a, b, c: raw("AddV2", a, b), False),  # reads 2x what t is
}


@pytest.mark.usefixtures("no_row_kernels")
@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_a_cheap_value_crossing_a_reduction_is_recomputed(name, cache_dir):
    producer, recomputed = PRODUCERS[name]
    plan = _run_both(lambda a, b, c: _minus_row_max(producer(a, b, c)),
                     [(F32, [4, 8]), (F32, [4, 8]), (F32, [4, 1])], cache_dir)
    reduction, last = _groups(plan)
    t_type = [op for op in reduction.ops if op.type not in ("Const", "Max")][0].type
    written = [t.op.type for t in reduction.outputs]
    if recomputed:   # the max's kernel writes only the max; the last kernel computes t again
        assert written == ["Max"] and [op.type for op in last.recomputed
                                       if op.type != "Const"] == [t_type]
    else:            # t is written once and read
        assert written == [t_type, "Max"] and not last.recomputed


@pytest.mark.usefixtures("no_row_kernels")
def test_recomputing_from_operands_the_group_reads_anyway_costs_nothing(cache_dir):
    # t = a + b would read two tensors for one, unless the reader reads a already
    plan = _run_both(lambda a, b: raw("Mul", _minus_row_max(raw("AddV2", a, b)), a),
                     [(F32, [4, 8]), (F32, [4, 8])], cache_dir)
    reduction, last = _groups(plan)
    assert [t.op.type for t in reduction.outputs] == ["Max"]
    assert [op.type for op in last.recomputed] == ["AddV2"]


@pytest.mark.usefixtures("no_row_kernels")
def test_a_value_in_memory_anyway_is_read_not_recomputed():
    # a library call (MatMul) reads t: it is written whatever happens, so reading it is cheaper
    plan, _ = checked_plan(
        lambda a, w: (lambda t: [_minus_row_max(t), raw("MatMul", t, w)])(
            raw("Mul", a, tf.constant(2.0))), [(F32, [4, 8]), (F32, [8, 8])])
    assert not any(g.recomputed for g in _groups(plan))
    # a group of views only reads it too: a reshape of a value in memory costs nothing
    plan, _ = checked_plan(
        lambda a, c: (lambda t: [_minus_row_max(t), raw("Reshape", t, tf.constant([32]))])(
            raw("Mul", a, c)), [(F32, [4, 8]), (F32, [4, 1])])
    assert not any(g.recomputed for g in _groups(plan))


@pytest.mark.usefixtures("no_row_kernels")
def test_a_broadcast_read_is_not_recomputed():
    # t = b * b [8] is read by x + t over [4, 8]: recomputing it there would multiply 4 times
    plan, _ = checked_plan(
        lambda x, b: (lambda t: raw("Mul", raw("AddV2", x, t),
                                    raw("Sum", t, tf.constant([0]), keep_dims=False)))(
            raw("Mul", b, b)), [(F32, [4, 8]), (F32, [8])])
    reduction, last = _groups(plan)
    assert "Mul" in [t.op.type for t in reduction.outputs] and not last.recomputed


@pytest.mark.usefixtures("no_row_kernels")
@pytest.mark.parametrize("n", [4, rematerialize.MAX_TREE_OPS + 4])
def test_what_one_value_recomputes_is_bounded(n):
    def fn(a):
        t = a
        for i in range(n):
            t = raw("Mul", t, tf.constant(1.0 + i / 100))
        return _minus_row_max(t)
    plan, _ = checked_plan(fn, [(F32, [4, 8])])
    _, last = _groups(plan)
    copied = [op for op in last.recomputed if op.type != "Const"]
    assert len(copied) == (n if n <= rematerialize.MAX_TREE_OPS else 0)


# -- a LayerNorm + GELU block with its gradient, as auto-clustering hands it to the compiler ----

def _ln_gelu_block(x, w, gamma, beta, w2):
    with tf.GradientTape() as tape:
        tape.watch([x, w, gamma, beta, w2])
        h = tf.matmul(x, w)
        mean = tf.reduce_mean(h, axis=-1, keepdims=True)
        var = tf.reduce_mean(tf.square(h - mean), axis=-1, keepdims=True)
        n = (h - mean) * tf.math.rsqrt(var + 1e-5) * gamma + beta
        g = 0.5 * n * (1.0 + tf.tanh(0.7978845608028654 * (n + 0.044715 * n * n * n)))
        y = tf.matmul(g, w2)
        loss = tf.reduce_mean(tf.square(y))
    return [loss] + tape.gradient(loss, [x, w, gamma, beta, w2])


def _block_args(dtype=torch.float32):
    return [randn(6, 16, dtype=dtype), randn(16, 32, seed=1, dtype=dtype),
            (randn(32, seed=2) + 1).to(dtype), randn(32, seed=3, dtype=dtype),
            randn(32, 8, seed=4, dtype=dtype)]


def _block_cluster(args):
    """The one cluster auto-clustering makes of the block (forward and backward)."""
    optimizer_options.set_jit(True)
    try:
        f = tf.function(_ln_gelu_block)
        consts = [tf.constant(a.float().numpy(), dtype=tf.as_dtype(a.dtype)) for a in args]
        graph = f.get_concrete_function(*consts).optimized_graph()
    finally:
        optimizer_options.set_jit(False)
    (call,) = [op for op in graph.get_operations() if op.type == "_XlaClusterCall"]
    return call.attrs["function"]


@pytest.mark.usefixtures("no_row_kernels")
def test_layer_norm_gelu_forward_kernel_writes_only_what_the_backward_cannot_recompute():
    args = _block_args()
    fg = _block_cluster(args)
    graph, inputs, outputs = specialize_graph(fg, [(F32, tuple(a.shape)) for a in args])
    ops = [op for op in graph.get_operations() if op.type != "Placeholder"]
    plan = plan_fusions(ops, outputs)
    check_plan(plan, ops, inputs, outputs)
    groups = _groups(plan)
    (forward,) = [g for g in groups if any(op.type == "Tanh" for op in g.ops)]
    # tanh is expensive (the backward reads it); the GELU output feeds the second MatMul. Not
    # written: the normalized value, 0.5 * n, n * n, 1 + tanh, ... (8 tensors before)
    assert sorted(t.op.type for t in forward.outputs) == ["Mul", "Tanh"]
    (gelu,) = [t for t in forward.outputs if t.op.type == "Mul"]
    assert [c.type for c in gelu.consumers()] == ["MatMul"] * len(gelu.consumers())
    # h - mean is recomputed wherever it is read: the variance's kernel writes the variance
    (variance,) = [g for g in groups if [op.type for op in g.ops] == ["Sub", "Square", "Mean"]]
    assert [t.op.type for t in variance.outputs] == ["Mean"]
    # the backward kernels recompute the forward's cheap values from h, the statistics, gamma,
    # beta and tanh
    assert sum(len(g.recomputed) for g in groups) >= 10


def _compile_block(args, cache_dir, monkeypatch, remat=True, device=CPU):
    """(executable of the block's cluster for `args` on `device`, its fusion plan)."""
    planned = []

    def plan_and_keep(ops):
        planned.append(plan_fusions(ops))
        return planned[-1]

    monkeypatch.setattr(executable, "plan_fusions", plan_and_keep)
    if not remat:
        monkeypatch.setattr(fusion, "rematerialize", lambda units, live, order: units)
    fg = _block_cluster(args)
    dt = tf.as_dtype(args[0].dtype)
    exe = compile_cluster(fg, [(dt, tuple(a.shape)) for a in args], device, cache_dir=cache_dir)
    # forward: the LayerNorm + GELU kernel; backward: one row kernel (input gradient and the
    # gamma/beta sums) and the loss's; a plan falling back to ATen would have fewer or none
    assert exe.stats["unfused_groups"] == 0 and exe.stats["fused_groups"] >= 3
    assert any(g.recomputed for g in _groups(planned[0])) == remat
    return exe, fg


@pytest.mark.parametrize("device", DEVICES)
def test_layer_norm_gelu_block_compiled_equals_uncompiled(cache_dir, monkeypatch, device):
    args = _block_args()
    exe, fg = _compile_block(args, cache_dir, monkeypatch, device=device)
    names = ["loss", "dx", "dw", "dgamma", "dbeta", "dw2"]
    got = exe([a.to(device) for a in args])
    for name, g, w in zip(names, got, CountingFallback(fg)(args)):
        assert g.device.type == device.type
        torch.testing.assert_close(g.cpu(), w, rtol=1e-5, atol=1e-5,
                                   msg=lambda m, n=name: f"{n}: {m}")


@pytest.mark.slow
def test_bfloat16_values_recomputed_equal_the_values_read(cache_dir, monkeypatch):
    # every op rounds to bfloat16 in the kernel that recomputes it as in the one that wrote
    # it: the gradients are bit for bit those of the plan that reads the values back
    args = _block_args(torch.bfloat16)
    with monkeypatch.context() as m:
        recomputed = _compile_block(args, cache_dir, m)[0](args)
    read_back = _compile_block(args, cache_dir, monkeypatch, remat=False)[0](args)
    for g, w in zip(recomputed, read_back):
        assert torch.equal(g, w)
