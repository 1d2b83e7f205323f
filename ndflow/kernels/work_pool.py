"""ndflow's own work-sharing pool, for a thread whose cores other processes crowd.

The core monitor caps a thread's intra-op threads at the cores other processes leave free
(core/core_monitor.py, runtime/threads.py): ATen's OpenMP team splits each kernel statically
and its threads wait for each other at every kernel's end, so a team thread that loses its
core stalls the rest. Capped at one thread, a training thread beside two busy processes on
two cores holds a third of the machine (three threads share two cores), where TensorFlow's
work-stealing threads hold about half: measured, the raw MLP loop's step went from 4.7 to 11-14
ms there, TensorFlow's from 6.0 to 12-13.

While others leave the capped thread less than a core (`core_monitor.STATE.share`), its large
float32 products (kernels/pool_gemm.py: blocks of the output on MKL's sgemm) run on this pool,
over the thread's configured count again. The calling thread works through the blocks while
helpers that are awake join in, and then redoes any block a helper still holds after about a
block's time: a helper that lost its core costs the caller one block's work, not a scheduler
slice, and nothing waits for a helper asleep or out of a core (kernels/work_pool_numba.py
says how a late helper's memory stays valid). The helpers are native loops on Python threads
that never take the GIL once started; after a job they spin ~10 us for the next and then
sleep on a futex, so between a step's kernels they leave their core to others.

Measured on two cores (an Intel Xeon), alternating 0.7 s windows with and without sharing in
one process: the raw MLP loop's capped thread beside two busy processes 9.8-10.0 ms a step
shared against 10.5-10.6 capped; beside one busy process (a core of its own) 6.99 against
7.07; the MNIST CNN's Keras step beside two busy processes 35.9 against 35.5 (its products
are few and its convolutions stay on ATen's capped count). Waiting for a late helper's block
instead of redoing it had cost 23% of the caller's pooled time, and the one-busy cell 10-15%.

Linux on x86-64 with numba only (`available()`); elsewhere kernels run as before.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
import threading

import numpy as np

from ndflow.kernels import raw_memory, work_pool_numba
from ndflow.kernels.build_once import built_once


class _Local(threading.local):
    """A thread's pool width (0: not sharing); the class default answers a thread that never
    set it without the AttributeError a bare local's getattr default costs (0.38 -> 0.06 us
    on every product)."""
    width = 0


_local = _Local()


def set_width(threads: int) -> None:
    """Runs the calling thread's large products on `threads` threads of this pool (itself
    and threads - 1 helpers); 0 or 1: not at all (runtime/threads.py)."""
    _local.width = threads if threads > 1 and available() else 0


def width() -> int:
    """The calling thread's pool width, 0 when it does not share its work here."""
    return _local.width


def _supported() -> bool:
    return (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")
            and work_pool_numba.functions() is not None)


available = built_once(_supported)


class _Pool:
    """The state array, its helpers (started as a width first needs them), their scratch
    memory, the memory of jobs a late helper may still read (`retired`) and a lock that gives
    the pool to one caller at a time."""

    def __init__(self):
        self.state = np.zeros(work_pool_numba.FIELDS, dtype=np.int64)
        self.state[work_pool_numba.SYSCALL] = ctypes.cast(ctypes.CDLL(None).syscall,
                                                          ctypes.c_void_p).value
        self.address = raw_memory.span(self.state)[0]
        self.helpers: list = []
        self.scratch: list = []   # per helper, a float32 array
        self.retired: list = []
        self.jobs = 0
        self.lock = threading.Lock()

    def ensure(self, helpers: int, floats: int) -> None:
        """At least `helpers` helpers (up to MAX_HELPERS), each with scratch of `floats`; a
        scratch replaced is retired, since a late helper may still write it."""
        loop = work_pool_numba.functions()[0]
        helpers = min(helpers, work_pool_numba.MAX_HELPERS)
        for i in range(helpers):
            if i == len(self.helpers) or self.scratch[i].size < floats:
                if i < len(self.scratch):
                    self.retired.append(self.scratch[i])
                    self.scratch[i] = np.empty(max(floats, 1), dtype=np.float32)
                else:
                    self.scratch.append(np.empty(max(floats, 1), dtype=np.float32))
                at = work_pool_numba.SCRATCH + 2 * i
                self.state[at:at + 2] = raw_memory.span(self.scratch[i])
            if i == len(self.helpers):
                t = threading.Thread(target=loop, args=(self.address, i), daemon=True,
                                     name=f"ndflow-work-pool-{i + 1}")
                t.start()
                self.helpers.append(t)

    def stop(self) -> None:
        """Ends the helpers (tests; a process that exits leaves them asleep). JOB changes too,
        so that a helper between its last check of STOP and its sleep does not sleep."""
        self.state[work_pool_numba.STOP] = 1
        self.state[work_pool_numba.JOB] += 2
        _futex_wake_all(self)
        for t in self.helpers:
            t.join(timeout=5)


