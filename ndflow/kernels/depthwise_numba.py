"""DepthwiseConv2dNativeBackpropFilter of float32 NHWC tensors with a channel multiplier of 1
(Keras' DepthwiseConv2D and SeparableConv2D defaults) in 16-lane vectors along the channels,
blocks of 16 channels claimed by the threads of ATen's OpenMP team (kernels/omp_pool.py).

ATen reaches this gradient through a grouped convolution with one channel a group, which ran
at 3.5-70 GFLOP/s here (2-core Zen 5): [16, 3, 3, 1152] with a 5x5 window 2.4 ms, [16, 48,
48, 96] 3x3 1.9 ms; EfficientNet-B0's step spent ~15 ms of 145 in it. Each block of 16
channels multiplies the gradient's 16 channels by each window tap's 16 input channels into
the filter gradient: per window tap, the output pixels whose tap lands in the input (their
rows and columns computed once, no test per pixel) summed in four vector accumulators.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import torch

from ndflow.kernels import omp_pool, simd_numba
from ndflow.kernels.build_once import built_once

LANES = 16
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = wide_vectors = None
vload = vstore = vfma = vsplat = vadd = None
filter_block = None


def applies(x: torch.Tensor, g: torch.Tensor, multiplier: int) -> bool:
    """Whether NHWC `x` and its output gradient `g` take this kernel."""
    return (multiplier == 1 and x.dtype == g.dtype == torch.float32
            and x.device.type == "cpu" and g.device.type == "cpu" and x.dim() == 4
            and x.numel() > 0 and g.numel() > 0
            and importlib.util.find_spec("numba") is not None
            and omp_pool.launcher() is not None and _callback() is not None)


def backprop_filter(x: torch.Tensor, g: torch.Tensor, kh: int, kw: int, stride, dilation,
                    pads) -> torch.Tensor:
    """The filter gradient [kh, kw, C, 1] for NHWC input `x` [N, H, W, C] and output
    gradient `g` [N, OH, OW, C]; `pads` = (top, bottom, left, right)."""
    x, g = x.contiguous(), g.contiguous()
    n, h, w, c = x.shape
    _, oh, ow, _ = g.shape
    out = torch.zeros((kh, kw, c, 1), dtype=torch.float32)
    params = np.array([n, h, w, c, oh, ow, kh, kw, stride[0], stride[1], dilation[0],
                       dilation[1], pads[0], pads[2]], np.int64)
    blocks = -(-c // LANES)
    threads = max(1, min(torch.get_num_threads(), blocks))
    omp_pool.run_chunks(_callback(), blocks, 1, [x, g, out, params], threads)
    return out


_callback = built_once(lambda: _build())


def _build():
    nb = omp_pool.callback_builder()
    if nb is None:
        return None
    numba, cfunc, types = nb.numba, nb.cfunc, nb.types

    global claim_chunk, address_as_pointer, carray, wide_vectors, vload, vstore, vfma, vsplat
    global vadd
    global filter_block
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    ops = simd_numba.vector_ops()
    wide_vectors, vload, vstore, vfma, vsplat, vadd = (ops.wide_vectors, ops.vload, ops.vstore,
                                                       ops.vfma, ops.vsplat, ops.vadd)

    @numba.njit(inline="always")
    def filter_block(x, g, out, p, c0):
        """The filter gradient's channels c0..c0 + 16 (the last block: those left, one at a
        time): per window tap, the sum over the output pixels whose tap lands inside the
        input, in four vector accumulators along each row."""
        n, h, w, c, oh, ow, kh, kw = p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
        sh, sw, dh, dw, pt, pl = p[8], p[9], p[10], p[11], p[12], p[13]
        left = c - c0
        for a in range(kh):
            i_lo = max(0, -((a * dh - pt) // sh))   # first row with y = i sh + a dh - pt >= 0
            i_hi = min(oh, (h - 1 - a * dh + pt) // sh + 1) if h - 1 - a * dh + pt >= 0 else 0
            for e in range(kw):
                j_lo = max(0, -((e * dw - pl) // sw))
                j_hi = min(ow, (w - 1 - e * dw + pl) // sw + 1) if w - 1 - e * dw + pl >= 0 \
                    else 0
                o = (a * kw + e) * c + c0
                if left < LANES:
                    for k in range(left):
                        total = np.float32(0.0)
                        for b in range(n):
                            for i in range(i_lo, i_hi):
                                y = i * sh + a * dh - pt
                                for j in range(j_lo, j_hi):
                                    z = j * sw + e * dw - pl
                                    total += x[((b * h + y) * w + z) * c + c0 + k] * \
                                        g[((b * oh + i) * ow + j) * c + c0 + k]
                        out[o + k] = total
                    continue
                s0 = s1 = s2 = s3 = vsplat(np.float32(0.0))
                for b in range(n):
                    for i in range(i_lo, i_hi):
                        y = i * sh + a * dh - pt
                        xr = ((b * h + y) * w + e * dw - pl) * c + c0
                        gr = (b * oh + i) * ow * c + c0
                        xs = sw * c
                        j = j_lo
                        while j + 4 <= j_hi:
                            s0 = vfma(vload(x, xr + j * xs), vload(g, gr + j * c), s0)
                            s1 = vfma(vload(x, xr + (j + 1) * xs), vload(g, gr + (j + 1) * c),
                                      s1)
                            s2 = vfma(vload(x, xr + (j + 2) * xs), vload(g, gr + (j + 2) * c),
                                      s2)
                            s3 = vfma(vload(x, xr + (j + 3) * xs), vload(g, gr + (j + 3) * c),
                                      s3)
                            j += 4
                        while j < j_hi:
                            s0 = vfma(vload(x, xr + j * xs), vload(g, gr + j * c), s0)
                            j += 1
                vstore(out, o, vadd(vadd(s0, s1), vadd(s2, s3)))

    # data = [counter, blocks, 1, (address, length) of x, g, out, params, finished]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def depthwise_filter(data):
        wide_vectors()
        d = carray(data, 12, dtype=np.int64)
        x = carray(address_as_pointer(d[3], np.float32), d[4])
        g = carray(address_as_pointer(d[5], np.float32), d[6])
        out = carray(address_as_pointer(d[7], np.float32), d[8])
        p = carray(address_as_pointer(d[9], np.int64), d[10])
        q = claim_chunk(data)
        while q < d[1]:
            filter_block(x, g, out, p, q * LANES)
            q = claim_chunk(data)

    return depthwise_filter.address
