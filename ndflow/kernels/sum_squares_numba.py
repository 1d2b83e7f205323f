"""sum(x * x) of a large float32 CPU tensor (`L2Loss`) on ATen's OpenMP team: blocks of
whole rows summed in parallel by `block_sum` (four 16-lane accumulators of fused
multiply-adds over 64 elements at a time, then 16 at a time, added in a fixed order, then the
tail), and the blocks' sums added in block order, all in float32. The order depends on the
shape only, so the value does not depend on the thread count. A weight-decay loss reads every
regularized weight each step (MNIST's fc1: 6.4 MB); ATen's dot runs on one thread.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool, simd_numba
from ndflow.kernels.build_once import built_once

BLOCK_ELEMENTS = 96 * 1024   # elements a thread sums at a time (whole rows)
# Tensors from this size on are summed here: a smaller one's parallel launch cost more than
# ATen's dot (MNIST's 512-element bias: 65 us against 10)
MIN_ELEMENTS = 1 << 16
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = block_sum = None
wide_vectors = vload = vfma = vzero = vadd = vsum = None


def block_rows(n: int) -> int:
    """Rows of n elements per block."""
    return max(1, BLOCK_ELEMENTS // max(n, 1))


def block_elements(shape) -> int:
    """Elements per block of a tensor of `shape` (whole rows of its last dimension)."""
    n = int(shape[-1]) if len(shape) >= 1 else 1
    return block_rows(n) * max(n, 1)


def applies(t: torch.Tensor) -> bool:
    """Whether `t`'s sum of squares is this module's: a contiguous float32 CPU tensor of at
    least MIN_ELEMENTS elements, numba and ATen's OpenMP found."""
    return (t.dtype == torch.float32 and t.device.type == "cpu" and t.is_contiguous()
            and t.numel() >= MIN_ELEMENTS and _callback() is not None)


_callback = built_once(lambda: _build() if omp_pool.launcher() is not None else None)


def combine(block_sums: np.ndarray) -> float:
    """The blocks' float32 sums added in block order, in float32."""
    if len(block_sums) == 0:
        return 0.0
    return float(np.cumsum(block_sums, dtype=np.float32)[-1])


def sum_of_squares(t: torch.Tensor) -> float:
    """sum(t * t) by the blocks of the module doc (`applies(t)` holds)."""
    n = t.numel()
    if n == 0:
        return 0.0
    per = block_elements(t.shape)
    blocks = -(-n // per)
    sums = np.zeros(blocks, dtype=np.float32)
    params = np.array([n, per], dtype=np.int64)
    omp_pool.run_chunks(_callback(), blocks, 1, [t, sums, params],
                        min(torch.get_num_threads(), blocks))
    return combine(sums)


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such sum, not with ndflow
    except ImportError:
        return None
    from numba import cfunc, types  # noqa: PLC0415
    global claim_chunk, address_as_pointer, carray, block_sum
    global wide_vectors, vload, vfma, vzero, vadd, vsum
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    ops = simd_numba.vector_ops()
    wide_vectors, vload, vfma, vzero, vadd, vsum = (ops.wide_vectors, ops.vload, ops.vfma,
                                                    ops.vzero, ops.vadd, ops.vsum)

    @numba.njit(inline="always")
    def block_sum(x, size):
        wide_vectors()
        a0, a1, a2, a3 = vzero(), vzero(), vzero(), vzero()
        i = 0
        while i + 64 <= size:
            v0, v1 = vload(x, i), vload(x, i + 16)
            v2, v3 = vload(x, i + 32), vload(x, i + 48)
            a0, a1 = vfma(v0, v0, a0), vfma(v1, v1, a1)
            a2, a3 = vfma(v2, v2, a2), vfma(v3, v3, a3)
            i += 64
        while i + 16 <= size:
            v0 = vload(x, i)
            a0 = vfma(v0, v0, a0)
            i += 16
        total = vsum(vadd(vadd(a0, a1), vadd(a2, a3)))
        while i < size:
            total += x[i] * x[i]
            i += 1
        return total

    # data = [counter, blocks, 1, (address, length) of x, the block sums, (n, per block)]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def sums_of_blocks(data):
        d = carray(data, 9, dtype=np.int64)
        blocks = d[1]
        p = carray(address_as_pointer(d[7], np.int64), 2)
        n, per = p[0], p[1]
        out = carray(address_as_pointer(d[5], np.float32), blocks)
        q = claim_chunk(data)
        while q < blocks:
            lo = q * per
            size = min(per, n - lo)
            out[q] = block_sum(carray(address_as_pointer(d[3] + 4 * lo, np.float32), size),
                               size)
            q = claim_chunk(data)

    return sums_of_blocks.address
