"""Keras' RMSprop without momentum on many small float32 CPU variables in one numba launch
(kernels/training_rmsprop.py), on ATen's OpenMP team (kernels/omp_pool.py):

    ms = rho * ms + (1 - rho) * g * g;   var = var - lr * g / sqrt(ms + epsilon)

each operation rounded to float32 in the graph's order (no contraction into FMAs): the bits
of the separate ATen ops but for the square root, which is IEEE's correctly rounded one here,
as TensorFlow's (Eigen's) is, while ATen's CPU float32 sqrt differs from it in the last bit
for ~16% of values (torch 2.13, AVX2). ATen's list calls (`torch._foreach_*`) still cost
~1.5 us a tensor an op, nine ops a variable; here a variable is a row of a table of
addresses. The outputs may be the inputs' own buffers (an update in place): each element is
read before it is written.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool, raw_memory
from ndflow.kernels.build_once import built_once

CHUNK = 1 << 15    # from this many elements in all, more than one thread
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = _rows = None


def applies(var: torch.Tensor) -> bool:
    """Whether a float32 CPU variable's update can run here (numba and ATen's OpenMP found)."""
    return var.dtype == torch.float32 and var.device.type == "cpu" and _callback() is not None


_callback = built_once(lambda: _build() if omp_pool.launcher() is not None else None)


def update_many(table: list, total: int, lr: float, rho: float, one_minus_rho: float,
                eps: float) -> None:
    """The updates of the variables of `table` (6 ints a variable: the addresses of its
    contiguous float32 g, var, ms, var_out, ms_out and its element count; `total` the sum of
    the counts), sharing the scalars."""
    if not len(table):
        return
    # a variable over CHUNK elements as several rows, so that the threads share it
    table = raw_memory.split_rows(np.asarray(table, dtype=np.int64), 6, 5, CHUNK)[0]
    params = np.array([lr, rho, one_minus_rho, eps], dtype=np.float32)
    threads = torch.get_num_threads() if total >= CHUNK else 1
    omp_pool.run_chunks(_callback(), len(table) // 6, 1, [table, params], threads)


def update_laid_out(table: np.ndarray, sizes: list, total: int, grads: list, lr: float,
                    rho: float, one_minus_rho: float, eps: float) -> None:
    """`update_many` with its table laid out before (g's addresses left to fill): `grads`
    holds each variable's gradient, float32 on the CPU, of the variable's size in `sizes`."""
    held = [g.contiguous() for g in grads]
    table = table.copy()
    table[0::6] = raw_memory.sized_addresses(held, sizes, torch.float32)
    update_many(table, total, lr, rho, one_minus_rho, eps)


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such update, not with ndflow
    except ImportError:
        return None
    from numba import cfunc, types  # noqa: PLC0415
    global claim_chunk, address_as_pointer, carray, _rows
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray

    @numba.njit(inline="always", error_model="numpy")
    def _rows(g, v, a, v_out, a_out, m, lr, rho, omr, eps):
        for i in range(m):
            gi = g[i]
            ms = rho * a[i] + omr * (gi * gi)
            a_out[i] = ms
            v_out[i] = v[i] - (lr * gi) / np.sqrt(ms + eps)

    # data = [counter, rows, 1, (address, length) of the table, of params (lr, rho,
    #         1 - rho, epsilon as float32)]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def rmsprop_many(data):
        d = carray(data, 7, dtype=np.int64)
        rows = d[1]
        table = carray(address_as_pointer(d[3], np.int64), d[4])
        p = carray(address_as_pointer(d[5], np.float32), 4)
        lr, rho, omr, eps = p[0], p[1], p[2], p[3]
        q = claim_chunk(data)
        while q < rows:
            r = table[q * 6:q * 6 + 6]
            m = r[5]
            g = carray(address_as_pointer(r[0], np.float32), m)
            v = carray(address_as_pointer(r[1], np.float32), m)
            a = carray(address_as_pointer(r[2], np.float32), m)
            if r[3] == r[1] and r[4] == r[2]:
                # in place: the same arrays, so that LLVM sees no aliasing and vectorizes (with
                # four distinct ones it did not: 670K floats 0.68 -> 0.12 ms)
                _rows(g, v, a, v, a, m, lr, rho, omr, eps)
            else:
                _rows(g, v, a, carray(address_as_pointer(r[3], np.float32), m),
                      carray(address_as_pointer(r[4], np.float32), m), m, lr, rho, omr, eps)
            q = claim_chunk(data)

    return rmsprop_many.address
