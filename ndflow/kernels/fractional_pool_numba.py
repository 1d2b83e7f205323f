"""Fractional max / average pooling and their gradients on NHWC CPU tensors as numba loops:
TensorFlow's kernels' own loops (core/kernels/fractional_{max,avg}_pool_op.cc), so the values
and gradients are TF's by construction, in one pass over the data.

Each output cell scans its region row by row, column by column, channel by channel: the max
keeps a strictly greater value over an output that starts at the dtype's lowest value (TF's
`cwiseMax`, which skips NaNs); the average adds in T (integers wrap) and divides by the
region's size (truncating for integers); the max-pool gradient takes each region's first
element, then each strictly greater one (TF's argmax), checks it against orig_output and adds
out_backprop into that position in output order; the average-pool gradient adds each share
(float64 out_backprop / region size) in output order into a float64 buffer. Images run on
`torch.get_num_threads()` Python threads (the kernels release the GIL), a slice of the batch
each: no image is written by two threads, so the order of every sum is TF's.

numba is imported and the kernels compiled (cached on disk) at the first fractional pool on
a CPU, not with ndflow; without numba `available()` is False and the ATen path runs.
"""

from __future__ import annotations

import concurrent.futures
import threading

import numpy as np
import torch

from ndflow.kernels.build_once import built_once

_POOL: list = []
_POOL_LOCK = threading.Lock()
# the kernels' numba helper, a module global rather than a closure cell: numba's disk cache
# refuses kernels that close over anything
last = None


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first fractional pool, not with ndflow
    except ImportError:
        return None
    njit = numba.njit(cache=True, nogil=True)
    global last

    @njit
    def last(edges, i, overlapping, limit):
        """The last row (column) of region i: the next edge (less one unless overlapping),
        within the input."""
        return min(edges[i + 1] if overlapping else edges[i + 1] - 1, limit - 1)

    @njit
    def pool(x, rows, cols, overlapping, is_max, start, integer, out, b0, b1):
        """Each region's max (from `start`, the dtype's lowest) or average (from zero)."""
        _, h, w, c = x.shape
        for b in range(b0, b1):
            for i in range(rows.shape[0] - 1):
                r0, r1 = rows[i], last(rows, i, overlapping, h)
                for j in range(cols.shape[0] - 1):
                    c0, c1 = cols[j], last(cols, j, overlapping, w)
                    o = out[b, i, j]
                    for d in range(c):
                        o[d] = start
                    for hh in range(r0, r1 + 1):
                        for ww in range(c0, c1 + 1):
                            v = x[b, hh, ww]
                            if is_max:
                                for d in range(c):
                                    if v[d] > o[d]:
                                        o[d] = v[d]
                            else:
                                for d in range(c):
                                    o[d] += v[d]
                    if is_max:
                        continue
                    count = (r1 - r0 + 1) * (c1 - c0 + 1)
                    if integer:   # C's division: toward zero
                        for d in range(c):
                            s = o[d]
                            q = abs(s) // count
                            o[d] = -q if s < 0 else q
                    else:
                        n = start + count
                        for d in range(c):
                            o[d] = o[d] / n

    @njit
    def max_pool_grad(x, y, dy, rows, cols, overlapping, dx, best, arg, b0, b1):
        """dx += out_backprop at each region's argmax (flat NHWC arrays); returns False where
        the maxima are not orig_output (TF's tensor_out_dup check)."""
        h, w, c = x.shape[1], x.shape[2], x.shape[3]
        xf, yf, gf, dxf = x.ravel(), y.ravel(), dy.ravel(), dx.ravel()
        oh, ow = rows.shape[0] - 1, cols.shape[0] - 1
        ok = True
        for b in range(b0, b1):
            for i in range(oh):
                r0, r1 = rows[i], last(rows, i, overlapping, h)
                for j in range(ow):
                    c0, c1 = cols[j], last(cols, j, overlapping, w)
                    first = ((b * h + r0) * w + c0) * c   # the region's first element
                    for d in range(c):
                        best[d] = xf[first + d]
                        arg[d] = first + d
                    for hh in range(r0, r1 + 1):
                        for ww in range(c0, c1 + 1):
                            at = ((b * h + hh) * w + ww) * c
                            for d in range(c):   # branch-free: selects vectorize
                                v = xf[at + d]
                                bd = best[d]
                                take = v > bd
                                best[d] = v if take else bd
                                arg[d] = at + d if take else arg[d]
                    o = ((b * oh + i) * ow + j) * c
                    for d in range(c):
                        if not best[d] == yf[o + d]:
                            ok = False
                        dxf[arg[d]] += gf[o + d]
        return ok

    @njit
    def avg_pool_grad(dy, rows, cols, overlapping, h, w, dx, b0, b1):
        c = dy.shape[3]
        for b in range(b0, b1):
            for i in range(dy.shape[1]):
                r0, r1 = rows[i], last(rows, i, overlapping, h)
                for j in range(dy.shape[2]):
                    c0, c1 = cols[j], last(cols, j, overlapping, w)
                    count = (r1 - r0 + 1) * (c1 - c0 + 1)
                    g = dy[b, i, j]
                    for hh in range(r0, r1 + 1):
                        for ww in range(c0, c1 + 1):
                            o = dx[b, hh, ww]
                            for d in range(c):
                                o[d] += np.float64(g[d]) / count

    return pool, max_pool_grad, avg_pool_grad


