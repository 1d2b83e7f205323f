"""A GEMM whose output is finished block by block while the block is still in the cache: the
product of `_MatMulApplyMomentum` accumulated into the momentum accumulator and, right after
each block of rows, that block's weight update, in one OpenMP region on ATen's team
(kernels/omp_pool.py).

ATen's `addmm` writes the whole 3136x512 accumulator of MNIST's fc1 (6.4 MB, more than this
CPU's 2 MB of L2 per core) before the update pass reads it back from L3. Here each thread
claims a block of ~190 output rows (~400 KB), has MKL compute it (`sgemm_`, the same routine
and operands as `addmm`; inside a parallel region MKL runs on the calling thread) and then
runs kernels/momentum_numba.py's update on the block it just wrote. Measured for fc1 (two
threads, AVX-512 Xeon, operands in L3): addmm then the pass 1.04-1.27 ms, this 0.91-0.93 ms;
in the MNIST training step about 1% of the step. Each element is the same dot product over
the whole K as addmm's (bit-identical for fc1's shape; for other widths MKL may pick
another micro-kernel for a block and round the last bit differently). Blocks depend on the
shape only, so the bits do not depend on the thread count.

MKL's Fortran `sgemm_` is found in torch's own library only when torch's BLAS is MKL
(kernels/mkl_sgemm.py); elsewhere `available()` is False and callers keep ATen's path.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import mkl_sgemm, momentum_numba, omp_pool
from ndflow.kernels.build_once import built_once

# output elements a thread computes and updates at a time (whole rows): ~400 KB, a block
# that stays in a core's L2 between the GEMM writing it and the update reading it
BLOCK_ELEMENTS = 96 * 1024
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = call_sgemm = apply_block = None
gemm_block = gemm_header = None
_sgemm = mkl_sgemm.address
_callbacks = built_once(lambda: _build() if _sgemm() and omp_pool.launcher() else None)


def available() -> bool:
    return momentum_numba.applies(torch.empty(0)) and _callbacks() is not None


def applies(*tensors) -> bool:
    """Whether `tensors` (the operands, the variables and the outputs) can take this path:
    contiguous float32 CPU tensors, the operands matrices, MKL and numba found."""
    return (all(t.dtype == torch.float32 and t.device.type == "cpu" and t.is_contiguous()
                for t in tensors) and tensors[0].dim() == tensors[1].dim() == 2
            and available())


def _layout(a, b, ta: bool, tb: bool, m: int, n: int) -> tuple:
    """sgemm's integer and character arguments for (m x n) = op(a) @ op(b) in blocks of
    rows, the rows per block and each block's row count. In column-major terms the
    output^T (n x m, ld n) = op(b)^T @ op(a)^T, a block of its columns (the output's rows)
    per call; op(a)^T's columns start `a_stride` elements apart."""
    k = a.shape[0] if ta else a.shape[1]
    ints = np.array([n, k, k if tb else n, m if ta else k, n, m, 1 if ta else k, 0],
                    dtype=np.int32)
    chars = np.array([ord("T") if tb else ord("N"), ord("T") if ta else ord("N")],
                     dtype=np.int8)
    rows = max(1, BLOCK_ELEMENTS // max(n, 1))
    blocks = -(-m // rows)
    counts = np.full(blocks, rows, dtype=np.int32)   # each block's row count (sgemm's n)
    counts[-1] = m - rows * (blocks - 1)
    return ints, chars, rows, counts


def matmul_apply_accumulated(a, b, ta: bool, tb: bool, accum, var, var_out, alpha: float,
                             beta: float, decay: float, step: float) -> bool:
    """`accum = beta * accum + alpha * op(a) @ op(b)` in place, then
    `accum += decay * var; var_out = var + step * accum` (momentum_numba.apply_accumulated),
    a block of rows at a time; False (nothing done) where this path does not apply (see
    `applies`). `a` is (M, K), or (K, M) when `ta`; `b` (K, N), or (N, K) when `tb`;
    accum, var and var_out (M, N)."""
    if not applies(a, b, accum, var, var_out) or 0 in accum.shape:
        return False
    m, n = accum.shape
    ints, chars, rows, counts = _layout(a, b, ta, tb, m, n)
    floats = np.array([alpha, beta, decay, step], dtype=np.float32)
    arrays = [b, a, accum, var, var_out]
    arrays += [ints, floats, chars, np.array([_sgemm()], dtype=np.int64), counts]
    omp_pool.run_chunks(_callbacks(), len(counts), rows, arrays, torch.get_num_threads())
    return True


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such kernel, not with ndflow
    except ImportError:
        return None
    from numba import cfunc, types  # noqa: PLC0415
    global claim_chunk, address_as_pointer, carray, call_sgemm, apply_block
    global gemm_block, gemm_header
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    call_sgemm = mkl_sgemm.intrinsics()[0]
    apply_block = momentum_numba.apply_kernel()
    if apply_block is None:
        return None

    @numba.njit(inline="always")
    def gemm_block(fn, b_at, a_at, ints_at, floats_at, chars_at, rows_at, c_at):
        """One block's sgemm_: `c = alpha * op(b)^T op(a)^T + beta * c` in column-major
        terms, the arguments read from the callback's ints (n, k, lda, ldb, ldc), floats
        (alpha, beta) and chars (transa, transb), the block's row count at `rows_at`."""
        i32, f32 = np.int32, np.float32
        call_sgemm(fn, address_as_pointer(chars_at, np.int8),
                   address_as_pointer(chars_at + 1, np.int8), address_as_pointer(ints_at, i32),
                   address_as_pointer(rows_at, i32), address_as_pointer(ints_at + 4, i32),
                   address_as_pointer(floats_at, f32), address_as_pointer(b_at, f32),
                   address_as_pointer(ints_at + 8, i32), address_as_pointer(a_at, f32),
                   address_as_pointer(ints_at + 12, i32), address_as_pointer(floats_at + 4, f32),
                   address_as_pointer(c_at, f32), address_as_pointer(ints_at + 16, i32))

    @numba.njit(inline="always")
    def gemm_header(data, words, ints_at, floats):
        """(data's `words` int64s, blocks, rows per block, the `floats` params after the ints
        at d[ints_at], the sgemm_ address (two arrays on), n, a's row stride)."""
        d = carray(data, words, dtype=np.int64)
        ints = carray(address_as_pointer(d[ints_at], np.int32), 8)
        return (d, d[1], d[2], carray(address_as_pointer(d[ints_at + 2], np.float32), floats),
                carray(address_as_pointer(d[ints_at + 6], np.int64), 1)[0], ints[0], ints[6])

    # data = [counter, blocks, rows per block, (address, length) of b, a, accum, var, var_out,
    #         ints (n, k, lda, ldb, ldc, m, a_stride), floats (alpha, beta, decay, step),
    #         chars (transa, transb), the sgemm_ address, each block's row count (int32)]
    # (nothing is allocated here: the callback runs without numba's runtime)
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def gemm_then_update(data):
        d, blocks, rows, fl, fn, n, a_stride = gemm_header(data, 23, 13, 4)
        i32, f32 = np.int32, np.float32
        q = claim_chunk(data)
        while q < blocks:
            lo = q * rows
            r = carray(address_as_pointer(d[21], i32), blocks)[q]
            c = d[7] + 4 * lo * n
            gemm_block(fn, d[3], d[5] + 4 * lo * a_stride, d[13], d[15], d[17],
                       d[21] + 4 * q, c)
            size = r * n
            v = carray(address_as_pointer(d[9] + 4 * lo * n, f32), size)
            acc = carray(address_as_pointer(c, f32), size)
            if d[11] == d[9]:   # in place: the same array, so LLVM sees no aliasing
                apply_block(v, acc, v, size, fl[2], fl[3])
            else:
                apply_block(v, acc, carray(address_as_pointer(d[11] + 4 * lo * n, f32), size),
                            size, fl[2], fl[3])
            q = claim_chunk(data)

    return gemm_then_update.address
