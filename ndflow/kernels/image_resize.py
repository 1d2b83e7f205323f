"""ATen kernels for TF's resize ops and their gradients.

Every method is separable: along each axis an output pixel is a weighted sum of a few input
pixels ("taps"). The taps are computed once per (input size, output size) with NumPy float32
arithmetic, so the sample positions round exactly as TF's C++ does (`(i + 0.5f) * scale`, then
floor/ceil/roundf); the images are then combined with `index_select` (forward) or `index_add_`
(gradients: the transposed map) over whole tensors. Bilinear float32 images on the CPU take
kernels/resize_bilinear_numba.py (TF's lerps in one pass, on every thread); elsewhere ATen's
own `interpolate` serves TF's half-pixel and align-corners bilinear (to 1 ulp), but not its
legacy centers, Keys-cubic table and border renormalization or area weights, hence the taps.
"""

from __future__ import annotations

import functools

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812 - torch's convention

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import resize_bilinear_numba
from ndflow.kernels.registry import kernel
from ndflow.ops import image_resize as ops

_F32 = np.float32
_TABLE_SIZE = 1024


def _shape(t: torch.Tensor) -> str:
    return "[" + ",".join(str(d) for d in t.shape) + "]"


def _scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    """TF's CalculateResizeScale, in float32."""
    if align_corners and out_size > 1:
        return _F32(in_size - 1) / _F32(out_size - 1)
    return _F32(in_size) / _F32(out_size)


def _positions(out_size: int, scale: np.float32, half_pixel: bool, shift: bool) -> np.ndarray:
    """Sample positions in input coordinates: (i + 0.5) * scale [- 0.5], or i * scale."""
    i = np.arange(out_size, dtype=_F32)
    if not half_pixel:
        return i * scale
    pos = (i + _F32(0.5)) * scale
    return pos - _F32(0.5) if shift else pos


@functools.lru_cache(maxsize=256)
def bilinear_taps(in_size, out_size, align_corners, half_pixel):
    pos = _positions(out_size, _scale(in_size, out_size, align_corners), half_pixel, True)
    fl = np.floor(pos)
    lower = np.maximum(fl.astype(np.int64), 0)
    upper = np.minimum(np.ceil(pos).astype(np.int64), in_size - 1)
    return lower, upper, (pos - fl).astype(_F32)


@functools.lru_cache(maxsize=256)
def nearest_taps(in_size, out_size, align_corners, half_pixel):
    pos = _positions(out_size, _scale(in_size, out_size, align_corners), half_pixel, False)
    # roundf rounds halves away from zero (positions are >= 0 here).
    idx = np.floor(pos + _F32(0.5)) if align_corners else np.floor(pos)
    idx = np.minimum(idx.astype(np.int64), in_size - 1)
    return np.maximum(idx, 0) if half_pixel else idx


