"""Kernel thread pools from TF_NUM_INTRAOP_THREADS (ATen's intra-op pool).

Plans run their kernels one after another on the calling thread, so inter-op parallelism
(TF_NUM_INTEROP_THREADS) has no pool to size here; each kernel parallelizes internally over
ATen's intra-op threads, which this sets when the variable asks for a fixed count.
"""

from __future__ import annotations

import torch

from ndflow.core import config
from ndflow.core.api_export import tf_export


def apply_thread_settings() -> int:
    """Applies TF_NUM_INTRAOP_THREADS (0 = ATen's default); returns the thread count."""
    n = config.num_intraop_threads()
    if n > 0 and torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return torch.get_num_threads()


@tf_export("config.threading.get_intra_op_parallelism_threads")
def get_intra_op_parallelism_threads() -> int:
    """Threads one kernel may use (ATen's intra-op pool)."""
    return torch.get_num_threads()


@tf_export("config.threading.set_intra_op_parallelism_threads")
def set_intra_op_parallelism_threads(num_threads: int) -> None:
    """Sets ATen's intra-op pool size; 0 keeps the current (automatic) choice."""
    if num_threads:
        torch.set_num_threads(num_threads)


@tf_export("config.threading.get_inter_op_parallelism_threads")
def get_inter_op_parallelism_threads() -> int:
    return torch.get_num_interop_threads()


@tf_export("config.threading.set_inter_op_parallelism_threads")
def set_inter_op_parallelism_threads(num_threads: int) -> None:
    """Accepted for compatibility: plans run their kernels in order on the calling thread."""
