"""compile_cluster: a cluster specialized to one signature gives the uncompiled outputs."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.jit import executable
from ndflow.jit.errors import CompileUnimplemented
from ndflow.jit.executable import compile_cluster, specialize_shapes
from ndflow.ops import nn_fused
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import ArgDef, AttrDef, OpDef
from tests.jit.cluster_graphs import (
    CountingFallback,
    build,
    elementwise_chain,
    mlp_block,
    randn,
    reductions,
    scatter_segments,
)
from tests.jit.jit_graphs import no_row_kernels  # noqa: F401 - a fixture

CPU = torch.device("cpu")


def _specs(args):
    return [(tf.as_dtype(a.dtype), tuple(a.shape)) for a in args]


CASES = {
    "mlp_block": (mlp_block, [(tf.float32, [None, 8]), (tf.float32, [8, 4]),
                              (tf.float32, [4])], [(5, 8), (8, 4), (4,)]),
    "elementwise_chain": (elementwise_chain, [(tf.float32, [None, 6])] * 2, [(3, 6), (3, 6)]),
    "reductions": (reductions, [(tf.float32, [None, 16])], [(7, 16)]),
    "scatter_segments": (scatter_segments, [(tf.float32, [6, 4]), (tf.int32, [6]),
                                            (tf.int32, [2, 1])], [(6, 4), "ids", "rows"]),
}


def _equal_to_fallback(fg, args):
    exe = compile_cluster(fg, _specs(args), CPU)
    got = exe(args)
    want = CountingFallback(fg)(args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    return exe


@pytest.mark.parametrize("case", sorted(CASES))
def test_library_kernel_executable_equals_fallback(case, monkeypatch):
    monkeypatch.setattr(executable, "plan_fusions", list)   # every op a registry kernel
    fn, specs, shapes = CASES[case]
    exe = _equal_to_fallback(build(fn, specs), [_INDICES[s] if isinstance(s, str) else
                                                randn(*s, seed=i) for i, s in enumerate(shapes)])
    assert exe.stats["fused_groups"] == 0


_INDICES = {"ids": torch.tensor([0, 2, 1, 2, 0, 2], dtype=torch.int32),   # segment of each row
            "rows": torch.tensor([[3], [1]], dtype=torch.int32)}          # rows scattered into


# Generated kernels take numba about a second each to compile: one cluster in the default run.
@pytest.mark.parametrize("case", [
    "mlp_block",
    pytest.param("elementwise_chain", marks=pytest.mark.slow),
    pytest.param("reductions", marks=pytest.mark.slow)])
def test_generated_kernel_executable_equals_fallback(case):
    if executable._codegen is None or executable._fusion is None:
        pytest.skip("no fusion planner / code generator in this tree")
    fn, specs, shapes = CASES[case]
    exe = _equal_to_fallback(build(fn, specs), [randn(*s, seed=i) for i, s in enumerate(shapes)])
    assert exe.stats["fused_groups"] >= 1


def test_shapes_are_specialized_to_the_signature():
    fg = build(mlp_block, CASES["mlp_block"][1])
    shapes = specialize_shapes(fg, [(tf.float32, (5, 8)), (tf.float32, (8, 4)),
                                    (tf.float32, (4,))])
    by_name = {t.name: s.as_list() for t, s in shapes.items()}
    assert by_name["MatMul:0"] == [5, 4]       # the graph only knows [None, 4]
    assert by_name["Sum:0"] == [5]


def _shape_ops(x, y):
    """A reshape to another tensor's shape (Shape), a ShapeN, a Size and a Rank, one of them
    returned."""
    s, n = tf.shape_n([x, y])
    z = tf.reshape(x * 2.0, tf.shape(y)) + tf.cast(tf.size(x) + tf.rank(x), tf.float32)
    return z, s, n + 1


def test_shape_ops_of_fixed_shapes_are_constants(monkeypatch):
    monkeypatch.setattr(executable, "plan_fusions", list)   # every op a registry kernel
    fg = build(_shape_ops, [(tf.float32, [None, 6]), (tf.float32, [None, 3])])
    args = [randn(4, 6), randn(8, 3, seed=1)]
    exe = _equal_to_fallback(fg, args)
    ran = [what for _, _, what in exe.steps]
    # Shape, Size, Rank and the ShapeN's second output cost nothing; the ShapeN, whose first
    # output the cluster returns, still runs (callers may write into what they are given)
    assert "Shape" not in ran and "Size" not in ran and "Rank" not in ran
    assert ran.count("ShapeN") == 1
    assert exe(args)[1].tolist() == [4, 6]


def test_library_calls_know_their_constant_inputs_when_built(monkeypatch):
    """A library call's constant axes are given to its kernel when the executable is built,
    as a plan gives them: it never reads them per call (on a GPU each read would wait)."""
    from ndflow.kernels import reduction as reduction_kernels
    monkeypatch.setattr(executable, "plan_fusions", list)   # every op a registry kernel
    fg = build(lambda x: [tf.reduce_sum(x, axis=[0]), tf.reduce_mean(x, axis=1)],
               [(tf.float32, [4, 6])])
    args = [randn(4, 6)]
    want = CountingFallback(fg)(args)

    exe = compile_cluster(fg, _specs(args), CPU)

    def read_per_call(axes, rank):
        raise AssertionError("the axes were read when the kernel ran")
    monkeypatch.setattr(reduction_kernels, "_axes", read_per_call)
    got = exe(args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)


def test_intermediates_are_released_after_last_use(monkeypatch):
    monkeypatch.setattr(executable, "plan_fusions", list)   # every op its own step
    fg = build(mlp_block, CASES["mlp_block"][1])
    exe = compile_cluster(fg, [(tf.float32, (5, 8)), (tf.float32, (8, 4)),
                               (tf.float32, (4,))], CPU)
    matmul_out = re.search(r"s = 0; (\w+) = ", exe.source).group(1)
    bias_add_line = next(i for i, line in enumerate(exe.source.splitlines()) if "s = 1;" in line)
    assert exe.source.splitlines()[bias_add_line + 1].strip() == f"del {matmul_out}"
    assert exe.stats["library_calls"] == 6


class _Group:
    """A stand-in for J3's FusionGroup."""

    def __init__(self, ops, inputs, outputs):
        self.ops, self.inputs, self.outputs = ops, inputs, outputs


