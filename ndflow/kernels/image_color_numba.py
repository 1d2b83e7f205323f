"""AdjustHue and AdjustSaturation of float32 RGB CPU images in one pass per pixel: a numba
callback run on ATen's OpenMP team (kernels/omp_pool.py) instead of kernels/image_color.py's
dozen whole-image ATen passes (each pixel's three values are read once, its three results
written once).

The arithmetic is kernels/image_color.py's, operation for operation in float32 (hue in
[0, 6), the shift, ATen's remainder, the hexagon ramps, `ramp * span + min` for the hue and
`ramp * c + (v - c)` for the saturation), so the results are bit for bit those of the ATen
kernels, which equal TF's CPU kernels' (tests/ops/test_image_color_numba.py).
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool
from ndflow.kernels.build_once import built_once

CHUNK = 1 << 13           # pixels per claimed chunk
HUE, SATURATION = 0, 1
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = hue6 = ramp = None


def applies(x: torch.Tensor) -> bool:
    """Whether an adjustment of `x` runs here: float32 [..., 3] on the CPU."""
    return (x.dtype == torch.float32 and x.device.type == "cpu" and x.dim() >= 1
            and x.shape[-1] == 3 and _callback() is not None)


_callback = built_once(lambda: _build() if omp_pool.launcher() is not None else None)


def adjust(x: torch.Tensor, mode: int, amount: float) -> torch.Tensor:
    """`x` with its hue shifted by `amount` (of the circle; mode HUE) or its saturation
    scaled by `amount` (mode SATURATION)."""
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel() // 3
    if n == 0:
        return out
    params = np.array([amount * 6.0 if mode == HUE else amount], np.float32)
    modes = np.array([mode], np.int64)
    omp_pool.run_chunks(_callback(), n, CHUNK, [x, out, params, modes],
                        torch.get_num_threads())
    return out


def _build():
    nb = omp_pool.callback_builder(needs_launcher=False)
    if nb is None:
        return None
    numba, cfunc, types = nb.numba, nb.cfunc, nb.types
    njit = numba.njit
    global claim_chunk, address_as_pointer, carray, hue6, ramp
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    f32 = np.float32

    @njit(cache=True, inline="always")
    def hue6(r, g, b, vmax, span):
        """Hue in [0, 6) (0 where the pixel is gray), as image_color._hue6."""
        safe = span if span > f32(0) else f32(1)
        if r == vmax:
            h = g - b
        elif g == vmax:
            h = b - r + f32(2) * safe
        else:
            h = r - g + f32(4) * safe
        h = h / safe
        if span <= f32(0):
            h = f32(0)
        return h + f32(6) if h < f32(0) else h

    @njit(cache=True, inline="always")
    def ramp(h6, channel):
        """image_color._hexagon's ramp of `channel` at hue h6."""
        if channel == 0:
            t = abs(h6 - f32(3)) - f32(1)
        elif channel == 1:
            t = f32(2) - abs(h6 - f32(2))
        else:
            t = f32(2) - abs(h6 - f32(4))
        return min(max(t, f32(0)), f32(1))

    # data = [counter, pixels, chunk, (address, length) of x, out, params, modes]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def adjust_pixels(data):
        d = carray(data, 12, dtype=np.int64)
        n, chunk = d[1], d[2]
        amount = carray(address_as_pointer(d[7], np.float32), 1)[0]
        mode = carray(address_as_pointer(d[9], np.int64), 1)[0]
        x = carray(address_as_pointer(d[3], np.float32), d[4])
        out = carray(address_as_pointer(d[5], np.float32), d[6])
        q = claim_chunk(data)
        while q * chunk < n:
            for i in range(q * chunk, min(q * chunk + chunk, n)):
                r, g, b = x[3 * i], x[3 * i + 1], x[3 * i + 2]
                vmax = max(max(r, g), b)
                vmin = min(min(r, g), b)
                span = vmax - vmin
                h = hue6(r, g, b, vmax, span)
                if mode == 0:   # hue: shift, ATen's remainder by 6, min + span * ramp
                    h = h + amount
                    # fmod(h, 6) without the libm call where it is exact: h itself inside
                    # (-6, 6), h - 6 in [6, 12) (Sterbenz)
                    if f32(-6) < h < f32(6):
                        m = h
                    elif f32(6) <= h < f32(12):
                        m = h - f32(6)
                    else:
                        m = f32(np.fmod(h, f32(6)))
                    if m != f32(0) and m < f32(0):
                        m = m + f32(6)
                    for k in range(3):
                        out[3 * i + k] = ramp(m, k) * span + vmin
                else:           # saturation: c = clamp(s * scale) * v, (v - c) + c * ramp
                    s = span / vmax if vmax > f32(0) else f32(0)
                    c = min(max(s * amount, f32(0)), f32(1)) * vmax
                    for k in range(3):
                        out[3 * i + k] = ramp(h, k) * c + (vmax - c)
            q = claim_chunk(data)

    return adjust_pixels.address
