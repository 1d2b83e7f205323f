"""ATen kernels for the color ops: AdjustContrastv2, RGBToHSV, HSVToRGB, AdjustHue and
AdjustSaturation, each a few whole-image tensor expressions (no per-pixel Python).

The formulas are TF's CPU kernels': RGBToHSV/HSVToRGB as colorspace_op.h, AdjustHue through
the hue-and-value-range form (h in [0, 6)), AdjustSaturation through TF's rgb_to_hsv /
hsv_to_rgb helpers. Half-precision images compute in float32 and round once at the end.
"""

from __future__ import annotations

import torch

from ndflow.core.errors import FailedPreconditionError, InvalidArgumentError
from ndflow.kernels import image_color_numba
from ndflow.kernels.registry import kernel
from ndflow.ops import image_adjust, image_color


def _compute(x: torch.Tensor) -> torch.Tensor:
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


def _planes(x: torch.Tensor) -> torch.Tensor:
    """[..., 3] -> contiguous [3, ...]: per-channel planes make every later op a dense
    elementwise one (reductions over a last axis of 3 are slow in ATen)."""
    return _compute(x).movedim(-1, 0).contiguous()


def _interleave(planes: torch.Tensor, dtype) -> torch.Tensor:
    return planes.movedim(0, -1).contiguous().to(dtype)


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


def _hexagon(h6: torch.Tensor) -> torch.Tensor:
    """Per channel, where between the smallest (0) and largest (1) component a pixel of hue
    h6 in [0, 6] lies: TF's HSVToRGB ramps, equal to its sector-by-sector switch."""
    return torch.stack([(h6 - 3.0).abs_().sub_(1.0), (h6 - 2.0).abs_().neg_().add_(2.0),
                        (h6 - 4.0).abs_().neg_().add_(2.0)]).clamp_(0.0, 1.0)


def _value_range(p: torch.Tensor):
    r, g, b = p
    vmax = torch.maximum(torch.maximum(r, g), b)
    vmin = torch.minimum(torch.minimum(r, g), b)
    return r, g, b, vmax, vmin, vmax - vmin


def _hue6(r, g, b, vmax, span):
    """Hue in [0, 6) (0 where the pixel is gray), as TF's rgb_to_hsv times 6."""
    safe = torch.where(span > 0, span, torch.ones_like(span))
    h = torch.where(r == vmax, g - b, torch.where(g == vmax, b - r + 2 * safe,
                                                  r - g + 4 * safe))
    h.div_(safe)
    h.masked_fill_(span <= 0, 0.0)
    return torch.where(h < 0, h + 6.0, h)


def _saturation(vmax, span):
    safe = torch.where(vmax > 0, vmax, torch.ones_like(vmax))
    return torch.where(vmax > 0, span / safe, torch.zeros_like(vmax))


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
        r, g, b, v, _, span = _value_range(_planes(x))
        h = _hue6(r, g, b, v, span).div_(6.0)
        return _interleave(torch.stack([h, _saturation(v, span), v]), x.dtype)
    return rgb_to_hsv


@kernel(image_color.HSVToRGB)
def _hsv_to_rgb(node):
    def hsv_to_rgb(x):
        _check_rgb(x)
        h, s, v = _planes(x)
        # (1 - s + s * ramp) * v, as colorspace_op.h.
        rgb = _hexagon(h * 6.0).mul_(s).add_(1.0 - s).mul_(v)
        return _interleave(rgb, x.dtype)
    return hsv_to_rgb


@kernel(image_color.AdjustHue)
def _adjust_hue(node):
    def adjust_hue(x, delta):
        """One pass: hue in [0, 6) and the value range, shift, back to RGB (each channel is
        min + range * ramp(hue), which is TF's hv_range_to_rgb)."""
        _check_adjust("AdjustHue", x, delta, "delta", channels=True)
        if image_color_numba.applies(x):   # the same arithmetic, one pass per pixel
            return image_color_numba.adjust(x, image_color_numba.HUE, float(delta))
        r, g, b, vmax, vmin, span = _value_range(_planes(x))
        h = torch.remainder(_hue6(r, g, b, vmax, span).add_(float(delta) * 6.0), 6.0)
        return _interleave(_hexagon(h).mul_(span).add_(vmin), x.dtype)
    return adjust_hue


@kernel(image_color.AdjustSaturation)
def _adjust_saturation(node):
    def adjust_saturation(x, scale):
        """One pass: hue, saturation and value, scale the saturation, back to RGB."""
        _check_adjust("AdjustSaturation", x, scale, "scale", channels=True)
        if image_color_numba.applies(x):
            return image_color_numba.adjust(x, image_color_numba.SATURATION, float(scale))
        r, g, b, v, _, span = _value_range(_planes(x))
        c = _saturation(v, span).mul_(float(scale)).clamp_(0.0, 1.0).mul_(v)
        rgb = _hexagon(_hue6(r, g, b, v, span)).mul_(c).add_(v - c)
        return _interleave(rgb, x.dtype)
    return adjust_saturation
