"""`all(isfinite(x + y * scale))` in one pass over x and y, without materializing the sum: the
check of the remapper's `_AllFiniteAddScaled` (an L2-regularized weight's gradient
`AddN(g, Mul(w, scale))` whose sum the loss-scale optimizer's finite check no longer needs) on
float32 CPU tensors, a numba callback run on ATen's OpenMP team (kernels/omp_pool.py).

Each element is rounded as the unfused graph rounds it, `t = x + (y * scale)` in float32 (a
product rounded, then a sum rounded: numba emits no fused multiply-add), so the answer is the
one `_AllFinite(AddN(x, Mul(y, scale)))` gives, overflow of the sum included. `t - t` is 0
exactly where t is finite and NaN where it is inf or NaN; the flags are or-ed, which LLVM
vectorizes (a float sum would not be reassociated).
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool
from ndflow.kernels.build_once import built_once

CHUNK = 1 << 15           # elements per claimed chunk
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = _any_nonfinite = None


def applies(x: torch.Tensor, y: torch.Tensor) -> bool:
    """Whether the check of float32 CPU `x` and `y` (same shape) runs here."""
    return (x.dtype == torch.float32 and y.dtype == torch.float32 and x.device.type == "cpu"
            and y.device.type == "cpu" and x.shape == y.shape and _callback() is not None)


# the OpenMP callback, built on first use (None without numba or ATen's OpenMP)
_callback = built_once(lambda: _build() if omp_pool.launcher() is not None else None)


def all_finite_add_scaled(x: torch.Tensor, y: torch.Tensor, scale: float) -> bool:
    """Whether every element of float32 `x + y * scale` is finite (`applies(x, y)` holds)."""
    n = x.numel()
    if n == 0:
        return True
    flag = np.zeros(1, dtype=np.int32)
    params = np.array([scale], dtype=np.float32)
    arrays = [t.contiguous() for t in (x, y)] + [flag, params]
    omp_pool.run_chunks(_callback(), n, CHUNK, arrays, torch.get_num_threads())
    return flag[0] == 0


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such check, not with ndflow
    except ImportError:
        return None
    from numba import cfunc, types  # noqa: PLC0415
    global claim_chunk, address_as_pointer, carray, _any_nonfinite
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray

    @numba.njit(inline="always")
    def _any_nonfinite(x, y, m, s):
        bad = False
        for i in range(m):
            t = x[i] + y[i] * s
            bad |= (t - t) != 0
        return bad

    # data = [counter, n, chunk, (address, length) of x, y, flag (int32), params = (scale,)]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def all_finite_add_scaled(data):
        d = carray(data, 11, dtype=np.int64)
        n, chunk = d[1], d[2]
        s = carray(address_as_pointer(d[9], np.float32), 1)[0]
        flag = carray(address_as_pointer(d[7], np.int32), 1)
        q = claim_chunk(data)
        while q * chunk < n:
            lo = q * chunk
            m = min(lo + chunk, n) - lo
            x = carray(address_as_pointer(d[3] + lo * 4, np.float32), m)
            y = carray(address_as_pointer(d[5] + lo * 4, np.float32), m)
            if _any_nonfinite(x, y, m, s):
                flag[0] = 1   # every writer writes 1: the race is benign
            q = claim_chunk(data)

    return all_finite_add_scaled.address
