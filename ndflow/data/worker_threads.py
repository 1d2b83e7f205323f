"""Threads of input pipelines (prefetch producers, parallel map workers) run their ATen
kernels single-threaded, as tf.data runs dataset functions with an intra-op parallelism of 1
by default: the pipeline's parallelism comes from its own threads, and kernels that also fan
out over the cores would fight the training step for them (an OpenMP kernel that waits for
a descheduled helper thread takes milliseconds instead of microseconds).

ATen's thread count is per thread under OpenMP, so the consumer's (training) thread keeps
its own setting; threads started later default to the last count set.
"""

from __future__ import annotations

import os

import torch

PIPELINE_INTRA_OP_THREADS = 1


def intra_op_threads(dataset) -> int:
    """`tf.data.Options().threading.max_intra_op_parallelism` when set (0: ATen's default
    count), else 1."""
    n = dataset.options().threading.max_intra_op_parallelism
    if n is None:
        return PIPELINE_INTRA_OP_THREADS
    return int(n) if n > 0 else (os.cpu_count() or 1)


def init_worker_thread(threads: int = PIPELINE_INTRA_OP_THREADS) -> None:
    """Run first in each pipeline thread."""
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