def _futex_wake_all(pool: _Pool) -> None:
    libc = ctypes.CDLL(None)
    libc.syscall(ctypes.c_long(work_pool_numba.SYS_FUTEX),
                 ctypes.c_void_p(pool.address + 8 * work_pool_numba.JOB),
                 ctypes.c_long(work_pool_numba.FUTEX_WAKE), ctypes.c_long(1 << 30),
                 ctypes.c_void_p(0))


_pool: list = []
_pool_lock = threading.Lock()


def _get() -> _Pool:
    if not _pool:
        with _pool_lock:
            if not _pool:
                _pool.append(_Pool())
    return _pool[0]


def _after_fork_in_child() -> None:
    """A forked child has none of the parent's helper threads: it starts a new pool."""
    global _pool_lock
    _pool_lock = threading.Lock()
    _pool.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


RETIRED_LIMIT = 64   # jobs kept for late helpers before a caller waits for them


def run(helpers_callback: int, callers_callback: int, data: np.ndarray, threads: int,
        scratch_floats: int, keep: tuple) -> bool:
    """Job `data` (omp_pool.chunk_data's layout): `callers_callback(data)` on the calling
    thread, which finishes every chunk (redoing those a helper still holds: no waiting for a
    helper that lost its core),
    while the helpers that join run `helpers_callback(data, scratch, floats)` (the pool has
    at least `threads - 1`, each with `scratch_floats` of scratch). `keep`: what the job
    reads, kept (with `data`) until no late helper can read it. False (nothing run) while
    another thread holds the pool: the caller runs the job alone rather than wait for it."""
    pool = _get()
    if not pool.lock.acquire(blocking=False):
        return False
    try:
        functions = work_pool_numba.functions()
        if pool.state[work_pool_numba.ACTIVE] == 0:
            pool.retired.clear()   # no helper is inside an earlier job
        elif len(pool.retired) > RETIRED_LIMIT:
            functions[2](pool.address)   # the late helpers leave their jobs
            pool.retired.clear()
        pool.ensure(threads - 1, scratch_floats)
        pool.jobs += 1
        pool.retired.append((data, keep))
        functions[1](pool.address, pool.jobs, helpers_callback, callers_callback,
                     raw_memory.span(data)[0])
        return True
    finally:
        pool.lock.release()


def helper_threads() -> int:
    """How many helpers the pool has started (tests and the benchmarks' reports)."""
    return len(_pool[0].helpers) if _pool else 0


def counts() -> tuple[int, int]:
    """(jobs run on the pool, times a helper joined one) since it started."""
    if not _pool:
        return 0, 0
    return _pool[0].jobs, int(_pool[0].state[work_pool_numba.JOINED])


def shutdown() -> None:
    """Stops the helpers and forgets the pool (tests)."""
    with _pool_lock:
        if _pool:
            _pool[0].stop()
            _pool.clear()
