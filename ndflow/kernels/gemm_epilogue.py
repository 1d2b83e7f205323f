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
(`BLAS_INFO=mkl`); elsewhere `available()` is False and callers keep ATen's path. The routine
is called through its address read at run time (a numba intrinsic), so the compiled callback
stays cacheable on disk.
"""

from __future__ import annotations

import ctypes
import os

import numpy as np
import torch

from ndflow.kernels import momentum_numba, omp_pool
from ndflow.kernels.build_once import built_once

BLOCK_ELEMENTS = 96 * 1024   # output elements a thread computes and updates at a time
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = call_sgemm = apply_block = None


def _sgemm_address() -> int | None:
    """The address of MKL's `sgemm_` in torch's library, when torch's BLAS is MKL."""
    if "BLAS_INFO=mkl" not in torch.__config__.show():
        return None
    path = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    try:
        fn = ctypes.CDLL(path).sgemm_   # the already-loaded copy
    except (OSError, AttributeError):
        return None
    return ctypes.cast(fn, ctypes.c_void_p).value


_sgemm = built_once(_sgemm_address)
_callback = built_once(lambda: _build() if _sgemm() and omp_pool.launcher() else None)


def available() -> bool:
    return momentum_numba.applies(torch.empty(0)) and _callback() is not None


def matmul_apply_accumulated(a, b, ta: bool, tb: bool, accum, var, var_out, alpha: float,
                             beta: float, decay: float, step: float) -> bool:
    """`accum = beta * accum + alpha * op(a) @ op(b)` in place, then
    `accum += decay * var; var_out = var + step * accum` (momentum_numba.apply_accumulated),
    a block of rows at a time; False (nothing done) where this path does not apply: other
    than contiguous float32 CPU tensors, or no MKL. `a` is (M, K), or (K, M) when `ta`; `b`
    (K, N), or (N, K) when `tb`; accum, var and var_out (M, N)."""
    tensors = (a, b, accum, var, var_out)
    if not (all(t.dtype == torch.float32 and t.device.type == "cpu" and t.is_contiguous()
                for t in tensors) and a.dim() == b.dim() == 2 and available()):
        return False
    m, n = accum.shape
    k = a.shape[0] if ta else a.shape[1]
    if m == 0 or n == 0:
        return False
    # column-major view: accum^T (n x m, ld n) = op(b)^T @ op(a)^T, a block of its columns
    # (accum's rows) per call; op(a)^T's columns start `a_stride` elements apart
    ints = np.array([n, k, k if tb else n, m if ta else k, n, m, 1 if ta else k, 0],
                    dtype=np.int32)
    floats = np.array([alpha, beta, decay, step], dtype=np.float32)
    chars = np.frombuffer(b"TN" if tb else b"NN", dtype=np.int8).copy()
    chars[1] = ord("T") if ta else ord("N")
    rows = max(1, BLOCK_ELEMENTS // n)
    blocks = -(-m // rows)
    counts = np.full(blocks, rows, dtype=np.int32)   # each block's row count (sgemm's n)
    counts[-1] = m - rows * (blocks - 1)
    arrays = [t.numpy().reshape(-1) for t in (b, a, accum, var, var_out)]
    arrays += [ints, floats, chars, np.array([_sgemm()], dtype=np.int64), counts]
    omp_pool.run_chunks(_callback(), blocks, rows, arrays, torch.get_num_threads())
    return True


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such kernel, not with ndflow
    except ImportError:
        return None
    from llvmlite import ir  # noqa: PLC0415
    from numba import cfunc, types  # noqa: PLC0415
    from numba.extending import intrinsic  # noqa: PLC0415
    global claim_chunk, address_as_pointer, carray, call_sgemm, apply_block
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    apply_block = momentum_numba.apply_kernel()

    @intrinsic
    def call_sgemm(typingctx, address, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta,
                   c, ldc):
        """Calls the Fortran `sgemm_` at `address` with its 13 pointer arguments."""
        args = (transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
        if not all(isinstance(t, types.CPointer) for t in args):
            return None

        def codegen(context, builder, sig, llargs):
            ptr_types = [context.get_value_type(t) for t in sig.args[1:]]
            fnty = ir.FunctionType(ir.VoidType(), ptr_types)
            fn = builder.inttoptr(llargs[0], fnty.as_pointer())
            builder.call(fn, llargs[1:])
            return context.get_dummy_value()
        return types.none(address, *args), codegen

    # data = [counter, blocks, rows per block, (address, length) of b, a, accum, var, var_out,
    #         ints (n, k, lda, ldb, ldc, m, a_stride), floats (alpha, beta, decay, step),
    #         chars (transa, transb), the sgemm_ address, each block's row count (int32)]
    # (nothing is allocated here: the callback runs without numba's runtime)
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def gemm_then_update(data):
        d = carray(data, 23, dtype=np.int64)
        blocks, rows = d[1], d[2]
        ints = carray(address_as_pointer(d[13], np.int32), 8)
        fl = carray(address_as_pointer(d[15], np.float32), 4)
        fn = carray(address_as_pointer(d[19], np.int64), 1)[0]
        n, a_stride = ints[0], ints[6]
        i32, f32 = np.int32, np.float32
        q = claim_chunk(data)
        while q < blocks:
            lo = q * rows
            r = carray(address_as_pointer(d[21], i32), blocks)[q]
            c = d[7] + 4 * lo * n
            call_sgemm(fn, address_as_pointer(d[17], np.int8),
                       address_as_pointer(d[17] + 1, np.int8),
                       address_as_pointer(d[13], i32),
                       address_as_pointer(d[21] + 4 * q, i32),
                       address_as_pointer(d[13] + 4, i32), address_as_pointer(d[15], f32),
                       address_as_pointer(d[3], f32), address_as_pointer(d[13] + 8, i32),
                       address_as_pointer(d[5] + 4 * lo * a_stride, f32),
                       address_as_pointer(d[13] + 12, i32), address_as_pointer(d[15] + 4, f32),
                       address_as_pointer(c, f32), address_as_pointer(d[13] + 16, i32))
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
