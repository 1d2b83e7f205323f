"""Max pooling with argmax indices on NHWC float32 (and bfloat16) CPU tensors, as numba kernels
run on ATen's OpenMP team (kernels/omp_pool.py): the remapper's `_MaxPoolWithIndices` and
`_MaxPoolGradWithIndices` (kernels/nn_fused.py) in one pass each.

ATen's channels-last max_pool2d_with_indices and its backward take 0.72 / 0.74 ms for MNIST's
first pool (64x28x28x32, one thread, Xeon with AVX-512) against 0.51 / 0.50 ms here, and
0.30 / 0.38 ms against 0.26 / 0.27 ms for the second (64x14x14x64): a whole 2x2 window is
unrolled and vectorized over channels, and the gradient of windows that tile the input is
written once instead of a zero fill plus a scatter (most of what is left is the int64
indices' traffic). The values, indices and gradients are ATen's,
bit for bit: the window is scanned row by row, a value replaces the max when it is greater or
NaN (ATen's rule), a window's index starts at its first position inside the input, and the
gradient adds in the same order. Indices are positions in each image's unpadded plane
(h * W + w), as ATen gives them for symmetric padding; both kernels of a graph take this path
or both take ATen's (`applies`: the same test on the window and the input), so the format
never mixes.

bfloat16 (the mixed-precision rewrite's pools on CPUs with bf16 units) takes this path for
2x2 windows that tile the input (stride 2, no padding, even sizes: CNNs' usual pool), where
no gradient is ever summed: values are compared widened to float32 and copied as bits, so
they are ATen's values and indices (ATen's bf16 kernels return a NaN's bits as they are or
canonical, and a -0 gradient as -0 or +0, depending on the channel count; these bits
aside), in 0.45 / 0.38 ms against ATen's 0.76 / 1.07 ms for MNIST's first pool (one thread).
Other bfloat16 windows use ATen for both ops.

The kernels are C callbacks that claim chunks of images from an atomic counter; numba is
imported and the callbacks compiled (cached on disk) at the first pool, not with ndflow.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool
from ndflow.kernels.build_once import built_once

# The callbacks' numba helpers, module globals rather than closure cells: numba's disk cache
# refuses a function that closes over its enclosing function's variables. The float32 and
# bfloat16 callbacks inline the same window scan and tiled gradient, with the dtype's
# `widen` (its value as float32) and `grad` (a gradient as written); numba's disk cache keys
# the callbacks on this file, which holds the helpers too.
claim_chunk = address_as_pointer = f32_from_bits = carray = None
header = chunk_view = scan_step = max_2x2 = tiled_gradient = each_chunk = geometry = None
same = plus_zero = bf16_widen = None
forward_rows = backward_rows = forward_rows_bf16 = backward_rows_bf16 = None
forward_views = backward_views = pool_2x2 = each_chunk_of = None


def available() -> bool:
    """Whether the kernels can run here (numba importable, ATen's OpenMP launcher found)."""
    return _callbacks() is not None


def applies(x: torch.Tensor, k, s, top_left, out_hw) -> bool:
    """Whether a pool of NHWC `x` (window `k`, strides `s`, padding above/left `top_left`,
    output size `out_hw`) takes this path: 4-D on the CPU, 2x2 windows, float32, or bfloat16
    in 2x2 windows tiling the input; kernels available. The gradient's test is the same.
    Other windows keep ATen's kernels, which vectorize over channels where this scans each
    channel's window in turn: 3x3 stride 2 on 32x112x112x64 took 58 ms here against
    ATen's 5.0, 1x5 stride 5 on 64x1x196x128 1.3 ms against 0.11 (Zen 5, 2 threads)."""
    if x.device.type != "cpu" or x.dim() != 4 or tuple(k) != (2, 2):
        return False
    if x.dtype == torch.bfloat16:
        if not (tuple(k) == (2, 2) == tuple(s) and tuple(top_left) == (0, 0)
                and 2 * out_hw[0] == x.shape[1] and 2 * out_hw[1] == x.shape[2]):
            return False
    elif x.dtype != torch.float32:
        return False
    return available()


# the OpenMP callbacks, built on first use (None without numba or ATen's OpenMP)
_callbacks = built_once(lambda: _build() if omp_pool.launcher() is not None else None)


def _params(x_shape, out_hw, k, s, top_left, dtype) -> np.ndarray:
    _, h, w, c = x_shape
    return np.array([h, w, c, out_hw[0], out_hw[1], k[0], k[1], s[0], s[1], top_left[0],
                     top_left[1], dtype == torch.bfloat16], dtype=np.int64)


def _chunk_rows(n: int, threads: int) -> int:
    return max(1, -(-n // (4 * threads)))


def forward(x: torch.Tensor, k, s, top_left, out_hw):
    """(y, indices) of a max pool of NHWC `x` with window `k`, strides `s`, the window of
    output (0, 0) starting at (-top, -left), and output size `out_hw`."""
    x = x.contiguous()
    n, _, _, c = x.shape
    y = torch.empty((n, out_hw[0], out_hw[1], c), dtype=x.dtype)
    idx = torch.empty((n, out_hw[0], out_hw[1], c), dtype=torch.int64)
    if y.numel():
        threads = torch.get_num_threads()
        omp_pool.run_chunks(_callbacks()[0], n, _chunk_rows(n, threads),
                            [x, y, idx,
                             _params(x.shape, out_hw, k, s, top_left, x.dtype)], threads)
    return y, idx


def backward(x_shape, g: torch.Tensor, idx: torch.Tensor, k, s, top_left):
    """The gradient with respect to the pooled input (NHWC, `x_shape`): `g` added at the
    positions `forward` chose."""
    g, idx = g.contiguous(), idx.contiguous()
    n = x_shape[0]
    dx = torch.empty(tuple(x_shape), dtype=g.dtype)
    if dx.numel():
        threads = torch.get_num_threads()
        omp_pool.run_chunks(_callbacks()[1], n, _chunk_rows(n, threads),
                            [g, idx, dx,
                             _params(x_shape, g.shape[1:3], k, s, top_left, g.dtype)],
                            threads)
    return dx


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first pool, not with `import ndflow`
    except ImportError:
        return None
    from numba import cfunc, types  # noqa: PLC0415
    global claim_chunk, address_as_pointer, f32_from_bits, carray
    global header, chunk_view, scan_step, max_2x2, tiled_gradient, same, plus_zero, bf16_widen
    global each_chunk, geometry, forward_rows, backward_rows, forward_rows_bf16, backward_rows_bf16
    global forward_views, backward_views, pool_2x2, each_chunk_of
    claim_chunk, address_as_pointer, f32_from_bits = omp_pool.chunk_intrinsics()
    carray = numba.carray
    inline = numba.njit(inline="always")

    @inline
    def header(data):
        """(data as int64s, images, chunk rows, params) of a callback's data."""
        d = carray(data, 11, dtype=np.int64)
        return d, d[1], d[2], carray(address_as_pointer(d[9], np.int64), 12)

    @inline
    def chunk_view(d, k, lo, rows, size, dtype, itemsize):
        """Images lo..lo + rows - 1 of the array at d[k] (`size` elements an image)."""
        return carray(address_as_pointer(d[k] + lo * size * itemsize, dtype), rows * size)

    @inline
    def same(u):
        return u

    @inline
    def plus_zero(g):
        """+ 0: -0.0 becomes +0.0, as ATen's sum."""
        return g + np.float32(0.0)

    @inline
    def bf16_widen(u):
        return f32_from_bits(np.uint32(u) << np.uint32(16))

    @inline
    def scan_step(u, kept, best, arg, pos, widen):
        """ATen's rule: the element u (at plane position pos) replaces the max when greater
        or NaN. (element kept as stored, its value, its position)"""
        v = widen(u)
        take = (v > best) | (v != v)
        return (u if take else kept), (v if take else best), (pos if take else arg)

    @inline
    def max_2x2(x, p0, c, row, a0, w, widen):
        """The max of the 2x2 window whose first element is x[p0] (at plane position a0; the
        next column c elements on, the next row `row`), scanned row by row: (its element
        as stored, its position). LLVM unrolls the three steps, and the channel loop around
        the call vectorizes."""
        u = x[np.uint64(p0)]
        v, arg = widen(u), a0
        for e in range(1, 4):
            u, v, arg = scan_step(x[np.uint64(p0 + (e >> 1) * row + (e & 1) * c)], u, v, arg,
                                  a0 + (e >> 1) * w + (e & 1), widen)
        return u, arg

    @inline
    def tiled_gradient(g, ix, dx, rows, plane, out_plane, w, c, ho, wo, kh, kw, grad, zero):
        """dx of windows tiling the input (stride = window, no padding): each input position
        in exactly one window, so written once, no zero fill and no scatter."""
        for b in range(rows):
            for i in range(ho):
                for a in range(kh):
                    for j in range(wo):
                        o = b * out_plane + (i * wo + j) * c
                        for e in range(kw):
                            pos = (i * kh + a) * w + j * kw + e
                            t = b * plane + pos * c
                            for ch in range(c):
                                u = np.uint64(o + ch)
                                dx[np.uint64(t + ch)] = grad(g[u]) if ix[u] == pos else zero

    @inline
    def geometry(p):
        """params h, w, c, ho, wo, kh, kw, sh, sw, top, left, and an input and an output
        image's element counts."""
        h, w, c, ho, wo = p[0], p[1], p[2], p[3], p[4]
        return (h, w, c, ho, wo, p[5], p[6], p[7], p[8], p[9], p[10], h * w * c, ho * wo * c)

    @inline
    def forward_views(d, lo, rows, plane, out_plane, dtype, itemsize):
        """x, y (elements of `dtype`) and the indices of images lo..lo + rows - 1."""
        return (chunk_view(d, 3, lo, rows, plane, dtype, itemsize),
                chunk_view(d, 5, lo, rows, out_plane, dtype, itemsize),
                chunk_view(d, 7, lo, rows, out_plane, np.int64, 8))

    @inline
    def backward_views(d, lo, rows, plane, out_plane, dtype, itemsize):
        """g, the indices and dx (g, dx elements of `dtype`) of images lo..lo + rows - 1."""
        return (chunk_view(d, 3, lo, rows, out_plane, dtype, itemsize),
                chunk_view(d, 5, lo, rows, out_plane, np.int64, 8),
                chunk_view(d, 7, lo, rows, plane, dtype, itemsize))

    @inline
    def pool_2x2(x, y, ix, o, p0, a0, c, w, widen):
        """Each channel's max of the whole 2x2 window at plane position a0 (its first
        element x[p0]) into y and ix from o."""
        for ch in range(c):
            best, arg = max_2x2(x, p0 + ch, c, w * c, a0, w, widen)
            y[np.uint64(o + ch)] = best
            ix[np.uint64(o + ch)] = arg

    @inline
    def each_chunk(data, rows_body):
        """Claims chunks of images from the counter until none is left, running
        rows_body(d, lo, rows, params) on each."""
        d, images, chunk, p = header(data)
        q = claim_chunk(data)
        while q * chunk < images:
            lo = q * chunk
            rows_body(d, lo, min(lo + chunk, images) - lo, p)
            q = claim_chunk(data)

    @inline
    def forward_rows(d, lo, rows, p):
        h, w, c, ho, wo, kh, kw, sh, sw, top, left, plane, out_plane = geometry(p)
        x, y, ix = forward_views(d, lo, rows, plane, out_plane, np.float32, 4)
        for b in range(rows):
            for i in range(ho):
                h0 = i * sh - top
                hs, he = max(h0, 0), min(h0 + kh, h)
                for j in range(wo):
                    w0 = j * sw - left
                    ws, we = max(w0, 0), min(w0 + kw, w)
                    o = b * out_plane + (i * wo + j) * c
                    if he - hs == 2 and we - ws == 2:   # a whole 2x2 window
                        a0 = hs * w + ws
                        pool_2x2(x, y, ix, o, b * plane + a0 * c, a0, c, w, same)
                        continue
                    # the max in a register per channel: stores between the loads of
                    # possibly aliased arrays would keep LLVM from vectorizing
                    for ch in range(c):
                        best = np.float32(-np.inf)
                        arg = hs * w + ws
                        for ih in range(hs, he):
                            for iw in range(ws, we):
                                v = x[np.uint64(b * plane + (ih * w + iw) * c + ch)]
                                if v > best or v != v:
                                    best = v
                                    arg = ih * w + iw
                        y[np.uint64(o + ch)] = best
                        ix[np.uint64(o + ch)] = arg

    @inline
    def backward_rows(d, lo, rows, p):
        h, w, c, ho, wo, kh, kw, sh, sw, top, left, plane, out_plane = geometry(p)
        g, ix, dx = backward_views(d, lo, rows, plane, out_plane, np.float32, 4)
        if (kh == sh and kw == sw and top == 0 and left == 0 and ho * kh == h
                and wo * kw == w):
            tiled_gradient(g, ix, dx, rows, plane, out_plane, w, c, ho, wo, kh, kw,
                           plus_zero, np.float32(0.0))
            return
        for e in range(rows * plane):
            dx[e] = 0.0
        for b in range(rows):
            for o in range(b * out_plane, (b + 1) * out_plane, c):
                for ch in range(c):
                    pos = ix[o + ch]
                    if 0 <= pos < h * w:   # never otherwise: forward's indices
                        dx[np.uint64(b * plane + pos * c + ch)] += g[np.uint64(o + ch)]

    # bfloat16 in 2x2 windows tiling the input (applies()); x, y, g, dx as uint16 bits
    @inline
    def forward_rows_bf16(d, lo, rows, p):
        _, w, c, ho, wo, _, _, _, _, _, _, plane, out_plane = geometry(p)
        x, y, ix = forward_views(d, lo, rows, plane, out_plane, np.uint16, 2)
        for b in range(rows):
            for i in range(ho):
                for j in range(wo):
                    o = b * out_plane + (i * wo + j) * c
                    a0 = 2 * i * w + 2 * j
                    pool_2x2(x, y, ix, o, b * plane + a0 * c, a0, c, w, bf16_widen)

    @inline
    def backward_rows_bf16(d, lo, rows, p):
        _, w, c, ho, wo, _, _, _, _, _, _, plane, out_plane = geometry(p)
        g, ix, dx = backward_views(d, lo, rows, plane, out_plane, np.uint16, 2)
        tiled_gradient(g, ix, dx, rows, plane, out_plane, w, c, ho, wo, 2, 2, same,
                       np.uint16(0))

    @inline
    def each_chunk_of(data, float32_rows, bfloat16_rows):
        """each_chunk with the rows body of the data's dtype (params[11]: bfloat16)."""
        if header(data)[3][11]:
            each_chunk(data, bfloat16_rows)
        else:
            each_chunk(data, float32_rows)

    # data = [counter, images, chunk, (address, length) of x, y, indices, params] (forward)
    # or of g, indices, dx, params (backward); params: h, w, c, ho, wo, kh, kw, sh, sw, top,
    # left, bfloat16
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def pool_forward(data):
        each_chunk_of(data, forward_rows, forward_rows_bf16)

    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def pool_backward(data):
        each_chunk_of(data, backward_rows, backward_rows_bf16)

    return pool_forward.address, pool_backward.address
