"""Batched float32 matrix products of small matrices ([B1, B2, M, K] @ [B1, B2, K, N], any
strides but a unit column stride in the right operand) on ATen's OpenMP team, each matrix's
rows in blocks of kernels/register_gemm_numba.py's register-blocked product.

ATen's batched product (`bmm`: MKL's sgemm, AVX2 code on AMD CPUs) multiplied the [64 x 32]
x [32 x 64] score blocks of Keras' MultiHeadAttention with dropout (which runs as einsums, not
the fused attention) at 80-105 GFLOP/s on a 2-core Zen 5; the register-blocked product reaches
~450 on such blocks. Columns must be a multiple of 16 (`applies`); kernels/batched_gemm.py
chooses between the two per shape by timing, as the GEMM library is chosen.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool, raw_memory, register_gemm_numba
from ndflow.kernels.build_once import built_once

ROWS_PER_UNIT = 16   # rows of one matrix a thread claims at a time
claim_chunk = address_as_pointer = carray = product = None


def applies(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether `matmul` runs a @ b: float32 CPU 4-D operands of one batch shape, columns a
    multiple of 16 in unit stride, and the kernel built (numba, ATen's OpenMP launcher)."""
    return (a.dtype == torch.float32 and b.dtype == torch.float32 and a.device.type == "cpu"
            and b.device.type == "cpu" and a.dim() == 4 and b.dim() == 4
            and a.shape[:2] == b.shape[:2] and a.shape[3] == b.shape[2]
            and b.shape[3] % 16 == 0 and b.stride(3) == 1 and a.numel() and b.numel()
            and _kernel() is not None)


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """A new contiguous [B1, B2, M, N] = a @ b, for operands `applies` accepts."""
    b1, b2, m, k = a.shape
    n = b.shape[3]
    out = torch.empty((b1, b2, m, n), dtype=torch.float32)
    params = np.array([b1, b2, m, k, n, *a.stride(), *b.stride()[:3]], dtype=np.int64)
    blocks = -(-m // ROWS_PER_UNIT)
    units = b1 * b2 * blocks
    threads = max(1, min(torch.get_num_threads(), units))
    chunk = max(1, -(-units // (4 * threads)))
    omp_pool.run_chunks(_kernel(), units, chunk,
                        [raw_memory.strided_span(a), raw_memory.strided_span(b), out, params],
                        threads)
    return out


def _build():
    gemm, nb = register_gemm_numba.helpers(), omp_pool.callback_builder()
    if gemm is None or nb is None:
        return None
    numba, cfunc, types = nb.numba, nb.cfunc, nb.types

    global claim_chunk, address_as_pointer, carray, product
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray, product = numba.carray, gemm.product
    rows_per_block, rows_per_unit = register_gemm_numba.ROWS, ROWS_PER_UNIT
    one = np.float32(1.0)

    # data = [counter, units, chunk, (address, length) of a, b, out, params, finished];
    # params = B1, B2, M, K, N, a's four strides, b's first three (its last is 1); a unit is
    # ROWS_PER_UNIT rows of one matrix of the batch
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def batched_products(data):
        d = carray(data, 12, dtype=np.int64)
        a = carray(address_as_pointer(d[3], np.float32), d[4])
        b = carray(address_as_pointer(d[5], np.float32), d[6])
        out = carray(address_as_pointer(d[7], np.float32), d[8])
        p = carray(address_as_pointer(d[9], np.int64), d[10])
        b2, m, k, n = p[1], p[2], p[3], p[4]
        blocks = (m + rows_per_unit - 1) // rows_per_unit
        q = claim_chunk(data)
        while q * d[2] < d[1]:
            for u in range(q * d[2], min(q * d[2] + d[2], d[1])):
                matrix, r0 = u // blocks, (u % blocks) * rows_per_unit
                i1, i2 = matrix // b2, matrix % b2
                a_base = i1 * p[5] + i2 * p[6]
                b_base = i1 * p[9] + i2 * p[10]
                for r in range(r0, min(r0 + rows_per_unit, m), rows_per_block):
                    rows = min(rows_per_block, m - r)
                    product(a, a_base + r * p[7], p[7], p[8], rows, k, b, b_base, p[11], n,
                            out, (matrix * m + r) * n, n, one, False)
            q = claim_chunk(data)

    return batched_products.address


_kernel = built_once(_build)
