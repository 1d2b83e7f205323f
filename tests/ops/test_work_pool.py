"""ndflow's work-sharing pool (kernels/work_pool.py, work_pool_numba.py) and the products it
runs in blocks (kernels/pool_gemm.py): values against NumPy in float64 for every operand form,
every block run once whichever thread claims it, helpers that join, a caller that does not wait
for a pool another thread holds, a forked child's own pool; the core monitor's decision to
share a crowded thread's work and runtime/threads.py applying it."""

from __future__ import annotations

import ast
import os
import threading

import numpy as np
import pytest
import torch

from ndflow.core import core_monitor
from ndflow.kernels import gemm, pool_gemm, work_pool
from ndflow.runtime import threads

RNG = np.random.default_rng(5)
pytestmark = pytest.mark.skipif(not work_pool.available() or pool_gemm._callbacks() is None,
                                reason="needs numba, MKL and Linux on x86-64")


def _form(x: np.ndarray, transposed: bool) -> torch.Tensor:
    t = torch.tensor(x.T.copy() if transposed else x, dtype=torch.float32)
    return t.t() if transposed else t


@pytest.mark.parametrize("a_t", [False, True])
@pytest.mark.parametrize("w_t", [False, True])
@pytest.mark.parametrize("m,k,n", [(256, 96, 80), (40, 70, 300), (300, 64, 16),
                                   (130, 64, 270), (1000, 100, 10)])
def test_products_in_blocks_match_float64(a_t, w_t, m, k, n):
    """Blocks of rows (m >= n) and of columns (n > m), each operand as stored or as the
    transpose of a stored matrix, on two threads of the pool."""
    a, w = RNG.standard_normal((m, k)), RNG.standard_normal((n, k))
    got = pool_gemm.linear(_form(a, a_t), _form(w, w_t), 2)
    assert got.shape == (m, n) and got.is_contiguous()
    np.testing.assert_allclose(got.numpy(), a @ w.T, rtol=1e-5, atol=1e-5 * np.sqrt(k))


def test_other_operands_are_refused():
    a, w = torch.randn(300, 64), torch.randn(50, 64)
    assert pool_gemm.linear(a, w, 2) is not None
    assert pool_gemm.linear(a.double(), w.double(), 2) is None
    assert pool_gemm.linear(torch.randn(300, 128)[:, ::2], w, 2) is None   # strided columns
    assert pool_gemm.linear(torch.randn(0, 64), w, 2) is None
    assert pool_gemm.linear(a, torch.randn(50, 65), 2) is None            # inner sizes differ
    assert pool_gemm.linear(a[:, :63], w[:, :63], 2) is None    # too few terms to pay blocks
    assert pool_gemm.linear(a[:255], w, 2) is None              # too narrow for two blocks


def _wide_product(threads_: int, repeats: int = 40) -> tuple[torch.Tensor, torch.Tensor]:
    a, w = torch.randn(512, 256), torch.randn(384, 256)
    out = None
    for _ in range(repeats):
        out = pool_gemm.linear(a, w, threads_)
    return out, a.double() @ w.double().t()


def test_helpers_join_and_every_block_is_computed_once():
    """A block computed twice or skipped changes the output (beta 0 would hide a repeat, so
    the product is checked against float64 after many jobs in which helpers joined)."""
    jobs0, joined0 = work_pool.counts()
    out, want = _wide_product(2)
    jobs, joined = work_pool.counts()
    assert jobs - jobs0 == 40
    assert joined > joined0            # the helper took part
    assert work_pool.helper_threads() >= 1
    np.testing.assert_allclose(out.double().numpy(), want.numpy(), rtol=1e-4, atol=1e-3)


def test_a_caller_does_not_wait_for_a_pool_another_thread_holds():
    pool = work_pool._get()
    jobs0 = work_pool.counts()[0]
    held = threading.Event()
    release = threading.Event()

    def hold():
        with pool.lock:
            held.set()
            release.wait(10)
    th = threading.Thread(target=hold)
    th.start()
    held.wait(10)
    try:
        out, want = _wide_product(2, repeats=3)   # runs alone on this thread
    finally:
        release.set()
        th.join()
    assert work_pool.counts()[0] == jobs0
    np.testing.assert_allclose(out.double().numpy(), want.numpy(), rtol=1e-4, atol=1e-3)


def test_shutdown_stops_the_helpers_and_a_new_pool_starts():
    _wide_product(2, repeats=2)
    helpers = list(work_pool._pool[0].helpers)
    work_pool.shutdown()
    assert not any(t.is_alive() for t in helpers)
    assert work_pool.helper_threads() == 0
    out, want = _wide_product(2, repeats=2)
    assert work_pool.helper_threads() == 1
    np.testing.assert_allclose(out.double().numpy(), want.numpy(), rtol=1e-4, atol=1e-3)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_starts_its_own_pool():
    """The parent's helpers do not exist in a forked child: it starts helpers of its own."""
    a, w = torch.randn(512, 256), torch.randn(384, 256)
    want = (a.double() @ w.double().t()).numpy()
    pool_gemm.linear(a, w, 2)   # the parent's helpers exist
    r, wr = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: report and leave without pytest's teardown
        try:
            out = pool_gemm.linear(a, w, 2).numpy()
            os.write(wr, repr((work_pool.helper_threads(), work_pool.counts()[1] > 0 or
                               work_pool.counts()[0] == 1,
                               float(np.abs(out - want).max()))).encode())
        finally:
            os._exit(0)
    os.close(wr)
    with os.fdopen(r) as f:
        helpers, ran, err = ast.literal_eval(f.read())
    os.waitpid(pid, 0)
    assert helpers == 1 and ran and err < 1e-2


