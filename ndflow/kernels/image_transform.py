"""ATen kernel for ImageProjectiveTransformV2/V3: TF's image_ops.h ProjectiveGenerator as
whole-tensor expressions (no per-pixel Python); float32 images on CPUs run the same
arithmetic per pixel in kernels/image_transform_numba.py.

Per output pixel the input point is computed in float32 exactly as TF does, mapped by the
fill mode (scipy's reflect/wrap rules, TF's truncating integer casts, then a clamp), and sampled:
NEAREST rounds halves away from zero; BILINEAR reads the four neighbours (fill_value outside
the image) and blends in float32, for every dtype, before the cast back (truncating for
integers, as TF's `T(float)`). Points left outside the image (CONSTANT) or with a zero
projective denominator give fill_value.
"""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import image_transform_numba
from ndflow.kernels.registry import kernel
from ndflow.ops import image_transform as ops

_MODES = ("REFLECT", "WRAP", "CONSTANT", "NEAREST")
_INTERPOLATIONS = ("NEAREST", "BILINEAR")


def _attr(node, name, default=None) -> str:
    v = node.attrs.get(name, default)
    return v.decode() if isinstance(v, bytes) else str(v)


def _trunc_int(v: torch.Tensor) -> torch.Tensor:
    """C++'s static_cast<int64>(float): truncation toward zero, kept as float."""
    return torch.trunc(v)


def _map_reflect(c: torch.Tensor, n: int) -> torch.Tensor:
    if n <= 1:
        return torch.zeros_like(c)
    sz2 = float(2 * n)
    neg = c + sz2 * _trunc_int(-c / sz2)
    neg = torch.where(neg < -n, neg + sz2, -neg - 1)
    pos = c - sz2 * _trunc_int(c / sz2)
    pos = torch.where(pos >= n, sz2 - pos - 1, pos)
    out = torch.where(c < 0, neg, torch.where(c > n - 1, pos, c))
    return out.clamp(0.0, float(n - 1))


def _map_wrap(c: torch.Tensor, n: int) -> torch.Tensor:
    if n <= 1:
        return torch.zeros_like(c)
    sz = float(n - 1)
    neg = c + n * (_trunc_int(-c / sz) + 1)
    pos = c - n * _trunc_int(c / sz)
    out = torch.where(c < 0, neg, torch.where(c > n - 1, pos, c))
    return out.clamp(0.0, float(n - 1))


def _map(mode: str, c: torch.Tensor, n: int) -> torch.Tensor:
    if mode == "REFLECT":
        return _map_reflect(c, n)
    if mode == "WRAP":
        return _map_wrap(c, n)
    if mode == "NEAREST":
        return c.clamp(0.0, float(n - 1))
    return c


def _round_half_away(v: torch.Tensor) -> torch.Tensor:
    """std::round (halves away from zero) as int64; huge values are clamped first so the
    conversion stays defined (they are outside the image either way)."""
    a = v.abs().clamp(max=2.0 ** 40)
    r = torch.where(a - a.floor() >= 0.5, a.ceil(), a.floor())
    return (r * torch.sign(v)).long()


def _check(images, transforms, output_shape):
    if images.dim() != 4:
        raise InvalidArgumentError(None, None, "Input images must have rank 4")
    if transforms.dim() != 2 or transforms.shape[1] != 8 or \
            transforms.shape[0] not in (1, images.shape[0]):
        raise InvalidArgumentError(None, None, "Input transform should be num_images x 8 "
                                               "or 1 x 8")
    if output_shape.dim() != 1 or output_shape.shape[0] != 2:
        raise InvalidArgumentError(None, None, "output shape must be 1-dimensional")
    oh, ow = (int(v) for v in output_shape.tolist())
    if oh <= 0 or ow <= 0:
        raise InvalidArgumentError(None, None, "output dimensions must be positive")
    return oh, ow


def projective_transform(images, transforms, oh, ow, fill, interpolation, mode):
    if image_transform_numba.applies(images):
        return image_transform_numba.projective_transform(images, transforms, oh, ow, fill,
                                                          interpolation, mode)
    return aten_projective_transform(images, transforms, oh, ow, fill, interpolation, mode)


