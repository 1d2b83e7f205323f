"""Row kernels (ndflow.jit.fusion._merge_row_producers, codegen's RowReduce): a loop fusion takes
in the reductions over its own innermost dimensions that it reads back, and the per-row math on
them, so LayerNorm's statistics are computed in the kernel that normalizes. Checked: what the
planner merges and refuses, and generated kernels against float64 NumPy and op-by-op ATen."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core import dtypes
from ndflow.core.graph import Operation
from ndflow.jit.codegen import compile_fusion, emitters
from ndflow.jit.fusion import FusionGroup
from ndflow.jit.fusion import plan_fusions as plan_of
from tests.jit.jit_graphs import (
    CPU,
    DEVICES,
    build,
    check_plan,
    kernel_cache_dir,
    no_row_kernels,  # noqa: F401 - a fixture
    raw,
    run_plan,
    run_reference,
)

F32, F64 = dtypes.float32, dtypes.float64


@pytest.fixture(scope="module")
def cache_dir(request):
    return kernel_cache_dir(request.config)


@pytest.fixture(params=DEVICES)
def device(request):
    """The backend under test: numba on the CPU, Triton on a CUDA GPU (skipped without one)."""
    return request.param


def _row_kernels(plan) -> list:
    """The groups holding a reduction that the group itself reads."""
    return [u for u in plan if isinstance(u, FusionGroup) and emitters.row_reductions(u.ops)]


def _layer_norm(x, gamma, beta, axes, keep=True):
    ax = tf.constant(axes)
    mean = raw("Mean", x, ax, keep_dims=keep)
    if not keep:   # keep_dims=False, then the dims back as a reshape would
        for _ in axes:
            mean = raw("ExpandDims", mean, tf.constant(-1))
    d = raw("Sub", x, mean)
    var = raw("Mean", raw("Square", d), ax, keep_dims=True)
    rstd = raw("Rsqrt", raw("AddV2", var, tf.constant(1e-5, dtype=x.dtype)))
    return raw("AddV2", raw("Mul", raw("Mul", d, rstd), gamma), beta), mean, rstd


def _plan(fn, specs):
    g, phs, outs = build(fn, specs)
    ops = [op for op in g.get_operations() if op.type != "Placeholder"]
    plan = plan_of(ops, outs)
    check_plan(plan, ops, phs, outs)
    return g, phs, outs, plan


def _run(fn, specs, cache_dir, feeds=None, device=CPU):
    """(plan, outputs of the kernels generated for `device`, outputs op by op) of `fn`."""
    g, phs, outs, plan = _plan(fn, specs)
    rng = np.random.default_rng(0)
    if feeds is None:
        feeds = [rng.uniform(-3, 3, [d for d in shape]).astype(dt.np_dtype) for dt, shape in specs]
    values = {p: torch.from_numpy(np.asarray(v)) for p, v in zip(phs, feeds)}
    got = run_plan(plan, values, cache_dir, device)
    want = run_reference(g.get_operations(), values)
    return plan, [got[t] for t in outs], [want[t] for t in outs]


def test_layer_norm_is_one_row_kernel():
    _, _, outs, plan = _plan(lambda x, g, b: _layer_norm(x, g, b, [1])[0],
                             [(F32, [6, 8]), (F32, [8]), (F32, [8])])
    (group,) = plan
    assert group.kind == "loop" and _row_kernels(plan) == [group]
    assert sorted(op.type for op in group.ops if op.type != "Const") == sorted(
        ["Mean", "Sub", "Square", "Mean", "AddV2", "Rsqrt", "Mul", "Mul", "AddV2"])
    assert group.outputs == outs


@pytest.mark.usefixtures("no_row_kernels")
def test_the_flag_off_keeps_every_reduction_a_root():
    _, _, _, plan = _plan(lambda x, g, b: _layer_norm(x, g, b, [1])[0],
                          [(F32, [6, 8]), (F32, [8]), (F32, [8])])
    assert not _row_kernels(plan) and len(plan) == 3


def test_refused_merges():
    # softmax: the sum's row loop and the main loop would both compute exp (rule 5)
    def softmax(x):
        ax = tf.constant([1])
        e = raw("Exp", raw("Sub", x, raw("Max", x, ax, keep_dims=True)))
        return raw("RealDiv", e, raw("Sum", e, ax, keep_dims=True))
    _, _, _, plan = _plan(softmax, [(F32, [4, 8])])
    assert not any(u.ops and "Exp" in [op.type for op in u.ops] and "RealDiv" in
                   [op.type for op in u.ops] for u in plan if isinstance(u, FusionGroup))
    # reductions over outer dimensions (batch norm's statistics) are not per row
    _, _, _, plan = _plan(lambda x: raw("Sub", x, raw("Mean", x, tf.constant([0]),
                                                        keep_dims=True)), [(F32, [4, 8])])
    assert not _row_kernels(plan)
    # 16-bit floats reduce with rounding per op that a row kernel does not reproduce
    bf = dtypes.bfloat16
    _, _, _, plan = _plan(lambda x: raw("Sub", x, raw("Mean", x, tf.constant([1]),
                                                        keep_dims=True)), [(bf, [4, 8])])
    assert not _row_kernels(plan)


@pytest.mark.parametrize("shape,axes,keep", [([6, 8], [1], True), ([5, 3, 7], [2], False),
                                             ([2, 3, 4, 5], [2, 3], True), ([1, 9], [1], True),
                                             ([300, 96], [1], True)])
@pytest.mark.parametrize("dt", [F32, F64])
def test_layer_norm_values(shape, axes, keep, dt, cache_dir, device):
    inner = shape[axes[0]:]
    specs = [(dt, shape), (dt, inner), (dt, inner)]
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape) * 3 + 1
    gamma, beta = rng.standard_normal(inner), rng.standard_normal(inner)
    feeds = [a.astype(dt.np_dtype) for a in (x, gamma, beta)]
    plan, got, want = _run(lambda *a: list(_layer_norm(*a, axes, keep)), specs, cache_dir, feeds,
                           device=device)
    assert _row_kernels(plan)
    red = tuple(axes)
    mean = x.mean(axis=red, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(axis=red, keepdims=True) + 1e-5)
    ref = [(x - mean) * rstd * gamma + beta, mean if keep else mean.reshape(mean.shape), rstd]
    tol = 2e-5 if dt == F32 else 1e-12
    for g, w, r in zip(got, want, ref):
        np.testing.assert_allclose(g.double().numpy().reshape(r.shape), r, rtol=tol, atol=tol)
        torch.testing.assert_close(g, w, rtol=tol, atol=tol)


def test_row_max_sum_and_specials(cache_dir, device):
    # x - max(x) and x * sum(x) per row, with NaN and inf in rows: propagated as ATen does
    def fn(x):
        ax = tf.constant([1])
        return [raw("Sub", x, raw("Max", x, ax, keep_dims=True)),
                raw("Mul", x, raw("Min", x, ax, keep_dims=True)),
                raw("AddV2", x, raw("Sum", x, ax, keep_dims=True))]
    x = np.random.default_rng(2).uniform(-2, 2, (5, 33)).astype(np.float32)
    x[1, 3], x[2, 7], x[3, 0], x[3, 1] = np.nan, np.inf, -np.inf, np.inf
    plan, got, want = _run(fn, [(F32, [5, 33])], cache_dir, [x], device=device)
    assert _row_kernels(plan)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-6, atol=1e-6, equal_nan=True)


def test_statistics_read_by_a_library_call_are_written_per_row(cache_dir, device):
    # the mean and rstd also feed a MatMul: the row kernel writes them, one value per row
    def fn(x, w):
        y, mean, rstd = _layer_norm(x, tf.constant(1.0), tf.constant(0.0), [1])
        return [raw("AddV2", y, tf.constant(1.0)), raw("MatMul", raw("Mul", mean, rstd), w)]
    plan, got, want = _run(fn, [(F32, [8, 16]), (F32, [1, 4])], cache_dir, device=device)
    (row,) = _row_kernels(plan)
    assert sorted(t.op.type for t in row.outputs) == ["AddV2", "Mul"]
    assert isinstance(plan[-1], Operation) and plan[-1].type == "MatMul"
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [[6, 8], [300, 256]])   # the second runs in row chunks
def test_column_sums_of_a_row_kernel(shape, cache_dir, device):
    # a LayerNorm gradient's shape: per-row sums feed a value whose column sums (the bias
    # gradient) are the kernel's roots; chunks of rows leave partial column sums
    def fn(x, dy):
        ax1, ax0 = tf.constant([1]), tf.constant([0])
        s1 = raw("Sum", dy, ax1, keep_dims=True)
        s2 = raw("Sum", raw("Mul", dy, x), ax1, keep_dims=True)
        dx = raw("Sub", raw("Sub", dy, raw("Mul", x, s2)), s1)
        return [dx, raw("Sum", dx, ax0, keep_dims=False), raw("Max", dx, ax0, keep_dims=False)]
    rng = np.random.default_rng(3)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    plan, got, want = _run(fn, [(F32, shape), (F32, shape)], cache_dir,
                           [x.astype(np.float32), dy.astype(np.float32)], device=device)
    (row,) = _row_kernels(plan)
    assert len(plan) == 1 and sum(op.type in ("Sum", "Max") for op in row.ops) == 4
    dx = dy - x * (dy * x).sum(1, keepdims=True) - dy.sum(1, keepdims=True)
    ref = [dx, dx.sum(0), dx.max(0)]
    for g, w, r in zip(got, want, ref):
        np.testing.assert_allclose(g.double().numpy(), r, rtol=2e-5, atol=2e-4)
        torch.testing.assert_close(g, w, rtol=2e-5, atol=2e-4)


def _layer_norm_grad(xhat, t, dy, gamma, read_dbeta=False):
    """A LayerNorm's backward after a tanh-GELU's: g = dy * (1 - t^2) (the upstream gradient,
    elementwise), dgamma = sum(g * xhat, 0), dbeta = sum(g, 0), and the input gradient from
    the row sums of g * gamma (`read_dbeta`: it also adds dbeta back, a column sum read
    inside)."""
    ax0, ax1 = tf.constant([0]), tf.constant([1])
    g = raw("Mul", dy, raw("Sub", tf.constant(1.0), raw("Mul", t, t)))
    dbeta = raw("Sum", g, ax0, keep_dims=False)
    dgamma = raw("Sum", raw("Mul", g, xhat), ax0, keep_dims=False)
    gg = raw("Mul", g, gamma)
    s1 = raw("Sum", gg, ax1, keep_dims=True)
    s2 = raw("Sum", raw("Mul", gg, xhat), ax1, keep_dims=True)
    dx = raw("Sub", raw("Sub", gg, raw("Mul", xhat, s2)), s1)
    if read_dbeta:
        dx = raw("AddV2", dx, dbeta)
    return [dx, dgamma, dbeta]


def _layer_norm_grad_reference(xhat, t, dy, gamma, read_dbeta=False):
    g = dy * (1 - t * t)
    gg = g * gamma
    dx = gg - xhat * (gg * xhat).sum(1, keepdims=True) - gg.sum(1, keepdims=True)
    return [dx + g.sum(0) if read_dbeta else dx, (g * xhat).sum(0), g.sum(0)]


@pytest.mark.parametrize("shape", [[6, 8], [300, 256]])   # the second runs in row chunks
def test_gamma_and_beta_sums_join_the_row_kernel_of_the_input_gradient(shape, cache_dir,
                                                                      device):
    # the upstream gradient g feeds both the column sums and the row sums: one kernel reads
    # the rows once for all three results, and g is never written to memory
    rng = np.random.default_rng(8)
    xhat, t, dy = (rng.standard_normal(shape) for _ in range(3))
    t = np.tanh(t)
    gamma = rng.standard_normal(shape[1:])
    feeds = [a.astype(np.float32) for a in (xhat, t, dy, gamma)]
    plan, got, want = _run(_layer_norm_grad, [(F32, shape)] * 3 + [(F32, shape[1:])],
                           cache_dir, feeds, device=device)
    (row,) = _row_kernels(plan)
    assert plan == [row] and len(row.outputs) == 3
    assert sum(op.type == "Sum" for op in row.ops) == 4
    for g, w, r in zip(got, want, _layer_norm_grad_reference(xhat, t, dy, gamma)):
        np.testing.assert_allclose(g.double().numpy(), r, rtol=2e-5, atol=2e-4)
        torch.testing.assert_close(g, w, rtol=2e-5, atol=2e-4)


def test_a_column_sum_read_inside_keeps_its_own_kernel(cache_dir, device):
    # dx adds dbeta back: a kernel walking the rows once cannot read a sum over all of them
    shape = [12, 16]
    rng = np.random.default_rng(9)
    xhat, t, dy = (rng.standard_normal(shape) for _ in range(3))
    t = np.tanh(t)
    gamma = rng.standard_normal(shape[1:])
    feeds = [a.astype(np.float32) for a in (xhat, t, dy, gamma)]
    plan, got, want = _run(lambda *a: _layer_norm_grad(*a, read_dbeta=True),
                           [(F32, shape)] * 3 + [(F32, shape[1:])], cache_dir, feeds,
                           device=device)
    (row,) = _row_kernels(plan)
    dbeta_op = next(op for op in row.ops if op.type == "AddV2").inputs[1].op
    assert dbeta_op not in row.ops and len(plan) >= 2
    ref = _layer_norm_grad_reference(xhat, t, dy, gamma, read_dbeta=True)
    for g, w, r in zip(got, want, ref):
        np.testing.assert_allclose(g.double().numpy(), r, rtol=2e-5, atol=2e-4)
        torch.testing.assert_close(g, w, rtol=2e-5, atol=2e-4)


@pytest.mark.parametrize("shape", [[6, 8], [300, 256]])
def test_a_full_reduction_of_a_row_kernel(shape, cache_dir, device):
    # a loss over normalized rows: mean((layer_norm(x) - y) ** 2), with the normalized values
    def fn(x, y):
        n = _layer_norm(x, tf.constant(1.0), tf.constant(0.0), [1])[0]
        return [n, raw("Mean", raw("Square", raw("Sub", n, y)), tf.constant([0, 1]))]
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal(shape) * 2 + 1, rng.standard_normal(shape)
    plan, got, want = _run(fn, [(F32, shape), (F32, shape)], cache_dir,
                           [x.astype(np.float32), y.astype(np.float32)], device=device)
    assert len(plan) == 1 and _row_kernels(plan) == plan
    m = x.mean(1, keepdims=True)
    n = (x - m) / np.sqrt(((x - m) ** 2).mean(1, keepdims=True) + 1e-5)
    for g, w, r in zip(got, want, [n, ((n - y) ** 2).mean()]):
        np.testing.assert_allclose(g.double().numpy(), r, rtol=2e-5, atol=2e-5)
        torch.testing.assert_close(g, w, rtol=2e-5, atol=2e-5)


def test_a_row_kernel_writing_per_row_values_only(cache_dir, device):
    # found by fuzzing: the row kernel's full-space consumer (AddV2) is dead, so the kernel
    # writes only the row values; it still loops over the reduction's space
    def fn(x):
        c = raw("Sum", x, tf.constant([0]), keep_dims=True)            # [1, 6]
        s = raw("Neg", raw("Sum", c, tf.constant([1]), keep_dims=False))  # [1]
        raw("AddV2", c, s)                                               # dead
        return [s, raw("Neg", x)]
    x = np.random.default_rng(5).standard_normal((4, 6)).astype(np.float32)
    plan, got, want = _run(fn, [(F32, [4, 6])], cache_dir, [x], device=device)
    assert _row_kernels(plan)
    np.testing.assert_allclose(got[0].numpy(), [-x.astype(np.float64).sum()], rtol=1e-6)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)


def test_a_row_kernel_whose_reader_of_a_row_value_died(cache_dir, device):
    # found by fuzzing: s0 = sum(x, 0) joins s2 = sum(s1, 0) as siblings, s1 = sum(x, 1)
    # joins them as a row reduction, then s2 is dead and pruned: the kernel still writes the
    # column sum and the row sum
    def fn(x):
        s0 = raw("Sum", x, tf.constant([0]), keep_dims=False)
        s1 = raw("Sum", x, tf.constant([1]), keep_dims=True)
        raw("Sum", s1, tf.constant([0]), keep_dims=False)            # dead
        return [s0, s1]
    x = np.random.default_rng(6).standard_normal((4, 1)).astype(np.float32)  # as fuzzed
    _, got, want = _run(fn, [(F32, [4, 1])], cache_dir, [x], device=device)
    for g, w, r in zip(got, want, [x.sum(0), x.sum(1, keepdims=True)]):
        np.testing.assert_allclose(g.numpy(), r, rtol=1e-6)
        torch.testing.assert_close(g, w)


@pytest.mark.parametrize("n", [4096, 5000])   # two-level float32 sums up to 4096, else float64
def test_long_row_sums_stay_accurate(n, cache_dir, device):
    # sums of long rows of large, cancelling values: the row loop adds float32 lanes and
    # carries float64 across loops; still within float32 rounding of the float64 result
    def fn(x):
        ax = tf.constant([1])
        return [raw("Sub", x, raw("Mean", x, ax, keep_dims=True)),
                raw("Sum", raw("Square", x), tf.constant([0, 1]))]
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((6, n)) * 1000 + 3e4).astype(np.float32)
    plan, got, _ = _run(fn, [(F32, [6, n])], cache_dir, [x], device=device)
    assert _row_kernels(plan)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(got[0].double().numpy(), x64 - x64.mean(1, keepdims=True),
                               rtol=0, atol=3e4 * 2e-7 * 4)
    np.testing.assert_allclose(float(got[1]), (x64 ** 2).sum(), rtol=2e-7)


@pytest.mark.parametrize("shape", [[6, 8], [300, 256]])   # the second runs in row chunks
def test_sibling_row_sums_share_a_loop_and_the_last_loop_reuses_its_values(shape, cache_dir):
    # LayerNorm's gradient: the two row sums (of gg and gg * xhat) need neither the other's
    # result, so one loop over the row computes both; gg (4 ops an element) is kept in a
    # row array that the loop writing dx reads back instead of computing it again
    rng = np.random.default_rng(9)
    xhat, t, dy = (rng.standard_normal(shape) for _ in range(3))
    t = np.tanh(t)
    gamma = rng.standard_normal(shape[1:])
    specs = [(F32, tuple(shape))] * 3 + [(F32, tuple(shape[1:]))]
    _, phs, outs, plan = _plan(_layer_norm_grad, specs)
    (row,) = _row_kernels(plan)
    values = {p: torch.from_numpy(a.astype(np.float32)) for p, a in zip(phs, (xhat, t, dy, gamma))}
    fn = compile_fusion(row, [(F32, tuple(values[i].shape)) for i in row.inputs], CPU,
                        cache_dir)
    loops = fn.source.count("for i1 in range(")
    assert loops == 2, fn.source            # the row sums' loop, then the outputs' loop
    kept = re.findall(r"(row\d+)\[i1\] = ", fn.source)
    assert len(kept) == 1 and fn.source.count(f"= {kept[0]}[i1]") == 1, fn.source
    got = dict(zip(row.outputs, fn(*[values[i] for i in row.inputs])))
    for out, r in zip(outs, _layer_norm_grad_reference(xhat, t, dy, gamma)):
        np.testing.assert_allclose(got[out].double().numpy(), r, rtol=2e-5, atol=2e-4)
