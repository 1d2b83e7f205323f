"""Runs a numba kernel compiled with `nogil=True` on slices of its rows (a batch of matrices,
the vectors of a tensor) on a few Python threads, as TF's CPU kernels shard a batch over their
thread pool: `over_rows(fn, rows, min_rows, *args)` calls fn(*args, start, stop) on contiguous
slices [start, stop) covering [0, rows), one per thread (at most torch's intra-op thread
count, each with at least `min_rows` rows), and returns when all are done. The kernel writes
its rows' results into arrays it was given, so the slices never touch the same memory. The
pool's threads flush subnormals for life, as TF's pool threads (kernels/denormals.py).
"""

from __future__ import annotations

import concurrent.futures
import threading

import numpy as np
import torch

_LOCK = threading.Lock()
_POOL: list = []   # [(threads, executor)]


def _executor(threads: int) -> concurrent.futures.ThreadPoolExecutor:
    with _LOCK:
        if not _POOL or _POOL[0][0] != threads:
            if _POOL:
                _POOL[0][1].shutdown(wait=False)
                _POOL.clear()
            _POOL.append((threads, concurrent.futures.ThreadPoolExecutor(
                threads, thread_name_prefix="ndflow-rows",
                initializer=torch.set_flush_denormal, initargs=(True,))))
        return _POOL[0][1]


def over_rows(fn, rows: int, min_rows: int, *args) -> None:
    """fn(*args, start, stop) over [0, rows) in slices, one per thread."""
    threads = max(1, min(torch.get_num_threads(), rows // max(min_rows, 1)))
    if threads == 1:
        fn(*args, 0, rows)
        return
    bounds = np.linspace(0, rows, threads + 1).astype(np.int64)
    pool = _executor(threads)
    futures = [pool.submit(fn, *args, int(bounds[k]), int(bounds[k + 1]))
               for k in range(1, threads)]
    fn(*args, int(bounds[0]), int(bounds[1]))   # the first slice on the calling thread
    for f in futures:
        f.result()
