"""Helpers of the fusion/codegen tests: build small graphs from raw ops, run ops through their
registered (ATen) kernels as the reference, and run a plan with generated kernels."""

from __future__ import annotations

import tempfile

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core import dtypes
from ndflow.jit import flags as flags_module
from ndflow.jit import fusion_rules as rules
from ndflow.jit.codegen import compile_fusion
from ndflow.jit.fusion import FusionGroup, plan_fusions
from ndflow.kernels import registry
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import lookup

CPU = torch.device("cpu")


def gpu_codegen_available() -> bool:
    """A CUDA GPU and Triton, the GPU backend's compiler."""
    if not torch.cuda.is_available():
        return False
    try:
        import triton  # noqa: F401, PLC0415
    except ImportError:
        return False
    return True


# The backends' devices: numba on the CPU; Triton on a CUDA GPU (skipped without one).
DEVICES = [pytest.param(CPU, id="cpu"),
           pytest.param(torch.device("cuda"), id="cuda", marks=pytest.mark.skipif(
               not gpu_codegen_available(), reason="needs a CUDA GPU and Triton"))]


def kernel_cache_dir(config) -> str:
    """The generated-kernel cache of the test runs: pytest's cache directory, so a later run
    loads kernels instead of compiling them (kernel names hash their source, numba's version
    and the helpers' source: a stale entry is never picked up). Without pytest's cache plugin
    (`-p no:cacheprovider`): a fresh temporary directory."""
    cache = getattr(config, "cache", None)
    if cache is None:
        return tempfile.mkdtemp(prefix="ndflow-jit-kernels-")
    return str(cache.mkdir("ndflow_jit_kernels"))


@pytest.fixture
def no_row_kernels(monkeypatch):
    """XLA's rule 2 strictly: every reduction a kernel root, no row kernels
    (XLA_FLAGS=--xla_gpu_enable_reduction_epilogue_fusion=false)."""
    monkeypatch.setenv("XLA_FLAGS", "--xla_gpu_enable_reduction_epilogue_fusion=false")
    flags_module.reset_xla_flags_for_test()
    yield
    monkeypatch.delenv("XLA_FLAGS")
    flags_module.reset_xla_flags_for_test()


def raw(name, *inputs, **attrs):
    """One graph op by its TF name (`raw("LeakyRelu", x, alpha=0.3)`)."""
    return apply_op(lookup(name), list(inputs), attrs).outputs[0]


def build(fn, specs):
    """(graph, placeholders, outputs) of `fn(*placeholders)` for specs [(DType, shape)]."""
    g = tf.Graph()
    with g.as_default():
        phs = [tf.compat.v1.placeholder(dt, shape) for dt, shape in specs]
        outs = fn(*phs)
    return g, phs, list(outs) if isinstance(outs, (list, tuple)) else [outs]


def checked_plan(fn, specs):
    """(plan_fusions of `fn`'s graph over placeholders of `specs`, its outputs), checked."""
    g, phs, outs = build(fn, specs)
    ops = [op for op in g.get_operations() if op.type != "Placeholder"]
    plan = plan_fusions(ops, outs)
    check_plan(plan, ops, phs, outs)
    return plan, outs


def check_plan(plan, ops, phs, outs):
    """Each op in at most one unit but for the cheap ones a group recomputes (rule 5: never an
    expensive one), every read tensor computed by an earlier unit (or fed), every group
    computing its outputs from its inputs, every fetched tensor produced, and group boundaries
    exact: a group writes what its own ops compute and another unit reads or the graph
    fetches."""
    seen, ready = set(), set(phs)
    read = set(outs)
    for unit in plan:
        read.update(unit.inputs)
    for unit in plan:
        copies = set(unit.recomputed) if isinstance(unit, FusionGroup) else set()
        members = unit.ops if isinstance(unit, FusionGroup) else [unit]
        for op in members:
            if op in copies:
                assert op.type == "Const" or rules.duplicable(op), f"{op.name} ({op.type}) copied"
                continue
            assert op not in seen, f"{op.name} in two units"
            seen.add(op)
        if isinstance(unit, FusionGroup):
            assert copies <= set(unit.ops)
            for t in unit.inputs:
                assert t in ready, f"{unit} reads {t.name} before it is computed"
            inside = set(unit.ops)
            for op in unit.ops:
                for t in rules.data_inputs(op):
                    assert t.op in inside or t in unit.inputs, f"{unit}: {t.name} not read"
                for t in op.outputs:
                    wanted = op not in copies and t in read and t not in unit.inputs
                    assert (t in unit.outputs) == wanted, f"{unit}: boundary of {t.name}"
            ready.update(unit.outputs)
        else:
            for t in unit.inputs:
                assert t in ready or t.op.type == "Const", f"{unit.name} reads {t.name} early"
            ready.update(unit.outputs)
    for t in outs:
        assert t in ready, f"{t.name} is never produced"


