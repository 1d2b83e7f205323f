"""Keep freed tensor memory in the process heap instead of handing it back to the kernel.

ATen's CPU allocator is plain malloc/free. glibc serves blocks above M_MMAP_THRESHOLD with
mmap and unmaps them on free, and trims the heap top above M_TRIM_THRESHOLD, so every
training step page-faults its activation buffers in again (docs/performance.md; the MNIST
step spends ~25% of its time there). Raising both thresholds turns the heap into the buffer
pool that an execution plan's free-after-last-use then recycles: each step reuses the
blocks the previous step released. The threshold stops at glibc's maximum (32 MiB), and
larger blocks would still be mapped and unmapped each time (an LSTM's 50 MB oneDNN
workspace: 8,100 page faults, ~10 ms of a 46 ms step), so M_MMAP_MAX=0 serves those from
the heap too (a thread's own arena still maps what its 64 MiB heaps cannot hold). Set
NDFLOW_KEEP_FREED_MEMORY=0 to leave glibc as it is.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

from ndflow.core import config

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_MMAP_MAX = -4
_MMAP_THRESHOLD = 32 * 1024 * 1024          # glibc's maximum on 64-bit (HEAP_MAX_SIZE/2)
_TRIM_THRESHOLD = 1024 * 1024 * 1024

_configured = None


def keep_freed_memory() -> bool:
    """Applies the glibc settings once; returns whether they are in effect."""
    global _configured
    if _configured is not None:
        return _configured
    _configured = False
    if not sys.platform.startswith("linux") or not config.get(config.NDFLOW_KEEP_FREED_MEMORY):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl, ...): nothing to tune
        return False
    ok = mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD) == 1
    ok = mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD) == 1 and ok
    ok = mallopt(_M_MMAP_MAX, 0) == 1 and ok
    _configured = ok
    return ok
