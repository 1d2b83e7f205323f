"""Test-session set-up shared by every directory.

`NDFLOW_OP_NAMES`: the ops ndflow itself registers, recorded before any test module registers
test ops of its own (tests/ops/test_registry.py checks only these).
"""

import gc
import os

# Under pytest-xdist each worker owns one core: a second intra-op thread per worker would only
# oversubscribe the machine (the default suite's tensors are tiny, and OpenMP threads
# spin-wait). Set before torch starts its thread pools; the serial slow pass keeps the default.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

# The bfloat16 rewrite's tests run on every CPU: TensorFlow (and ndflow) apply
# auto_mixed_precision_onednn_bfloat16 only with oneDNN's optimizations on, which are off by
# default on AVX2-only CPUs (tests/passes/test_amp_config.py checks that gate itself).
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

import pytest

import ndflow  # noqa: F401 - registers every op, kernel and gradient
from ndflow.core import context, core_monitor, lazy_api, optimizer_options
from ndflow.kernels import autotune, batched_gemm, gemm
from ndflow.ops import random_seed
from ndflow.ops.op_def import REGISTRY

# ndflow's own ops: the base's and those of the op families, which load on first use
NDFLOW_OP_NAMES = frozenset(REGISTRY) | frozenset(
    op for op, module in lazy_api.index()["ops"].items() if module.startswith("ndflow.ops."))


def pytest_collection_finish(session):
    """Moves what import and collection built (ndflow's modules, 15,000+ test items and their
    parameters) out of the garbage collector's reach: those objects live for the whole session,
    yet every full collection re-scanned them, which cost ~20% of the tests' CPU time. Objects
    the tests create are collected as before (`gc.collect()` in a test still frees them)."""
    gc.collect()   # nothing unreachable gets frozen
    gc.freeze()


@pytest.fixture(autouse=True)
def _restore_optimizer_options():
    """Each test starts from the process-wide optimizer options it found: a test that turns a
    rewrite OFF (not back to DEFAULT) would otherwise outrank a later test's environment
    switch (TF_ENABLE_AUTO_MIXED_PRECISION), exactly as an explicit OFF does in TensorFlow."""
    saved = (dict(optimizer_options._options), optimizer_options._jit,
             optimizer_options._graph_rewrite_enabled)
    yield
    if saved != (optimizer_options._options, optimizer_options._jit,
                 optimizer_options._graph_rewrite_enabled):
        with optimizer_options._lock:
            optimizer_options._options.clear()
            optimizer_options._options.update(saved[0])
            optimizer_options._jit, optimizer_options._graph_rewrite_enabled = saved[1:]
            optimizer_options._bump()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_setup(item):
    """Notes the eager global seed before any of the test's fixtures run (a module-scoped
    fixture that seeds Keras runs inside the first test's setup)."""
    state = context.state()
    item._ndflow_seed = (state.seed, state.seed_counter)
    yield


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """Each test leaves the eager global seed as it found it: a test or fixture that calls
    `tf.random.set_seed` (keras.utils.set_random_seed, tnp.random.seed) would otherwise change
    the seeded streams of whatever test runs next in its worker (op seeds combine with the
    global seed, as TF's)."""
    yield
    saved = getattr(item, "_ndflow_seed", None)
    state = context.state()
    if saved is not None and state.seed != saved[0]:
        random_seed.set_seed(saved[0])
        state.seed_counter = saved[1]


def _tuned_to_prefer(monkeypatch, module, algorithm: str):
    """Tunes every product of `module` (its MIN_FLOPS set to 0) with `algorithm` timed the
    faster; yields it, the tuner's table cleared before and after."""
    assert algorithm in getattr(module, "PLAIN_ALGORITHMS", module.ALGORITHMS) + (
        autotune.VECTOR,)
    monkeypatch.setattr(core_monitor, "ready_to_time", lambda threads: True)
    monkeypatch.setattr(module, "MIN_FLOPS", 0)
    monkeypatch.setattr(autotune, "_timed", lambda run, chosen, credit=None: (
        0.001 if chosen == algorithm else 0.002, run(chosen)))
    monkeypatch.delenv("TF_CUDNN_USE_AUTOTUNE", raising=False)
    autotune.clear()
    yield algorithm
    autotune.clear()


@pytest.fixture(params=["aten", "onednn"])
def gemm_library(request, monkeypatch):
    """Tunes every float32 matrix product (kernels/gemm.py) and makes `request.param` the
    faster library, so a test runs its products on each."""
    yield from _tuned_to_prefer(monkeypatch, gemm, request.param)


@pytest.fixture(params=gemm.PLAIN_ALGORITHMS)
def plain_gemm_algorithm(request, monkeypatch):
    """As `gemm_library`, for tests whose products are plain 2-D ones (no bias, no
    activation), which may also run as their transpose (kernels/gemm.py ONEDNN_SWAPPED)."""
    yield from _tuned_to_prefer(monkeypatch, gemm, request.param)


@pytest.fixture(params=batched_gemm.ALGORITHMS)
def bmm_algorithm(request, monkeypatch):
    """Tunes every batched product (kernels/batched_gemm.py) and makes `request.param` the
    faster algorithm: ATen's matmul or the vector kernel."""
    yield from _tuned_to_prefer(monkeypatch, batched_gemm, request.param)