def random_tensor(dt, shape, rng, specials=True):
    """Values covering signs, halves (rounding), zeros and, for floats, inf/NaN."""
    if dt.is_bool:
        return torch.from_numpy(rng.random(shape) < 0.5)
    if dt.is_integer:
        return torch.from_numpy(rng.integers(-9, 10, size=shape)).to(dt.torch_dtype)
    v = (rng.standard_normal(shape) * 3).astype(np.float64)
    flat = v.reshape(-1)
    if specials and flat.size >= 12:
        flat[:12] = [0.0, -0.0, 0.5, 1.5, 2.5, -2.5, np.inf, -np.inf, np.nan, 1e-3, -7.0, 30.0]
    return torch.from_numpy(v).to(dt.torch_dtype)


def const_tensor(op):
    dt = op.outputs[0].dtype
    v = np.asarray(op.attrs["value"])
    if dt == dtypes.bfloat16:
        return torch.from_numpy(v.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.array(v))


def run_reference(ops, values: dict, device=CPU) -> dict:
    """Runs `ops` (topological order) op by op through their registered kernels, on `device`
    (the values fed must be there)."""
    values = dict(values)
    for op in ops:
        if op.type == "Placeholder":
            continue
        if op.type == "Const":
            values[op.outputs[0]] = const_tensor(op).to(device)
            continue
        node = registry.NodeInfo.for_op(op, device)
        r = registry.kernel_for(node)(node)(*[values[t] for t in op.inputs])
        values[op.outputs[0]] = r
    return values


def group_of(graph, inputs, outputs, kind="loop") -> FusionGroup:
    ops = [op for op in graph.get_operations() if op.type != "Placeholder"]
    return FusionGroup(ops, list(inputs), list(outputs), kind)


def run_plan(plan, values: dict, cache_dir=None, device=CPU) -> dict:
    """Runs a plan_fusions result: groups through kernels generated for `device`, other ops
    through their CPU kernels."""
    values = dict(values)
    for unit in plan:
        if isinstance(unit, FusionGroup):
            specs = [(t.dtype, tuple(values[t].shape)) for t in unit.inputs]
            fn = compile_fusion(unit, specs, device, cache_dir)
            for t, v in zip(unit.outputs, fn(*[values[t].to(device) for t in unit.inputs])):
                values[t] = v.cpu()
        else:
            values.update({k: v for k, v in run_reference([unit], values).items()
                           if k.op is unit})
    return values


def assert_same(got, want, dt, what: str):
    """Float tolerances per dtype (16-bit floats: two units in the last place: a fused
    kernel rounds once where ATen rounds each op of a composite kernel)."""
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {got.shape} vs {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs {want.dtype}"
    if not dt.is_floating:
        assert torch.equal(got, want), f"{what}: {got} != {want}"
        return
    tol = {dtypes.float64: (1e-12, 1e-12), dtypes.float32: (4e-6, 1e-6),
           dtypes.float16: (4e-3, 1e-3), dtypes.bfloat16: (1.6e-2, 1e-2)}[dt]
    torch.testing.assert_close(got.double(), want.double(), rtol=tol[0], atol=tol[1],
                               equal_nan=True, msg=lambda m: f"{what}: {m}")
