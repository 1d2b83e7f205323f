"""Batched float32 matrix transposes, [B, R, C] -> [B, C, R], in 16 x 16 register blocks on
ATen's OpenMP team (kernels/omp_pool.py).

ATen copies a permuted tensor element by element along the output, reading the input with a
stride: a [1024 x 1024] transpose ran at 8.9 GB/s (read + write) where a plain copy of it ran
at 46, an NHWC -> NCHW [32, 56, 56, 64] activation at 10.9, and the HWIO -> OHWI reorder a
convolution's filter gets on every oneDNN call (5 x 5 x 256 x 128: 1.8 ms) at 3.6. Here a
thread claims a band of 16 input rows and moves it 16 x 16 block by block (16 vector loads,
four rounds of lane shuffles, 16 vector stores: `simd_numba.vtranspose`); a matrix's last
band and a band's last block overlap the ones before them instead of going element by element
(rows 196: 57 -> 48 us for [16, 196, 64]). Both sides must be at least 16; kernels/permute.py
decides which permutations reach it.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool, simd_numba
from ndflow.kernels.build_once import built_once

LANES = simd_numba.LANES
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = wide_vectors = vtranspose = None


def applies(t: torch.Tensor) -> bool:
    return t.dtype == torch.float32 and t.device.type == "cpu" and _kernel() is not None


def transpose(src: torch.Tensor, batch: int, rows: int, cols: int) -> torch.Tensor:
    """A fresh contiguous [batch, cols, rows] float32 tensor from the contiguous `src` read
    as [batch, rows, cols], rows and cols at least 16 (`applies` said so)."""
    dst = torch.empty((batch, cols, rows), dtype=torch.float32)
    bands = -(-rows // LANES)
    units = batch * bands
    threads = max(1, min(torch.get_num_threads(), units))
    chunk = max(1, -(-units // (4 * threads)))
    omp_pool.run_chunks(_kernel(), units, chunk,
                        [src, dst, np.array([batch, rows, cols, bands], dtype=np.int64)],
                        threads)
    return dst


def _build():
    nb = omp_pool.callback_builder()
    if nb is None:
        return None
    global claim_chunk, address_as_pointer, carray, wide_vectors, vtranspose
    claim_chunk, address_as_pointer, carray = nb.claim_chunk, nb.address_as_pointer, nb.carray
    ops = simd_numba.vector_ops()
    wide_vectors, vtranspose = ops.wide_vectors, ops.vtranspose
    lanes = LANES

    # data = [counter, units, chunk, (address, length) of src, dst, params, finished];
    # params = batch, rows, cols, bands; a unit is one band of 16 rows of one matrix
    @nb.cfunc(nb.types.void(nb.types.voidptr), nopython=True, cache=True)
    def transpose_bands(data):
        wide_vectors()
        d = carray(data, 10, dtype=np.int64)
        src = carray(address_as_pointer(d[3], np.float32), d[4])
        dst = carray(address_as_pointer(d[5], np.float32), d[6])
        p = carray(address_as_pointer(d[7], np.int64), 4)
        rows, cols, bands = p[1], p[2], p[3]
        q = claim_chunk(data)
        while q * d[2] < d[1]:
            for unit in range(q * d[2], min(q * d[2] + d[2], d[1])):
                # the last band and the last block of a band end at the matrix's edge,
                # overlapping the one before (the same values written again): every block
                # is whole (rows and cols are at least 16)
                b, r0 = unit // bands, min((unit % bands) * lanes, rows - lanes)
                base = b * rows * cols
                c0 = 0
                while c0 < cols:
                    c0 = min(c0, cols - lanes)
                    vtranspose(src, base + r0 * cols + c0, cols, dst, base + c0 * rows + r0,
                               rows)
                    c0 += lanes
            q = claim_chunk(data)

    return transpose_bands.address


_kernel = built_once(_build)
