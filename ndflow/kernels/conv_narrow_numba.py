"""Convolutions with few output channels (1-4: a segmentation head, an autoencoder's or a
generator's last layer) and their filter and input gradients, on NHWC float32 CPU tensors
whose input channels fill 16-lane vectors, in numba on ATen's OpenMP team
(kernels/omp_pool.py).

oneDNN's direct convolution blocks output channels 16 at a time, so with one output channel
it computes 16 to keep 1: a denoising autoencoder's last Conv2D(1, 3) on [32, 28, 28, 32]
(14.5 MFLOP) took 593 us forward and 557 us for its filter gradient in the training step.
Here the forward keeps, for four output pixels side by side, one vector accumulator per
output channel, summing over the taps and the input channels' vectors, and adds its lanes at
the end; the filter gradient keeps, per tap, output channel and vector of input channels,
four accumulators along each output row; the input gradient, per input pixel, a vector
accumulator per 16 input channels summing each tap's output-gradient values times the
filter's rows. The convolutions' tuner (autotune.py) times them
against ATen's algorithms as one more candidate (VECTOR), per shape.

Per image the filter gradient's sums are float32 (in a fixed order); the images' sums are
added in float64 in image order, so the value does not depend on the thread count.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool, simd_numba
from ndflow.kernels.build_once import built_once

LANES = simd_numba.LANES
MAX_OUTPUTS = 4     # output channels held in registers (four pixels each)
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = wide_vectors = None
vload = vfma = vzero = vsum = vadd = vsplat = vstore = None
taps4 = filter_sums = store4 = geometry = None


def applies(x: torch.Tensor, w_shape, channels_of_x: int = 2) -> bool:
    """Whether a convolution by an HWIO filter of `w_shape` is this module's, `x` its NHWC
    input (or, `channels_of_x` 3, its output gradient): float32 CPU tensors, 1-4 output
    channels, input channels a multiple of 16, numba and ATen's OpenMP found."""
    kh, kw, cin, cout = (int(v) for v in w_shape)
    return (x.dtype == torch.float32 and x.device.type == "cpu" and x.dim() == 4
            and x.is_contiguous() and x.shape[3] == w_shape[channels_of_x]
            and cin % LANES == 0 and cin > 0 and 1 <= cout <= MAX_OUTPUTS and kh > 0
            and kw > 0 and _callbacks() is not None)


def _params(x_shape, oh, ow, kh, kw, cout, stride, dilation, pads) -> np.ndarray:
    n, h, w, c = x_shape
    return np.array([n, h, w, c, oh, ow, kh, kw, stride[0], stride[1], dilation[0],
                     dilation[1], pads[0], pads[2], cout], dtype=np.int64)


def forward(x: torch.Tensor, w: torch.Tensor, stride, dilation, pads, oh: int, ow: int,
            bias: torch.Tensor | None = None) -> torch.Tensor:
    """The convolution (+ bias) of `x` by the HWIO `w` with `pads` (top, bottom, left,
    right) into an [n, oh, ow, cout] tensor (`applies` holds)."""
    kh, kw, _, cout = w.shape
    n = x.shape[0]
    y = torch.empty((n, oh, ow, cout), dtype=torch.float32)
    if y.numel() == 0:
        return y
    wt = w.permute(0, 1, 3, 2).contiguous()    # [kh, kw, cout, cin]: input channels in lanes
    b = bias.contiguous() if bias is not None else torch.zeros(cout, dtype=torch.float32)
    params = _params(x.shape, oh, ow, kh, kw, cout, stride, dilation, pads)
    rows = n * oh
    omp_pool.run_chunks(_callbacks()[0], rows, 1, [x, wt, b, y, params],
                        min(torch.get_num_threads(), rows))
    return y


