"""Batch normalization of channels-last float32 CPU tensors in 16-lane vectors on ATen's
OpenMP team (kernels/omp_pool.py), with `_FusedBatchNormEx`'s side input added and its ReLU
applied as y is written.

ATen's channels-last batch norm ran at ~40% of this 2-core Zen 5's cache bandwidth on 16
channels (ResNet-20's first stage, [128, 32, 32, 16]: 606-639 us for the training forward),
and the side input and the ReLU were a pass each after it. Here training is two passes: the
statistics (sums of x and x^2 shifted by x's first row, so that a mean far from zero does
not cancel the variance away; the thread finishing the last block combines them) and y
(260-408 us for the same tensor); inference is the second pass alone.

Rows of up to 64 channels (four vectors, read side by side and held in registers) are cut
into blocks of BLOCK_ROWS rows. A block's per-channel sums are float32; the blocks' sums are
added in float64 in block order, so the result depends on the shape only, not on the thread
count. Wider rows run ATen's kernel: sweeping them 64 channels at a time read them at a
stride (a Dense layer's [64, 12544] batch norm: 360 us against ATen's 251; [2048, 256] 180
against 94), where ATen's reads them whole.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool, simd_numba
from ndflow.kernels.build_once import built_once

LANES = simd_numba.LANES
BLOCK_ROWS = 1024   # rows of a block: the length of a float32 run of sums
MAX_CHANNELS = 64   # four 16-lane vectors of a row, the accumulators in registers
# Tensors from this size on run here: a smaller one's team launch costs more than it saves
MIN_ELEMENTS = 1 << 15
SIDE, RELU, MIX = 1, 2, 4     # flags of the callbacks' parameters
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = wide_vectors = None
store_pair = combine_statistics = count_finished = None
vload = vstore = vzero = vadd = vsub = vfma = vrelu = None


def applies(x: torch.Tensor) -> bool:
    """Whether `x` (channels last) is this module's: contiguous float32 on the CPU, 16, 32,
    48 or 64 channels, at least MIN_ELEMENTS values, numba and ATen's OpenMP found."""
    return (x.dtype == torch.float32 and x.device.type == "cpu" and x.dim() >= 2
            and x.shape[-1] % LANES == 0 and 0 < x.shape[-1] <= MAX_CHANNELS
            and x.is_contiguous()
            and x.numel() >= MIN_ELEMENTS and _callbacks() is not None)


