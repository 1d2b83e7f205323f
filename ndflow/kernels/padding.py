"""Constant padding that writes each output element once.

ATen's `constant_pad_nd` fills its whole output with the value and then copies the input
over the interior, so a padded convolution input is written twice. Here the interior is
copied and only the border slabs are filled. That is one launch per padded side more, which
pays off only for large tensors: padding a [64, 14, 14, 64] NHWC activation by one row and
column (a stride-2 SAME convolution's extra bottom/right pad) took 230 instead of 270 us,
a [16, 16, 16, 64] one lost 18 us (2-core AMX Xeon), hence `MIN_ELEMENTS`.
"""

from __future__ import annotations

import torch

aten = torch.ops.aten

MIN_ELEMENTS = 1 << 19   # outputs below this pad faster in ATen's one call (measured above)


def constant_pad(x: torch.Tensor, pads, value: float = 0.0) -> torch.Tensor:
    """`aten.constant_pad_nd(x, pads, value)`: `pads` (before, after) pairs from the last
    dimension backwards; the result has x's memory format (channels-last stays so)."""
    if not pads or min(pads) < 0 or x.dim() < len(pads) // 2:
        return aten.constant_pad_nd(x, pads, value)
    shape = list(x.shape)
    for i in range(len(pads) // 2):
        shape[-1 - i] += pads[2 * i] + pads[2 * i + 1]
    if x.numel() == 0 or torch.Size(shape).numel() < MIN_ELEMENTS:
        return aten.constant_pad_nd(x, pads, value)
    out = torch.empty(shape, dtype=x.dtype, device=x.device, memory_format=_format(x))
    inner = out
    for i in range(len(pads) // 2):
        dim, before, after = x.dim() - 1 - i, pads[2 * i], pads[2 * i + 1]
        if before:
            out.narrow(dim, 0, before).fill_(value)
        if after:
            out.narrow(dim, shape[dim] - after, after).fill_(value)
        inner = inner.narrow(dim, before, x.shape[dim])
    inner.copy_(x)
    return out


def _format(x: torch.Tensor) -> torch.memory_format:
    """The memory format ATen's padding gives its output for `x`."""
    if x.is_contiguous():
        return torch.contiguous_format
    if x.dim() == 4 and x.is_contiguous(memory_format=torch.channels_last):
        return torch.channels_last
    if x.dim() == 5 and x.is_contiguous(memory_format=torch.channels_last_3d):
        return torch.channels_last_3d
    return torch.contiguous_format
