"""The persistent compile cache: entries, validation, bad directories, and a second process
that loads instead of compiling."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.jit import device_compiler, executable, persistent_cache
from ndflow.jit.device_compiler import DeviceCompiler
from ndflow.jit.persistent_cache import PersistentCache, graph_fingerprint
from tests.jit.cluster_graphs import CountingFallback, Flags, build, mlp_block, randn

CPU = torch.device("cpu")
MLP_SPECS = [(tf.float32, [None, 8]), (tf.float32, [8, 4]), (tf.float32, [4])]
SIG = [(tf.float32, (5, 8)), (tf.float32, (8, 4)), (tf.float32, (4,))]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))



@pytest.fixture(autouse=True)
def _registry_kernels_only(monkeypatch):
    """The policy does not depend on code generation (tested in test_executable.py); numba
    compiles cost about a second a kernel."""
    monkeypatch.setattr(executable, "plan_fusions", list)
    _fresh_process_state(monkeypatch)

def _args():
    return [randn(5, 8), randn(8, 4), randn(4)]


def _fresh_process_state(monkeypatch):
    """Forget what this process compiled, as a new process would have."""
    monkeypatch.setattr(device_compiler, "_CACHES", {})
    monkeypatch.setattr(device_compiler, "PROFILER", device_compiler._Profiler())
    monkeypatch.setattr(persistent_cache, "_CACHES", {})


def test_entry_round_trip_is_named_after_its_key_and_written_atomically(tmp_path):
    cache = PersistentCache(str(tmp_path), "my_prefix")
    key = cache.key("ab" * 32, SIG, "CPU", Flags())
    assert cache.load(key) is None
    assert cache.store(key, {"cluster": "c", "stats": {"fused_groups": 1}})
    names = os.listdir(tmp_path)
    assert names == [os.path.basename(cache.entry_path(key))]
    assert names[0].startswith("my_prefix__") and names[0].endswith("__abababababababab__CPU.json")
    assert cache.load(key) == {"cluster": "c", "stats": {"fused_groups": 1}}
    body = json.loads(open(cache.entry_path(key)).read())
    assert body["key"]["signature"] == "float32[5,8],float32[8,4],float32[4]"
    assert body["key"]["versions"]["torch"] and "numba" in body["key"]["versions"]


def test_key_changes_with_graph_signature_and_versions(tmp_path):
    cache = PersistentCache(str(tmp_path))
    fg1, fg2 = build(mlp_block, MLP_SPECS, "same"), build(mlp_block, MLP_SPECS, "same")
    assert graph_fingerprint(fg1) == graph_fingerprint(fg2)
    other = build(lambda x, w, b: [tf.matmul(x, w) + b], MLP_SPECS, "same")
    assert graph_fingerprint(other) != graph_fingerprint(fg1)
    k = cache.key(graph_fingerprint(fg1), SIG, "CPU")
    k2 = cache.key(graph_fingerprint(fg1), [(tf.float32, (6, 8))] + SIG[1:], "CPU")
    assert cache.entry_path(k) != cache.entry_path(k2)
    stale = dict(k, versions=dict(k["versions"], torch="0.0"))
    assert cache.entry_path(stale) != cache.entry_path(k)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "checksum", "stale"])
def test_corrupt_or_stale_entry_is_ignored_with_a_warning_and_rebuilt(tmp_path, capsys, damage):
    cache = PersistentCache(str(tmp_path))
    key = cache.key("cd" * 32, SIG, "CPU")
    cache.store(key, {"ok": True})
    path = cache.entry_path(key)
    art = cache.artifact_dir(key)
    open(os.path.join(art, "kernel.o"), "wb").write(b"old")
    raw = open(path, "rb").read()
    if damage == "garbage":
        raw = b"\x00\xffnot json"
    elif damage == "truncated":
        raw = raw[: len(raw) // 2]
    elif damage == "checksum":
        raw = raw.replace(b"true", b"false")
    else:   # a valid entry of another key under this name (e.g. copied from elsewhere)
        other = dict(key, versions=dict(key["versions"], ndflow="0.0.1"))
        cache.store(other, {"ok": True})
        raw = open(cache.entry_path(other), "rb").read()
    open(path, "wb").write(raw)
    assert cache.load(key) is None
    err = capsys.readouterr().err
    assert f"Ignoring XLA persistent cache entry {path}" in err
    assert {"garbage": "corrupt", "truncated": "corrupt", "checksum": "checksum mismatch",
            "stale": "stale entry (its versions differ)"}[damage] in err
    assert not os.path.exists(path) and not os.path.exists(art)   # rebuilt from scratch
    cache.store(key, {"ok": True})
    assert cache.load(key) == {"ok": True}


def test_unusable_directory_warns_once_and_the_jit_still_works(tmp_path, capsys, monkeypatch):
    _fresh_process_state(monkeypatch)
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    flags = Flags(tf_xla_persistent_cache_directory=str(blocker / "cache"))
    for _ in range(2):
        fg = build(mlp_block, MLP_SPECS)
        fallback = CountingFallback(fg)
        dc = DeviceCompiler(fg.name, fg, CPU, flags, False)
        out = dc.run(_args(), fallback)
        assert fallback.calls == 0 and dc.stats.compile_count == 1
        np.testing.assert_allclose(out[0].numpy(), fallback.plan.run(_args())[0].numpy())
    err = capsys.readouterr().err
    assert err.count("XLA persistent cache directory") == 1
    assert "cannot be used" in err and "will not be persisted" in err


def test_second_compiler_loads_the_entry_and_hands_codegen_its_artifact_dir(
        tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TF_CPP_VMODULE", "device_executable_persistor=1")
    handed = []

    def fake_codegen(group, specs, device, cache_dir):
        handed.append(cache_dir)
        return lambda h, b: [torch.relu(h + b)]

    def one_group(ops):
        # BiasAdd + Relu (a one-op group would run as a library call, never compiled)
        relu = next(op for op in ops if op.type == "Relu")
        bias = relu.inputs[0].op
        members = [bias, relu]
        group = executable._fusion.FusionGroup(members, list(bias.inputs), [relu.outputs[0]]) \
            if executable._fusion is not None else _Group(members)
        rest = [op for op in ops if op not in members]
        at = next(i for i, op in enumerate(rest) if op.type == "MatMul") + 1
        return rest[:at] + [group] + rest[at:]

    monkeypatch.setattr(executable, "plan_fusions", one_group)
    monkeypatch.setattr(executable, "compile_fusion", fake_codegen)
    flags = Flags(tf_xla_persistent_cache_directory=str(tmp_path))
    loaded = []
    for _ in range(2):
        _fresh_process_state(monkeypatch)
        fg = build(mlp_block, MLP_SPECS, "cluster_persist")
        dc = DeviceCompiler("cluster_persist", fg, CPU, flags, False)
        dc.run(_args(), CountingFallback(fg))
        exe = dc._entries[dc.signature(_args())].executable
        loaded.append(exe.loaded_from_persistent_cache)
    assert loaded == [False, True]
    assert handed[0] == handed[1] and handed[0].startswith(str(tmp_path))
    assert os.path.isdir(handed[0]) and handed[0].endswith(".d")
    err = capsys.readouterr().err
    assert err.count("Loading cached entry for: cluster_persist "
                     "float32[5,8],float32[8,4],float32[4]") == 1
    assert len([n for n in os.listdir(tmp_path) if n.endswith(".json")]) == 1


def test_read_only_directory_is_loaded_from_and_never_written(tmp_path, capsys, monkeypatch):
    flags = Flags(tf_xla_persistent_cache_directory=str(tmp_path))
    fg = build(mlp_block, MLP_SPECS, "cluster_ro")
    DeviceCompiler("cluster_ro", fg, CPU, flags, False).run(_args(), CountingFallback(fg))
    before = sorted(os.listdir(tmp_path))
    _fresh_process_state(monkeypatch)
    real_access = os.access
    monkeypatch.setattr(persistent_cache.os, "access",
                        lambda path, mode: not mode & os.W_OK and real_access(path, mode))
    dc = DeviceCompiler("cluster_ro", fg, CPU, flags, False)
    dc.run(_args(), CountingFallback(fg))
    assert dc._entries[dc.signature(_args())].executable.loaded_from_persistent_cache
    wide = [randn(7, 8), randn(8, 4), randn(4)]
    dc.run(wide, CountingFallback(fg))
    dc.run(wide, CountingFallback(fg))                  # a new signature: compiled, not stored
    assert dc.stats.compile_count == 2
    assert sorted(os.listdir(tmp_path)) == before
    err = capsys.readouterr().err
    assert err.count(f"XLA persistent cache directory {tmp_path} is read-only; compiled "
                     "clusters are loaded from it but not persisted.") == 1


class _Group:
    def __init__(self, ops):
        self.ops, self.inputs, self.outputs = ops, [ops[0].inputs[0]], [ops[0].outputs[0]]


_PROCESS = textwrap.dedent("""
    import json, sys, time
    import torch
    import ndflow as tf
    from ndflow.jit.codegen import numba_compile
    from ndflow.jit.device_compiler import DeviceCompiler
    from tests.jit.cluster_graphs import Flags, CountingFallback, build, mlp_block, randn
    fg = build(mlp_block, [(tf.float32, [None, 8]), (tf.float32, [8, 4]), (tf.float32, [4])],
               "cluster_xproc")
    dc = DeviceCompiler("cluster_xproc", fg, torch.device("cpu"),
                        Flags(tf_xla_persistent_cache_directory=sys.argv[1]), False)
    args = [randn(int(sys.argv[2]), 8), randn(8, 4), randn(4)]
    try:   # numba's one-time start-up (import, typing registries): not this cluster's compile
        import numba
        numba.njit(lambda v: v + 1)(1)
    except ImportError:
        pass
    out = dc.run(args, CountingFallback(fg))
    exe = dc._entries[dc.signature(args)].executable
    # (a native segment is compiled in each process: ~0.05 s, never cached)
    kernels = [k for k in numba_compile._KERNELS.values()
               if not getattr(k, "native_segment", False)]
    # whether each generated kernel's machine code came from numba's cache (a chunked
    # kernel is a C callback, CFunc; the others are dispatchers)
    hits = [k._cache_hits > 0 if type(k).__name__ == "CFunc" else
            sum(k.stats.cache_hits.values()) > 0 for k in kernels]
    print(json.dumps({"loaded": exe.loaded_from_persistent_cache,
                      "compile_us": exe.compile_time_us, "sum": float(out[1].sum()),
                      "fused": exe.stats["fused_groups"], "numba_cache_hits": hits,
                      "chunked": any(type(k).__name__ == "CFunc" for k in kernels)}))
