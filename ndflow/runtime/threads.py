"""Kernel thread pools from TF_NUM_INTRAOP_THREADS (ATen's intra-op pool).

Plans run their kernels one after another on the calling thread, so inter-op parallelism
(TF_NUM_INTEROP_THREADS) has no pool to size here; each kernel parallelizes internally over
ATen's intra-op threads, which this sets when the variable asks for a fixed count.
"""

from __future__ import annotations

import torch

from ndflow.core import config


def apply_thread_settings() -> int:
    """Applies TF_NUM_INTRAOP_THREADS (0 = ATen's default); returns the thread count."""
    n = config.num_intraop_threads()
    if n > 0 and torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return torch.get_num_threads()