def _cubic_table(a: float) -> np.ndarray:
    x = np.arange(_TABLE_SIZE + 1, dtype=np.float64) / _TABLE_SIZE
    x = x.astype(_F32).astype(np.float64)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x1 = x + 1.0
    far = ((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a
    return np.stack([near, far], axis=1).astype(_F32)


_KEYS_TABLE = _cubic_table(-0.5)     # half-pixel centers: Keys' cubic
_LEGACY_TABLE = _cubic_table(-0.75)


@functools.lru_cache(maxsize=256)
def bicubic_taps(in_size, out_size, align_corners, half_pixel):
    """Four taps per output pixel; TF quantizes the fractional position to 1/1024."""
    pos = _positions(out_size, _scale(in_size, out_size, align_corners), half_pixel, True)
    base = np.floor(pos).astype(np.int64)
    offset = np.rint((pos - np.floor(pos)) * _F32(_TABLE_SIZE)).astype(np.int64)
    table = _KEYS_TABLE if half_pixel else _LEGACY_TABLE
    weights = np.stack([table[offset, 1], table[offset, 0], table[_TABLE_SIZE - offset, 0],
                        table[_TABLE_SIZE - offset, 1]], axis=1)
    raw = base[:, None] + np.arange(-1, 3)[None, :]
    idx = np.clip(raw, 0, in_size - 1)
    if half_pixel:  # taps outside the image get no weight; the rest are renormalized
        weights = np.where(idx == raw, weights, _F32(0))
        total = weights.sum(axis=1, dtype=_F32)
        ok = np.abs(total) >= _F32(1000.0) * np.finfo(_F32).tiny
        weights = np.where(ok[:, None], weights * (_F32(1) / np.where(ok, total, 1))[:, None],
                           weights)
    return idx, weights.astype(_F32)


@functools.lru_cache(maxsize=256)
def area_taps(in_size, out_size, align_corners):
    """Each output pixel averages the input cells it covers (partial cells by fraction)."""
    scale = _scale(in_size, out_size, align_corners)
    rows = []
    for i in range(out_size):
        lo, hi = _F32(i) * scale, _F32(i + 1) * scale
        taps = []
        for j in range(int(np.floor(lo)), int(np.ceil(hi))):
            if j < lo:
                w = scale if j + 1 > hi else _F32(j + 1) - lo
            else:
                w = hi - _F32(j) if j + 1 > hi else _F32(1.0)
            taps.append((min(max(j, 0), in_size - 1), _F32(w)))
        rows.append(taps)
    k = max(len(t) for t in rows)
    idx = np.zeros((out_size, k), np.int64)
    weights = np.zeros((out_size, k), _F32)
    for i, taps in enumerate(rows):
        for j, (ix, w) in enumerate(taps):
            idx[i, j], weights[i, j] = ix, w
    return idx, weights


def _weighted(x: torch.Tensor, axis: int, idx: np.ndarray, weights: np.ndarray) -> torch.Tensor:
    """sum_k weights[:, k] * x[idx[:, k]] along `axis` (1 = height, 2 = width)."""
    shape = [1, 1, 1, 1]
    shape[axis] = -1
    out = None
    for k in range(idx.shape[1]):
        i = torch.from_numpy(np.ascontiguousarray(idx[:, k])).to(x.device)
        w = torch.from_numpy(np.ascontiguousarray(weights[:, k])).to(x.device, x.dtype)
        term = x.index_select(axis, i) * w.view(shape)
        out = term if out is None else out + term
    return out


def _weighted_t(g: torch.Tensor, axis: int, idx: np.ndarray, weights: np.ndarray,
                in_size: int) -> torch.Tensor:
    """The transpose of `_weighted`: scatters g back onto `in_size` input positions."""
    shape = [1, 1, 1, 1]
    shape[axis] = -1
    out_shape = list(g.shape)
    out_shape[axis] = in_size
    out = g.new_zeros(out_shape)
    for k in range(idx.shape[1]):
        i = torch.from_numpy(np.ascontiguousarray(idx[:, k])).to(g.device)
        w = torch.from_numpy(np.ascontiguousarray(weights[:, k])).to(g.device, g.dtype)
        out.index_add_(axis, i, g * w.view(shape))
    return out


def _lerp(x: torch.Tensor, axis: int, taps) -> torch.Tensor:
    lower, upper, frac = taps
    shape = [1, 1, 1, 1]
    shape[axis] = -1
    dev = x.device
    a = x.index_select(axis, torch.from_numpy(lower).to(dev))
    b = x.index_select(axis, torch.from_numpy(upper).to(dev))
    return a + (b - a) * torch.from_numpy(frac).to(dev, x.dtype).view(shape)


def _lerp_taps(taps):
    lower, upper, frac = taps
    return np.stack([lower, upper], 1), np.stack([1 - frac, frac], 1).astype(_F32)


def _check(node, images: torch.Tensor, size: torch.Tensor, what: str = "input"):
    a = node.attrs
    if a.get("half_pixel_centers") and a.get("align_corners"):
        raise InvalidArgumentError(None, None, "If half_pixel_centers is True, align_corners "
                                               "must be False.")
    if images.dim() != 4:
        raise InvalidArgumentError(None, None, f"{what} must be 4-dimensional{_shape(images)}")
    if size.dim() != 1:
        raise InvalidArgumentError(None, None, f"shape_t must be 1-dimensional{_shape(size)}")
    if size.numel() != 2:
        raise InvalidArgumentError(None, None, f"shape_t must have two elements{_shape(size)}")
    h, w = (int(v) for v in size.tolist())
    if h <= 0 or w <= 0:
        raise InvalidArgumentError(None, None, "output dimensions must be positive")
    if what == "input" and (images.shape[1] == 0 or images.shape[2] == 0):
        raise InvalidArgumentError(None, None, "input image must be of non-zero size")
    return h, w


def _flags(node):
    return bool(node.attrs.get("align_corners", False)), \
        bool(node.attrs.get("half_pixel_centers", False))


def _as_float(x: torch.Tensor) -> torch.Tensor:
    return x if x.dtype == torch.float32 else x.to(torch.float32)


@kernel(ops.ResizeBilinear)
def _resize_bilinear(node):
    corners, half = _flags(node)

    def resize_bilinear(images, size):
        oh, ow = _check(node, images, size)
        x = _as_float(images)
        if resize_bilinear_numba.applies(x):   # TF's lerps, in one pass on every thread
            return resize_bilinear_numba.resize(x, bilinear_taps(x.shape[1], oh, corners, half),
                                                bilinear_taps(x.shape[2], ow, corners, half))
        if half or corners:
            # ATen's bilinear samples exactly where TF's half-pixel / align_corners modes do
            # (checked against TF to 1e-7) and runs 3x faster on the NHWC (channels-last)
            # view than the taps below.
            y = F.interpolate(x.permute(0, 3, 1, 2), size=(oh, ow), mode="bilinear",
                              align_corners=corners)
            return y.permute(0, 2, 3, 1).contiguous()
        # TF's legacy centers: width first, then height, as its (top, bottom) lerps.
        x = _lerp(x, 2, bilinear_taps(x.shape[2], ow, corners, half))
        return _lerp(x, 1, bilinear_taps(x.shape[1], oh, corners, half))
    return resize_bilinear


@kernel(ops.ResizeBilinearGrad)
def _resize_bilinear_grad(node):
    corners, half = _flags(node)

    def resize_bilinear_grad(grads, original):
        if grads.dim() != 4:
            raise InvalidArgumentError(None, None, f"input_grad must be 4-dimensional"
                                                   f"{_shape(grads)}")
        if original.dim() != 4:
            raise InvalidArgumentError(None, None, f"original_image must be 4-dimensional"
                                                   f"{_shape(original)}")
        n, h, w, c = original.shape
        g = _as_float(grads)
        if half or corners:  # ATen's adjoint of the same sampling (see ResizeBilinear)
            gx = torch.ops.aten.upsample_bilinear2d_backward(
                g.permute(0, 3, 1, 2), list(g.shape[1:3]), [n, c, h, w], corners, None, None)
            return gx.permute(0, 2, 3, 1).contiguous().to(original.dtype)
        g = _weighted_t(g, 1, *_lerp_taps(bilinear_taps(h, g.shape[1], corners, half)), h)
        g = _weighted_t(g, 2, *_lerp_taps(bilinear_taps(w, g.shape[2], corners, half)), w)
        return g.to(original.dtype)
    return resize_bilinear_grad


def _nearest_gather(x: torch.Tensor, oh: int, ow: int, corners: bool, half: bool):
    dev = x.device
    x = x.index_select(1, torch.from_numpy(nearest_taps(x.shape[1], oh, corners, half)).to(dev))
    return x.index_select(2, torch.from_numpy(nearest_taps(x.shape[2], ow, corners, half))
                          .to(dev))


@kernel(ops.ResizeNearestNeighbor)
def _resize_nearest(node):
    corners, half = _flags(node)

    def resize_nearest(images, size):
        oh, ow = _check(node, images, size)
        return _nearest_gather(images, oh, ow, corners, half)
    return resize_nearest


@kernel(ops.ResizeNearestNeighborGrad)
def _resize_nearest_grad(node):
    corners, half = _flags(node)

    def resize_nearest_grad(grads, size):
        h, w = _check(node, grads, size, "input_grad")
        one = np.ones((grads.shape[1], 1), _F32)
        compute = grads.to(torch.float32) if not grads.dtype.is_floating_point else grads
        g = _weighted_t(compute, 1, nearest_taps(h, grads.shape[1], corners, half)[:, None],
                        one, h)
        one = np.ones((grads.shape[2], 1), _F32)
        g = _weighted_t(g, 2, nearest_taps(w, grads.shape[2], corners, half)[:, None], one, w)
        return g.to(grads.dtype)
    return resize_nearest_grad


@kernel(ops.ResizeBicubic)
def _resize_bicubic(node):
    corners, half = _flags(node)

    def resize_bicubic(images, size):
        oh, ow = _check(node, images, size)
        x = _as_float(images)
        # Height first, then width, as TF's cached row interpolation.
        x = _weighted(x, 1, *bicubic_taps(x.shape[1], oh, corners, half))
        return _weighted(x, 2, *bicubic_taps(x.shape[2], ow, corners, half))
    return resize_bicubic


@kernel(ops.ResizeBicubicGrad)
def _resize_bicubic_grad(node):
    corners, half = _flags(node)

    def resize_bicubic_grad(grads, original):
        if grads.dim() != 4 or original.dim() != 4:
            raise InvalidArgumentError(None, None, "input_grad and original_image must be "
                                                   "4-dimensional")
        _, h, w, _ = original.shape
        g = _as_float(grads)
        g = _weighted_t(g, 2, *bicubic_taps(w, g.shape[2], corners, half), w)
        g = _weighted_t(g, 1, *bicubic_taps(h, g.shape[1], corners, half), h)
        return g.to(original.dtype)
    return resize_bicubic_grad


@kernel(ops.ResizeArea)
def _resize_area(node):
    corners = bool(node.attrs.get("align_corners", False))

    def resize_area(images, size):
        oh, ow = _check(node, images, size)
        x = _as_float(images)
        h_idx, h_w = area_taps(x.shape[1], oh, corners)
        w_idx, w_w = area_taps(x.shape[2], ow, corners)
        # 1 / (height_scale * width_scale): a float32 product, divided in double, as TF.
        cell = _scale(x.shape[1], oh, corners) * _scale(x.shape[2], ow, corners)
        scale = _F32(1.0 / np.float64(cell))
        x = _weighted(x, 2, w_idx, w_w)
        return _weighted(x, 1, h_idx, h_w) * float(scale)
    return resize_area