""")


@pytest.mark.slow
@pytest.mark.parametrize("rows", [5, 32768], ids=["small", "chunked"])
def test_a_second_process_loads_instead_of_compiling(tmp_path, rows):
    # two OpenMP threads whatever runs the test (under pytest-xdist a worker's children inherit
    # OMP_NUM_THREADS=1, and a kernel is chunked only with a second thread to run chunks)
    env = dict(os.environ, PYTHONPATH=REPO, TF_CPP_VMODULE="device_executable_persistor=1",
               OMP_NUM_THREADS="2")
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", _PROCESS, str(tmp_path), str(rows)],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        runs.append((json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr))
    (first, err1), (second, err2) = runs
    assert not first["loaded"] and second["loaded"]
    assert "Loading cached entry for: cluster_xproc" in err2
    assert "Loading cached entry" not in err1
    assert first["sum"] == second["sum"]
    if first["fused"]:   # generated kernels are loaded, not compiled again
        # (what a load costs against a compile is timed by benchmarks/jit_mlp.py, not here:
        # under a loaded machine's noise it is no test)
        assert not any(first["numba_cache_hits"]) and all(second["numba_cache_hits"]), runs
        # the big signature runs a chunked kernel (a C callback compiled as its module runs)
        assert first["chunked"] == (rows > 5)
