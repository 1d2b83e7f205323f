"""ATen kernels of ExtractGlimpse and ExtractGlimpseV2 (ops/image_glimpse.py), as TF's CPU
kernel (core/kernels/image/attention_ops.cc over Eigen's ExtractGlimpses,
core/kernels/eigen_attention.h) computes them.

Each image's window offset is computed in float32 with TF's operations in TF's order (the
image and window sizes converted to float, `/ 2.0f`), then truncated toward zero to int64 as
C++'s cast: a NaN or an offset beyond int64 (x86's "integer indefinite" value, the most
negative int64) puts the whole window outside the image. Output pixel (i, j) of image b is
input pixel (oy + i, ox + j) where that lies inside the image, and noise elsewhere; pixels
are copied exactly (the offsets are computed on the host; on a CPU in NumPy, one slice copy
per window as TF's, or one gather for many small windows; elsewhere one ATen gather). The
noise is computed only for the images whose window leaves the image, from torch's generator
on the input's device (on a CPU, NumPy's, seeded from torch's): 'uniform' is
min + u (max - min) in float32 with u in [0, 1) and min / max over the whole image (all
channels), 'gaussian' mean + n sigma per channel (sigma the population standard deviation),
clipped to the channel's [min, max], 'zero' zeros. (An empty image has NaN statistics, as
Eigen's reductions give it.)
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import fmt
from ndflow.kernels.registry import kernel
from ndflow.ops import image_glimpse as ops

_F32 = torch.float32
_OUTSIDE = -(1 << 62)  # an offset putting any window wholly outside any image
_LIMIT = np.float32(2.0 ** 62)


def _bad(message: str):
    raise InvalidArgumentError(None, None, message)


def _noise_mode(node) -> str:
    """The fill of the op's attrs (TF's ExtractGlimpseOp constructor and its errors)."""
    uniform = bool(node.attrs.get("uniform_noise", True))
    noise = node.attrs.get("noise", "uniform")
    noise = noise.decode() if isinstance(noise, bytes) else str(noise)
    if uniform and noise not in ("", "uniform"):
        _bad("The uniform_noise and noise could not be specified at the same time")
    if not noise:
        return "uniform" if uniform else "gaussian"
    if noise not in ("uniform", "gaussian", "zero"):
        _bad(f"The noise could only be uniform, gaussian, or zero, got{noise}")
    return noise


def window_corners(offsets: np.ndarray, height: int, width: int, gh: int, gw: int,
                   version: int, normalized: bool, centered: bool):
    """(oy, ox): int64 [batch] top-left pixels of the windows, TF's float32 arithmetic."""
    f = np.float32
    y, x = offsets[:, 0].astype(f), offsets[:, 1].astype(f)
    h, w = f(height), f(width)                  # C++'s (float) of the int64 sizes
    two = f(2)
    with np.errstate(all="ignore"):
        if version == 1 or (normalized and centered):
            if normalized:
                y, x = y * h, x * w
            if centered:
                y, x = y / two + h / two, x / two + w / two
            y, x = y - f(gh) / two, x - f(gw) / two
        elif centered:                          # V2, unnormalized centered offsets
            y, x = y + h / two, x + w / two
        elif normalized:                        # V2, normalized uncentered offsets
            y, x = y * h, x * w
        return _truncate(y), _truncate(x)


def _truncate(v: np.ndarray) -> np.ndarray:
    """C++'s (int64) cast of float32 `v` on x86: toward zero, NaN / out of range -> outside."""
    ok = np.isfinite(v) & (np.abs(v) < _LIMIT)
    return np.where(ok, np.trunc(np.where(ok, v, 0)), _OUTSIDE).astype(np.int64)


def _noise(images: torch.Tensor, shape, mode: str) -> torch.Tensor:
    """Noise [n, gh, gw, c] for the images `images` [n, h, w, c] whose windows leave them."""
    n, c = images.shape[0], images.shape[3]
    if images[0].numel() == 0:               # Eigen's statistics of an empty image
        return torch.full(shape, float("nan"), dtype=_F32, device=images.device)
    if mode == "uniform":
        flat = images.reshape(n, -1)
        low, high = flat.amin(1), flat.amax(1)  # (aminmax(dim) is far slower in ATen)
        u = torch.rand(shape, dtype=_F32, device=images.device)
        return low.view(n, 1, 1, 1) + u * (high - low).view(n, 1, 1, 1)
    planes = images.reshape(n, -1, c).transpose(1, 2).contiguous()     # [n, c, h w]
    mean = planes.mean(2, keepdim=True)
    sigma = (planes - mean).square_().mean(2).sqrt_()
    low, high = planes.amin(2), planes.amax(2)
    draws = torch.randn(shape, dtype=_F32, device=images.device)
    value = mean.view(n, 1, 1, c) + draws * sigma.view(n, 1, 1, c)
    return torch.minimum(value, high.view(n, 1, 1, c)).maximum(low.view(n, 1, 1, c))


def _check(image, size, offsets) -> tuple[int, int]:
    if image.dim() != 4:
        _bad(f"input must be 4-dimensional (batch_size, height, width, depth){fmt(image.shape)}")
    if size.dim() != 1 or size.shape[0] != 2:
        _bad(f"input must be a vector of size 2 (height, width){fmt(size.shape)}")
    gh, gw = (int(v) for v in size.tolist())
    for d in (gh, gw):
        if d < 0:
            _bad(f"Expected a non-negative size, got {d}")
    if offsets.dim() != 2:
        _bad(f"input must be a matrix{fmt(offsets.shape)}")
    if offsets.shape[0] != image.shape[0]:
        _bad(f"first dimension should be batch{fmt(offsets.shape)}")
    if offsets.shape[1] != 2:
        _bad(f"second dimension should be of size 2 (y,x){fmt(offsets.shape)}")
    return gh, gw


