"""DeviceCompiler: TensorFlow's lazy / strict / async / megamorphic compile policy and logs."""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.jit import device_compiler, executable
from ndflow.jit.device_compiler import (
    DeviceCompiler,
    human_readable_elapsed_time,
    wait_for_async_compilations,
)
from ndflow.jit.flags import parse_flags
from ndflow.ops.op_def import ArgDef, AttrDef, OpDef
from tests.jit.cluster_graphs import CountingFallback, Flags, build, mlp_block, randn

CPU = torch.device("cpu")
MLP_SPECS = [(tf.float32, [None, 8]), (tf.float32, [8, 4]), (tf.float32, [4])]



@pytest.fixture(autouse=True)
def _registry_kernels_only(monkeypatch):
    """The policy does not depend on code generation (tested in test_executable.py); numba
    compiles cost about a second a kernel."""
    monkeypatch.setattr(executable, "plan_fusions", list)
    # Stats and executables are per computation, process-wide: each test starts afresh.
    monkeypatch.setattr(device_compiler, "PROFILER", device_compiler._Profiler())
    monkeypatch.setattr(device_compiler, "_CACHES", {})

def _mlp_args(batch):
    return [randn(batch, 8), randn(8, 4), randn(4)]


def _setup(flags=None, must_compile=False, fn=mlp_block, specs=MLP_SPECS):
    fg = build(fn, specs)
    dc = DeviceCompiler(fg.name, fg, CPU, flags or Flags(), must_compile)
    return dc, CountingFallback(fg)