def _layout(x: torch.Tensor, flags: int = 0) -> tuple:
    """(rows, blocks, the callbacks' int64 parameters [rows, channels, rows a block, flags])."""
    c = x.shape[-1]
    rows = x.numel() // c
    return rows, -(-rows // BLOCK_ROWS), np.array([rows, c, BLOCK_ROWS, flags], dtype=np.int64)


def _run(callback: int, blocks: int, arrays: list) -> None:
    omp_pool.run_chunks(callback, blocks, 1, arrays, min(torch.get_num_threads(), blocks))


def _vector(c: int) -> torch.Tensor:
    return torch.empty(c, dtype=torch.float32)


def train(x: torch.Tensor, scale, offset, mean, var, epsilon: float, factor: float,
          side: torch.Tensor | None, relu: bool) -> tuple:
    """FusedBatchNormV3's training outputs (y, batch_mean, batch_variance, reserve_space_1,
    reserve_space_2) with `side` added to y and a ReLU applied if `relu`: the statistics in
    one pass (the thread finishing the last block combines them), y in another. `mean` and
    `var` are the running statistics mixed in by `factor` (empty when factor is 1)."""
    mix = factor != 1.0 and mean.numel() > 0
    rows, blocks, params = _layout(
        x, (SIDE if side is not None else 0) | (RELU if relu else 0) | (MIX if mix else 0))
    c = x.shape[-1]
    partial = np.empty((2, blocks, c), dtype=np.float32)
    outs = [_vector(c) for _ in range(5)]   # out mean, out variance, mean, variance, factor
    numbers = np.array([epsilon, factor], dtype=np.float64)
    _run(_callbacks()[0], blocks, [x, scale, mean if mix else scale, var if mix else scale,
                                   partial, numbers, *outs, params])
    y = torch.empty_like(x)
    _run(_callbacks()[1], blocks, [x, outs[2], outs[4], offset,
                                   side if side is not None else x, y, params])
    return (y, *outs[:4])


def infer(x: torch.Tensor, scale, offset, mean, var, epsilon: float,
          side: torch.Tensor | None, relu: bool) -> torch.Tensor:
    """Inference-mode y for the given statistics, `side` added and a ReLU applied if `relu`."""
    _, blocks, params = _layout(x, (SIDE if side is not None else 0) | (RELU if relu else 0))
    factor = scale * torch.rsqrt(var + epsilon)
    y = torch.empty_like(x)
    _run(_callbacks()[1], blocks, [x, mean, factor, offset, side if side is not None else x, y,
                                   params])
    return y


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such batch norm, not with ndflow
    except ImportError:
        return None
    from numba import cfunc, types  # noqa: PLC0415
    global claim_chunk, address_as_pointer, carray, wide_vectors, count_finished
    global vload, vstore, vzero, vadd, vsub, vfma, vrelu, store_pair, combine_statistics
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    ops = simd_numba.vector_ops()
    wide_vectors, vload, vstore, vzero = ops.wide_vectors, ops.vload, ops.vstore, ops.vzero
    vadd, vsub, vfma, vrelu = ops.vadd, ops.vsub, ops.vfma, ops.vrelu
    count_finished = omp_pool.finish_intrinsic()
    f32 = np.float32

    @numba.njit(inline="always")
    def store_pair(partial, o, second, w, a0, b0, a1, b1, a2, b2, a3, b3):
        """A block's w (16..64) channels of two sums: a at partial[o:], b at
        partial[second + o:]."""
        vstore(partial, o, a0)
        vstore(partial, second + o, b0)
        if w > 16:
            vstore(partial, o + 16, a1)
            vstore(partial, second + o + 16, b1)
        if w > 32:
            vstore(partial, o + 32, a2)
            vstore(partial, second + o + 32, b2)
        if w > 48:
            vstore(partial, o + 48, a3)
            vstore(partial, second + o + 48, b3)

    @numba.njit(inline="always")
    def combine_statistics(d, rows, c, blocks, flags, x, partial):
        """The blocks' shifted sums added in block order in float64: the batch's mean and
        biased variance, the outputs' (mixed) running statistics, scale * invstd."""
        scale = carray(address_as_pointer(d[5], f32), c)
        running_mean = carray(address_as_pointer(d[7], f32), c)
        running_var = carray(address_as_pointer(d[9], f32), c)
        numbers = carray(address_as_pointer(d[13], np.float64), 2)
        eps, factor = numbers[0], numbers[1]
        out_mean = carray(address_as_pointer(d[15], f32), c)
        out_var = carray(address_as_pointer(d[17], f32), c)
        mean = carray(address_as_pointer(d[19], f32), c)
        variance = carray(address_as_pointer(d[21], f32), c)
        scaled = carray(address_as_pointer(d[23], f32), c)
        for ch in range(c):
            s1, s2 = 0.0, 0.0
            for b in range(blocks):
                s1 += partial[b * c + ch]
                s2 += partial[(blocks + b) * c + ch]
            moved = s1 / rows
            var = max(s2 / rows - moved * moved, 0.0)
            m = x[ch] + moved
            unbiased = var * rows / (rows - 1) if rows > 1 else 0.0
            mean[ch], variance[ch] = m, var
            scaled[ch] = scale[ch] / np.sqrt(var + eps)
            if flags & 4:
                out_mean[ch] = (1.0 - factor) * running_mean[ch] + factor * m
                out_var[ch] = (1.0 - factor) * running_var[ch] + factor * unbiased
            else:
                out_mean[ch], out_var[ch] = m, unbiased

    # data = [counter, blocks, 1, (address, length) of x, scale, running mean, running
    #         variance, partial sums, (epsilon, factor), out mean, out variance, mean,
    #         variance, scale * invstd, params, blocks finished]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def statistics_blocks(data):
        wide_vectors()
        d = carray(data, 28, dtype=np.int64)
        p = carray(address_as_pointer(d[25], np.int64), 4)
        rows, w, per, flags, blocks = p[0], p[1], p[2], p[3], d[1]
        x = carray(address_as_pointer(d[3], f32), rows * w)
        partial = carray(address_as_pointer(d[11], f32), 2 * blocks * w)
        # x's first row is the shift
        s0, s1 = vload(x, 0), vload(x, 16 if w > 16 else 0)
        s2, s3 = vload(x, 32 if w > 32 else 0), vload(x, 48 if w > 48 else 0)
        q = claim_chunk(data)
        while q < blocks:
            lo, hi = q * per, min(rows, q * per + per)
            a0, a1, a2, a3 = vzero(), vzero(), vzero(), vzero()
            b0, b1, b2, b3 = vzero(), vzero(), vzero(), vzero()
            for r in range(lo, hi):
                i = r * w
                v = vsub(vload(x, i), s0)
                a0, b0 = vadd(a0, v), vfma(v, v, b0)
                if w > 16:
                    v = vsub(vload(x, i + 16), s1)
                    a1, b1 = vadd(a1, v), vfma(v, v, b1)
                if w > 32:
                    v = vsub(vload(x, i + 32), s2)
                    a2, b2 = vadd(a2, v), vfma(v, v, b2)
                if w > 48:
                    v = vsub(vload(x, i + 48), s3)
                    a3, b3 = vadd(a3, v), vfma(v, v, b3)
            store_pair(partial, q * w, blocks * w, w, a0, b0, a1, b1, a2, b2, a3, b3)
            if count_finished(data, 27) == blocks - 1:
                combine_statistics(d, rows, w, blocks, flags, x, partial)
            q = claim_chunk(data)

    # data = [counter, blocks, 1, x, mean, factor, offset, side, y, params, done]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def normalize_blocks(data):
        wide_vectors()
        d = carray(data, 18, dtype=np.int64)
        p = carray(address_as_pointer(d[15], np.int64), 4)
        rows, c, per, flags = p[0], p[1], p[2], p[3]
        x = carray(address_as_pointer(d[3], f32), rows * c)
        mean = carray(address_as_pointer(d[5], f32), c)
        factor = carray(address_as_pointer(d[7], f32), c)
        offset = carray(address_as_pointer(d[9], f32), c)
        side = carray(address_as_pointer(d[11], f32), rows * c)
        y = carray(address_as_pointer(d[13], f32), rows * c)
        has_side, relu = (flags & 1) != 0, (flags & 2) != 0
        q = claim_chunk(data)
        while q < d[1]:
            lo, hi = q * per, min(rows, q * per + per)
            for r in range(lo, hi):
                for j in range(0, c, 16):
                    i = r * c + j
                    v = vfma(vsub(vload(x, i), vload(mean, j)), vload(factor, j),
                             vload(offset, j))
                    if has_side:
                        v = vadd(v, vload(side, i))
                    if relu:
                        v = vrelu(v)
                    vstore(y, i, v)
            q = claim_chunk(data)

    return statistics_blocks.address, normalize_blocks.address


_callbacks = built_once(lambda: _build() if omp_pool.launcher() is not None else None)
