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
import threading

import torch

PIPELINE_INTRA_OP_THREADS = 1


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
    try:
        return max(0, int(os.environ.get("NDFLOW_DATA_THREAD_NICENESS", "0")))
    except ValueError:
        return 0


# > 0 while a training loop (Keras fit/evaluate/predict) consumes a pipeline: pipeline threads
# started meanwhile run below the loop's threads
_training_consumers = [0]
_consumers_lock = threading.Lock()


def init_worker_thread(threads: int = PIPELINE_INTRA_OP_THREADS) -> None:
    """Run first in each pipeline thread (never on the consumer's thread)."""
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


@contextlib.contextmanager
def leave_a_core_to_the_pipeline(dataset):
    """While a consumer (a training loop) iterates a dataset whose pipeline runs on its own
    threads, the consumer's ATen kernels use one thread fewer, so the two overlap instead of
    contending for every core (OpenMP kernels stall when a core they spread over is busy);
    and the pipeline threads started meanwhile run at a lower priority (`_lower_priority`)."""
    with _consumer_first():
        n = torch.get_num_threads()
        if n <= 1 or not runs_background_threads(dataset) or _passive_openmp():
            yield
            return
        torch.set_num_threads(n - 1)
        try:
            yield
        finally:
            torch.set_num_threads(n)


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
    pipeline's threads run in the step's gaps and the step keeps every core (measured on 2
    loaded cores: MNIST CNN fit on a pipeline 2.1-2.6 s/epoch with a core left, 1.9-2.3
    without)."""
    return os.environ.get("OMP_WAIT_POLICY", "").strip().upper() == "PASSIVE"
