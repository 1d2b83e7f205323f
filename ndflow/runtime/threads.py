"""Kernel thread pools from TF_NUM_INTRAOP_THREADS (ATen's intra-op pool).

Each kernel parallelizes internally over ATen's intra-op threads, which this sets when the
variable asks for a fixed count. Inter-op parallelism (independent branches of a plan at the
same time: TF_NUM_INTEROP_THREADS or `set_inter_op_parallelism_threads`) is
runtime/parallel_plan.py's.

On a shared machine a thread's count is capped by the cores other processes leave free
(core/core_monitor.py says why): `follow_free_cores()`, run before each plan run and
eager op, lowers the calling thread's count to the cap and restores the configured count
once the cores are free again (NDFLOW_FOLLOW_FREE_CORES=0 turns this off); while the capped
thread still waits for a core, its large products run over the configured count on
kernels/work_pool.py's pool (NDFLOW_SHARE_CROWDED_THREADS=0 turns that off). ATen's count is
per thread under OpenMP, so each thread keeps its own configured count (a pipeline thread's
1, the training thread's default) and the cap only ever lowers it.
"""

from __future__ import annotations

import threading

import torch

from ndflow.core import config, core_monitor, logging
from ndflow.core.api_export import tf_export
from ndflow.kernels import work_pool
from ndflow.runtime import parallel_plan

_FOLLOW = config.get(config.NDFLOW_FOLLOW_FREE_CORES)
_SHARE = config.get(config.NDFLOW_SHARE_CROWDED_THREADS)
_MONITOR = core_monitor.STATE


class _ThreadState(threading.local):
    cap = None        # the cap this thread last applied (None: none)
    share = False     # whether it last shared its work on kernels/work_pool.py's pool
    configured = 0    # the count the thread had before a cap lowered it
    set_to = 0        # the count the cap set


_state = _ThreadState()


def follow_free_cores() -> None:
    """Applies the core monitor's cap to the calling thread's intra-op count; run before
    each plan run and eager op, so its fast path is a few attribute reads and a compare."""
    if not _MONITOR.sampling:
        if not _FOLLOW or (_state.cap is None and torch.get_num_threads() < 2):
            return   # nothing to lower: no sampler for a single-threaded thread
        core_monitor.start()
    cap, share = _MONITOR.cap, _MONITOR.share
    st = _state
    if cap == st.cap and share == st.share:
        return
    current = torch.get_num_threads()
    if st.cap is None or current != st.set_to:   # not lowered by us, or set since
        st.configured = current
    target = st.configured if cap is None else min(st.configured, cap)
    if target != current:
        torch.set_num_threads(target)
    st.cap, st.set_to, st.share = cap, target, share
    if target < st.configured:
        core_monitor.watch_thread()
    work_pool.set_width(st.configured if share and _SHARE and target < st.configured else 0)


def apply_thread_settings() -> int:
    """Validates OpenMP's variables (torch's libgomp read them already, silently keeping its
    default for a malformed one: here a malformed one is a ValueError naming it) and applies
    TF_NUM_INTRAOP_THREADS (0 = ATen's default: OMP_NUM_THREADS, else the cores); returns the
    thread count."""
    omp = config.omp_num_threads()
    config.omp_wait_policy()
    config.gomp_spincount()
    n = config.num_intraop_threads()
    if n > 0:
        set_configured_threads(n, "TF_NUM_INTRAOP_THREADS")
    elif omp > 0:
        _warn_if_above_cores(omp, "OMP_NUM_THREADS")
    return torch.get_num_threads()


def available_cores() -> int:
    """The cores this process may run on (its affinity mask), else the machine's."""
    return len(core_monitor.allowed_cpus())


_warned_above_cores: list = []


def _warn_if_above_cores(n: int, source: str) -> None:
    cores = available_cores()
    if n > cores and not _warned_above_cores:
        _warned_above_cores.append(n)
        logging.warning(f"{n} intra-op threads ({source}) is more than the {cores} cores this "
                        "process may use: honoured, but threads will share cores and wait for "
                        "each other at every kernel's end")


def set_configured_threads(n: int, source: str) -> None:
    """Sets the calling thread's intra-op count as configured by `source` (a variable, a
    Session's ConfigProto, tf.config.threading): honoured above the core count with a
    one-time warning; the free-cores cap applies on the next plan run."""
    _warn_if_above_cores(n, source)
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)


@tf_export("config.threading.get_intra_op_parallelism_threads")
def get_intra_op_parallelism_threads() -> int:
    """Threads one kernel may use (ATen's intra-op pool)."""
    return torch.get_num_threads()


@tf_export("config.threading.set_intra_op_parallelism_threads")
def set_intra_op_parallelism_threads(num_threads: int) -> None:
    """Sets ATen's intra-op pool size; 0 keeps the current (automatic) choice."""
    if num_threads:
        set_configured_threads(int(num_threads), "set_intra_op_parallelism_threads")


@tf_export("config.threading.get_inter_op_parallelism_threads")
def get_inter_op_parallelism_threads() -> int:
    """The set inter-op thread count; 0 (TF's default) when none was set."""
    n = parallel_plan.explicit_threads()
    return 0 if n is None else n


@tf_export("config.threading.set_inter_op_parallelism_threads")
def set_inter_op_parallelism_threads(num_threads: int) -> None:
    """Threads running a plan's independent branches (plans compiled from now on): 0 =
    automatic, 1 or negative = the caller's thread only (runtime/parallel_plan.py)."""
    parallel_plan.set_explicit_threads(int(num_threads))
