"""ATen kernels for the color ops: AdjustContrastv2, RGBToHSV, HSVToRGB, AdjustHue and
AdjustSaturation, each a few whole-image tensor expressions (no per-pixel Python).

The formulas are TF's CPU kernels': RGBToHSV/HSVToRGB as colorspace_op.h, AdjustHue through
the hue-and-value-range form (h in [0, 6)), AdjustSaturation through TF's rgb_to_hsv /
hsv_to_rgb helpers. Half-precision images compute in float32 and round once at the end.
"""

from __future__ import annotations

import torch

from ndflow.core.errors import FailedPreconditionError, InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import image_adjust, image_color

# For h-category k (0..5), which of (largest, middle, smallest) each of R, G, B takes: the
# six orderings of the color hexagon (TF's hv_range_to_rgb / hsv_to_rgb switch).
_SECTOR_ORDER = torch.tensor([[0, 1, 2], [1, 0, 2], [2, 0, 1], [2, 1, 0], [1, 2, 0], [0, 2, 1]])


def _compute(x: torch.Tensor) -> torch.Tensor:
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


def _check_adjust(op: str, x: torch.Tensor, scalar: torch.Tensor, scalar_name: str,
                  channels: bool) -> None:
    if x.dim() < 3:
        raise InvalidArgumentError(None, None, f"input must be at least 3-D, got shape"
                                               f"{list(x.shape)}".replace(" ", ""))
    if scalar.dim() != 0:
        raise InvalidArgumentError(None, None, f"{scalar_name} must be scalar: "
                                               f"{list(scalar.shape)}".replace(", ", ","))
    if channels and x.shape[-1] != 3:
        raise InvalidArgumentError(None, None, f"input must have 3 channels but instead has "
                                               f"{x.shape[-1]} channels.")


def _by_sector(sector: torch.Tensor, big, mid, small) -> torch.Tensor:
    """RGB from the three levels of each pixel and its hexagon sector (0..5)."""
    levels = torch.stack([big, mid, small], dim=-1)
    order = _SECTOR_ORDER.to(sector.device)[sector]
    return torch.gather(levels, -1, order)


def _hue6(r, g, b, vmax, span):
    """Hue in [0, 6) (0 where the pixel is gray), as TF's rgb_to_hsv times 6."""
    safe = torch.where(span > 0, span, torch.ones_like(span))
    h = torch.where(r == vmax, (g - b) / safe,
                    torch.where(g == vmax, (b - r) / safe + 2.0, (r - g) / safe + 4.0))
    h = torch.where(span > 0, h, torch.zeros_like(h))
    return torch.where(h < 0, h + 6.0, h)


@kernel(image_adjust.AdjustContrastv2)
def _adjust_contrast(node):
    def adjust_contrast(x, factor):
        _check_adjust("AdjustContrastv2", x, factor, "contrast_factor", channels=False)
        xc = _compute(x)
        mean = xc.mean(dim=(-3, -2), keepdim=True)
        return ((xc - mean) * factor.to(xc.dtype) + mean).to(x.dtype)
    return adjust_contrast


def _check_rgb(x: torch.Tensor) -> None:
    if x.dim() < 1 or x.shape[-1] != 3:
        n = x.shape[-1] if x.dim() else 0
        raise FailedPreconditionError(None, None, f"input must have 3 channels but input "
                                                  f"only has {n} channels.")


@kernel(image_color.RGBToHSV)
def _rgb_to_hsv(node):
    def rgb_to_hsv(x):
        _check_rgb(x)
        xc = _compute(x)
        r, g, b = xc.unbind(-1)
        v = xc.amax(-1)
        span = v - xc.amin(-1)
        s = torch.where(v > 0, span / torch.where(v > 0, v, torch.ones_like(v)),
                        torch.zeros_like(v))
        return torch.stack([_hue6(r, g, b, v, span) / 6.0, s, v], dim=-1).to(x.dtype)
    return rgb_to_hsv


@kernel(image_color.HSVToRGB)
def _hsv_to_rgb(node):
    def hsv_to_rgb(x):
        _check_rgb(x)
        h, s, v = _compute(x).unbind(-1)
        dh = h * 6.0
        dr = ((dh - 3.0).abs() - 1.0).clamp(0.0, 1.0)
        dg = (2.0 - (dh - 2.0).abs()).clamp(0.0, 1.0)
        db = (2.0 - (dh - 4.0).abs()).clamp(0.0, 1.0)
        one_s = 1.0 - s
        rgb = torch.stack([(one_s + s * dr) * v, (one_s + s * dg) * v, (one_s + s * db) * v],
                          dim=-1)
        return rgb.to(x.dtype)
    return hsv_to_rgb


@kernel(image_color.AdjustHue)
def _adjust_hue(node):
    def adjust_hue(x, delta):
        """One pass: hue in [0, 6) and the value range, shift, back to RGB."""
        _check_adjust("AdjustHue", x, delta, "delta", channels=True)
        xc = _compute(x)
        r, g, b = xc.unbind(-1)
        vmax, vmin = xc.amax(-1), xc.amin(-1)
        span = vmax - vmin
        h = torch.remainder(_hue6(r, g, b, vmax, span) + float(delta) * 6.0, 6.0)
        sector = h.long().clamp_(0, 5)
        ratio = h - sector
        ratio = torch.where(sector % 2 == 1, 1.0 - ratio, ratio)
        return _by_sector(sector, vmax, vmin + ratio * span, vmin).to(x.dtype)
    return adjust_hue


@kernel(image_color.AdjustSaturation)
def _adjust_saturation(node):
    def adjust_saturation(x, scale):
        """One pass: hue, saturation and value, scale the saturation, back to RGB."""
        _check_adjust("AdjustSaturation", x, scale, "scale", channels=True)
        xc = _compute(x)
        r, g, b = xc.unbind(-1)
        v = xc.amax(-1)
        span = v - xc.amin(-1)
        s = torch.where(v > 0, span / torch.where(v > 0, v, torch.ones_like(v)),
                        torch.zeros_like(v))
        s = (s * float(scale)).clamp(0.0, 1.0)
        dh = _hue6(r, g, b, v, span)
        c = s * v
        m = v - c
        sector = dh.long().clamp_(0, 5)
        x_mid = c * (1.0 - (torch.remainder(dh, 2.0) - 1.0).abs())
        rgb = _by_sector(sector, c, x_mid, torch.zeros_like(c)) + m.unsqueeze(-1)
        return rgb.to(x.dtype)
    return adjust_saturation