def _host_noise(image: np.ndarray, shape, mode: str, seed: int) -> np.ndarray:
    """_noise on the host, image by image in NumPy (no thread pool to wait on), its
    generator seeded from torch's."""
    gen = np.random.default_rng(seed)
    c = image.shape[-1]
    if image[0].size == 0:
        return np.full(shape, np.nan, np.float32)
    out = np.empty(shape, np.float32)
    for n in range(shape[0]):
        if mode == "uniform":
            low, high = image[n].min(), image[n].max()
            out[n] = low + gen.random(shape[1:], np.float32) * (high - low)
            continue
        planes = np.ascontiguousarray(np.moveaxis(image[n], -1, 0)).reshape(c, -1)
        mean = planes.mean(1, dtype=np.float32)
        sigma = np.sqrt(np.square(planes - mean[:, None]).mean(1, dtype=np.float32))
        value = mean + gen.standard_normal(shape[1:], np.float32) * sigma
        out[n] = np.maximum(np.minimum(value, planes.max(1)), planes.min(1))
    return out


def on_host(device: torch.device) -> bool:
    """Whether glimpses of images on `device` are made in NumPy (else with ATen ops on the
    device; tests force that path on a CPU)."""
    return device.type == "cpu"


def extract_glimpses(image, gh: int, gw: int, offsets, version: int, normalized: bool,
                     centered: bool, mode: str) -> torch.Tensor:
    b, h, w, c = image.shape
    if b * gh * gw * c == 0:
        return image.new_zeros((b, gh, gw, c))
    host = offsets.detach().cpu().numpy() if isinstance(offsets, torch.Tensor) else \
        np.asarray(offsets)
    oy, ox = window_corners(host, h, w, gh, gw, version, normalized, centered)
    rows = oy[:, None] + np.arange(gh)                          # [b, gh], on the host
    cols = ox[:, None] + np.arange(gw)                          # [b, gw]
    in_rows, in_cols = (rows >= 0) & (rows < h), (cols >= 0) & (cols < w)
    which = np.flatnonzero(~(in_rows.all(1) & in_cols.all(1)))  # windows leaving the image
    dev = image.device
    if on_host(dev):
        return torch.from_numpy(_glimpses_on_host(
            image.detach().contiguous().numpy(), gh, gw, oy, ox, rows, cols, in_rows, in_cols,
            which, mode))
    if h == 0 or w == 0:
        out = image.new_zeros((b, gh, gw, c))
    else:                                                       # one gather of all pixels
        base = (np.arange(b)[:, None] * h + rows.clip(0, h - 1)) * w
        index = torch.from_numpy((base[:, :, None] + cols.clip(0, w - 1)[:, None, :])
                                 .reshape(-1)).to(dev)
        out = image.reshape(-1, c).index_select(0, index).reshape(b, gh, gw, c)
    if which.size == 0:
        return out
    inside = torch.from_numpy(in_rows[which][:, :, None, None] &
                              in_cols[which][:, None, :, None]).to(dev)
    picked = torch.from_numpy(which).to(dev)
    if mode == "zero":
        fill = torch.zeros((), dtype=_F32, device=dev)
    else:
        fill = _noise(image if which.size == b else image.index_select(0, picked),
                      (which.size, gh, gw, c), mode)
    if which.size == b:
        return torch.where(inside, out, fill)
    out[picked] = torch.where(inside, out.index_select(0, picked), fill)
    return out


_COPY_LOOP_PIXELS = 2048    # windows this large are copied one by one, smaller gathered


def _glimpses_on_host(src, gh, gw, oy, ox, rows, cols, in_rows, in_cols, which, mode):
    """The glimpses as TF's CPU kernel makes them: each window's part inside its image one
    slice copy over its fill (noise or zeros) where it leaves the image; many small windows
    as one gather instead."""
    b, h, w, c = src.shape
    if h == 0 or w == 0 or gh * gw * c >= _COPY_LOOP_PIXELS:
        out = np.empty((b, gh, gw, c), np.float32)
        for n in range(b):
            r0, r1 = max(oy[n], 0), min(oy[n] + gh, h)
            c0, c1 = max(ox[n], 0), min(ox[n] + gw, w)
            if r0 < r1 and c0 < c1:
                out[n, r0 - oy[n]:r1 - oy[n], c0 - ox[n]:c1 - ox[n]] = src[n, r0:r1, c0:c1]
    else:
        out = src[np.arange(b)[:, None, None], rows.clip(0, h - 1)[:, :, None],
                  cols.clip(0, w - 1)[:, None, :]]
    if which.size == 0:
        return out
    inside = in_rows[which][:, :, None, None] & in_cols[which][:, None, :, None]
    if mode == "zero":
        fill = np.float32(0)
    else:
        seed = int(torch.randint(0, 1 << 62, ()))           # torch's generator decides
        fill = _host_noise(src[which] if which.size < b else src, (which.size, gh, gw, c),
                           mode, seed)
    out[which] = np.where(inside, out[which], fill)
    return out


def _glimpse_kernel(version: int):
    def factory(node):
        mode = _noise_mode(node)
        normalized = bool(node.attrs.get("normalized", True))
        centered = bool(node.attrs.get("centered", True))

        def extract_glimpse(image, size, offsets):
            gh, gw = _check(image, size, offsets)
            return extract_glimpses(image.to(_F32), gh, gw, offsets, version, normalized,
                                    centered, mode)
        return extract_glimpse
    return factory


kernel(ops.ExtractGlimpse)(_glimpse_kernel(1))
kernel(ops.ExtractGlimpseV2)(_glimpse_kernel(2))
