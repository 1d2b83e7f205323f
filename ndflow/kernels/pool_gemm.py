"""Float32 products on the work-sharing pool (kernels/work_pool.py): blocks of the output, each
one call of MKL's `sgemm_` on whichever thread claims it.

ATen's products split their work statically over the OpenMP team, so they cannot run on the
pool; here a product is cut into about four blocks per thread along the output's longer side,
and each block is one single-threaded `sgemm_` call (kernels/mkl_sgemm.py) with the operands
read in place. Cutting along the longer side keeps the operand every block re-packs the
smaller one: blocks of rows re-read the whole right operand, blocks of columns the whole left
one. On two idle cores such a product runs within ~5-10% of ATen's two-thread MKL call
(the raw MLP's products: 3.6-3.9 against 3.3-3.8 ms), so it is used only where the pool is
(a thread whose cores are crowded).

Operands: 2-D float32 CPU tensors, each contiguous or the transpose of a contiguous one (the
forms TF's MatMul and its gradients produce); `linear` returns None for anything else.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import mkl_sgemm, omp_pool, work_pool
from ndflow.kernels.build_once import built_once

BLOCKS_PER_THREAD = 4
MIN_BLOCK = 16   # rows or columns a block has at least
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = call_sgemm = call_int = None


def _operand(t: torch.Tensor):
    """(contiguous tensor, transposed?) for sgemm: `t` itself when contiguous, else the
    contiguous tensor it is the transpose of; None for other strides."""
    if t.is_contiguous():
        return t, False
    if t.t().is_contiguous():
        return t.t(), True
    return None


def applies(a: torch.Tensor, w: torch.Tensor) -> bool:
    return (a.dim() == 2 and w.dim() == 2 and a.dtype == torch.float32 == w.dtype
            and a.device.type == "cpu" == w.device.type and a.shape[1] == w.shape[1]
            and 0 < a.numel() < 2 ** 31 and 0 < w.numel() < 2 ** 31
            and a.shape[0] * w.shape[0] < 2 ** 31 and _callback() is not None)


def linear(a: torch.Tensor, w: torch.Tensor, threads: int) -> torch.Tensor | None:
    """`a @ w.T` for a (M, K) and w (N, K) as a new contiguous (M, N) tensor, computed in
    blocks on `threads` threads of the pool; None where this path does not apply."""
    if not applies(a, w):
        return None
    a_op, w_op = _operand(a), _operand(w)
    if a_op is None or w_op is None:
        return None
    (a_mem, a_t), (w_mem, w_t) = a_op, w_op
    m, k = a.shape
    n = w.shape[0]
    out = torch.empty((m, n), dtype=torch.float32)
    # column-major terms: out^T (n x m, ld n) = op(W) (n x k) @ op(A)^T (k x m)
    transa, lda = (ord("N"), n) if w_t else (ord("T"), k)
    transb, ldb = (ord("T"), m) if a_t else (ord("N"), k)
    split_rows = m >= n
    extent = m if split_rows else n
    blocks = max(1, min(BLOCKS_PER_THREAD * threads, extent // MIN_BLOCK))
    step = -(-extent // blocks)
    step = -(-step // MIN_BLOCK) * MIN_BLOCK if not split_rows else step
    starts = np.arange(0, extent, step, dtype=np.int64)
    sizes = np.minimum(step, extent - starts)
    count = len(starts)
    dims = np.empty((count, 2), dtype=np.int32)     # sgemm's m and n per block
    offsets = np.zeros((count, 3), dtype=np.int64)  # elements into W, A and out per block
    if split_rows:
        dims[:, 0], dims[:, 1] = n, sizes
        offsets[:, 1] = starts if a_t else starts * k
        offsets[:, 2] = starts * n
    else:
        dims[:, 0], dims[:, 1] = sizes, m
        offsets[:, 0] = starts if w_t else starts * k
        offsets[:, 2] = starts
    ints = np.array([k, lda, ldb, n], dtype=np.int32)
    chars = np.array([transa, transb], dtype=np.int8)
    floats = np.array([1.0, 0.0], dtype=np.float32)
    functions = np.array([mkl_sgemm.address(), mkl_sgemm.local_threads_address()],
                         dtype=np.int64)
    omp_pool.run_chunks(_callback(), count, 1,
                        [w_mem, a_mem, out, ints, chars, floats, functions, dims, offsets],
                        threads, pool=True)
    return out


def _build():
    if mkl_sgemm.address() is None or not work_pool.available():
        return None
    import numba  # noqa: PLC0415 - loads with the first such product, not with ndflow
    from numba import cfunc, types  # noqa: PLC0415

    global claim_chunk, address_as_pointer, carray, call_sgemm, call_int
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    call_sgemm, call_int = mkl_sgemm.intrinsics()
    carray = numba.carray

    # data = [counter, blocks, 1, (address, length) of w, a, out, ints (k, lda, ldb, ldc),
    #         chars (transa, transb), floats (alpha, beta), functions (sgemm_, MKL's local
    #         thread count), dims (m, n per block, int32), offsets (w, a, out per block),
    #         finished]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def blocks(data):
        d = carray(data, 22, dtype=np.int64)
        i32, f32, i8 = np.int32, np.float32, np.int8
        functions = carray(address_as_pointer(d[15], np.int64), 2)
        offsets = carray(address_as_pointer(d[19], np.int64), 3 * d[1])
        previous = call_int(functions[1], 1)   # this call's blocks on this thread only
        q = claim_chunk(data)
        while q < d[1]:
            call_sgemm(functions[0], address_as_pointer(d[11], i8),
                       address_as_pointer(d[11] + 1, i8),
                       address_as_pointer(d[17] + 8 * q, i32),
                       address_as_pointer(d[17] + 8 * q + 4, i32),
                       address_as_pointer(d[9], i32), address_as_pointer(d[13], f32),
                       address_as_pointer(d[3] + 4 * offsets[3 * q], f32),
                       address_as_pointer(d[9] + 4, i32),
                       address_as_pointer(d[5] + 4 * offsets[3 * q + 1], f32),
                       address_as_pointer(d[9] + 8, i32),
                       address_as_pointer(d[13] + 4, f32),
                       address_as_pointer(d[7] + 4 * offsets[3 * q + 2], f32),
                       address_as_pointer(d[9] + 12, i32))
            q = claim_chunk(data)
        call_int(functions[1], previous)

    return blocks.address


_callback = built_once(_build)
