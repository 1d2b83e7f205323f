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
pytestmark = pytest.mark.skipif(not work_pool.available() or pool_gemm._callback() is None,
                                reason="needs numba, MKL and Linux on x86-64")


def _form(x: np.ndarray, transposed: bool) -> torch.Tensor:
    t = torch.tensor(x.T.copy() if transposed else x, dtype=torch.float32)
    return t.t() if transposed else t


@pytest.mark.parametrize("a_t", [False, True])
@pytest.mark.parametrize("w_t", [False, True])
@pytest.mark.parametrize("m,k,n", [(256, 96, 80), (40, 33, 200), (300, 1, 16), (7, 5, 3),
                                   (130, 64, 10)])
def test_products_in_blocks_match_float64(a_t, w_t, m, k, n):
    """Blocks of rows (m >= n) and of columns (n > m), each operand as stored or as the
    transpose of a stored matrix, on two threads of the pool."""
    a, w = RNG.standard_normal((m, k)), RNG.standard_normal((n, k))
    got = pool_gemm.linear(_form(a, a_t), _form(w, w_t), 2)
    assert got.shape == (m, n) and got.is_contiguous()
    np.testing.assert_allclose(got.numpy(), a @ w.T, rtol=1e-5, atol=1e-5 * np.sqrt(k))


def test_other_operands_are_refused():
    a, w = torch.randn(8, 6), torch.randn(5, 6)
    assert pool_gemm.linear(a.double(), w.double(), 2) is None
    assert pool_gemm.linear(torch.randn(8, 12)[:, ::2], w, 2) is None   # strided columns
    assert pool_gemm.linear(torch.randn(0, 6), w, 2) is None
    assert pool_gemm.linear(a, torch.randn(5, 7), 2) is None             # inner sizes differ


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