def backprop_filter(x: torch.Tensor, g: torch.Tensor, kh: int, kw: int, stride, dilation,
                    pads) -> torch.Tensor:
    """The HWIO filter gradient of the convolution of `x` whose output gradient is the
    NHWC `g` (1-4 channels)."""
    n, _, _, c = x.shape
    _, oh, ow, cout = g.shape
    partial = np.zeros((n, kh * kw * cout * c), dtype=np.float32)
    if n and oh and ow:
        params = _params(x.shape, oh, ow, kh, kw, cout, stride, dilation, pads)
        omp_pool.run_chunks(_callbacks()[1], n, 1, [x, g.contiguous(), partial, params],
                            min(torch.get_num_threads(), n))
    dw = partial.sum(0, dtype=np.float64).astype(np.float32).reshape(kh, kw, cout, c)
    return torch.from_numpy(dw).permute(0, 1, 3, 2).contiguous()


def backprop_input(g: torch.Tensor, w: torch.Tensor, h: int, wd: int, stride, dilation,
                   pads) -> torch.Tensor:
    """The [n, h, wd, cin] input gradient of the convolution by the HWIO `w` whose output
    gradient is the NHWC `g` (1-4 channels)."""
    kh, kw, cin, cout = w.shape
    n, oh, ow, _ = g.shape
    dx = torch.empty((n, h, wd, cin), dtype=torch.float32)
    if dx.numel() == 0:
        return dx
    wt = w.permute(0, 1, 3, 2).contiguous()    # [kh, kw, cout, cin]: input channels in lanes
    params = _params((n, h, wd, cin), oh, ow, kh, kw, cout, stride, dilation, pads)
    omp_pool.run_chunks(_callbacks()[2], n * h, 1, [g, wt, dx, params],
                        min(torch.get_num_threads(), n * h))
    return dx


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such convolution, not with ndflow
    except ImportError:
        return None
    from numba import cfunc, types  # noqa: PLC0415
    global claim_chunk, address_as_pointer, carray, wide_vectors
    global vload, vfma, vzero, vsum, vadd, vsplat, vstore, taps4, filter_sums, store4, geometry
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    ops = simd_numba.vector_ops()
    wide_vectors, vload, vfma, vzero, vsum = (ops.wide_vectors, ops.vload, ops.vfma,
                                              ops.vzero, ops.vsum_tree)
    vadd, vsplat, vstore = ops.vadd, ops.vsplat, ops.vstore
    f32 = np.float32

    @numba.njit(inline="always")
    def geometry(address):
        """The convolution's 15 int64 parameters at `address` (`_params`' order)."""
        p = carray(address_as_pointer(address, np.int64), 15)
        return (p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11],
                p[12], p[13], p[14])

    @numba.njit(inline="always")
    def taps4(x, row, z0, sw, w, c, cv, wv, a0, a1, a2, a3, pixels):
        """Four output pixels' accumulators after one tap's vector `wv` of input channels
        cv..cv + 16: pixel p reads input column z0 + p * sw of the input row at `row`, when
        it is one of the `pixels` computed and inside the image."""
        if pixels == 4 and z0 >= 0 and z0 + 3 * sw < w:    # inside the image: no tests
            o = row + z0 * c + cv
            a0 = vfma(vload(x, o), wv, a0)
            a1 = vfma(vload(x, o + sw * c), wv, a1)
            a2 = vfma(vload(x, o + 2 * sw * c), wv, a2)
            a3 = vfma(vload(x, o + 3 * sw * c), wv, a3)
            return a0, a1, a2, a3
        if 0 <= z0 < w:
            a0 = vfma(vload(x, row + z0 * c + cv), wv, a0)
        z = z0 + sw
        if pixels > 1 and 0 <= z < w:
            a1 = vfma(vload(x, row + z * c + cv), wv, a1)
        z += sw
        if pixels > 2 and 0 <= z < w:
            a2 = vfma(vload(x, row + z * c + cv), wv, a2)
        z += sw
        if pixels > 3 and 0 <= z < w:
            a3 = vfma(vload(x, row + z * c + cv), wv, a3)
        return a0, a1, a2, a3

    @numba.njit(inline="always")
    def store4(y, o, step, pixels, bias, a0, a1, a2, a3):
        """The `pixels` (1-4) outputs y[o], y[o + step], ...: each accumulator's lanes added,
        plus the bias."""
        y[o] = vsum(a0) + bias
        if pixels > 1:
            y[o + step] = vsum(a1) + bias
        if pixels > 2:
            y[o + 2 * step] = vsum(a2) + bias
        if pixels > 3:
            y[o + 3 * step] = vsum(a3) + bias

    # data = [counter, n * oh, 1, (address, length) of x, w [kh, kw, cout, cin], bias, y,
    #         params, done]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def forward_rows(data):
        wide_vectors()
        d = carray(data, 14, dtype=np.int64)
        n, h, w, c, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, cout = geometry(d[11])
        x = carray(address_as_pointer(d[3], f32), n * h * w * c)
        wt = carray(address_as_pointer(d[5], f32), kh * kw * cout * c)
        bias = carray(address_as_pointer(d[7], f32), cout)
        y = carray(address_as_pointer(d[9], f32), n * oh * ow * cout)
        q = claim_chunk(data)
        while q < d[1]:
            b, i = q // oh, q % oh
            for j in range(0, ow, 4):
                pixels = min(4, ow - j)
                a00, a01, a02, a03 = vzero(), vzero(), vzero(), vzero()
                a10, a11, a12, a13 = vzero(), vzero(), vzero(), vzero()
                a20, a21, a22, a23 = vzero(), vzero(), vzero(), vzero()
                a30, a31, a32, a33 = vzero(), vzero(), vzero(), vzero()
                for t in range(kh):
                    yy = i * sh + t * dh - pt
                    if yy < 0 or yy >= h:
                        continue
                    row = (b * h + yy) * w * c
                    for e in range(kw):
                        z0 = j * sw + e * dw - pl
                        wb = (t * kw + e) * cout * c
                        for cv in range(0, c, 16):
                            a00, a01, a02, a03 = taps4(x, row, z0, sw, w, c, cv,
                                                       vload(wt, wb + cv),
                                                       a00, a01, a02, a03, pixels)
                            if cout > 1:
                                a10, a11, a12, a13 = taps4(x, row, z0, sw, w, c, cv,
                                                           vload(wt, wb + c + cv),
                                                           a10, a11, a12, a13, pixels)
                            if cout > 2:
                                a20, a21, a22, a23 = taps4(x, row, z0, sw, w, c, cv,
                                                           vload(wt, wb + 2 * c + cv),
                                                           a20, a21, a22, a23, pixels)
                            if cout > 3:
                                a30, a31, a32, a33 = taps4(x, row, z0, sw, w, c, cv,
                                                           vload(wt, wb + 3 * c + cv),
                                                           a30, a31, a32, a33, pixels)
                o = ((b * oh + i) * ow + j) * cout
                store4(y, o, cout, pixels, bias[0], a00, a01, a02, a03)
                if cout > 1:
                    store4(y, o + 1, cout, pixels, bias[1], a10, a11, a12, a13)
                if cout > 2:
                    store4(y, o + 2, cout, pixels, bias[2], a20, a21, a22, a23)
                if cout > 3:
                    store4(y, o + 3, cout, pixels, bias[3], a30, a31, a32, a33)
            q = claim_chunk(data)

    @numba.njit(inline="always")
    def filter_sums(x, g, b, h, w, c, oh, ow, i_lo, i_hi, j_lo, j_hi, yo, zo, sh, sw, cout,
                    k, cv):
        """Image b's sum over the output pixels (i, j) in [i_lo, i_hi) x [j_lo, j_hi) of
        x[i sh + yo, j sw + zo, cv:cv + 16] * g[i, j, k], in four accumulators a row."""
        s0, s1, s2, s3 = vzero(), vzero(), vzero(), vzero()
        for i in range(i_lo, i_hi):
            xr = ((b * h + i * sh + yo) * w + zo) * c + cv
            gr = (b * oh + i) * ow * cout + k
            xs, gs = sw * c, cout
            j = j_lo
            while j + 4 <= j_hi:
                s0 = vfma(vload(x, xr + j * xs), vsplat(g[gr + j * gs]), s0)
                s1 = vfma(vload(x, xr + (j + 1) * xs), vsplat(g[gr + (j + 1) * gs]), s1)
                s2 = vfma(vload(x, xr + (j + 2) * xs), vsplat(g[gr + (j + 2) * gs]), s2)
                s3 = vfma(vload(x, xr + (j + 3) * xs), vsplat(g[gr + (j + 3) * gs]), s3)
                j += 4
            while j < j_hi:
                s0 = vfma(vload(x, xr + j * xs), vsplat(g[gr + j * gs]), s0)
                j += 1
        return vadd(vadd(s0, s1), vadd(s2, s3))

    # data = [counter, n, 1, (address, length) of x, g, partial [n, kh*kw*cout*cin], params,
    #         done]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def filter_images(data):
        wide_vectors()
        d = carray(data, 12, dtype=np.int64)
        n, h, w, c, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, cout = geometry(d[9])
        x = carray(address_as_pointer(d[3], f32), n * h * w * c)
        g = carray(address_as_pointer(d[5], f32), n * oh * ow * cout)
        partial = carray(address_as_pointer(d[7], f32), n * kh * kw * cout * c)
        size = kh * kw * cout * c
        b = claim_chunk(data)
        while b < n:
            for t in range(kh):
                yo = t * dh - pt    # input row i * sh + yo must lie in [0, h)
                i_lo = max(0, -(yo // sh))
                i_hi = min(oh, (h - 1 - yo) // sh + 1) if h - 1 - yo >= 0 else 0
                for e in range(kw):
                    zo = e * dw - pl
                    j_lo = max(0, -(zo // sw))
                    j_hi = min(ow, (w - 1 - zo) // sw + 1) if w - 1 - zo >= 0 else 0
                    for k in range(cout):
                        o = b * size + ((t * kw + e) * cout + k) * c
                        for cv in range(0, c, 16):
                            vstore(partial, o + cv,
                                   filter_sums(x, g, b, h, w, c, oh, ow, i_lo, i_hi, j_lo,
                                               j_hi, yo, zo, sh, sw, cout, k, cv))
            b = claim_chunk(data)

    # data = [counter, n * h, 1, (address, length) of g, w [kh, kw, cout, cin], dx, params,
    #         done]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def input_rows(data):
        wide_vectors()
        d = carray(data, 12, dtype=np.int64)
        n, h, w, c, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, cout = geometry(d[9])
        g = carray(address_as_pointer(d[3], f32), n * oh * ow * cout)
        wt = carray(address_as_pointer(d[5], f32), kh * kw * cout * c)
        dx = carray(address_as_pointer(d[7], f32), n * h * w * c)
        q = claim_chunk(data)
        while q < d[1]:
            b, i = q // h, q % h
            for j in range(w):
                for cb in range(0, c, 64):   # up to four vectors of input channels at a time
                    width = min(64, c - cb)
                    a0, a1, a2, a3 = vzero(), vzero(), vzero(), vzero()
                    for t in range(kh):
                        y = i + pt - t * dh    # output row y / sh reads input row i
                        if sh != 1:   # (no integer division at stride 1)
                            if y % sh != 0:
                                continue
                            y //= sh
                        if y < 0 or y >= oh:
                            continue
                        for e in range(kw):
                            z = j + pl - e * dw
                            if sw != 1:
                                if z % sw != 0:
                                    continue
                                z //= sw
                            if z < 0 or z >= ow:
                                continue
                            go = ((b * oh + y) * ow + z) * cout
                            wb = (t * kw + e) * cout * c + cb
                            for k in range(cout):
                                s = vsplat(g[go + k])
                                o = wb + k * c
                                a0 = vfma(s, vload(wt, o), a0)
                                if width > 16:
                                    a1 = vfma(s, vload(wt, o + 16), a1)
                                if width > 32:
                                    a2 = vfma(s, vload(wt, o + 32), a2)
                                if width > 48:
                                    a3 = vfma(s, vload(wt, o + 48), a3)
                    o = ((b * h + i) * w + j) * c + cb
                    vstore(dx, o, a0)
                    if width > 16:
                        vstore(dx, o + 16, a1)
                    if width > 32:
                        vstore(dx, o + 32, a2)
                    if width > 48:
                        vstore(dx, o + 48, a3)
            q = claim_chunk(data)

    return forward_rows.address, filter_images.address, input_rows.address


_callbacks = built_once(lambda: _build() if omp_pool.launcher() is not None else None)
