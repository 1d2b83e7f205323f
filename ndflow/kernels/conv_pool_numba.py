"""A convolution with few input channels, its bias and relu, and the 2x2 stride-2 max pool
after it, in one numba pass (`_Conv2DBiasReluMaxPool`), and its filter and bias gradients
from the pooled gradient (`_Conv2DBiasReluMaxPoolGrad`); NHWC float32 on the CPU, run on
ATen's OpenMP team (kernels/omp_pool.py). The remapper fuses CNNs' first block into them
(passes/conv_pool_fusion.py); kernels/nn_conv_pool.py holds the ops' kernels and their ATen
path.

MNIST's conv1 (64x28x28x1 * 5x5x1x32, SAME) is 80 MFLOP, yet in the training step (one
thread, Xeon with AVX-512) oneDNN's conv + relu and the pool took 1.65 + 1.15 ms, and the
backward (the pooled gradient scattered into a 64x28x28x32 tensor that is 3/4 zeros,
ReluGrad, conv backward-filter, BiasAddGrad) 3.1 ms: the 6.4 MB activation and its gradient
are written and read at full resolution for a handful of FLOPs per element. Here the forward
computes each pooled pixel's 2x2 window of conv outputs in registers (16-lane vectors over
output channels, kernels/simd_numba.py: two pixels x two channel blocks = 16 accumulators
per filter tap) and writes only the pooled value and a one-byte code per output (0.95 ms in
the step, 0.75 warm); the backward reads the input, the pooled gradient and the codes and
accumulates the filter gradient of 5 taps x 32 channels in registers with masked FMAs per
pass over an image (1.4 ms in the step, 0.8 warm).

The code of a pooled output is the window position that won (0..3 in row-major order within
the 2x2 window: ATen's scan and rule, a later value wins when greater or NaN), or 4 when the
pooled relu output is not > 0: exactly where ReluGrad(g, pooled) zeroes the gradient, so the
backward applies that gate itself. The window of pooled pixel (i, j) covers conv outputs
(2i + a, 2j + e); with SAME pooling of an odd conv size the last row/column of windows has
positions outside the conv output, which are skipped (ATen and TF pool over the inside).

Each image is first copied into a zero-padded scratch image (pad rows/columns of the conv and
of the pool's last window), so that no tap needs a bounds test. The filter gradient is summed
per image and the per-image sums added afterwards in image order: the result does not depend
on the thread count or on which thread took which image.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool, simd_numba
from ndflow.kernels.build_once import built_once

LANES = simd_numba.LANES
TAP_BLOCK = 5          # filter taps whose gradients one backward pass keeps in registers
INACTIVE = 4           # the code of a pooled output whose gradient is zero
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = None
_pad_image = _forward_image = _backward_image = None
view = each_image = forward_image = backward_image = None


def available() -> bool:
    """Whether the kernels can run here (numba importable, ATen's OpenMP launcher found)."""
    return _callbacks() is not None


def applies(x: torch.Tensor, channels: int) -> bool:
    """Whether a float32 CPU NHWC input with `channels` output channels (a multiple of 16)
    takes the numba path."""
    return (x.dtype == torch.float32 and x.device.type == "cpu" and x.dim() == 4
            and channels % LANES == 0 and available())


class Geometry:
    """The sizes one call needs: input (h, w, cin), filter (kh, kw), channels c, the conv's
    top/left padding, conv output (hc, wc), pooled output (ho, wo), padded image (hp, wp), the
    taps' offsets in the padded image (padded with 0 to whole TAP_BLOCKs)."""

    def __init__(self, x_shape, filter_shape, pads, conv_hw, pool_hw):
        _, self.h, self.w, self.cin = (int(d) for d in x_shape)
        self.kh, self.kw, _, self.c = (int(d) for d in filter_shape)
        self.top, self.left = pads
        self.hc, self.wc = conv_hw
        self.ho, self.wo = pool_hw
        self.hp = 2 * self.ho + self.kh - 1
        self.wp = 2 * self.wo + self.kw - 1
        self.taps = self.kh * self.kw * self.cin
        padded = -(-self.taps // TAP_BLOCK) * TAP_BLOCK
        row = self.wp * self.cin
        self.offsets = np.zeros(padded, dtype=np.int64)
        self.offsets[:self.taps] = [dy * row + dx * self.cin + ci for dy in range(self.kh)
                                    for dx in range(self.kw) for ci in range(self.cin)]
        self.params = np.array([self.h, self.w, self.cin, self.c, self.taps, self.top,
                                self.left, self.hc, self.wc, self.ho, self.wo, self.hp,
                                self.wp, padded], dtype=np.int64)


# the OpenMP callbacks, built on first use (None without numba or ATen's OpenMP)
_callbacks = built_once(lambda: _build() if omp_pool.launcher() is not None else None)


def _chunk(n: int, threads: int) -> int:
    return max(1, -(-n // (4 * threads)))


def forward(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, geo: Geometry):
    """(pooled relu(conv(x, w) + b), codes) for NHWC `x` and HWIO `w`."""
    x, w, b = x.contiguous(), w.contiguous(), b.contiguous()
    n = x.shape[0]
    y = torch.empty((n, geo.ho, geo.wo, geo.c), dtype=torch.float32)
    codes = torch.empty((n, geo.ho, geo.wo, geo.c), dtype=torch.uint8)
    if y.numel():
        scratch = torch.empty((n, geo.hp, geo.wp, geo.cin), dtype=torch.float32)
        threads = torch.get_num_threads()
        omp_pool.run_chunks(_callbacks()[0], n, _chunk(n, threads),
                            [x, w, b, y, codes, scratch, geo.params, geo.offsets], threads)
    return y, codes


def backward(x: torch.Tensor, g: torch.Tensor, codes: torch.Tensor, geo: Geometry):
    """(filter gradient HWIO, bias gradient) from the pooled gradient `g` and `forward`'s
    codes (ReluGrad applied through the codes); None when `x` holds an inf or NaN. The
    kernel multiplies each input value only by the gradients of the positions it feeds: for
    a finite input that is the unfused sum (whose other terms are x * 0), for an inf or NaN
    the unfused sum is NaN, so the caller takes another path."""
    x, g, codes = x.contiguous(), g.contiguous(), codes.contiguous()
    n = x.shape[0]
    padded = len(geo.offsets)
    if n == 0 or g.numel() == 0:
        return (torch.zeros((geo.kh, geo.kw, geo.cin, geo.c), dtype=torch.float32),
                torch.zeros((geo.c,), dtype=torch.float32))
    dw = torch.empty((n, padded, geo.c), dtype=torch.float32)
    db = torch.empty((n, geo.c), dtype=torch.float32)
    scratch = torch.empty((n, geo.hp, geo.wp, geo.cin), dtype=torch.float32)
    zeros = np.empty(n, dtype=np.float32)    # per image: sum of x * 0, NaN for inf/NaN in x
    threads = torch.get_num_threads()
    omp_pool.run_chunks(_callbacks()[1], n, _chunk(n, threads),
                        [x, g, codes, dw, db, scratch, geo.params, geo.offsets, zeros], threads)
    if not np.isfinite(zeros).all():
        return None
    dw = dw.sum(0)[:geo.taps].reshape(geo.kh, geo.kw, geo.cin, geo.c)
    return dw, db.sum(0)


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such conv, not with `import ndflow`
    except ImportError:
        return None
    from numba import cfunc, types  # noqa: PLC0415

    global claim_chunk, address_as_pointer, carray, _pad_image, _forward_image, _backward_image
    global view, each_image, forward_image, backward_image
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    _pad_image, _forward_image, _backward_image = _build_bodies(numba,
                                                                simd_numba.vector_ops())

    inline = numba.njit(inline="always")

    @inline
    def view(d, k, dtype):
        """The array at d[k] (its length at d[k + 1])."""
        return carray(address_as_pointer(d[k], dtype), d[k + 1])

    @inline
    def each_image(data, words, image):
        """Claims chunks of images from the counter until none is left, running
        image(d, n) on each image n of them (d: the `words` int64s of data)."""
        d = carray(data, words, dtype=np.int64)
        images, chunk = d[1], d[2]
        q = claim_chunk(data)
        while q * chunk < images:
            for n in range(q * chunk, min(q * chunk + chunk, images)):
                image(d, n)
            q = claim_chunk(data)

    # data = [counter, images, chunk, (address, length) of x, w, b, y, codes, scratch, params,
    #         offsets]
    @inline
    def forward_image(d, n):
        xp, p = view(d, 13, np.float32), view(d, 15, np.int64)
        _pad_image(view(d, 3, np.float32), xp, n, p)
        _forward_image(xp, view(d, 5, np.float32), view(d, 7, np.float32),
                       view(d, 9, np.float32), view(d, 11, np.uint8), view(d, 17, np.int64),
                       n, p)

    # data = [counter, images, chunk, (address, length) of x, g, codes, dw, db, scratch,
    #         params, offsets, zeros]
    @inline
    def backward_image(d, n):
        xp, p = view(d, 13, np.float32), view(d, 15, np.int64)
        view(d, 19, np.float32)[n] = _pad_image(view(d, 3, np.float32), xp, n, p)
        _backward_image(xp, view(d, 5, np.float32), view(d, 7, np.uint8),
                        view(d, 9, np.float32), view(d, 11, np.float32),
                        view(d, 17, np.int64), n, p)

    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def conv_pool_forward(data):
        each_image(data, 19, forward_image)

    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def conv_pool_backward(data):
        each_image(data, 21, backward_image)

    return conv_pool_forward.address, conv_pool_backward.address


def _build_bodies(numba, v):
    """The per-image functions of the callbacks (inlined into them). p = Geometry.params:
    h, w, cin, c, taps, top, left, hc, wc, ho, wo, hp, wp, padded taps."""
    njit = numba.njit
    u64 = np.uint64
    wide_vectors, vload, vstore, vsplat, vzero, vfma, vadd, vrelu = (
        v.wide_vectors, v.vload, v.vstore, v.vsplat, v.vzero, v.vfma, v.vadd, v.vrelu)
    vmax_step, vstore_codes, vfma_where, vadd_below = (
        v.vmax_step, v.vstore_codes, v.vfma_where, v.vadd_below)

    @njit(inline="always")
    def pad_image(x, xp, n, p):
        """Image n of x into its zero-padded scratch image (conv padding at the top/left);
        returns the sum of its values times 0: NaN when one is inf or NaN."""
        h, w, cin, top, left, hp, wp = p[0], p[1], p[2], p[5], p[6], p[11], p[12]
        zero = np.float32(0.0)
        for r in range(hp):
            for s in range(wp):
                ih, iw = r - top, s - left
                inside = 0 <= ih < h and 0 <= iw < w
                src = ((n * h + ih) * w + iw) * cin
                dst = ((n * hp + r) * wp + s) * cin
                for ci in range(cin):
                    v = x[u64(src + ci)] if inside else np.float32(0.0)
                    xp[u64(dst + ci)] = v
                    zero += v * np.float32(0.0)
        return zero

    @njit(inline="always")
    def pool_store(y, codes, o, a0, a1, a2, a3, col_ok, row_ok):
        """The window's relu max (positions 1..3 only where inside the conv output) and its
        code at y[o:o+16], codes[o:o+16]. relu(max) is max(relu), and where it is > 0 the
        first maximum is the same with or without the relu, so relu runs once."""
        best = a0
        arg = vzero()
        if col_ok:
            best, arg = vmax_step(best, arg, a1, 1)
        if row_ok:
            best, arg = vmax_step(best, arg, a2, 2)
            if col_ok:
                best, arg = vmax_step(best, arg, a3, 3)
        best = vrelu(best)
        vstore(y, u64(o), best)
        vstore_codes(codes, u64(o), arg, best, INACTIVE)

    @njit(inline="always")
    def pixel_pair_32(xp, w, b, y, codes, offs, base, cin, rs, o, c, cb, taps):
        """Pooled pixels j, j+1 (conv windows at base and base + 2 cin), channels
        cb..cb+31."""
        b1, b2, b3, e = base + cin, base + rs, base + rs + cin, 2 * cin
        a0 = vload(b, u64(cb))
        a1 = a2 = a3 = a4 = a5 = a6 = a7 = a0
        c0 = vload(b, u64(cb + LANES))
        c1 = c2 = c3 = c4 = c5 = c6 = c7 = c0
        for t in range(taps):
            q = u64(t * c + cb)
            wt = vload(w, q)
            wu = vload(w, q + u64(LANES))
            ot = offs[t]
            s = vsplat(xp[u64(base + ot)])
            a0 = vfma(s, wt, a0)
            c0 = vfma(s, wu, c0)
            s = vsplat(xp[u64(b1 + ot)])
            a1 = vfma(s, wt, a1)
            c1 = vfma(s, wu, c1)
            s = vsplat(xp[u64(b2 + ot)])
            a2 = vfma(s, wt, a2)
            c2 = vfma(s, wu, c2)
            s = vsplat(xp[u64(b3 + ot)])
            a3 = vfma(s, wt, a3)
            c3 = vfma(s, wu, c3)
            s = vsplat(xp[u64(base + e + ot)])
            a4 = vfma(s, wt, a4)
            c4 = vfma(s, wu, c4)
            s = vsplat(xp[u64(b1 + e + ot)])
            a5 = vfma(s, wt, a5)
            c5 = vfma(s, wu, c5)
            s = vsplat(xp[u64(b2 + e + ot)])
            a6 = vfma(s, wt, a6)
            c6 = vfma(s, wu, c6)
            s = vsplat(xp[u64(b3 + e + ot)])
            a7 = vfma(s, wt, a7)
            c7 = vfma(s, wu, c7)
        pool_store(y, codes, o + cb, a0, a1, a2, a3, True, True)
        pool_store(y, codes, o + cb + LANES, c0, c1, c2, c3, True, True)
        pool_store(y, codes, o + c + cb, a4, a5, a6, a7, True, True)
        pool_store(y, codes, o + c + cb + LANES, c4, c5, c6, c7, True, True)

    @njit(inline="always")
    def pixel_16(xp, w, b, y, codes, offs, base, cin, rs, o, c, cb, taps, col_ok, row_ok):
        """One pooled pixel (conv window at base), channels cb..cb+15."""
        b1, b2, b3 = base + cin, base + rs, base + rs + cin
        a0 = vload(b, u64(cb))
        a1 = a2 = a3 = a0
        for t in range(taps):
            wt = vload(w, u64(t * c + cb))
            ot = offs[t]
            a0 = vfma(vsplat(xp[u64(base + ot)]), wt, a0)
            a1 = vfma(vsplat(xp[u64(b1 + ot)]), wt, a1)
            a2 = vfma(vsplat(xp[u64(b2 + ot)]), wt, a2)
            a3 = vfma(vsplat(xp[u64(b3 + ot)]), wt, a3)
        pool_store(y, codes, o + cb, a0, a1, a2, a3, col_ok, row_ok)

    @njit(inline="always")
    def forward_image(xp, w, b, y, codes, offs, n, p):
        wide_vectors()
        cin, c, taps, hc, wc, ho, wo, hp, wp = (p[2], p[3], p[4], p[7], p[8], p[9], p[10],
                                                p[11], p[12])
        rs = wp * cin
        for i in range(ho):
            row_ok = 2 * i + 1 < hc
            j = 0
            while row_ok and 2 * j + 3 < wc:     # two whole windows side by side
                base = (n * hp + 2 * i) * rs + 2 * j * cin
                o = ((n * ho + i) * wo + j) * c
                cb = 0
                while cb + 2 * LANES <= c:
                    pixel_pair_32(xp, w, b, y, codes, offs, base, cin, rs, o, c, cb, taps)
                    cb += 2 * LANES
                if cb < c:
                    pixel_16(xp, w, b, y, codes, offs, base, cin, rs, o, c, cb, taps,
                             True, True)
                    pixel_16(xp, w, b, y, codes, offs, base + 2 * cin, cin, rs, o + c, c, cb,
                             taps, True, True)
                j += 2
            while j < wo:
                base = (n * hp + 2 * i) * rs + 2 * j * cin
                o = ((n * ho + i) * wo + j) * c
                col_ok = 2 * j + 1 < wc
                for cb in range(0, c, LANES):
                    pixel_16(xp, w, b, y, codes, offs, base, cin, rs, o, c, cb, taps,
                             col_ok, row_ok)
                j += 1

    @njit(inline="always")
    def fma2(codes, o, ou, k, x, gv, gu, a, e):
        """One input value times the gradients of channels o.. and ou.. coded k."""
        xv = vsplat(x)
        return vfma_where(codes, o, k, xv, gv, a), vfma_where(codes, ou, k, xv, gu, e)

    @njit(inline="always")
    def taps_32(xp, g, codes, dw, db, offs, n, p, cb, tb):
        """Taps tb..tb+4 of channels cb..cb+31: one pass over image n's pooled pixels, the
        sums of window positions 0-1 and 2-3 in registers (20 accumulators)."""
        cin, c, ho, wo, hp, wp, padded = p[2], p[3], p[9], p[10], p[11], p[12], p[13]
        rs = wp * cin
        o0, o1, o2, o3, o4 = offs[tb], offs[tb + 1], offs[tb + 2], offs[tb + 3], offs[tb + 4]
        a0 = a1 = a2 = a3 = a4 = c0 = c1 = c2 = c3 = c4 = vzero()   # channels cb..cb+15
        e0 = e1 = e2 = e3 = e4 = f0 = f1 = f2 = f3 = f4 = vzero()   # channels cb+16..cb+31
        s = t = vzero()
        for i in range(ho):
            for j in range(wo):
                p0 = (n * hp + 2 * i) * rs + 2 * j * cin
                p1, p2, p3 = p0 + cin, p0 + rs, p0 + rs + cin
                o = u64(((n * ho + i) * wo + j) * c + cb)
                ou = o + u64(LANES)
                gv = vload(g, o)
                gu = vload(g, ou)
                s = vadd_below(codes, o, INACTIVE, gv, s)
                t = vadd_below(codes, ou, INACTIVE, gu, t)
                a0, e0 = fma2(codes, o, ou, 0, xp[u64(p0 + o0)], gv, gu, a0, e0)
                a0, e0 = fma2(codes, o, ou, 1, xp[u64(p1 + o0)], gv, gu, a0, e0)
                c0, f0 = fma2(codes, o, ou, 2, xp[u64(p2 + o0)], gv, gu, c0, f0)
                c0, f0 = fma2(codes, o, ou, 3, xp[u64(p3 + o0)], gv, gu, c0, f0)
                a1, e1 = fma2(codes, o, ou, 0, xp[u64(p0 + o1)], gv, gu, a1, e1)
                a1, e1 = fma2(codes, o, ou, 1, xp[u64(p1 + o1)], gv, gu, a1, e1)
                c1, f1 = fma2(codes, o, ou, 2, xp[u64(p2 + o1)], gv, gu, c1, f1)
                c1, f1 = fma2(codes, o, ou, 3, xp[u64(p3 + o1)], gv, gu, c1, f1)
                a2, e2 = fma2(codes, o, ou, 0, xp[u64(p0 + o2)], gv, gu, a2, e2)
                a2, e2 = fma2(codes, o, ou, 1, xp[u64(p1 + o2)], gv, gu, a2, e2)
                c2, f2 = fma2(codes, o, ou, 2, xp[u64(p2 + o2)], gv, gu, c2, f2)
                c2, f2 = fma2(codes, o, ou, 3, xp[u64(p3 + o2)], gv, gu, c2, f2)
                a3, e3 = fma2(codes, o, ou, 0, xp[u64(p0 + o3)], gv, gu, a3, e3)
                a3, e3 = fma2(codes, o, ou, 1, xp[u64(p1 + o3)], gv, gu, a3, e3)
                c3, f3 = fma2(codes, o, ou, 2, xp[u64(p2 + o3)], gv, gu, c3, f3)
                c3, f3 = fma2(codes, o, ou, 3, xp[u64(p3 + o3)], gv, gu, c3, f3)
                a4, e4 = fma2(codes, o, ou, 0, xp[u64(p0 + o4)], gv, gu, a4, e4)
                a4, e4 = fma2(codes, o, ou, 1, xp[u64(p1 + o4)], gv, gu, a4, e4)
                c4, f4 = fma2(codes, o, ou, 2, xp[u64(p2 + o4)], gv, gu, c4, f4)
                c4, f4 = fma2(codes, o, ou, 3, xp[u64(p3 + o4)], gv, gu, c4, f4)
        q = (n * padded + tb) * c + cb
        for r, lo, hi in ((0, a0, c0), (1, a1, c1), (2, a2, c2), (3, a3, c3), (4, a4, c4)):
            vstore(dw, u64(q + r * c), vadd(lo, hi))
        for r, lo, hi in ((0, e0, f0), (1, e1, f1), (2, e2, f2), (3, e3, f3), (4, e4, f4)):
            vstore(dw, u64(q + r * c + LANES), vadd(lo, hi))
        if tb == 0:
            vstore(db, u64(n * c + cb), s)
            vstore(db, u64(n * c + cb + LANES), t)

    @njit(inline="always")
    def taps_16(xp, g, codes, dw, db, offs, n, p, cb, tb):
        """taps_32 for channels cb..cb+15 (the remainder of a multiple of 16)."""
        cin, c, ho, wo, hp, wp, padded = p[2], p[3], p[9], p[10], p[11], p[12], p[13]
        rs = wp * cin
        o0, o1, o2, o3, o4 = offs[tb], offs[tb + 1], offs[tb + 2], offs[tb + 3], offs[tb + 4]
        a0 = a1 = a2 = a3 = a4 = c0 = c1 = c2 = c3 = c4 = vzero()
        s = vzero()
        for i in range(ho):
            for j in range(wo):
                p0 = (n * hp + 2 * i) * rs + 2 * j * cin
                p1, p2, p3 = p0 + cin, p0 + rs, p0 + rs + cin
                o = u64(((n * ho + i) * wo + j) * c + cb)
                gv = vload(g, o)
                s = vadd_below(codes, o, INACTIVE, gv, s)
                a0 = vfma_where(codes, o, 0, vsplat(xp[u64(p0 + o0)]), gv, a0)
                a0 = vfma_where(codes, o, 1, vsplat(xp[u64(p1 + o0)]), gv, a0)
                c0 = vfma_where(codes, o, 2, vsplat(xp[u64(p2 + o0)]), gv, c0)
                c0 = vfma_where(codes, o, 3, vsplat(xp[u64(p3 + o0)]), gv, c0)
                a1 = vfma_where(codes, o, 0, vsplat(xp[u64(p0 + o1)]), gv, a1)
                a1 = vfma_where(codes, o, 1, vsplat(xp[u64(p1 + o1)]), gv, a1)
                c1 = vfma_where(codes, o, 2, vsplat(xp[u64(p2 + o1)]), gv, c1)
                c1 = vfma_where(codes, o, 3, vsplat(xp[u64(p3 + o1)]), gv, c1)
                a2 = vfma_where(codes, o, 0, vsplat(xp[u64(p0 + o2)]), gv, a2)
                a2 = vfma_where(codes, o, 1, vsplat(xp[u64(p1 + o2)]), gv, a2)
                c2 = vfma_where(codes, o, 2, vsplat(xp[u64(p2 + o2)]), gv, c2)
                c2 = vfma_where(codes, o, 3, vsplat(xp[u64(p3 + o2)]), gv, c2)
                a3 = vfma_where(codes, o, 0, vsplat(xp[u64(p0 + o3)]), gv, a3)
                a3 = vfma_where(codes, o, 1, vsplat(xp[u64(p1 + o3)]), gv, a3)
                c3 = vfma_where(codes, o, 2, vsplat(xp[u64(p2 + o3)]), gv, c3)
                c3 = vfma_where(codes, o, 3, vsplat(xp[u64(p3 + o3)]), gv, c3)
                a4 = vfma_where(codes, o, 0, vsplat(xp[u64(p0 + o4)]), gv, a4)
                a4 = vfma_where(codes, o, 1, vsplat(xp[u64(p1 + o4)]), gv, a4)
                c4 = vfma_where(codes, o, 2, vsplat(xp[u64(p2 + o4)]), gv, c4)
                c4 = vfma_where(codes, o, 3, vsplat(xp[u64(p3 + o4)]), gv, c4)
        q = (n * padded + tb) * c + cb
        for r, lo, hi in ((0, a0, c0), (1, a1, c1), (2, a2, c2), (3, a3, c3), (4, a4, c4)):
            vstore(dw, u64(q + r * c), vadd(lo, hi))
        if tb == 0:
            vstore(db, u64(n * c + cb), s)

    @njit(inline="always")
    def backward_image(xp, g, codes, dw, db, offs, n, p):
        """Image n's filter gradient (taps padded to whole blocks) into dw[n] and its bias
        gradient into db[n]: for each block of TAP_BLOCK taps and 32 (or 16) channels, one
        pass over the pooled pixels with the taps' sums in registers."""
        wide_vectors()
        c, padded = p[3], p[13]
        cb = 0
        while cb + 2 * LANES <= c:
            for tb in range(0, padded, TAP_BLOCK):
                taps_32(xp, g, codes, dw, db, offs, n, p, cb, tb)
            cb += 2 * LANES
        if cb < c:
            for tb in range(0, padded, TAP_BLOCK):
                taps_16(xp, g, codes, dw, db, offs, n, p, cb, tb)

    return pad_image, forward_image, backward_image