def _elementwise_group(ops):
    """Every op after the BiasAdd as one group (Relu, Mul, AddV2, Sum and their Consts)."""
    start = next(i for i, op in enumerate(ops) if op.type == "Relu")
    members = ops[start:]
    inside = set(members)
    inputs = [t for op in members for t in op.inputs if t.op not in inside]
    outputs = [members[0].outputs[0], members[-1].outputs[0]]
    return ops[:start] + [_Group(members, inputs, outputs)]


def test_fusion_groups_go_to_the_code_generator(monkeypatch):
    seen = {}

    def fake_compile_fusion(group, input_specs, device, cache_dir):
        seen["specs"] = input_specs
        types = [op.type for op in group.ops]

        def run(x):
            y = torch.relu(x)
            return [y, (y * 2.0 + 1.0).sum(dim=1)]
        assert "Relu" in types and "Sum" in types
        return run

    monkeypatch.setattr(executable, "plan_fusions", _elementwise_group)
    monkeypatch.setattr(executable, "compile_fusion", fake_compile_fusion)
    fg = build(mlp_block, CASES["mlp_block"][1])
    args = [randn(5, 8), randn(8, 4), randn(4)]
    exe = compile_cluster(fg, _specs(args), CPU)
    assert seen["specs"] == [(tf.float32, (5, 4))]
    assert exe.stats["fused_groups"] == 1 and exe.stats["library_calls"] == 2
    rows = exe.profile(args, steps=2)
    assert sorted(what for _, what, _ in rows) == ["BiasAdd", "MatMul",
                                                   "fusion(Relu+Mul+AddV2+Sum)"]
    assert all(t >= 0 for _, _, t in rows)
    for g, w in zip(exe(args), CountingFallback(fg)(args)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)


@pytest.mark.parametrize("failure, logged", [(CompileUnimplemented("no bf16 tanh"), False),
                                             (RuntimeError("numba typing bug"), True)])
