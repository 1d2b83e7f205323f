"""MaxPool3DGrad as TensorFlow's CPU kernel defines it, for NDHWC float32 CPU tensors, in one
pass over the input, as a numba callback run on ATen's OpenMP team (kernels/omp_pool.py).

TensorFlow's kernel (LaunchMaxPooling3dGradOp) gives a window's output gradient to every
input position of the window within 1e-5 of the window's max, `|x - y| < 1e-5` in float32,
adding each window's contribution, in the windows' order, into a zeroed gradient: a tie gives
the gradient to each tied position, a NaN input (never the max: the forward pass skips it)
and an infinite max (`inf - inf` is NaN) give none. ATen's kernel gives it to one position,
its argmax (a NaN when there is one), and needs the argmax indices recomputed, a zero fill
and a scatter: 1.28 + 0.54 + 0.40 ms for a [8, 14, 30, 30, 16] input pooled 2x2x2, against
0.51 ms here. Here each input position sums, from the same zero, the contributions of the
windows that hold it, in the windows' order (none in VALID's remainder). Where strides equal
the window (a MaxPooling3D's default) that is one window: TensorFlow's values bit for bit, a
-0 gradient becoming +0 as TensorFlow's sum makes it; where windows overlap, TensorFlow's
rule with sums that may differ from TensorFlow's in the last bit (its additions come in
another order, which a test of 30 random magnitudes did not pin down). Padded windows (SAME)
hold only the positions that are real.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool
from ndflow.kernels.build_once import built_once

TOLERANCE = 1e-5   # TensorFlow's: an input this close to its window's max takes the gradient
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = windows = tiled_rows = overlapping_rows = None


def applies(x: torch.Tensor, y: torch.Tensor, g: torch.Tensor, ksize, strides) -> bool:
    """Whether MaxPool3DGrad of NDHWC `x` (pooled `y`, output gradient `g`, windows `ksize`
    moved by `strides`) takes this path: float32 CPU 5-D tensors, y and g of one shape."""
    return (all(t.dtype == torch.float32 and t.device.type == "cpu" and t.dim() == 5
                for t in (x, y, g))
            and y.shape == g.shape and y.shape[0] == x.shape[0] and y.shape[4] == x.shape[4]
            and len(ksize) == len(strides) == 3 and _callbacks() is not None)


def gradient(x: torch.Tensor, y: torch.Tensor, g: torch.Tensor, ksize, strides, pads_before):
    """The gradient with respect to the pooled NDHWC input `x` (`applies` holds): g of each
    window at the positions within TOLERANCE of its max y, summed over the windows;
    `pads_before`: the padding above each spatial dimension (window o starts at
    o * stride - pad)."""
    x, y, g = x.contiguous(), y.contiguous(), g.contiguous()
    dx = torch.empty_like(x, memory_format=torch.contiguous_format)
    n = x.shape[0]
    if dx.numel():
        threads = torch.get_num_threads()
        params = np.array([*x.shape[1:], *y.shape[1:4], *ksize, *strides, *pads_before],
                          dtype=np.int64)
        omp_pool.run_chunks(_callbacks(), n, max(1, -(-n // (4 * threads))),
                            [x, y, g, dx, params], threads)
    return dx


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such pool, not with `import ndflow`
    except ImportError:
        return None
    from numba import cfunc, types  # noqa: PLC0415
    global claim_chunk, address_as_pointer, carray, windows, tiled_rows, overlapping_rows
    claim_chunk, address_as_pointer, _ = omp_pool.chunk_intrinsics()
    carray = numba.carray

    @numba.njit(inline="always")
    def windows(i, pad, k, s, outs):
        """The outputs o whose window [o * s - pad, o * s - pad + k) holds input i: lo..hi-1."""
        return max(0, -((k - 1 - i - pad) // s)), min(outs, (i + pad) // s + 1)

    @numba.njit(inline="always")
    def tiled_rows(x, y, g, dx, p, rows):
        """Strides equal to the window: an input lies in one window at most, whose output
        index is one division away (overlapping_rows' two floor divisions and window loops
        per input took twice as long: 1.13 against 0.51 ms for [8, 14, 30, 30, 16])."""
        d, h, w, c, od, oh, ow = p[0], p[1], p[2], p[3], p[4], p[5], p[6]
        kd, kh, kw, pd, ph, pw = p[7], p[8], p[9], p[13], p[14], p[15]
        tol, zero = np.float32(TOLERANCE), np.float32(0.0)
        for b in range(rows):
            for i in range(d):
                oi = (i + pd) // kd
                for j in range(h):
                    oj = (j + ph) // kh
                    for k in range(w):
                        ok = (k + pw) // kw
                        e = (((b * d + i) * h + j) * w + k) * c
                        if oi < od and oj < oh and ok < ow:
                            o = (((b * od + oi) * oh + oj) * ow + ok) * c
                            for ch in range(c):
                                v = g[np.uint64(o + ch)]
                                near = abs(x[np.uint64(e + ch)] - y[np.uint64(o + ch)]) < tol
                                dx[np.uint64(e + ch)] = zero + v if near else zero
                        else:
                            for ch in range(c):
                                dx[np.uint64(e + ch)] = zero

    @numba.njit(inline="always")
    def overlapping_rows(x, y, g, dx, p, rows):
        d, h, w, c, od, oh, ow = p[0], p[1], p[2], p[3], p[4], p[5], p[6]
        kd, kh, kw, sd, sh, sw, pd, ph, pw = (p[7], p[8], p[9], p[10], p[11], p[12], p[13],
                                              p[14], p[15])
        tol, zero = np.float32(TOLERANCE), np.float32(0.0)
        for b in range(rows):
            for i in range(d):
                i0, i1 = windows(i, pd, kd, sd, od)
                for j in range(h):
                    j0, j1 = windows(j, ph, kh, sh, oh)
                    for k in range(w):
                        k0, k1 = windows(k, pw, kw, sw, ow)
                        e = (((b * d + i) * h + j) * w + k) * c
                        if i0 >= i1 or j0 >= j1 or k0 >= k1:   # in no window
                            for ch in range(c):
                                dx[np.uint64(e + ch)] = zero
                            continue
                        # TF's sum over the windows holding the input, in their order, from
                        # zero: the first window's share written, the others' added; unsigned
                        # indices and loads outside the condition: a select over the
                        # channels' vectors, not a branch per element
                        o = (((b * od + i0) * oh + j0) * ow + k0) * c
                        for ch in range(c):
                            v = g[np.uint64(o + ch)]
                            near = abs(x[np.uint64(e + ch)] - y[np.uint64(o + ch)]) < tol
                            dx[np.uint64(e + ch)] = zero + v if near else zero
                        for oi in range(i0, i1):
                            for oj in range(j0, j1):
                                for ok in range(k0, k1):
                                    if oi == i0 and oj == j0 and ok == k0:
                                        continue
                                    o = (((b * od + oi) * oh + oj) * ow + ok) * c
                                    for ch in range(c):
                                        v = g[np.uint64(o + ch)]
                                        near = abs(x[np.uint64(e + ch)]
                                                   - y[np.uint64(o + ch)]) < tol
                                        dx[np.uint64(e + ch)] += v if near else zero

    # data = [counter, images, chunk, (address, length) of x, y, g, dx, params, finished];
    # params: d, h, w, c, od, oh, ow, kd, kh, kw, sd, sh, sw, and the padding before d, h, w
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def pool3d_gradient(data):
        f = carray(data, 14, dtype=np.int64)
        images, chunk = f[1], f[2]
        p = carray(address_as_pointer(f[11], np.int64), 16)
        plane = p[0] * p[1] * p[2] * p[3]
        out_plane = p[4] * p[5] * p[6] * p[3]
        q = claim_chunk(data)
        while q * chunk < images:
            lo = q * chunk
            rows = min(lo + chunk, images) - lo
            x = carray(address_as_pointer(f[3] + lo * plane * 4, np.float32), rows * plane)
            y = carray(address_as_pointer(f[5] + lo * out_plane * 4, np.float32),
                       rows * out_plane)
            g = carray(address_as_pointer(f[7] + lo * out_plane * 4, np.float32),
                       rows * out_plane)
            dx = carray(address_as_pointer(f[9] + lo * plane * 4, np.float32), rows * plane)
            if p[7] == p[10] and p[8] == p[11] and p[9] == p[12]:
                tiled_rows(x, y, g, dx, p, rows)
            else:
                overlapping_rows(x, y, g, dx, p, rows)
            q = claim_chunk(data)

    return pool3d_gradient.address


_callbacks = built_once(lambda: _build() if omp_pool.launcher() is not None else None)
