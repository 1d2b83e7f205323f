"""The fusion planner (ndflow.jit.fusion): XLA's rules (reference section 4), and randomized
graphs of fusible ops run through the plan (generated kernels) vs op by op."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ndflow as tf
from ndflow.core import dtypes
from ndflow.core.graph import Operation
from ndflow.jit.codegen import lowering
from ndflow.jit.fusion import FusionGroup, plan_fusions
from tests.jit.jit_graphs import (
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


def _groups(plan):
    return [u for u in plan if isinstance(u, FusionGroup)]


def _types(group):
    return [op.type for op in group.ops if op.type != "Const"]


def test_elementwise_chain_is_one_loop_fusion_and_matmul_stays_a_library_call():
    def fn(x, w, b):
        h = raw("MatMul", x, w)
        return raw("Relu", raw("BiasAdd", raw("Mul", h, tf.constant(2.0)), b))
    plan, _ = checked_plan(fn, [(F32, [8, 4]), (F32, [4, 16]), (F32, [16])])
    assert [u.type for u in plan if isinstance(u, Operation)] == ["MatMul"]
    (g,) = _groups(plan)
    assert g.kind == "loop" and _types(g) == ["Mul", "BiasAdd", "Relu"]
    assert [op.type for op in g.ops].count("Const") == 1  # the scalar is baked in


def test_reduce_of_elementwise_is_one_input_fusion():
    # XLA's docs example: reduce_sum(x + y * z) is one kernel, no intermediate in memory.
    plan, _ = checked_plan(lambda x, y, z: raw("Sum", raw("AddV2", x, raw("Mul", y, z)),
                                               tf.constant([1]), keep_dims=False),
                           [(F32, [4, 8])] * 3)
    (g,) = plan
    assert g.kind == "input" and _types(g) == ["Mul", "AddV2", "Sum"]
    assert len(g.inputs) == 3 and [t.op.type for t in g.outputs] == ["Sum"]


@pytest.mark.usefixtures("no_row_kernels")
def test_reduction_is_never_fused_into_its_consumers():
    plan, _ = checked_plan(
        lambda x: raw("Mul", raw("Sum", x, tf.constant([1]), keep_dims=True), x), [(F32, [4, 8])])
    a, b = plan
    assert (a.kind, _types(a)) == ("input", ["Sum"])
    assert (b.kind, _types(b)) == ("loop", ["Mul"])


def test_expensive_producer_is_never_duplicated():
    # exp feeds a library call and an elementwise consumer: computed once, by one group that
    # writes it out (multi-output), never recomputed elsewhere.
    def fn(x, w):
        e = raw("Exp", x)
        return [raw("MatMul", e, w), raw("AddV2", e, tf.constant(1.0))]
    plan, _ = checked_plan(fn, [(F32, [4, 4]), (F32, [4, 4])])
    holders = [u for u in _groups(plan) if "Exp" in _types(u)]
    assert len(holders) == 1 and any(t.op.type == "Exp" for t in holders[0].outputs)


def test_expensive_producer_not_fused_into_a_broadcasting_consumer():
    plan, _ = checked_plan(lambda x, b: raw("AddV2", x, raw("Exp", b)),
                           [(F32, [8, 16]), (F32, [16])])
    assert sorted(_types(g) for g in _groups(plan)) == [["AddV2"], ["Exp"]]
    # a cheap one is fused (recomputing a multiply per element costs nothing)
    plan, _ = checked_plan(lambda x, b: raw("AddV2", x, raw("Mul", b, b)),
                           [(F32, [8, 16]), (F32, [16])])
    assert [_types(g) for g in _groups(plan)] == [["Mul", "AddV2"]]


def test_narrowing_producer_with_several_consumers_is_a_multi_output_fusion():
    # dropout's mask: GreaterEqual reads 4-byte floats and writes 1-byte bools, read by the
    # forward select and by its gradient's. Rule 6 keeps it from being copied into both;
    # fused into the first with the mask written out, it reads its input once, as it would
    # alone, and costs no kernel of its own.
    def fn(u, x, g):
        keep = raw("GreaterEqual", u, tf.constant(0.5))
        zeros = tf.zeros([64, 32])
        y = raw("SelectV2", keep, raw("Mul", x, tf.constant(2.0)), zeros)
        dx = raw("SelectV2", keep, raw("Mul", g, tf.constant(2.0)), zeros)
        return [raw("MatMul", y, tf.ones([32, 8])), dx]
    plan, _ = checked_plan(fn, [(F32, [64, 32])] * 3)
    holders = [g for g in _groups(plan) if "GreaterEqual" in _types(g)]
    assert len(holders) == 1 and "SelectV2" in _types(holders[0])
    assert any(t.op.type == "GreaterEqual" for t in holders[0].outputs)
    assert not any(isinstance(u, Operation) and u.type == "GreaterEqual" for u in plan)


def test_sibling_reductions_share_one_kernel():
    def fn(x):
        ax = tf.constant([1])
        return [raw("Mean", x, ax, keep_dims=True), raw("Mean", raw("Square", x), ax,
                                                          keep_dims=True)]
    plan, outs = checked_plan(fn, [(F32, [4, 8])])
    (g,) = plan
    assert g.kind == "input" and len(g.roots) == 2 and set(g.outputs) == set(outs)


def test_sibling_reductions_join_only_when_they_share_a_read():
    # the gamma gradients of two LayerNorms: the same space and axes, but nothing read in
    # common. One kernel would gain no read and would run where the later of them is ready,
    # reading the earlier one's inputs again after they left the caches.
    ax = tf.constant([0])

    def unrelated(a, b, c, d):
        return [raw("Sum", raw("Mul", a, b), ax, keep_dims=False),
                raw("Sum", raw("Mul", c, d), ax, keep_dims=False)]
    plan, _ = checked_plan(unrelated, [(F32, [8, 4])] * 4)
    assert len(_groups(plan)) == 2 and all(len(g.roots) == 1 for g in _groups(plan))

    def sharing(a, b, c, d):   # both read `a` (d, of another shape-less use, is unused)
        return [raw("Sum", raw("Mul", a, b), ax, keep_dims=False),
                raw("Sum", raw("Mul", a, c), ax, keep_dims=False)]
    plan, outs = checked_plan(sharing, [(F32, [8, 4])] * 4)
    (g,) = plan
    assert len(g.roots) == 2 and set(g.outputs) == set(outs)

    def scalar_only(a, b, s):   # a shared scalar saves no read of the space
        return [raw("Sum", raw("Mul", a, s), ax, keep_dims=False),
                raw("Sum", raw("Mul", b, s), ax, keep_dims=False)]
    plan, _ = checked_plan(scalar_only, [(F32, [8, 4]), (F32, [8, 4]), (F32, [])])
    assert len(_groups(plan)) == 2


@pytest.mark.parametrize("keep_dims", [False, True])
def test_sibling_reductions_never_join_a_reduction_they_consume(keep_dims):
    # batch-norm statistics: m = mean(x); v = mean(square(x - m)); s = sum(x). s merges with
    # one of them only; v's group reads m, so m's kernel and v's stay apart, and each group
    # lowers (before the fix one group held both means: "Mean:0 is neither a group input nor
    # computed")
    def fn(x):
        ax = tf.constant([0])
        m = raw("Mean", x, ax, keep_dims=keep_dims)
        v = raw("Mean", raw("Square", raw("Sub", x, m)), ax, keep_dims=keep_dims)
        return [m, v, raw("Sum", x, ax, keep_dims=keep_dims)]
    plan, outs = checked_plan(fn, [(F32, [8, 4])])
    groups = _groups(plan)
    assert len(groups) == 2 and sorted(len(g.roots) for g in groups) == [1, 2]
    m_group = next(g for g in groups if outs[0].op in g.roots)
    assert outs[1].op not in m_group.roots
    for g in groups:
        lowering.lower(g, [(t.dtype, tuple(t.shape.as_list())) for t in g.inputs])


def test_softmax_as_ops_computes_exp_once():
    def fn(x):
        ax = tf.constant([1])
        m = raw("Max", x, ax, keep_dims=True)
        e = raw("Exp", raw("Sub", x, m))
        return raw("RealDiv", e, raw("Sum", e, ax, keep_dims=True))
    plan, _ = checked_plan(fn, [(F32, [4, 8])])
    assert [_types(g) for g in plan] == [["Max"], ["Sub", "Exp", "Sum"], ["RealDiv"]]


@pytest.mark.usefixtures("no_row_kernels")
@pytest.mark.parametrize("batch", [4, None])
def test_layer_norm_as_ops(batch):
    # an open batch dimension (tf.function's None) plans as a known one
    def fn(x, gamma, beta):
        ax = tf.constant([1])
        mean = raw("Mean", x, ax, keep_dims=True)
        d = raw("Sub", x, mean)
        var = raw("Mean", raw("Square", d), ax, keep_dims=True)
        y = raw("Mul", d, raw("Rsqrt", raw("AddV2", var, tf.constant(1e-5))))
        return raw("AddV2", raw("Mul", y, gamma), beta)
    plan, _ = checked_plan(fn, [(F32, [batch, 8]), (F32, [8]), (F32, [8])])
    kinds = [(g.kind, _types(g)) for g in plan]
    assert kinds[0] == ("input", ["Mean"])
    assert kinds[1] == ("input", ["Sub", "Square", "Mean"])
    assert kinds[2][0] == "loop" and "Rsqrt" in kinds[2][1]
    assert len(plan) == 3
    # d = x - mean is cheap: the last kernel recomputes it from x and the mean rather than
    # reading it, so the variance's kernel writes only the variance
    assert [t.op.type for t in plan[1].outputs] == ["Mean"]
    assert [op.type for op in plan[2].recomputed] == ["Sub"]


def test_no_cycle_through_a_library_call():
    # a = x + 1 feeds MatMul and c = a * MatMul(a): fusing a into c's group would need the
    # MatMul's result before the group that computes a: a stays out of c's group.
    def fn(x):
        a = raw("AddV2", x, tf.constant(1.0))
        return raw("Mul", a, raw("MatMul", a, a))
    plan, _ = checked_plan(fn, [(F32, [4, 4])])
    assert [type(u).__name__ for u in plan] == ["FusionGroup", "Operation", "FusionGroup"]


def test_unfusible_and_dynamic_axes_stay_operations():
    def fn(x, axis):
        return [raw("Sum", x, axis, keep_dims=False), raw("Cumsum", x, tf.constant(0))]
    plan, _ = checked_plan(fn, [(F32, [4, 4]), (dtypes.int32, [])])
    assert not _groups(plan) and {u.type for u in plan} >= {"Sum", "Cumsum"}


def test_static_axis_consts_are_dropped_and_fetched_values_are_outputs():
    def fn(x):
        e = raw("Tanh", x)
        return [e, raw("Sum", raw("Mul", e, e), tf.constant([0]), keep_dims=False)]
    plan, outs = checked_plan(fn, [(F32, [4, 4])])
    assert all(isinstance(u, FusionGroup) for u in plan)
    assert set(outs) <= {t for g in plan for t in g.outputs}


# -- randomized graphs, compiled vs op by op --------------------------------------------------

_UNARY = ["Neg", "Exp", "Tanh", "Relu", "Square", "Sigmoid", "Abs", "Softplus"]
_BINARY = ["AddV2", "Sub", "Mul", "Maximum", "SquaredDifference", "RealDiv"]
_REDUCE = ["Sum", "Mean", "Max"]
_SHAPES = [(4, 6), (6,), (4, 1)]


def _broadcast(a, b):
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


@st.composite
def _programs(draw, length=(2, 7), kinds="uubbr"):
    """A valid list of steps: ("u", op, a) / ("b", op, a, b) / ("r", op, a, axis, keep);
    operands index the values so far (inputs first)."""
    steps = []
    shapes = list(_SHAPES)
    for _ in range(draw(st.integers(*length))):
        kind = draw(st.sampled_from(kinds))
        a = draw(st.integers(0, len(shapes) - 1))
        if kind == "r" and shapes[a]:
            axis = draw(st.integers(0, len(shapes[a]) - 1))
            keep = draw(st.booleans())
            steps.append(("r", draw(st.sampled_from(_REDUCE)), a, axis, keep))
            shapes.append(tuple(1 if i == axis else d for i, d in enumerate(shapes[a]) if keep
                                or i != axis))
            continue
        partners = [i for i in range(len(shapes)) if _broadcast(shapes[a], shapes[i])]
        if kind == "b":
            b = draw(st.sampled_from(partners))
            steps.append(("b", draw(st.sampled_from(_BINARY)), a, b))
            shapes.append(_broadcast(shapes[a], shapes[b]))
        else:
            steps.append(("u", draw(st.sampled_from(_UNARY)), a))
            shapes.append(shapes[a])
    fetch_extra = draw(st.lists(st.integers(len(_SHAPES), len(shapes) - 1),
                                max_size=2 if length[1] < 10 else 3))
    return steps, fetch_extra


def _run_program(program, cache_dir):
    steps, fetch_extra = program

    def fn(*inputs):
        vals = list(inputs)
        for s in steps:
            a = vals[s[2]]
            if s[0] == "u":
                vals.append(raw(s[1], a))
            elif s[0] == "b":
                vals.append(raw(s[1], a, vals[s[3]]))
            else:
                vals.append(raw(s[1], a, tf.constant([s[3]], dtype=tf.int32), keep_dims=s[4]))
        outs = [vals[-1]] + [vals[i] for i in fetch_extra]
        return list(dict.fromkeys(outs))
    g, phs, outs = build(fn, [(F32, list(s)) for s in _SHAPES])
    rng = np.random.default_rng(0)
    feeds = {p: torch.from_numpy(rng.uniform(-2, 2, s).astype(np.float32))
             for p, s in zip(phs, _SHAPES)}
    want = run_reference(g.get_operations(), feeds)
    ops = [op for op in g.get_operations() if op.type != "Placeholder"]
    plan = plan_fusions(ops, outs)
    check_plan(plan, ops, phs, outs)
    got = run_plan(plan, feeds, cache_dir)
    for t in outs:
        torch.testing.assert_close(got[t], want[t], rtol=1e-5, atol=1e-5, equal_nan=True,
                                   msg=lambda m, t=t: f"{t.name}: {m}\n{steps}")


@pytest.fixture(scope="module")
def cache_dir(request):
    return kernel_cache_dir(request.config)


_SETTINGS = dict(deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture])


@settings(max_examples=3, **_SETTINGS)
@given(program=_programs())
def test_random_graphs_compiled_equal_uncompiled(program, cache_dir):
    _run_program(program, cache_dir)


@pytest.mark.slow
@settings(max_examples=25, **_SETTINGS)
@given(program=_programs())
def test_random_graphs_compiled_equal_uncompiled_more(program, cache_dir):
    _run_program(program, cache_dir)


# Longer programs with more binary ops: values cross reductions into later kernels, where the
# cheap ones are recomputed (rematerialize.py) rather than read back.
_LONGER = _programs(length=(8, 18), kinds="uubbbr")


@settings(max_examples=3, **_SETTINGS)
@given(program=_LONGER)
def test_longer_random_graphs_compiled_equal_uncompiled(program, cache_dir):
    _run_program(program, cache_dir)


@pytest.mark.slow
@settings(max_examples=40, **_SETTINGS)
@given(program=_LONGER)
def test_longer_random_graphs_compiled_equal_uncompiled_more(program, cache_dir):
    _run_program(program, cache_dir)
