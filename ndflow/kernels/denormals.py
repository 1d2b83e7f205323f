"""Subnormal floats flushed to zero while ndflow's kernels run, as TensorFlow's CPU kernels do.

TensorFlow runs every CPU kernel with the SSE control bits FTZ (a subnormal result becomes 0)
and DAZ (a subnormal input reads as 0) set: its pool threads set them for life, and its
executor, eager ops and constant folding set them around their work (`ScopedFlushDenormal`).
So in TF 2.21 `tf.constant([1e-39]) * 1.0` is 0, and so is `exp(-100.0)`. Besides matching
those results, flushing keeps kernels off the CPUs' slow path for subnormal operands (a
microcode assist per instruction on Intel; on Zen 4 the FFT convolution with subnormal
entries ran 2x slower): a classifier whose softmax underflows would otherwise feed
subnormals to every gradient GEMM.

- `enter()` / `leave()` bracket a plan run or an eager op on the calling thread. `enter`
  probes the current mode (a NumPy multiply of a subnormal), so a nested run, or a caller who
  flushes already (`torch.set_flush_denormal(True)`), costs the probe and changes nothing.
  The caller's own NumPy and Python arithmetic outside ndflow's ops keeps subnormals, as in
  TF.
- ATen's OpenMP workers (each calling thread has its own team in libgomp) are set for life,
  once per calling thread and thread count, by running a callback on the team through
  `omp_pool.launcher()`: TF's pool threads are flushed for life too. A team's workers
  inherit the mode of the thread that starts them, and ndflow's runs start them flushed.
  torch code of the caller's that runs in parallel on these workers flushes as well.
- `flush_this_thread()` sets the mode for life on ndflow's own threads (the inter-op pool).

Ops that move bits without arithmetic (Identity, Neg, Abs, concat, gathers, bitcasts,
NextAfter) keep subnormals in both TF and ndflow; where a kernel's instructions differ
(TF's Relu keeps a subnormal, ATen's clamp reads it as 0) so does the result, and
tests/runtime/test_denormals.py lists those cases against TF's own results.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np
import torch

from ndflow.kernels import omp_pool

_set_flush = torch.set_flush_denormal
_num_threads = torch.get_num_threads
# `SUBNORMAL * ONE == 0.0` exactly while subnormals are flushed: the probe, inlined by the
# eager path (a function call would add a fifth to its cost)
SUBNORMAL = np.float32(1e-39)
ONE = np.float32(1.0)
_state = threading.local()   # .team: the thread count whose workers this thread has set
_callback: list = []         # the ctypes callback, kept alive for the process


def enter() -> bool:
    """Flushes subnormals on this thread (and its ATen workers, once); True when it changed
    the mode, so that `leave()` must restore it."""
    if SUBNORMAL * ONE == 0.0:   # flushing already: an outer run, or the caller's choice
        return False
    flush()
    return True


def flush() -> None:
    """`enter()` without the probe: for a caller that has probed."""
    _set_flush(True)
    if getattr(_state, "team", 0) != _num_threads():
        _set_workers()


def leave() -> None:
    """Restores the mode `enter()` changed (call only when it returned True)."""
    _set_flush(False)


def flush_this_thread() -> None:
    """Sets the mode for the rest of this thread's life (ndflow's own pool threads)."""
    _set_flush(True)
    _set_workers()


def _set_workers() -> None:
    """Sets the mode on every worker of this thread's OpenMP team of `get_num_threads()`."""
    n = _num_threads()
    launch = omp_pool.launcher()
    if launch is not None and n > 1:
        if not _callback:
            _callback.append(ctypes.CFUNCTYPE(None, ctypes.c_void_p)(
                lambda _data: _set_flush(True)))
        launch(ctypes.cast(_callback[0], ctypes.c_void_p), None, n, 0)
    _state.team = n