def test_first_execution_compiles_and_matches_the_fallback():
    dc, fallback = _setup()
    args = _mlp_args(5)
    out = dc.run(args, fallback)
    assert fallback.calls == 0
    assert dc.stats.compile_count == 1 and dc.stats.execution_count == 1
    for got, want in zip(out, fallback(args)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_new_signature_runs_the_fallback_once_then_compiles():
    dc, fallback = _setup()
    dc.run(_mlp_args(5), fallback)           # first execution: compiled
    dc.run(_mlp_args(6), fallback)           # new shape, request 1: fallback
    assert (fallback.calls, dc.stats.compile_count) == (1, 1)
    dc.run(_mlp_args(6), fallback)           # request 2: compiles
    assert (fallback.calls, dc.stats.compile_count) == (1, 2)
    dc.run(_mlp_args(6), fallback)
    dc.run(_mlp_args(5), fallback)
    assert (fallback.calls, dc.stats.compile_count) == (1, 2)
    assert dc.stats.execution_count == 5


def test_megamorphic_after_eleven_compiles_with_few_executions(monkeypatch, capsys):
    monkeypatch.setenv("TF_CPP_VMODULE", "device_compilation_profiler=2")
    dc, fallback = _setup()
    dc.run(_mlp_args(1), fallback)
    for batch in range(2, 12):               # 10 more signatures, each compiled on its 2nd call
        dc.run(_mlp_args(batch), fallback)
        dc.run(_mlp_args(batch), fallback)
    assert dc.stats.compile_count == 11 and not dc.stats.is_megamorphic
    calls = fallback.calls
    for _ in range(3):                       # a 12th signature: never compiled
        dc.run(_mlp_args(20), fallback)
    assert dc.stats.is_megamorphic and dc.stats.compile_count == 11
    assert fallback.calls == calls + 3
    dc.run(_mlp_args(3), fallback)           # a compiled signature still runs compiled
    assert fallback.calls == calls + 3
    err = capsys.readouterr().err
    assert f"Marking {dc.cluster_name} as megamorphic, compile_count=11 execution_count=22" \
        in err
    assert f"Not compiling cluster {dc.cluster_name} because it is megamorphic." in err


def test_many_executions_per_compile_is_not_megamorphic():
    dc, fallback = _setup()
    for batch in range(1, 13):
        for _ in range(60):
            dc.run(_mlp_args(batch), fallback)
    assert dc.stats.compile_count == 12 and not dc.stats.is_megamorphic


def _compile_signatures(dc, fallback, n):
    """n signatures compiled, each on its 2nd sighting (the first one on the first run)."""
    dc.run(_mlp_args(1), fallback)
    for batch in range(2, n + 1):
        dc.run(_mlp_args(batch), fallback)
        dc.run(_mlp_args(batch), fallback)


def test_threshold_for_megamorphic_sets_the_compile_count():
    # --tf_xla_threshold_for_megamorphic=3 (TF master): megamorphic past 3 compiles, not 10
    dc, fallback = _setup(parse_flags("--tf_xla_threshold_for_megamorphic=3"))
    _compile_signatures(dc, fallback, 4)
    assert dc.stats.compile_count == 4
    calls = fallback.calls
    for _ in range(2):                       # a 5th signature, seen twice: not compiled
        dc.run(_mlp_args(9), fallback)
    assert dc.stats.is_megamorphic and dc.stats.compile_count == 4
    assert fallback.calls == calls + 2


def test_threshold_for_megamorphic_minus_one_never_turns_megamorphic():
    dc, fallback = _setup(parse_flags("--tf_xla_threshold_for_megamorphic=-1"))
    _compile_signatures(dc, fallback, 13)    # default: megamorphic from the 12th signature on
    assert dc.stats.compile_count == 13 and not dc.stats.is_megamorphic


def test_always_defer_runs_only_the_fallback():
    dc, fallback = _setup(Flags(tf_xla_always_defer_compilation=True))
    for _ in range(3):
        dc.run(_mlp_args(4), fallback)
    assert fallback.calls == 3 and dc.stats.compile_count == 0


@pytest.mark.parametrize("flags,must", [(Flags(), True),
                                        (Flags(tf_xla_enable_lazy_compilation=False), False)])
def test_strict_mode_compiles_every_new_signature_at_once(flags, must):
    dc, fallback = _setup(flags, must)
    for batch in (2, 3, 4):
        dc.run(_mlp_args(batch), fallback)
    assert fallback.calls == 0 and dc.stats.compile_count == 3


_NO_KERNEL = OpDef("_JitTestNoKernel", [ArgDef("x", type_attr="T")], [ArgDef("y", type_attr="T")],
                   {"T": AttrDef("T", "type")}, shape_fn=lambda ctx: [ctx.shapes[0]])


def _uncompilable(x):
    y = tf.nn.relu(x)
    return [y.graph.create_op(_NO_KERNEL, [y], {"T": tf.float32}, [(tf.float32, y.shape)],
                              "odd").outputs[0]]


def test_strict_mode_compile_failure_names_the_cluster():
    dc, _ = _setup(must_compile=True, fn=_uncompilable, specs=[(tf.float32, [3])])

    def no_fallback(args):
        raise AssertionError("strict mode has no fallback")
    with pytest.raises(tf.errors.UnimplementedError, match=re.escape(dc.cluster_name)) as e:
        dc.run([torch.ones(3)], no_fallback)
    assert "_JitTestNoKernel" in str(e.value)


def test_lazy_compile_failure_falls_back_and_logs_once(capsys):
    dc, _ = _setup(fn=_uncompilable, specs=[(tf.float32, [3])])
    calls = []

    def fallback(args):
        calls.append(1)
        return [args[0]]
    for _ in range(3):
        assert dc.run([torch.ones(3)], fallback)[0].shape == (3,)
    assert len(calls) == 3 and dc.cannot_compile
    err = capsys.readouterr().err
    assert err.count("Compilation failed:UNIMPLEMENTED: ") == 1
    assert "_JitTestNoKernel" in err and ".  Falling back to TF function call." in err
    assert dc.stats.execution_count == 1      # later calls do not even ask the compiler


def test_async_compiles_in_the_background_then_runs_compiled():
    dc, fallback = _setup(Flags(tf_xla_async_compilation=True))
    dc.run(_mlp_args(5), fallback)            # first execution: queued, fallback runs
    assert fallback.calls == 1
    assert wait_for_async_compilations(timeout=60)
    assert dc.stats.compile_count == 1
    out = dc.run(_mlp_args(5), fallback)
    assert fallback.calls == 1
    want = fallback.plan.run(_mlp_args(5))
    np.testing.assert_allclose(out[1].numpy(), want[1].numpy(), rtol=1e-6)


def test_compile_cache_is_shared_by_compilers_of_the_same_cluster():
    fg = build(mlp_block, MLP_SPECS)
    fallback = CountingFallback(fg)
    DeviceCompiler(fg.name, fg, CPU, Flags(), False).run(_mlp_args(5), fallback)
    again = DeviceCompiler(fg.name, fg, CPU, Flags(), False)
    again.run(_mlp_args(5), fallback)
    assert fallback.calls == 0 and again.stats.compile_count == 1


def test_compile_logs_in_tensorflow_words(monkeypatch, capsys):
    monkeypatch.setattr(device_compiler, "_logged_first_cluster", False)
    monkeypatch.setenv("TF_CPP_VMODULE", "xla_compilation_cache=2")
    dc, fallback = _setup()
    dc.run(_mlp_args(5), fallback)
    dc.run(_mlp_args(6), fallback)
    dc.run(_mlp_args(6), fallback)
    other, other_fallback = _setup(fn=lambda x: [tf.nn.relu(x) * 2.0], specs=[(tf.float32, [3])])
    other.run([torch.ones(3)], other_fallback)
    assert other.stats.compile_count == 1
    err = capsys.readouterr().err
    name = dc.cluster_name
    first = re.search(rf"Compiled {name} 1 times, compile time: (\d+) us, cumulative: (\d+) us "
                      r"\(\S+ us / \S+ \w+\)", err)
    assert first and first.group(1) == first.group(2)
    second = re.search(rf"Compiled {name} 2 times, compile time: (\d+) us, cumulative: (\d+) us",
                       err)
    assert second and int(second.group(2)) == int(first.group(2)) + int(second.group(1))
    assert (f"Not compiling cluster {name} because it has not reached compile threshold; "
            "threshold is 2 execution count 1.") in err
    assert err.count("Compiled cluster using XLA!  This line is logged at most once for the "
                     "lifetime of the process.") == 1
    assert (f"Compilation cache entry hit: 0 signature: {name} with request count 1" in err
            and f"Instantly compiling for signature: {name}" in err
            and f"Compilation cache entry hit: 2 signature: {name} with request count 1" not in err)


def test_cache_lookup_logs_under_device_compiler(monkeypatch, capsys):
    monkeypatch.setenv("TF_CPP_VMODULE", "device_compiler=2")
    dc, fallback = _setup()
    dc.run(_mlp_args(5), fallback)
    dc.run(_mlp_args(5), fallback)
    err = capsys.readouterr().err
    name = dc.cluster_name
    assert f"Compilation cache entry hit: 2 signature: {name} with request count 2" in err
    assert f"Already Compiled for signature: {name}" in err
    assert "Compiled " + name not in err      # the profiler's lines are another module's


def test_logs_are_silent_by_default(monkeypatch, capsys):
    monkeypatch.delenv("TF_CPP_VMODULE", raising=False)
    monkeypatch.setattr(device_compiler, "_logged_first_cluster", True)
    dc, fallback = _setup()
    dc.run(_mlp_args(5), fallback)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("seconds,text", [(0, "0 us"), (0.000153, "153 us"),
                                          (0.153421, "153 ms"), (1.5, "1.5 s"),
                                          (90, "1.5 min"), (7200, "2 h")])
def test_human_readable_elapsed_time(seconds, text):
    assert human_readable_elapsed_time(seconds) == text


def test_a_retraced_cluster_shares_executables_and_stats():
    """Retracing for a new shape gives a new cluster_N with the same computation: it reuses
    what was compiled, and counts toward the same megamorphic rule."""
    first = build(mlp_block, MLP_SPECS, "cluster_a")
    retraced = build(mlp_block, [(tf.float32, [6, 8])] + MLP_SPECS[1:], "cluster_b")
    fallback = CountingFallback(first)
    DeviceCompiler("cluster_a", first, CPU, Flags(), False).run(_mlp_args(5), fallback)
    dc = DeviceCompiler("cluster_b", retraced, CPU, Flags(), False)
    dc.run(_mlp_args(5), fallback)
    assert fallback.calls == 0 and dc.stats.compile_count == 1
    assert dc.stats.execution_count == 2
    [stats] = device_compiler.compile_stats()
    assert stats.cluster_name == "cluster_a" and stats.cumulative_compile_time_us > 0
    other = build(lambda x, w, b: [tf.matmul(x, w) - b], MLP_SPECS, "cluster_c")
    assert DeviceCompiler("cluster_c", other, CPU, Flags(), False).stats.execution_count == 0


def test_shapes_changing_every_step_do_not_cause_a_recompile_storm():
    """tf.function retraces for every new batch size; with auto-jit the clusters of all
    traces are one computation, so the lazy rule and then the megamorphic rule hold."""
    w = tf.Variable(np.ones((8, 8), np.float32))

    @tf.function
    def f(x):
        h = tf.matmul(x, w)
        return tf.reduce_sum(tf.tanh(h * 2.0 + 1.0) * h - 3.0, axis=1)

    tf.config.optimizer.set_jit(True)
    try:
        for n in range(1, 13):     # every step a new shape
            out = f(tf.constant(np.full((n, 8), 0.1, np.float32)))
        np.testing.assert_allclose(out.numpy(), f.python_function(
            tf.constant(np.full((12, 8), 0.1, np.float32))).numpy(), rtol=1e-6)
        stats = list(device_compiler.PROFILER.stats.values())
        assert len(stats) == 1, "the retraces' clusters are one computation"
        assert stats[0].execution_count == 12 and stats[0].compile_count == 1
        for n in range(1, 13):     # each shape again: compiled on its second sighting ...
            f(tf.constant(np.full((n, 8), 0.1, np.float32)))
        assert stats[0].compile_count == 11 and stats[0].is_megamorphic   # ... until 11
    finally:
        tf.config.optimizer.set_jit(False)


def test_concurrent_calls_compile_a_signature_once():
    dc, fallback = _setup()
    args = _mlp_args(5)
    want = fallback.plan.run(args)
    results = [None] * 6

    def call(i):
        results[i] = dc.run(args, fallback)
    threads = [threading.Thread(target=call, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert dc.stats.compile_count == 1 and dc.stats.execution_count == 6
    for out in results:
        np.testing.assert_allclose(out[1].numpy(), want[1].numpy(), rtol=1e-6)


def test_must_compile_ignores_always_defer():
    dc, fallback = _setup(Flags(tf_xla_always_defer_compilation=True), must_compile=True)
    dc.run(_mlp_args(3), fallback)
    assert fallback.calls == 0 and dc.stats.compile_count == 1


def test_any_lazy_compile_error_falls_back(monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise RuntimeError("generator bug")
    monkeypatch.setattr(device_compiler, "compile_cluster", broken)
    dc, fallback = _setup()
    out = dc.run(_mlp_args(3), fallback)
    assert fallback.calls == 1 and out[0].shape == (3, 4) and dc.cannot_compile
    assert "Compilation failed:UNIMPLEMENTED: generator bug.  Falling back to TF function " \
        "call." in capsys.readouterr().err
    strict, _ = _setup(must_compile=True)
    with pytest.raises(tf.errors.InternalError, match=f"{strict.cluster_name}.*generator bug"):
        strict.run(_mlp_args(3), fallback)