def test_a_group_the_generator_cannot_compile_runs_unfused(monkeypatch, capsys, failure,
                                                          logged):
    """A limit of the code generator is expected (a level-2 log line); a failure of it is
    said once per cluster at the default level, and the cluster still runs, unfused."""
    def refuse(group, input_specs, device, cache_dir):
        raise failure

    monkeypatch.setattr(executable, "plan_fusions", _elementwise_group)
    monkeypatch.setattr(executable, "compile_fusion", refuse)
    monkeypatch.setattr(executable, "_CODEGEN_FAILURES_LOGGED", set())
    fg = build(mlp_block, CASES["mlp_block"][1])
    args = [randn(5, 8), randn(8, 4), randn(4)]
    for _ in range(2):
        exe = compile_cluster(fg, _specs(args), CPU, name="cluster_7")
    assert exe.stats["fused_groups"] == 0 and exe.stats["unfused_groups"] == 1
    for g, w in zip(exe(args), CountingFallback(fg)(args)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
    err = capsys.readouterr().err
    assert err.count("code generation failed") == int(logged)
    if logged:
        assert "cluster_7" in err and "numba typing bug" in err


def _lone_ops(x, w):
    # three groups with one computing op each (a Reshape is a view, a Sum alone, a Mul alone),
    # separated by library calls, and one real fusion (Relu + AddV2)
    h = tf.reshape(tf.matmul(x, w), [-1, 4])
    s = tf.reduce_sum(h, axis=1, keepdims=True)
    m = tf.matmul(h * 2.0, tf.transpose(w))
    return [s, tf.nn.relu(m) + 1.0]


@pytest.mark.usefixtures("no_row_kernels")
def test_single_op_groups_run_as_library_calls_without_codegen(monkeypatch):
    # a group with one computing op has nothing to fuse: no kernel compile (~1 s under numba)
    compiled = []

    def fake_compile_fusion(group, input_specs, device, cache_dir):
        compiled.append(sorted(op.type for op in group.ops if op.type != "Const"))
        return lambda *a: (_ for _ in ()).throw(AssertionError("only the Relu+AddV2 group"))

    monkeypatch.setattr(executable, "compile_fusion", fake_compile_fusion)
    fg = build(_lone_ops, [(tf.float32, [6, 8]), (tf.float32, [8, 4])])
    args = [randn(6, 8), randn(8, 4, seed=1)]
    exe = compile_cluster(fg, _specs(args), CPU)
    assert compiled == [["AddV2", "Relu"]]
    assert exe.stats["trivial_groups"] >= 2 and exe.stats["fused_groups"] == 1
    assert exe.stats["unfused_groups"] == 0


# An op with no kernel on any device (declared here, not registered: a stand-in).
_NO_KERNEL = OpDef("_JitTestNoKernel", [ArgDef("x", type_attr="T")], [ArgDef("y", type_attr="T")],
                   {"T": AttrDef("T", "type")}, shape_fn=lambda ctx: [ctx.shapes[0]])


def test_op_without_kernel_is_compile_unimplemented():
    def uses_no_kernel_op(x):
        y = tf.nn.relu(x)
        g = y.graph
        return [g.create_op(_NO_KERNEL, [y], {"T": tf.float32}, [(tf.float32, y.shape)],
                            "odd").outputs[0]]
    fg = build(uses_no_kernel_op, [(tf.float32, [3])])
    with pytest.raises(CompileUnimplemented, match="_JitTestNoKernel"):
        compile_cluster(fg, [(tf.float32, (3,))], CPU)


def test_runtime_errors_name_the_node():
    fg = build(lambda x, y: [tf.matmul(x, y)], [(tf.float32, [None, None])] * 2)
    exe = compile_cluster(fg, [(tf.float32, (2, 3)), (tf.float32, (2, 3))], CPU)
    with pytest.raises(tf.errors.InvalidArgumentError, match="MatMul"):
        exe([randn(2, 3), randn(2, 3)])


def _fused_matmul(x, w, b):
    """The remapper's `_FusedMatMul(x, w, b)` adding only the bias."""
    return apply_op(nn_fused.FusedMatMul, [x, w, [b]], {"fused_ops": ["BiasAdd"]},
                    name="fused_matmul").outputs[0]


def _bias_then_tanh(x, w, b):   # the product read only by fused ops
    y = _fused_matmul(x, w, b)
    return [tf.reduce_sum(tf.tanh(y) * y, axis=1)]


def _bias_then_matmul(x, w, b):   # read by a library call too: the fused op stays
    y = _fused_matmul(x, w, b)
    return [tf.matmul(y, tf.transpose(w)) + tf.tanh(y)]


def _bias_as_output(x, w, b):   # the product leaves the cluster: the fused op stays
    y = _fused_matmul(x, w, b)
    return [y, tf.tanh(y)]


@pytest.mark.parametrize("fn, split", [(_bias_then_tanh, True), (_bias_then_matmul, False),
                                       (_bias_as_output, False)])
def test_a_bias_only_fused_matmul_adds_its_bias_in_the_readers_kernel(fn, split, monkeypatch):
    """ATen's addmm writes the bias into the output before the GEMM: where every reader of the
    product is fused, the GEMM runs alone and its readers' kernel adds the bias (each step
    a call of its own here: no native segment)."""
    if executable._codegen is None or executable._fusion is None:
        pytest.skip("no fusion planner / code generator in this tree")
    monkeypatch.setenv("NDFLOW_JIT_NATIVE_SEGMENTS", "0")
    specs = [(tf.float32, [None, 8]), (tf.float32, [8, 8]), (tf.float32, [8])]
    x, w, b = randn(5, 8, seed=1), randn(8, 8, seed=2), randn(8, seed=3)
    exe = _equal_to_fallback(build(fn, specs), [x, w, b])
    steps = [what for _, what, _ in exe.profile([x, w, b], steps=1)]
    library = [what for what in steps if not what.startswith("fusion(")]
    assert ("_FusedMatMul" in library) is not split
    if split:   # the GEMM alone, the bias in the generated kernel
        assert library == ["MatMul"]
        assert any(what.startswith("fusion(") and "BiasAdd" in what for what in steps)
    xd, wd, bd = (t.numpy().astype(np.float64) for t in (x, w, b))
    y = xd @ wd + bd
    want = {_bias_then_tanh: [np.sum(np.tanh(y) * y, axis=1)],
            _bias_then_matmul: [y @ wd.T + np.tanh(y)],
            _bias_as_output: [y, np.tanh(y)]}[fn]
    for got, expected in zip(exe([x, w, b]), want):
        np.testing.assert_allclose(got.numpy(), expected, rtol=2e-5, atol=2e-5)
