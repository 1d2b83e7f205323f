"""ImageProjectiveTransformV2/V3 for float32 images on CPUs as one pass over the output
pixels, rows of output images claimed by the threads of ATen's OpenMP team
(kernels/omp_pool.py); kernels/image_transform.py's whole-tensor ATen expressions run
elsewhere and define the arithmetic this repeats, operation for operation in float32.

Keras' RandomRotation, RandomZoom, RandomTranslation and RandomShear are this op: the ATen
form made a [batch, 4 x height x width, channels] int64 index for its bilinear gather and
~40 passes over the image, 2.5 ms a call for 64 x 32 x 32 x 3 (2-core Zen 5), half a CIFAR
CNN's step with augmentation layers; here each output pixel computes its input point, maps
it by the fill mode and blends its four neighbours once.

A point with a NaN coordinate gives fill_value (the ATen form has no defined result there).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import torch

from ndflow.kernels import omp_pool
from ndflow.kernels.build_once import built_once

MODES = ("REFLECT", "WRAP", "CONSTANT", "NEAREST")
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = view = map_coordinate = border_index = None
round_half_away = transform_row = None


def applies(images: torch.Tensor) -> bool:
    """Whether this kernel runs for `images` (float32 on the CPU, numba and ATen's OpenMP
    launcher present)."""
    return (images.dtype == torch.float32 and images.device.type == "cpu"
            and images.numel() > 0 and importlib.util.find_spec("numba") is not None
            and omp_pool.launcher() is not None and _callback() is not None)


def projective_transform(images: torch.Tensor, transforms: torch.Tensor, oh: int, ow: int,
                         fill: float, interpolation: str, mode: str) -> torch.Tensor:
    """[B, OH, OW, C] float32: kernels/image_transform.projective_transform's result."""
    images = images.contiguous()
    b, h, w, c = images.shape
    out = torch.empty((b, oh, ow, c), dtype=torch.float32)
    params = np.array([b, h, w, c, oh, ow, transforms.shape[0], MODES.index(mode),
                       interpolation == "NEAREST"], np.int64)
    rows = b * oh
    threads = max(1, min(torch.get_num_threads(), rows))
    omp_pool.run_chunks(_callback(), rows, max(1, -(-rows // (4 * threads))),
                        [images, transforms.to(torch.float32).contiguous(), out, params,
                         np.array([fill], np.float32)], threads)
    return out


_callback = built_once(lambda: _build())


def _build():
    nb = omp_pool.callback_builder()
    if nb is None:
        return None
    numba, cfunc, types = nb.numba, nb.cfunc, nb.types

    global claim_chunk, address_as_pointer, carray
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    _helpers(numba.njit(inline="always"))

    # data = [counter, rows, chunk, (address, length) of images, transforms, out, params,
    #         fill, finished]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def projective(data):
        d = carray(data, 14, dtype=np.int64)
        slot = claim_chunk(data)
        while slot * d[2] < d[1]:
            for row in range(slot * d[2], min(slot * d[2] + d[2], d[1])):
                transform_row(d, row)
            slot = claim_chunk(data)

    return projective.address


def _helpers(inline) -> None:
    global view, map_coordinate, border_index, round_half_away, transform_row
    f32 = np.float32

    @inline
    def view(d, k, dtype):
        """The array at d[k] (its length at d[k + 1])."""
        return carray(address_as_pointer(d[k], dtype), d[k + 1])

    @inline
    def map_coordinate(mode, c, n):
        """The fill mode's map of coordinate c into [0, n - 1] (CONSTANT: unchanged), as
        image_transform._map computes it in float32."""
        if mode == 2:
            return c
        top = f32(n - 1)
        if mode == 3:
            return min(max(c, f32(0.0)), top)
        if n <= 1:
            return f32(0.0)
        if mode == 0:          # REFLECT
            sz2 = f32(2 * n)
            if c < f32(0.0):
                r = c + sz2 * np.trunc(-c / sz2)
                r = r + sz2 if r < f32(-n) else -r - f32(1.0)
            elif c > top:
                r = c - sz2 * np.trunc(c / sz2)
                r = sz2 - r - f32(1.0) if r >= f32(n) else r
            else:
                r = c
        else:                  # WRAP
            sz = f32(n - 1)
            if c < f32(0.0):
                r = c + f32(n) * (np.trunc(-c / sz) + f32(1.0))
            elif c > top:
                r = c - f32(n) * np.trunc(c / sz)
            else:
                r = c
        return min(max(r, f32(0.0)), top)

    @inline
    def border_index(yi, xi, h, w):
        """The pixel (yi, xi) of the image bordered by one pixel of fill_value: -1 for the
        border (coordinates clamped onto it)."""
        y = int(min(max(yi, f32(-1.0)), f32(h)))
        x = int(min(max(xi, f32(-1.0)), f32(w)))
        return -1 if y < 0 or y >= h or x < 0 or x >= w else y * w + x

    @inline
    def round_half_away(v):
        a = min(abs(v), f32(2.0 ** 40))
        r = np.ceil(a) if a - np.floor(a) >= f32(0.5) else np.floor(a)
        return r if v >= f32(0.0) else -r

    @inline
    def transform_row(d, row):
        images, tr, out = view(d, 3, f32), view(d, 5, f32), view(d, 7, f32)
        p, fill = view(d, 9, np.int64), view(d, 11, f32)[0]
        h, w, c, oh, ow, n_tr, mode, nearest = p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8]
        img, oy = row // oh, row % oh
        t = tr[(img if n_tr > 1 else 0) * 8:(img if n_tr > 1 else 0) * 8 + 8]
        src = images[img * h * w * c:(img + 1) * h * w * c]
        ys = f32(oy)
        for ox in range(ow):
            o = out[((img * oh + oy) * ow + ox) * c:((img * oh + oy) * ow + ox + 1) * c]
            xs = f32(ox)
            proj = t[6] * xs + t[7] * ys + f32(1.0)
            if proj == f32(0.0):
                o[:] = fill
                continue
            x = (t[0] * xs + t[1] * ys + t[2]) / proj
            y = (t[3] * xs + t[4] * ys + t[5]) / proj
            if x != x or y != y:      # (min and max would turn a NaN into a bound)
                o[:] = fill
                continue
            x, y = map_coordinate(mode, x, w), map_coordinate(mode, y, h)
            if x != x or y != y:
                o[:] = fill
                continue
            if nearest:
                k = border_index(round_half_away(y), round_half_away(x), h, w)
                for ch in range(c):
                    o[ch] = fill if k < 0 else src[k * c + ch]
                continue
            x0, y0 = np.floor(x), np.floor(y)
            x1, y1 = x0 + f32(1.0), y0 + f32(1.0)
            k00, k01 = border_index(y0, x0, h, w), border_index(y0, x1, h, w)
            k10, k11 = border_index(y1, x0, h, w), border_index(y1, x1, h, w)
            wx0, wx1, wy0, wy1 = x1 - x, x - x0, y1 - y, y - y0
            for ch in range(c):
                v00 = fill if k00 < 0 else src[k00 * c + ch]
                v01 = fill if k01 < 0 else src[k01 * c + ch]
                v10 = fill if k10 < 0 else src[k10 * c + ch]
                v11 = fill if k11 < 0 else src[k11 * c + ch]
                o[ch] = wy0 * (wx0 * v00 + wx1 * v01) + wy1 * (wx0 * v10 + wx1 * v11)
