"""Float32 products on the work-sharing pool (kernels/work_pool.py): blocks of the output, each
one call of MKL's `sgemm_` on whichever thread claims it.

ATen's products split their work statically over the OpenMP team, so they cannot run on the
pool; here a product is cut into about four blocks per thread along the output's longer side,
and each block is one single-threaded `sgemm_` call (kernels/mkl_sgemm.py) with the operands
read in place. Cutting along the longer side keeps the operand every block re-packs the
smaller one: blocks of rows re-read the whole right operand, blocks of columns the whole left
one.

A block's state settles who writes it: the caller computes the blocks it claims straight into
the output; a helper computes its block into its own scratch, and copies it out only if the
block is still its own (CLAIMED -> COPYING -> DONE); the caller, once every block is claimed,
waits for each helper's block about twice its own blocks' time and then takes it over
(-> REDONE) and computes it itself. So a helper that lost its core mid-block never delays the
product by more than a block, and its late result is dropped. On two idle cores a product
runs ~30% slower than ATen's two-thread MKL call (the raw MLP's [256 x 784] x [784 x 512]:
0.97 against 0.73 ms: the blocks re-pack an operand each and helpers copy out), so it is used
only where the pool is (a thread whose cores are crowded).

Operands: 2-D float32 CPU tensors, each contiguous or the transpose of a contiguous one (the
forms TF's MatMul and its gradients produce); `linear` returns None for anything else.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import mkl_sgemm, omp_pool, work_pool, work_pool_numba
from ndflow.kernels.build_once import built_once

BLOCKS_PER_THREAD = 4
# Each block re-packs the other operand and a helper's block is copied out of its scratch:
# a block of w columns does 2 w multiply-adds per float it re-packs, and each output element
# K of them per float it copies. Blocks narrower than MIN_BLOCK or products over fewer than
# MIN_INNER terms spent more on that than the second thread gave (the MNIST CNN's FFT
# transforms, K = 25-32, ran at 33 GFLOP/s on the pool; its fc1 in 64-column blocks no faster
# on two threads than on one), so they keep ATen's kernel.
MIN_BLOCK = 128
MIN_INNER = 64
MIN_PATIENCE = 100_000   # cycles (~30-50 us) the caller waits for a helper's block at least
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = call_sgemm = call_int = None
load = store = swap = pause = cycles = block = out_at = None
# a block's state: claimed by a helper, copied out by it, redone by the caller, done
CLAIMED, COPYING, REDONE, DONE = 1, 2, 3, 4


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
            and a.shape[1] >= MIN_INNER and max(a.shape[0], w.shape[0]) >= 2 * MIN_BLOCK
            and 0 < a.numel() < 2 ** 31 and 0 < w.numel() < 2 ** 31
            and a.shape[0] * w.shape[0] < 2 ** 31 and _callbacks() is not None)


def linear(a: torch.Tensor, w: torch.Tensor, threads: int) -> torch.Tensor | None:
    """`a @ w.T` for a (M, K) and w (N, K) as a new contiguous (M, N) tensor, computed in
    blocks on `threads` threads of the pool; None where this path does not apply."""
    job = _job(a, w, threads) if applies(a, w) else None
    if job is None:
        return None
    out, arrays, data, scratch_floats = job
    helpers, callers = _callbacks()
    if threads < 2 or arrays[7].shape[0] < 2 or not work_pool.run(
            helpers, callers, data, threads, scratch_floats, tuple(arrays)):
        omp_pool.run_chunks(callers, arrays[7].shape[0], 1, arrays, 1)   # alone
    return out


def _job(a: torch.Tensor, w: torch.Tensor, threads: int):
    """(out, the callbacks' arrays, their data, the floats a helper's scratch needs) of the
    product in blocks, or None where an operand's strides do not suit sgemm."""
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
    step = -(-step // 16) * 16 if not split_rows else step   # whole vectors of columns
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
    states = np.zeros(count, dtype=np.int64)
    arrays = [w_mem, a_mem, out, ints, chars, floats, functions, dims, offsets, states]
    return (out, arrays, omp_pool.chunk_data(count, 1, arrays),
            int((dims[:, 0].astype(np.int64) * dims[:, 1]).max()))


def _build():
    if mkl_sgemm.address() is None or not work_pool.available():
        return None
    import numba  # noqa: PLC0415 - loads with the first such product, not with ndflow
    from numba import cfunc, types  # noqa: PLC0415

    global claim_chunk, address_as_pointer, carray, call_sgemm, call_int, load, store, swap
    global pause, cycles, block, out_at
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    call_sgemm, call_int = mkl_sgemm.intrinsics()
    load, store, swap, pause, cycles = (work_pool_numba.load, work_pool_numba.store,
                                        work_pool_numba.swap, work_pool_numba.pause,
                                        work_pool_numba.cycles)
    carray = numba.carray

    # data = [counter, blocks, 1, (address, length) of w, a, out, ints (k, lda, ldb, ldc),
    #         chars (transa, transb), floats (alpha, beta), functions (sgemm_, MKL's local
    #         thread count), dims (m, n per block, int32), offsets (w, a, out per block),
    #         states (per block), finished]
    @numba.njit(inline="always")
    def block(d, q, c_at, ldc_at):
        """Block q's sgemm_ call, its output at `c_at` with the leading dimension at
        `ldc_at`."""
        i32, f32, i8 = np.int32, np.float32, np.int8
        functions = carray(address_as_pointer(d[15], np.int64), 2)
        offsets = carray(address_as_pointer(d[19], np.int64), 3 * d[1])
        call_sgemm(functions[0], address_as_pointer(d[11], i8),
                   address_as_pointer(d[11] + 1, i8),
                   address_as_pointer(d[17] + 8 * q, i32),
                   address_as_pointer(d[17] + 8 * q + 4, i32),
                   address_as_pointer(d[9], i32), address_as_pointer(d[13], f32),
                   address_as_pointer(d[3] + 4 * offsets[3 * q], f32),
                   address_as_pointer(d[9] + 4, i32),
                   address_as_pointer(d[5] + 4 * offsets[3 * q + 1], f32),
                   address_as_pointer(d[9] + 8, i32), address_as_pointer(d[13] + 4, f32),
                   address_as_pointer(c_at, f32), address_as_pointer(ldc_at, i32))

    @numba.njit(inline="always")
    def out_at(d, q):
        return d[7] + 4 * carray(address_as_pointer(d[19], np.int64), 3 * d[1])[3 * q + 2]

    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def callers(data):
        """The caller's blocks, straight into the output, then every block a helper claimed
        and has not started copying out (a helper that lost its core holds it): redone here,
        the helper's copy refused (its state is no longer CLAIMED)."""
        d = carray(data, 24, dtype=np.int64)
        functions = carray(address_as_pointer(d[15], np.int64), 2)
        states = d[21]
        previous = call_int(functions[1], 1)   # this call's blocks on this thread only
        own, start = 0, cycles()
        q = claim_chunk(data)
        while q < d[1]:
            block(d, q, out_at(d, q), d[9] + 12)
            store(states + 8 * q, DONE)
            own += 1
            q = claim_chunk(data)
        # a helper that runs finishes its block within about a block's time: wait that long
        # (twice the caller's own, at least MIN_PATIENCE), then redo what is still held
        patience = max(2 * (cycles() - start) // max(own, 1), MIN_PATIENCE)
        for q in range(d[1]):
            waited = cycles()
            while True:
                s = load(states + 8 * q)
                if s == DONE:
                    break
                if s == COPYING or cycles() - waited < patience:
                    pause()
                elif swap(states + 8 * q, s, REDONE) == s:
                    block(d, q, out_at(d, q), d[9] + 12)
                    store(states + 8 * q, DONE)
                    break
        call_int(functions[1], previous)

    @cfunc(types.void(types.voidptr, types.int64, types.int64), nopython=True, cache=True)
    def helpers(data, scratch, floats):
        """A helper's blocks, each into its scratch and copied out only if the caller has
        not taken it over meanwhile."""
        d = carray(data, 24, dtype=np.int64)
        functions = carray(address_as_pointer(d[15], np.int64), 2)
        dims = carray(address_as_pointer(d[17], np.int32), 2 * d[1])
        states = d[21]
        previous = call_int(functions[1], 1)
        q = claim_chunk(data)
        while q < d[1]:
            m, n = dims[2 * q], dims[2 * q + 1]
            if m * n <= floats and swap(states + 8 * q, 0, CLAIMED) == 0:
                block(d, q, scratch, d[17] + 8 * q)   # leading dimension m: packed
                if swap(states + 8 * q, CLAIMED, COPYING) == CLAIMED:
                    src = carray(address_as_pointer(scratch, np.float32), m * n)
                    ldc = carray(address_as_pointer(d[9], np.int32), 4)[3]
                    base = out_at(d, q)
                    for j in range(n):
                        dst = carray(address_as_pointer(base + 4 * j * ldc, np.float32), m)
                        dst[:] = src[j * m:(j + 1) * m]
                    store(states + 8 * q, DONE)
            q = claim_chunk(data)
        call_int(functions[1], previous)

    return helpers.address, callers.address


_callbacks = built_once(_build)