def aten_projective_transform(images, transforms, oh, ow, fill, interpolation, mode):
    b, h, w, ch = images.shape
    dev = images.device
    t = transforms.to(torch.float32)[:, :, None, None]          # [N, 8, 1, 1]
    ys = torch.arange(oh, dtype=torch.float32, device=dev)[:, None]
    xs = torch.arange(ow, dtype=torch.float32, device=dev)[None, :]
    proj = t[:, 6] * xs + t[:, 7] * ys + 1.0                     # [N, OH, OW]
    in_x = (t[:, 0] * xs + t[:, 1] * ys + t[:, 2]) / proj
    in_y = (t[:, 3] * xs + t[:, 4] * ys + t[:, 5]) / proj
    nowhere = proj == 0
    x = torch.where(nowhere, -1.0, _map(mode, in_x, w))
    y = torch.where(nowhere, -1.0, _map(mode, in_y, h))
    nearest = interpolation == "NEAREST"
    # A one-pixel border of fill_value: every out-of-image neighbour is clamped onto it, so
    # reads need no masks; flat index 0 (a border pixel) serves zero-denominator points.
    work = images if nearest else images.to(torch.float32)
    padded = torch.full((b, h + 2, w + 2, ch), fill, dtype=work.dtype, device=dev)
    padded[:, 1:-1, 1:-1] = work
    flat = padded.reshape(b, (h + 2) * (w + 2), ch)

    def index(yi: torch.Tensor, xi: torch.Tensor) -> torch.Tensor:
        yi = (yi.clamp(-1.0, float(h)) + 1.0).long()
        xi = (xi.clamp(-1.0, float(w)) + 1.0).long()
        return torch.where(nowhere, 0, yi * (w + 2) + xi)

    def gather(idx: torch.Tensor, k: int) -> torch.Tensor:
        """idx [N, k, OH, OW] -> pixels [B, k, OH, OW, C]."""
        idx = idx.reshape(idx.shape[0], -1, 1).expand(b, k * oh * ow, ch)
        return torch.gather(flat, 1, idx).reshape(b, k, oh, ow, ch)

    if nearest:  # a gather in the input's dtype: exact
        return gather(index(_round_half_away(y).float(), _round_half_away(x).float())[:, None],
                      1)[:, 0]
    x0, y0 = x.floor(), y.floor()
    x1, y1 = x0 + 1, y0 + 1
    idx = torch.stack([index(y0, x0), index(y0, x1), index(y1, x0), index(y1, x1)], 1)
    v = gather(idx, 4)
    wx0, wx1 = (x1 - x)[..., None], (x - x0)[..., None]
    top = wx0 * v[:, 0] + wx1 * v[:, 1]
    bottom = wx0 * v[:, 2] + wx1 * v[:, 3]
    out = (y1 - y)[..., None] * top + (y - y0)[..., None] * bottom
    if not images.dtype.is_floating_point:
        out = torch.trunc(out)
    return out.to(images.dtype)


def _factory(node, has_fill: bool):
    interpolation = _attr(node, "interpolation")
    mode = _attr(node, "fill_mode", "CONSTANT")
    if interpolation not in _INTERPOLATIONS:
        raise InvalidArgumentError(None, None, f"Invalid interpolation {interpolation}")
    if mode not in _MODES:
        raise InvalidArgumentError(None, None, f"Invalid fill_mode {mode}")

    def transform(images, transforms, output_shape, fill_value=None):
        oh, ow = _check(images, transforms, output_shape)
        fill = float(fill_value) if fill_value is not None else 0.0
        if not images.dtype.is_floating_point:
            fill = float(int(fill))  # static_cast<T>(float)
        return projective_transform(images, transforms, oh, ow, fill, interpolation, mode)

    if has_fill:
        return transform
    return lambda images, transforms, output_shape: transform(images, transforms, output_shape)


@kernel(ops.ImageProjectiveTransformV3)
def _projective_v3(node):
    return _factory(node, True)


@kernel(ops.ImageProjectiveTransformV2)
def _projective_v2(node):
    return _factory(node, False)