_kernels = built_once(_build)


def available() -> bool:
    """Whether the numba kernels can run (numba importable)."""
    return _kernels() is not None


def _executor(threads: int):
    with _POOL_LOCK:
        if not _POOL or _POOL[0][0] != threads:
            if _POOL:
                _POOL[0][1].shutdown(wait=False)
                _POOL.clear()
            _POOL.append((threads, concurrent.futures.ThreadPoolExecutor(
                threads, thread_name_prefix="ndflow-fractional-pool")))
        return _POOL[0][1]


def _over_batch(fn, n: int, *args) -> list:
    """fn(*args, b0, b1) on slices of the batch, one per thread; the results in order."""
    threads = max(1, min(torch.get_num_threads(), n))
    if threads == 1 or n == 0:
        return [fn(*args, 0, n)]
    bounds = np.linspace(0, n, threads + 1).astype(np.int64)
    pool = _executor(threads)
    futures = [pool.submit(fn, *args, int(bounds[k]), int(bounds[k + 1]))
               for k in range(threads)]
    return [f.result() for f in futures]


def _lowest(dtype: np.dtype):
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def pool(kind: str, x: torch.Tensor, rows: np.ndarray, cols: np.ndarray,
         overlapping: bool) -> torch.Tensor:
    """The max or average pool of NHWC CPU `x` over the regions of `rows` x `cols`."""
    kernel = _kernels()[0]
    xn = x.contiguous().numpy()
    n, _, _, c = xn.shape
    out = torch.empty((n, len(rows) - 1, len(cols) - 1, c), dtype=x.dtype)
    is_max = kind == "max"
    start = xn.dtype.type(_lowest(xn.dtype) if is_max else 0)
    _over_batch(kernel, n, xn, rows, cols, overlapping, is_max, start, xn.dtype.kind != "f",
                out.numpy())
    return out


def max_pool_grad(x: torch.Tensor, y: torch.Tensor, dy: torch.Tensor, rows: np.ndarray,
                  cols: np.ndarray, overlapping: bool):
    """(dx, whether orig_output `y` holds each region's maximum)."""
    _, grad, _ = _kernels()
    xn, yn, dyn = (t.contiguous().numpy() for t in (x, y, dy))
    dx = torch.zeros(x.shape, dtype=dy.dtype)
    n, c = xn.shape[0], xn.shape[3]

    def run(b0, b1):   # per-thread scratch for the running maxima
        return grad(xn, yn, dyn, rows, cols, overlapping, dx.numpy(),
                    np.empty(c, xn.dtype), np.empty(c, np.int64), b0, b1)
    ok = _over_batch(lambda b0, b1: run(b0, b1), n)
    return dx, all(ok)


def avg_pool_grad(dy: torch.Tensor, rows: np.ndarray, cols: np.ndarray, overlapping: bool,
                  h: int, w: int) -> torch.Tensor:
    """The float64 gradient [batch, h, w, channels] of an average pool (out_backprop `dy`)."""
    _, _, grad = _kernels()
    dyn = dy.contiguous().numpy()
    n, _, _, c = dyn.shape
    dx = torch.zeros((n, h, w, c), dtype=torch.float64)
    _over_batch(grad, n, dyn, rows, cols, overlapping, h, w, dx.numpy())
    return dx
