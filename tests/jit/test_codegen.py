"""Generated kernels (ndflow.jit.codegen) against the ops' registered ATen kernels.

Table-driven: every op type codegen can emit is compiled (many ops share one kernel, to keep
numba's compile time down) and compared with its normal ndflow kernel, per dtype (float32
tight, float64 tighter, float16/bfloat16 to an ulp), with broadcasting.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core import dtypes
from ndflow.jit.codegen import compile_fusion, emitters, numba_intrinsics
from ndflow.jit.errors import CompileUnimplemented
from ndflow.ops.op_def import is_registered
from tests.jit.jit_graphs import (
    CPU,
    DEVICES,
    assert_same,
    build,
    group_of,
    kernel_cache_dir,
    random_tensor,
    raw,
    run_reference,
)

UNARY = ["Identity", "Snapshot", "StopGradient", "PreventGradient", "Neg", "Abs", "Sign",
         "Square", "Relu", "Relu6", "Elu", "Selu", "LeakyRelu", "Sigmoid", "Tanh", "Exp",
         "Expm1", "Log", "Log1p", "Sqrt", "Rsqrt", "Reciprocal", "Inv", "Floor", "Ceil", "Rint",
         "Round", "Erf", "Sin", "Cos", "Softplus", "Softsign", "IsNan", "IsInf", "IsFinite"]
BINARY = ["Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "DivNoNan", "MulNoNan", "FloorDiv",
          "FloorMod", "Maximum", "Minimum", "Pow", "SquaredDifference", "Equal", "NotEqual",
          "Less", "LessEqual", "Greater", "GreaterEqual"]
GRADS = ["ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "LeakyReluGrad", "SoftplusGrad",
         "SigmoidGrad", "TanhGrad", "RsqrtGrad", "SqrtGrad", "ReciprocalGrad"]
INT_UNARY = ["Identity", "Neg", "Abs", "Sign", "Square", "Relu", "Relu6", "Round"]
INT_BINARY = ["Add", "AddV2", "Sub", "Mul", "Maximum", "Minimum", "SquaredDifference", "Equal",
              "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"]
OTHER = ["BiasAdd", "Select", "SelectV2", "AddN", "Cast", "LogicalAnd", "LogicalOr",
         "LogicalNot", "Const", "Reshape", "ExpandDims", "Squeeze", "BroadcastTo", "Transpose",
         "Tile", "Sum", "Mean", "Max", "Min", "Prod", "All", "Any"]
# float32 runs by default; the other widths in CI's slow pass (compile time)
FLOATS = [dtypes.float32, pytest.param(dtypes.bfloat16, marks=pytest.mark.slow),
          pytest.param(dtypes.float64, marks=pytest.mark.slow),
          pytest.param(dtypes.float16, marks=pytest.mark.slow)]


@pytest.fixture(scope="module")
def cache_dir(request):
    return kernel_cache_dir(request.config)


@pytest.fixture(params=DEVICES)
def device(request):
    """The backend under test: numba on the CPU, Triton on a CUDA GPU (skipped without one)."""
    return request.param


# TF op names ndflow does not register (codegen still emits them); another test module may
# register a stand-in under one of these names (tests/passes/amp_helpers.py's "Inv").
NOT_NDFLOW_OPS = {"Inv", "PreventGradient", "Snapshot", "Div"}


def _present(names):
    return [n for n in names if is_registered(n) and n not in NOT_NDFLOW_OPS]


def test_every_emitted_op_is_tested():
    tested = set(UNARY) | set(BINARY) | set(GRADS) | set(OTHER)
    assert emitters.emitted_op_types() <= tested, emitters.emitted_op_types() - tested
    # names TF has that ndflow does not register are tolerated, nothing else
    assert {n for n in tested if not is_registered(n)} <= NOT_NDFLOW_OPS


def _check_group(fn, specs, seed=0, cache_dir=None, make=None, device=CPU):
    """Builds `fn` over placeholders, compiles all its ops as one group for `device` and
    compares every output with the op-by-op reference (ATen's kernels on that device: a
    float cast to an integer out of its range, as inf, is the device's saturating or not)."""
    g, phs, outs = build(fn, specs)
    rng = np.random.default_rng(seed)
    feeds = {p: (make or random_tensor)(dt, shape, rng).to(device)
             for p, (dt, shape) in zip(phs, specs)}
    want = run_reference(g.get_operations(), feeds, device)
    group = group_of(g, phs, outs)
    kernel = compile_fusion(group, [(dt, tuple(s)) for dt, s in specs], device, cache_dir)
    got = kernel(*[feeds[p] for p in phs])
    assert len(got) == len(outs)
    for t, v in zip(outs, got):
        assert v.device.type == torch.device(device).type
        assert_same(v.cpu(), want[t].cpu(), t.dtype, f"{t.op.type} ({t.dtype.name})")
    return kernel


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
def test_unary_and_grad_ops(dt, cache_dir, device):
    def fn(x, y):
        outs = []
        for name in _present(UNARY):
            outs.append(raw(name, x, alpha=0.3) if name == "LeakyRelu" else raw(name, x))
        for name in _present(GRADS):
            outs.append(raw(name, y, x, alpha=0.3) if name == "LeakyReluGrad"
                        else raw(name, y, x))
        return outs
    _check_group(fn, [(dt, [4, 37]), (dt, [4, 37])], cache_dir=cache_dir, device=device)


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
def test_binary_ops_broadcast(dt, cache_dir, device):
    def fn(x, y):
        return [raw(name, x, y) for name in _present(BINARY)]
    _check_group(fn, [(dt, [3, 1, 6]), (dt, [4, 6])], cache_dir=cache_dir, device=device)


@pytest.mark.parametrize("dt", [dtypes.int32, pytest.param(dtypes.int64,
                                                             marks=pytest.mark.slow)],
                         ids=lambda d: d.name)
def test_integer_ops(dt, cache_dir, device):
    def fn(x, y):
        return ([raw(n, x) for n in INT_UNARY] + [raw(n, x, y) for n in INT_BINARY]
                + [raw(n, x, x) for n in ("ReluGrad", "Relu6Grad")]
                + [raw("Cast", x, DstT=dtypes.float32), raw("Sum", x, tf.constant([1]),
                                                            keep_dims=False)])
    _check_group(fn, [(dt, [5, 7]), (dt, [7])], cache_dir=cache_dir, device=device)


def test_integer_wraparound_matches(cache_dir, device):
    big = dtypes.int32

    def fn(x, y):
        return [raw("Mul", x, y), raw("Add", x, y), raw("Neg", x)]

    def make(dt, shape, rng):
        return torch.tensor([2**31 - 1, -2**31, 65536, -7], dtype=torch.int32)
    _check_group(fn, [(big, [4]), (big, [4])], make=make, cache_dir=cache_dir, device=device)


def test_casts_selects_logical_addn_biasadd(cache_dir, device):
    f32, b = dtypes.float32, dtypes.bool

    def fn(x, y, c, bias8):
        outs = [raw("Cast", x, DstT=d) for d in (dtypes.float64, dtypes.int32, dtypes.bool,
                                                 dtypes.bfloat16, dtypes.float16)]
        outs += [raw("Cast", c, DstT=f32), raw("Cast", raw("Cast", x, DstT=dtypes.bfloat16),
                                               DstT=f32)]
        outs += [raw("Select", c, x, y), raw("SelectV2", c, x, tf.constant(2.0)),
                 raw("LogicalAnd", c, raw("Less", x, y)), raw("LogicalOr", c, c),
                 raw("LogicalNot", c), raw("AddN", [x, y, x])]
        return outs + [raw("BiasAdd", x, bias8)]
    _check_group(fn, [(f32, [5, 8]), (f32, [5, 8]), (b, [5, 8]), (f32, [8])],
                 cache_dir=cache_dir, device=device)
    _check_group(lambda x, b: [raw("BiasAdd", x, b, data_format="NCHW")],
                 [(f32, [2, 3, 4, 4]), (f32, [3])], cache_dir=cache_dir, device=device)


@pytest.mark.parametrize("dt", [dtypes.float32, dtypes.bfloat16], ids=lambda d: d.name)
def test_shape_ops_in_a_loop(dt, cache_dir, device):
    def fn(x, b):
        h = raw("Reshape", raw("Mul", x, x), tf.constant([6, 4]))
        h = raw("AddV2", h, raw("ExpandDims", b, tf.constant(0)))
        s = raw("Squeeze", raw("ExpandDims", raw("Tanh", h), tf.constant(-1)))
        t = raw("Transpose", raw("Exp", raw("Reshape", raw("Mul", x, x), tf.constant([4, 6]))),
                tf.constant([1, 0]))
        # a Tile of size-1 dimensions (a mean's gradient) is a broadcast
        tiled = raw("Tile", raw("ExpandDims", b, tf.constant(0)), tf.constant([6, 1]))
        return [s, raw("AddV2", raw("BroadcastTo", b, tf.constant([6, 4])), s),
                raw("Sub", s, h), raw("Mul", t, h), raw("Mul", tiled, s)]
    _check_group(fn, [(dt, [2, 3, 4]), (dt, [4])], cache_dir=cache_dir, device=device)


_slow = pytest.mark.slow
REDUCTION_CASES = [  # (shape, axes, keep_dims): rows, columns, middle, mixed, all
    ([6, 40], [1], False), ([6, 40], [0], True), pytest.param([3, 4, 5], [1], False, marks=_slow),
    pytest.param([3, 4, 5], [0, 2], True, marks=_slow),
    pytest.param([3, 4, 5], [0, 1, 2], False, marks=_slow),
    pytest.param([7], [0], False, marks=_slow),
]


@pytest.mark.parametrize("shape,axes,keep", REDUCTION_CASES)
def test_reductions_with_producers(shape, axes, keep, cache_dir, device):
    f32 = dtypes.float32

    def fn(x, y):
        e = raw("Mul", raw("Exp", raw("Mul", x, tf.constant(0.1))), y)
        ax = tf.constant(axes)
        outs = [raw(r, e, ax, keep_dims=keep) for r in ("Sum", "Mean", "Max", "Min", "Prod")]
        outs += [raw(r, raw("Greater", x, y), ax, keep_dims=keep) for r in ("All", "Any")]
        return outs + [e]

    def make(dt, shape, rng):  # no NaN: ATen's max/min over NaN is an ordering detail
        return torch.from_numpy(rng.uniform(0.5, 1.5, shape)).to(dt.torch_dtype)
    _check_group(fn, [(f32, shape), (f32, shape)], cache_dir=cache_dir, device=device,
                 make=make)


@pytest.mark.parametrize("dt", [dtypes.bfloat16, dtypes.int32,
                                pytest.param(dtypes.float16, marks=pytest.mark.slow),
                                pytest.param(dtypes.float64, marks=pytest.mark.slow)],
                         ids=lambda d: d.name)
def test_reductions_other_dtypes(dt, cache_dir, device):
    def fn(x):
        ax = tf.constant([1])
        return [raw(r, x, ax, keep_dims=False) for r in ("Sum", "Mean", "Max", "Min")]

    def make(dt, shape, rng):
        return random_tensor(dt, shape, rng, specials=False)
    _check_group(fn, [(dt, [3, 50])], cache_dir=cache_dir, device=device, make=make)


def test_float32_sum_accumulates_precisely(cache_dir, device):
    def fn(x):
        return [raw("Sum", x, tf.constant([0]), keep_dims=False)]

    def make(dt, shape, rng):
        return torch.from_numpy(rng.uniform(0, 1, shape).astype(np.float32))
    kernel = _check_group(fn, [(dtypes.float32, [300_000])], make=make, cache_dir=cache_dir,
                          device=device)
    x = torch.rand(300_000, generator=torch.Generator().manual_seed(3))
    exact = x.double().sum()
    assert abs(float(kernel(x.to(device))[0]) - float(exact)) <= 1e-6 * float(exact)


@pytest.mark.parametrize("device", DEVICES[1:])
def test_gpu_kernels_take_inputs_at_any_alignment(device):
    # Triton specializes a kernel on its pointers' 16-byte alignment: a view at an odd
    # offset gets its own specialization
    f32 = dtypes.float32
    g, phs, outs = build(lambda x: [raw("Exp", x)], [(f32, [100])])
    kernel = compile_fusion(group_of(g, phs, outs), [(f32, (100,))], device)
    base = torch.randn(101, device=device)
    for x in (base[:100], base[1:], base[:100]):
        torch.testing.assert_close(kernel(x)[0], torch.exp(x))


def test_reshape_of_a_broadcast_that_is_no_view_is_refused():
    # [6, 4] holding a broadcast [4] row cannot be re-viewed as [4, 6] without a copy: the
    # group is refused (it then runs op by op), never computed wrong
    def fn(x, b):
        return [raw("Neg", raw("Reshape", raw("AddV2", x, b), tf.constant([4, 6])))]
    g, phs, outs = build(fn, [(dtypes.float32, [6, 4]), (dtypes.float32, [4])])
    with pytest.raises(CompileUnimplemented, match="not a view"):
        compile_fusion(group_of(g, phs, outs), [(dtypes.float32, (6, 4)),
                                                 (dtypes.float32, (4,))], CPU)


def test_zero_size_and_noncontiguous_inputs():
    f32 = dtypes.float32
    g, phs, outs = build(lambda x: [raw("Sum", x, tf.constant([1]), keep_dims=False),
                                    raw("Max", x, tf.constant([1]), keep_dims=False),
                                    raw("Exp", x)], [(f32, [3, 0])])
    kernel = compile_fusion(group_of(g, phs, outs), [(f32, (3, 0))], CPU)
    s, m, e = kernel(torch.empty(3, 0))
    assert s.tolist() == [0, 0, 0] and m.tolist() == [-np.inf] * 3 and e.shape == (3, 0)
    g, phs, outs = build(lambda x: raw("Neg", x), [(f32, [4, 3])])
    kernel = compile_fusion(group_of(g, phs, outs), [(f32, (4, 3))], CPU)
    x = torch.arange(12.0).reshape(3, 4).t()
    assert torch.equal(kernel(x)[0], -x)
    frozen = np.arange(12, dtype=np.float32).reshape(4, 3)
    frozen.flags.writeable = False  # as a constant decoded from protobuf bytes
    with pytest.warns(UserWarning, match="not writable"):
        x = torch.from_numpy(frozen)
    assert torch.equal(kernel(x)[0], -x)


def test_small_kernels_take_addresses_checked_against_their_lengths():
    """An unchunked kernel reads each tensor by its address (no NumPy view a call), 16-bit
    floats as their bits; a tensor of another length or dtype than compiled for is refused
    before the kernel runs (it indexes without bounds); boolean arrays keep NumPy views."""
    from ndflow.kernels.raw_memory import RawMemoryError
    for dt in (dtypes.float32, dtypes.bfloat16):
        g, phs, outs = build(lambda x, y: [raw("ReluGrad", x, y),
                                           raw("Sum", raw("ReluGrad", x, y), tf.constant([0]),
                                               keep_dims=False)], [(dt, [8, 16])] * 2)
        kernel = compile_fusion(group_of(g, phs, outs), [(dt, (8, 16))] * 2, CPU)
        assert "address_as_pointer(p0" in kernel.source
        rng = np.random.default_rng(5)
        x, y = (random_tensor(dt, (8, 16), rng) for _ in range(2))
        want = run_reference(g.get_operations(), dict(zip(phs, (x, y))))
        for got, out in zip(kernel(x, y), outs):
            assert_same(got, want[out], dt, f"{dt.name} {out.op.type}")
        with pytest.raises(RawMemoryError, match="128 contiguous elements"):
            kernel(x[:4], y[:4])
        with pytest.raises(RawMemoryError):
            kernel(x.double(), y)
    g, phs, outs = build(lambda x: raw("LogicalNot", x), [(dtypes.bool, [5])])
    kernel = compile_fusion(group_of(g, phs, outs), [(dtypes.bool, (5,))], CPU)
    assert "address_as_pointer(p0" not in kernel.source
    x = torch.tensor([True, False, True, True, False])
    assert torch.equal(kernel(x)[0], ~x)


def test_what_cannot_be_generated_raises_compile_unimplemented():
    f32 = dtypes.float32
    g, _, outs = build(lambda x: [raw("Tile", x, tf.constant([2, 1])),
                                  raw("Tile", x, tf.constant([1, 3]))], [(f32, [2, 1])])
    copies, broadcast = (t.op for t in outs)
    assert not emitters.can_emit(copies) and emitters.can_emit(broadcast)  # blocks vs a view
    g, phs, outs = build(lambda x: raw("Exp", x), [(f32, [4])])
    group = group_of(g, phs, outs)
    with pytest.raises(CompileUnimplemented, match="no code generator for meta devices"):
        compile_fusion(group, [(f32, (4,))], torch.device("meta"))
    g, phs, outs = build(lambda x: raw("MatMul", x, x), [(f32, [2, 2])])
    with pytest.raises(CompileUnimplemented, match="MatMul"):
        compile_fusion(group_of(g, phs, outs), [(f32, (2, 2))], CPU)
    g, phs, outs = build(lambda x: raw("Exp", x), [(dtypes.complex64, [4])])
    with pytest.raises(CompileUnimplemented):
        compile_fusion(group_of(g, phs, outs), [(dtypes.complex64, (4,))], CPU)


_TWO_PROCESS = textwrap.dedent("""
    import sys, time
    import ndflow as tf
    assert "numba" not in sys.modules, "import ndflow loaded numba"
    import torch
    from ndflow.core import dtypes
    from ndflow.jit import codegen
    from ndflow.jit.codegen import numba_compile
    from tests.jit.jit_graphs import build, group_of, raw
    g, phs, outs = build(lambda x: [raw("Tanh", raw("Mul", x, x)),
                                    raw("Sum", x, tf.constant([0]), keep_dims=False)],
                         [(dtypes.float32, [64])])
    t = time.perf_counter()
    k = codegen.compile_fusion(group_of(g, phs, outs), [(dtypes.float32, (64,))], "cpu",
                               sys.argv[1])
    dt = time.perf_counter() - t
    disp = next(iter(numba_compile._KERNELS.values()))
    x = torch.linspace(-1, 1, 64)
    assert torch.allclose(k(x)[0], torch.tanh(x * x))
    print(len(disp.stats.cache_hits), len(disp.stats.cache_misses), round(dt, 3))
""")


@pytest.mark.slow
def test_persistent_cache_across_processes(tmp_path):
    """A second process loads the kernel's machine code from the cache directory (numba cache
    hit, no compile); a corrupt source file, or corrupt machine code, is rebuilt and works."""
    env = dict(os.environ, PYTHONPATH=os.getcwd())

    def run():
        out = subprocess.run([sys.executable, "-c", _TWO_PROCESS, str(tmp_path)], env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        hits, misses, _ = out.stdout.split()
        return int(hits), int(misses)
    assert run() == (0, 1)
    assert run() == (1, 0)
    sources = list(tmp_path.glob("k*.py"))
    assert len(sources) == 1
    sources[0].write_text("garbage (\n")
    run()  # the subprocess checks the kernel's result
    assert "def kernel(" in sources[0].read_text()
    for f in (tmp_path / "__pycache__").iterdir():
        f.write_bytes(b"\x00garbage")
    hits, misses = run()
    assert hits == 0 and misses >= 1  # recompiled


def test_scalar_helpers_use_numbas_disk_cache():
    # a later process loads the helpers' machine code (float32 tanh/exp: ~1 s of compile)
    helpers = [v for v in vars(numba_intrinsics).values()
               if type(v).__name__ == "CPUDispatcher"]
    assert {h.__name__ for h in helpers} >= {"exp_f32", "_tanh_f32", "maximum", "select"}
    assert all(type(h._cache).__name__ == "FunctionCache" for h in helpers)
