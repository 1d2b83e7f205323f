"""Threads of input pipelines (prefetch producers, parallel map workers) run their ATen
kernels single-threaded, as tf.data runs dataset functions with an intra-op parallelism of 1
by default: the pipeline's parallelism comes from its own threads, and kernels that also fan
out over the cores would fight the training step for them (an OpenMP kernel that waits for
a descheduled helper thread takes milliseconds instead of microseconds).

ATen's thread count is per thread under OpenMP, so the consumer's (training) thread keeps
its own setting; threads started later default to the last count set.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

import torch

from ndflow.core import config, core_monitor

PIPELINE_INTRA_OP_THREADS = 1
# The GIL switch interval while a pipeline runs threads beside its consumer (a training loop).
# Every ATen kernel of the step releases the GIL; taking it back from a pipeline thread that
# runs Python (a map function's ops) waits up to the interval (CPython's 5 ms), so a step of
# 50 kernels could wait 50 intervals: a convoy. A shorter interval bounds each wait (measured
# on 2 cores: a loop of 0.6 ms GIL-releasing matmuls beside a thread running Python took 4-8
# ms an iteration at 5 ms, 1.4-1.8 ms at 0.5-1 ms, and more again at 0.1 ms, where the
# threads thrash).
CONSUMER_SWITCH_INTERVAL = 0.0005


def intra_op_threads(dataset) -> int:
    """`tf.data.Options().threading.max_intra_op_parallelism` when set (0: ATen's default
    count), else 1."""
    n = dataset.options().threading.max_intra_op_parallelism
    if n is None:
        return PIPELINE_INTRA_OP_THREADS
    return int(n) if n > 0 else (os.cpu_count() or 1)


def pipeline_thread_niceness() -> int:
    """How much lower (in nice steps) pipeline threads run than the consumer's threads during
    a training loop: NDFLOW_DATA_THREAD_NICENESS, 0 (off) by default. On a quiet machine a
    lower priority can only help the step; on a machine shared with other processes it also
    loses the pipeline CPU share to them, and A/B runs on the loaded 2-core box did not
    settle which wins, so it is opt-in (benchmarks/input_pipeline.py --env ...=10)."""
    return max(0, config.get(config.NDFLOW_DATA_THREAD_NICENESS))


# > 0 while a training loop (Keras fit/evaluate/predict) consumes a pipeline: pipeline threads
# started meanwhile run below the loop's threads
_training_consumers = [0]
_consumers_lock = threading.Lock()


def init_worker_thread(threads: int = PIPELINE_INTRA_OP_THREADS) -> None:
    """Run first in each pipeline thread (never on the consumer's thread)."""
    core_monitor.register_helper_thread()
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    if _training_consumers[0] > 0:
        _lower_priority(pipeline_thread_niceness())


def _lower_priority(steps: int) -> None:
    """Linux nice values are per thread: this pipeline thread yields a core to the
    consumer's (training) threads whenever they wake, so an OpenMP region of the step never
    waits a scheduler slice for a core the pipeline holds; the pipeline runs in the step's
    gaps. Raising one's own nice value needs no privilege; it ends with the thread."""
    if steps <= 0 or not hasattr(os, "setpriority"):
        return
    try:
        # relative to the main thread's value (the pid is its thread id): a thread started by
        # a pipeline thread (a parallel map's workers under a prefetch) inherits that
        # thread's value and is not lowered twice
        target = min(19, os.getpriority(os.PRIO_PROCESS, os.getpid()) + steps)
        tid = threading.get_native_id()
        if os.getpriority(os.PRIO_PROCESS, tid) < target:
            os.setpriority(os.PRIO_PROCESS, tid, target)
    except OSError:  # not permitted here: run at the normal priority
        pass


def runs_background_threads(dataset) -> bool:
    """Whether iterating `dataset` starts pipeline threads (a prefetch, a parallel map)."""
    stack, seen = [dataset], set()
    while stack:
        d = stack.pop()
        if id(d) in seen:
            continue
        seen.add(id(d))
        if getattr(d, "_buffer", 0) and type(d).__name__ == "PrefetchDataset":
            return True
        if (getattr(d, "_workers", None) or 1) > 1:
            return True
        stack.extend(d._inputs())
    return False


class CoreSharing:
    """How a consumer (a training loop) shares the cores with a pipeline running on its own
    threads: at first the consumer's ATen kernels keep every core; if, over a window of
    batches, the consumer spends more than `WAIT_SHARE` of its time waiting for the next
    element, the pipeline cannot keep up beside kernels spread over every core (OpenMP
    threads spin on the cores the pipeline needs), and the consumer's kernels use one thread
    fewer for the rest of the pass, so the two overlap instead of contending.

    A light pipeline (parse and augment, a fraction of the step's CPU) thus costs the step
    nothing, while a heavy one gets a core (measured on 2 cores, MNIST-like CNN fit: always
    leaving a core made the light pipeline's fit 1.3-2.0x slower than fit on arrays; with
    every core it runs at 0.7-0.95x)."""

    WARMUP = 2          # first batches: tracing and buffers filling
    WINDOW = 8          # batches measured before deciding
    WAIT_SHARE = 0.15

    def __init__(self, dataset, threads: int | None = None):
        self.threads = torch.get_num_threads() if threads is None else threads
        self.active = (self.threads > 1 and runs_background_threads(dataset)
                       and not _passive_openmp())
        self.left_a_core = False
        self._seen, self._waited, self._total, self._last = 0, 0.0, 0.0, None

    def waited(self, seconds: float, now: float) -> None:
        """Record one batch: `seconds` spent waiting for it, `now` the clock after it came."""
        if not self.active or self.left_a_core:
            return
        self._seen += 1
        if self._seen > self.WARMUP and self._last is not None:
            self._waited += seconds
            self._total += now - self._last
            if self._seen >= self.WARMUP + self.WINDOW:
                if self._total > 0 and self._waited > self.WAIT_SHARE * self._total:
                    self.left_a_core = True
                    torch.set_num_threads(self.threads - 1)
                self.active = self.left_a_core   # decided for this pass
        self._last = now

    def restore(self) -> None:
        if self.left_a_core:
            torch.set_num_threads(self.threads)
            self.left_a_core = False


@contextlib.contextmanager
def share_cores_with_the_pipeline(dataset):
    """A `CoreSharing` for one pass of a consumer (a training loop) over `dataset`; pipeline
    threads started meanwhile may also run at a lower priority (`_lower_priority`). The
    consumer's thread count is restored at the end."""
    with _consumer_first():
        sharing = CoreSharing(dataset)
        try:
            yield sharing
        finally:
            sharing.restore()


_live_pipelines = [0, None]   # iterations with threads running, the interval to restore
_live_lock = threading.Lock()


@contextlib.contextmanager
def pipeline_threads_live():
    """Entered by the consumer side of every iteration that runs pipeline threads (a
    prefetch, a parallel map): while any is live the GIL switch interval is
    CONSUMER_SWITCH_INTERVAL, and the last one out restores the previous interval."""
    with _live_lock:
        if _live_pipelines[0] == 0:
            _live_pipelines[1] = sys.getswitchinterval()
            if _live_pipelines[1] > CONSUMER_SWITCH_INTERVAL:
                sys.setswitchinterval(CONSUMER_SWITCH_INTERVAL)
        _live_pipelines[0] += 1
    try:
        yield
    finally:
        with _live_lock:
            _live_pipelines[0] -= 1
            if _live_pipelines[0] == 0:
                sys.setswitchinterval(_live_pipelines[1])


@contextlib.contextmanager
def _consumer_first():
    with _consumers_lock:
        _training_consumers[0] += 1
    try:
        yield
    finally:
        with _consumers_lock:
            _training_consumers[0] -= 1


def _passive_openmp() -> bool:
    """OMP_WAIT_POLICY=PASSIVE: idle OpenMP threads sleep instead of spinning, so the
    pipeline's threads run in the step's gaps and the step keeps every core."""
    return config.omp_wait_policy() == "PASSIVE"