def test_one_thread_keeps_off_the_pool():
    jobs0 = work_pool.counts()[0]
    a, w = torch.randn(256, 64), torch.randn(128, 64)
    y = pool_gemm.linear(a, w, 1)    # one thread: no pool
    assert work_pool.counts()[0] == jobs0
    np.testing.assert_allclose(y.numpy(), (a.double() @ w.double().t()).numpy(), rtol=1e-4,
                               atol=1e-4)


@pytest.mark.parametrize("sharing,waited,expected", [
    (False, 0.01, False),   # the capped thread has a core of its own
    (False, 0.30, True),    # it waits for one a third of the time: others crowd it
    (True, 0.45, True),     # shared and still crowded
    (True, 0.28, False),    # shared, the waits of a core shared with its own helper only
])
def test_share_decisions(sharing, waited, expected):
    assert core_monitor.decide_share(sharing, waited) == expected


def test_thread_times_of_this_thread():
    times = core_monitor.thread_times(threading.get_native_id())
    assert times is not None and times[0] > 0 and times[1] >= 0
    assert core_monitor.thread_times(2 ** 30) is None


@pytest.fixture
def crowded(monkeypatch):
    monkeypatch.setattr(core_monitor.STATE, "sampling", True)
    monkeypatch.setattr(core_monitor.STATE, "cap", None)
    monkeypatch.setattr(core_monitor.STATE, "share", False)
    monkeypatch.setattr(threads, "_FOLLOW", True)
    monkeypatch.setattr(threads, "_SHARE", True)
    return core_monitor.STATE


def test_a_crowded_capped_thread_shares_its_products(crowded):
    """Capped to one thread and still waiting for a core, a thread's products run on the pool
    over its configured two threads; free cores end both."""
    def run():
        torch.set_num_threads(2)
        seen = []
        a, w = torch.randn(256, 200), torch.randn(300, 200)
        for cap, share in ((1, False), (1, True), (None, False)):
            crowded.cap, crowded.share = cap, share
            threads.follow_free_cores()
            jobs0 = work_pool.counts()[0]
            y = gemm.linear(a, w)
            np.testing.assert_allclose(y.numpy(), (a.double() @ w.double().t()).numpy(),
                                       rtol=1e-4, atol=1e-3)
            seen.append((torch.get_num_threads(), work_pool.width(),
                         work_pool.counts()[0] - jobs0))
        return seen
    out = []
    th = threading.Thread(target=lambda: out.append(run()))
    th.start()
    th.join()
    assert out[0] == [(1, 0, 0), (1, 2, 1), (2, 0, 0)]


def _callbacks_as_functions():
    import ctypes
    helpers, callers = pool_gemm._callbacks()
    return (ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(helpers),
            ctypes.CFUNCTYPE(None, ctypes.c_void_p)(callers))


def test_the_caller_redoes_blocks_a_helper_holds_and_refuses_its_late_copy():
    """Every block claimed by helpers that never finish (the claim counter at its end, the
    blocks' states untouched): the caller redoes them all. A helper that comes back later finds
    them taken over and copies nothing out."""
    helpers, callers = _callbacks_as_functions()
    a, w = torch.randn(96, 64), torch.randn(600, 64)
    want = (a.double() @ w.double().t()).numpy()
    out, arrays, data, floats = pool_gemm._job(a, w, 2)
    blocks = arrays[7].shape[0]
    assert blocks > 1
    data[0] = blocks   # all claimed elsewhere
    callers(data.ctypes.data)
    assert (arrays[9] == pool_gemm.DONE).all()
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-4)
    before = out.clone()
    scratch = np.full(floats, np.nan, dtype=np.float32)   # what a late copy would show
    data[0] = 0        # the late helper claims again
    helpers(data.ctypes.data, scratch.ctypes.data, floats)
    assert torch.equal(out, before)


def test_a_helpers_blocks_are_copied_out_when_it_finishes_them():
    helpers, callers = _callbacks_as_functions()
    a, w = torch.randn(300, 64), torch.randn(48, 64)     # blocks of rows
    want = (a.double() @ w.double().t()).numpy()
    out, arrays, data, floats = pool_gemm._job(a, w, 2)
    out.fill_(float("nan"))
    scratch = np.empty(floats, dtype=np.float32)
    helpers(data.ctypes.data, scratch.ctypes.data, floats)   # a helper takes every block
    assert (arrays[9] == pool_gemm.DONE).all()
    callers(data.ctypes.data)                               # nothing left to redo
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-4)


def test_a_helper_whose_scratch_is_too_small_leaves_its_blocks_to_the_caller():
    helpers, callers = _callbacks_as_functions()
    a, w = torch.randn(64, 64), torch.randn(256, 64)     # blocks of columns
    out, arrays, data, floats = pool_gemm._job(a, w, 2)
    scratch = np.empty(1, dtype=np.float32)
    helpers(data.ctypes.data, scratch.ctypes.data, 1)
    assert (arrays[9] == 0).all()
    callers(data.ctypes.data)
    np.testing.assert_allclose(out.numpy(), (a.double() @ w.double().t()).numpy(), rtol=1e-5,
                               atol=1e-4)
