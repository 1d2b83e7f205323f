"""Kernel thread pools from TF_NUM_INTRAOP_THREADS (ATen's intra-op pool).

Each kernel parallelizes internally over ATen's intra-op threads, which this sets when the
variable asks for a fixed count. Inter-op parallelism (independent branches of a plan at the
same time: TF_NUM_INTEROP_THREADS or `set_inter_op_parallelism_threads`) is
runtime/parallel_plan.py's.
"""

from __future__ import annotations

import torch

from ndflow.core import config
from ndflow.core.api_export import tf_export
from ndflow.runtime import parallel_plan


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
    """The set inter-op thread count; 0 (TF's default) when none was set."""
    n = parallel_plan.explicit_threads()
    return 0 if n is None else n


@tf_export("config.threading.set_inter_op_parallelism_threads")
def set_inter_op_parallelism_threads(num_threads: int) -> None:
    """Threads running a plan's independent branches (plans compiled from now on): 0 =
    automatic, 1 or negative = the caller's thread only (runtime/parallel_plan.py)."""
    parallel_plan.set_explicit_threads(int(num_threads))
