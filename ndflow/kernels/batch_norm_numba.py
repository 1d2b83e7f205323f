"""Training-mode batch normalization of NHWC float32 CPU tensors in two passes, as numba
kernels run on ATen's OpenMP team (kernels/omp_pool.py): `FusedBatchNormV3` and
`_FusedBatchNormEx`, with its side input and ReLU in the normalizing pass (kernels/nn_norm.py,
kernels/nn_fused.py).

ATen's channels-last batch norm reads x three times for the statistics and the output, and
`_FusedBatchNormEx` then added its side input and applied the ReLU in two more passes over y:
here x is read once for the statistics and once for y, with the side input and the ReLU in
that pass (ResNet-20's 128x32x32x16 layers on a 2-core Zen 5: 0.53 against 0.71 ms a forward
pass, warm; ~2 ms of its ~104 ms training step). The gradient stays ATen's: a kernel of the
same kind (two passes over dy and x) was faster alone (0.47 against 0.67 ms) but slower inside
the step, where ATen's reads data the previous op left in cache in its own order.

Numerics. Statistics are sums over the rows (N*H*W) of each channel. Each chunk of rows sums
x - k and (x - k)^2, with k the first row's value of the channel (a shift that keeps the
variance from cancelling when the mean is large against the spread), in float32 over blocks of
`BLOCK_ROWS` rows and in float64 across blocks; the chunks' sums are added in float64 in chunk
order. Chunks depend on the shape only, so results do not depend on the thread count.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool, simd_numba
from ndflow.kernels.build_once import built_once

MIN_ELEMENTS = 1 << 15   # smaller tensors: ATen's kernel (a parallel launch costs ~10 us)
CHUNK_ELEMENTS = 1 << 15  # elements (whole rows) a thread takes at a time
BLOCK_ROWS = 64           # rows summed in float32 before adding into the float64 sums
TILE = 64                 # channels of a row summed at a time
MAX_CHANNELS = CHUNK_ELEMENTS // BLOCK_ROWS   # channels of a chunk of BLOCK_ROWS rows
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = None
view = f64_view = each_chunk = sums_of_rows = None
wide_vectors = vload = vstore = vzero = vfma = vadd = vsub = vrelu = None
stats_body = normalize_body = None


def applies(x: torch.Tensor) -> bool:
    """Whether `x` (the batch norm's NHWC input) takes this path: a contiguous float32 CPU
    tensor of at least MIN_ELEMENTS elements whose channels (its last dimension) fill 16-lane
    vectors and are few enough that a chunk holds a block of rows (MAX_CHANNELS: with more,
    each chunk's float64 partial sums cost more than its rows; a dense layer's 12544 features
    at batch 64 took 0.84 ms here against ATen's 0.26); numba and ATen's OpenMP found."""
    return (x.dtype == torch.float32 and x.device.type == "cpu" and x.dim() >= 2
            and x.shape[-1] % simd_numba.LANES == 0 and x.shape[-1] <= MAX_CHANNELS
            and x.is_contiguous() and x.numel() >= max(MIN_ELEMENTS, 2 * x.shape[-1])
            and _callbacks() is not None)


_callbacks = built_once(lambda: _build() if omp_pool.launcher() is not None else None)


def _geometry(x: torch.Tensor) -> tuple:
    c = x.shape[-1]
    rows = x.numel() // c
    chunk_rows = max(1, CHUNK_ELEMENTS // c)
    return rows, c, chunk_rows, -(-rows // chunk_rows)


def _run(which: int, x, arrays: list, params: list) -> None:
    rows, c, chunk_rows, chunks = _geometry(x)
    threads = min(torch.get_num_threads(), chunks)
    ip = np.array(([rows, c, threads] + params + [0, 0])[:5], dtype=np.int64)
    omp_pool.run_chunks(_callbacks()[which], rows, chunk_rows, arrays + [ip], threads)


def statistics(x: torch.Tensor) -> tuple:
    """(mean, biased variance) of each channel of NHWC `x`, float64 NumPy arrays."""
    shift = x.reshape(-1, x.shape[-1])[0].contiguous()
    _, c, _, chunks = _geometry(x)
    partial = np.empty((chunks, 2, c), dtype=np.float64)   # per chunk, added in chunk order
    scratch = np.empty((chunks, 2 * TILE), dtype=np.float32)
    _run(0, x, [x, shift, partial, scratch], [])
    s1, s2 = partial.sum(axis=0)
    rows = x.numel() // c
    m = s1 / rows
    return shift.numpy().astype(np.float64) + m, np.maximum(s2 / rows - m * m, 0.0)


def normalize(x: torch.Tensor, mean, a, offset, side=None, relu: bool = False):
    """(x - mean) * a + offset (+ side) (then max(., 0)) per channel (float64 or float32
    NumPy vectors), a new tensor like x."""
    y = torch.empty_like(x)
    coef = np.concatenate([mean, a, offset]).astype(np.float32)
    _run(1, x, [x, side.contiguous() if side is not None else x, y, coef],
         [side is not None, relu])
    return y


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first batch norm, not with ndflow
    except ImportError:
        return None
    from numba import cfunc, types  # noqa: PLC0415
    global claim_chunk, address_as_pointer, carray, view, f64_view, each_chunk
    global sums_of_rows, stats_body, normalize_body
    global wide_vectors, vload, vstore, vzero, vfma, vadd, vsub, vrelu
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    ops = simd_numba.vector_ops()
    wide_vectors, vload, vstore, vzero = ops.wide_vectors, ops.vload, ops.vstore, ops.vzero
    vfma, vadd, vsub, vrelu = ops.vfma, ops.vadd, ops.vsub, ops.vrelu
    inline = numba.njit(inline="always")

    @inline
    def view(d, k, dtype):
        """The array at d[k] (address, length) as a 1-D array of `dtype`."""
        return carray(address_as_pointer(d[k], dtype), d[k + 1])

    @inline
    def f64_view(d, k):
        return carray(address_as_pointer(d[k], np.float64), d[k + 1])

    @inline
    def each_chunk(data, n_arrays, body):
        """Runs body(d, ip, lo, hi, q) on each chunk q of rows lo..hi; the int64 params
        (rows, channels, threads, flags) are the last of the `n_arrays` arrays. Each thread
        claims a slot and takes that slot's run of consecutive chunks, so that it streams one
        contiguous part of memory (interleaved chunks ran slower from DRAM: the prefetchers
        restart at every chunk)."""
        d = carray(data, 4 + 2 * n_arrays, dtype=np.int64)
        ip = carray(address_as_pointer(d[3 + 2 * (n_arrays - 1)], np.int64), 5)
        rows, chunk, threads = d[1], d[2], ip[2]
        chunks = (rows + chunk - 1) // chunk
        per = (chunks + threads - 1) // threads
        slot = claim_chunk(data)
        while slot < threads:
            for q in range(slot * per, min(slot * per + per, chunks)):
                lo = q * chunk
                body(d, ip, lo, min(lo + chunk, rows), q)
            slot = claim_chunk(data)

    @inline
    def sums_of_rows(x, k, c, lo, hi, q, partial, scratch):
        """partial[q] (2 x c float64s) = per channel, over rows lo..hi, the sums of v = x - k
        and of v * v. Rows are read in order, a tile of
        up to TILE channels of each at a time, summed in float32 (in scratch, which stays in
        L1) over BLOCK_ROWS rows, then added into the float64 sums."""
        wide_vectors()
        base, s = q * 2 * c, q * 2 * TILE
        for ch in range(2 * c):
            partial[base + ch] = 0.0
        for t0 in range(0, c, TILE):
            width = min(TILE, c - t0)
            for b0 in range(lo, hi, BLOCK_ROWS):
                for j in range(2 * TILE):
                    scratch[s + j] = 0.0
                for r in range(b0, min(b0 + BLOCK_ROWS, hi)):
                    for j in range(0, width, 16):
                        o = r * c + t0 + j
                        v = vsub(vload(x, o), vload(k, t0 + j))
                        vstore(scratch, s + j, vadd(vload(scratch, s + j), v))
                        vstore(scratch, s + TILE + j,
                               vfma(v, v, vload(scratch, s + TILE + j)))
                for j in range(width):
                    partial[base + t0 + j] += scratch[s + j]
                    partial[base + c + t0 + j] += scratch[s + TILE + j]

    # stats: arrays x, shift (C), partial (chunks*2*C f64), scratch (f32), ip
    @inline
    def stats_body(d, ip, lo, hi, q):
        x, k = view(d, 3, np.float32), view(d, 5, np.float32)
        sums_of_rows(x, k, ip[1], lo, hi, q, f64_view(d, 7), view(d, 9, np.float32))

    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def stats(data):
        each_chunk(data, 5, stats_body)

    # normalize: arrays x, side, y, coef (mean, a, offset), ip (rows, C, threads, side, relu)
    @inline
    def normalize_body(d, ip, lo, hi, q):
        wide_vectors()
        c, has_side, relu = ip[1], ip[3], ip[4]
        x, s, y = view(d, 3, np.float32), view(d, 5, np.float32), view(d, 7, np.float32)
        coef = view(d, 9, np.float32)
        for r in range(lo, hi):
            for g0 in range(0, c, 16):
                o = r * c + g0
                v = vfma(vsub(vload(x, o), vload(coef, g0)), vload(coef, c + g0),
                         vload(coef, 2 * c + g0))
                if has_side:
                    v = vadd(v, vload(s, o))
                if relu:
                    v = vrelu(v)
                vstore(y, o, v)

    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def normalize_kernel(data):
        each_chunk(data, 5, normalize_body)

    return (stats.address, normalize_kernel.address)
