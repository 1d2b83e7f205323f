"""Training-mode batch normalization of channels-last float32 CPU tensors in two passes each
way, on ATen's OpenMP team (kernels/omp_pool.py): FusedBatchNormV3 and FusedBatchNormGradV3
(kernels/nn_norm.py) where x is [rows, C] with C a multiple of 16 (one or more 16-lane
vectors per row: ResNets' 16 to 2048 channels, a DCGAN's 64 to 1024).

ATen's channels-last kernels read x three times forward (the mean, the variance about it,
the normalization) and spend most of their time outside the memory system at 16 channels:
ResNet-20's 128x32x32x16 layers took 1.5 ms forward and 2.3 ms backward in the training
step, against ~0.6 and ~1.0 ms of memory traffic. Here:

- forward: one pass sums x - k and (x - k)^2 per channel (k, the first row, a shift that
  keeps the sum of squares from cancelling when the mean is far from zero), in float32
  over chunks of CHUNK_ROWS rows and in float64 across chunks; then one pass writes
  y = x * a + b (a = scale / sqrt(var + eps), b = offset - mean * a), with the ReLU of
  `_FusedBatchNormEx` applied on the way when asked;
- backward: one pass sums dy and dy * (x - mean) per channel, then one pass writes
  dx = dy * A + x * B + D with the per-channel A, B, D of the batch-norm gradient.

Rows are split in fixed chunks, so the sums' order does not depend on the thread count.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool, simd_numba
from ndflow.kernels.build_once import built_once

LANES = simd_numba.LANES
CHUNK_ROWS = 256     # rows a thread sums (in float32) or writes at a time
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = None
wide_vectors = vload = vstore = vsplat = vzero = vfma = vadd = vsub = vmul = vrelu = None

_callbacks = built_once(lambda: _build() if omp_pool.launcher() is not None else None)


def applies(x: torch.Tensor, channels: int) -> bool:
    """Whether x (channels last, `channels` the last dimension) takes these kernels."""
    return (x.dtype == torch.float32 and x.device.type == "cpu" and x.is_contiguous()
            and channels % LANES == 0 and x.numel() // max(channels, 1) >= 2
            and _callbacks() is not None)


def _run(callback: int, rows: int, arrays: list) -> None:
    chunks = -(-rows // CHUNK_ROWS)
    omp_pool.run_chunks(callback, chunks, 1, arrays, min(torch.get_num_threads(), chunks))


def _sums(a, b, k, rows: int, channels: int, centered: bool) -> np.ndarray:
    """The per-chunk float32 sums of a statistics pass, added in float64: (2, C)."""
    chunks = -(-rows // CHUNK_ROWS)
    partial = np.empty((chunks, 2, channels), dtype=np.float32)
    dims = np.array([rows, channels, CHUNK_ROWS, int(centered)], dtype=np.int64)
    _run(_callbacks()[0], rows, [a, b, k, partial, dims])
    return partial.sum(axis=0, dtype=np.float64)


def forward(x: torch.Tensor, scale, offset, eps: float, relu: bool = False):
    """(y, batch mean, biased batch variance) of x [..., C] (`applies(x, C)`); the mean and
    variance are float64 NumPy arrays, y a new float32 tensor."""
    c = x.shape[-1]
    rows = x.numel() // c
    flat = x.view(rows, c)
    shift = flat[0].clone()
    s1, s2 = _sums(flat, flat, shift, rows, c, centered=True)
    d = s1 / rows
    mean = shift.numpy().astype(np.float64) + d
    var = np.maximum(s2 / rows - d * d, 0.0)
    a = scale.double().numpy() / np.sqrt(var + eps)
    b = offset.double().numpy() - mean * a
    y = torch.empty_like(x)
    coef = np.stack([a, b]).astype(np.float32)
    dims = np.array([rows, c, CHUNK_ROWS, int(relu)], dtype=np.int64)
    _run(_callbacks()[1], rows, [flat, y, coef, dims])
    return y, mean, var


def backward(dy: torch.Tensor, x: torch.Tensor, scale, mean, var, eps: float):
    """(dx, dscale, doffset) of training-mode batch normalization of x [..., C] given the
    batch mean and biased variance it used (float32 tensors of C)."""
    c = x.shape[-1]
    rows = x.numel() // c
    flat, g = x.view(rows, c), dy.contiguous().view(rows, c)
    m32 = mean.float().contiguous()
    sum_dy, sum_dyx = _sums(g, flat, m32, rows, c, centered=False)
    m = m32.numpy().astype(np.float64)
    invstd = 1.0 / np.sqrt(var.double().numpy() + eps)
    w = scale.double().numpy()
    a = w * invstd
    b = -a * invstd * invstd * sum_dyx / rows
    d = -a * sum_dy / rows - b * m
    dx = torch.empty_like(x)
    coef = np.stack([a, b, d]).astype(np.float32)
    dims = np.array([rows, c, CHUNK_ROWS, 0], dtype=np.int64)
    _run(_callbacks()[2], rows, [g, flat, dx, coef, dims])
    return (dx, torch.from_numpy((sum_dyx * invstd).astype(np.float32)),
            torch.from_numpy(sum_dy.astype(np.float32)))


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such kernel, not with ndflow
    except ImportError:
        return None
    from numba import cfunc, types  # noqa: PLC0415
    global claim_chunk, address_as_pointer, carray
    global wide_vectors, vload, vstore, vsplat, vzero, vfma, vadd, vsub, vmul, vrelu
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    ops = simd_numba.vector_ops()
    wide_vectors, vload, vstore, vsplat, vzero = (ops.wide_vectors, ops.vload, ops.vstore,
                                                  ops.vsplat, ops.vzero)
    vfma, vadd, vsub, vmul, vrelu = ops.vfma, ops.vadd, ops.vsub, ops.vmul, ops.vrelu
    f32, i64 = np.float32, np.int64

    @numba.njit(inline="always")
    def term(a, b, k, o, centered):
        """(v, w) of one vector: (a - k, a - k), or (a, b - k)."""
        if centered:
            v = vsub(vload(a, o), k)
            return v, v
        return vload(a, o), vsub(vload(b, o), k)

    @numba.njit(inline="always")
    def vector_sums(a, b, k, out, lo, hi, c, j, q, centered):
        """Over rows lo..hi, the 16 channels from j: sum(v) and sum(v * w) (`term`), stored
        at chunk q's partial sums."""
        kj = vload(k, j)
        s, t = vzero(), vzero()
        for r in range(lo, hi):
            v, w = term(a, b, kj, r * c + j, centered)
            s, t = vadd(s, v), vfma(v, w, t)
        vstore(out, q * 2 * c + j, s)
        vstore(out, q * 2 * c + c + j, t)

    @numba.njit(inline="always")
    def four_vector_sums(a, b, k, out, lo, hi, c, j, q, centered):
        """`vector_sums` of the 64 channels from j, a row's four vectors at a time (rows of
        64 channels and more are read in order)."""
        k0, k1, k2, k3 = vload(k, j), vload(k, j + 16), vload(k, j + 32), vload(k, j + 48)
        s0, s1, s2, s3 = vzero(), vzero(), vzero(), vzero()
        t0, t1, t2, t3 = vzero(), vzero(), vzero(), vzero()
        for r in range(lo, hi):
            o = r * c + j
            v, w = term(a, b, k0, o, centered)
            s0, t0 = vadd(s0, v), vfma(v, w, t0)
            v, w = term(a, b, k1, o + 16, centered)
            s1, t1 = vadd(s1, v), vfma(v, w, t1)
            v, w = term(a, b, k2, o + 32, centered)
            s2, t2 = vadd(s2, v), vfma(v, w, t2)
            v, w = term(a, b, k3, o + 48, centered)
            s3, t3 = vadd(s3, v), vfma(v, w, t3)
        base = q * 2 * c + j
        vstore(out, base, s0)
        vstore(out, base + 16, s1)
        vstore(out, base + 32, s2)
        vstore(out, base + 48, s3)
        vstore(out, base + c, t0)
        vstore(out, base + c + 16, t1)
        vstore(out, base + c + 32, t2)
        vstore(out, base + c + 48, t3)

    # data = [counter, chunks, 1, (address, length) of a, b, k (C), the partial sums
    #         (chunks x 2 x C), dims (rows, C, chunk rows, centered)]: per chunk and
    #         channel, sum(x - k) and sum((x - k)^2) (centered: a = b = x, k the shift), or
    #         sum(dy) and sum(dy * (x - mean)) (a = dy, b = x, k the mean)
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def sums(data):
        wide_vectors()
        d = carray(data, 13, dtype=i64)
        chunks = d[1]
        dims = carray(address_as_pointer(d[11], i64), 4)
        rows, c, per, centered = dims[0], dims[1], dims[2], dims[3] != 0
        a = carray(address_as_pointer(d[3], f32), rows * c)
        b = carray(address_as_pointer(d[5], f32), rows * c)
        k = carray(address_as_pointer(d[7], f32), c)
        out = carray(address_as_pointer(d[9], f32), chunks * 2 * c)
        q = claim_chunk(data)
        while q < chunks:
            lo, hi = q * per, min(rows, (q + 1) * per)
            j = 0
            while j + 64 <= c:
                four_vector_sums(a, b, k, out, lo, hi, c, j, q, centered)
                j += 64
            while j < c:
                vector_sums(a, b, k, out, lo, hi, c, j, q, centered)
                j += 16
            q = claim_chunk(data)

    # data = [counter, chunks, 1, (address, length) of x, y, coefficients (a, b: 2 x C),
    #         dims (rows, C, chunk rows, relu)]: y = x * a + b per channel (then max(y, 0))
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def normalize(data):
        wide_vectors()
        d = carray(data, 11, dtype=i64)
        chunks = d[1]
        dims = carray(address_as_pointer(d[9], i64), 4)
        rows, c, per, relu = dims[0], dims[1], dims[2], dims[3] != 0
        x = carray(address_as_pointer(d[3], f32), rows * c)
        y = carray(address_as_pointer(d[5], f32), rows * c)
        coef = carray(address_as_pointer(d[7], f32), 2 * c)
        q = claim_chunk(data)
        while q < chunks:
            lo, hi = q * per, min(rows, (q + 1) * per)
            if c < 64:   # a vector's coefficients in registers over the chunk's rows
                for j in range(0, c, 16):
                    a, b = vload(coef, j), vload(coef, c + j)
                    for r in range(lo, hi):
                        v = vfma(vload(x, r * c + j), a, b)
                        vstore(y, r * c + j, vrelu(v) if relu else v)
            else:        # long rows read in order
                for r in range(lo, hi):
                    for j in range(0, c, 16):
                        v = vfma(vload(x, r * c + j), vload(coef, j), vload(coef, c + j))
                        vstore(y, r * c + j, vrelu(v) if relu else v)
            q = claim_chunk(data)

    # data = [counter, chunks, 1, (address, length) of dy, x, dx, coefficients (A, B, D:
    #         3 x C), dims]: dx = dy * A + x * B + D per channel
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def input_gradient(data):
        wide_vectors()
        d = carray(data, 13, dtype=i64)
        chunks = d[1]
        dims = carray(address_as_pointer(d[11], i64), 4)
        rows, c, per = dims[0], dims[1], dims[2]
        g = carray(address_as_pointer(d[3], f32), rows * c)
        x = carray(address_as_pointer(d[5], f32), rows * c)
        dx = carray(address_as_pointer(d[7], f32), rows * c)
        coef = carray(address_as_pointer(d[9], f32), 3 * c)
        q = claim_chunk(data)
        while q < chunks:
            lo, hi = q * per, min(rows, (q + 1) * per)
            if c < 64:   # as normalize's
                for j in range(0, c, 16):
                    ca, cb, cd = vload(coef, j), vload(coef, c + j), vload(coef, 2 * c + j)
                    for r in range(lo, hi):
                        o = r * c + j
                        vstore(dx, o, vfma(vload(g, o), ca, vfma(vload(x, o), cb, cd)))
            else:
                for r in range(lo, hi):
                    for j in range(0, c, 16):
                        o = r * c + j
                        vstore(dx, o, vfma(vload(g, o), vload(coef, j),
                                           vfma(vload(x, o), vload(coef, c + j),
                                                vload(coef, 2 * c + j))))
            q = claim_chunk(data)

    return sums.address, normalize.address, input_gradient.address
