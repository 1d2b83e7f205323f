"""ATen kernels for DenseBincount and HistogramFixedWidth."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import histogram


@kernel(histogram.DenseBincount)
def _dense_bincount(node):
    binary = node.attrs["binary_output"]
    out_dtype = node.attrs["T"].torch_dtype

    def dense_bincount(arr, size, weights):
        n = int(size)
        if n < 0:
            raise InvalidArgumentError(None, None, f"size ({n}) must be non-negative")
        if arr.numel() and int(arr.min()) < 0:
            raise InvalidArgumentError(None, None, "Input arr must be non-negative!")
        if arr.dim() > 2:
            raise InvalidArgumentError(None, None, "Shape must be at most rank 2 but is rank "
                                       f"{arr.dim()}")
        if weights.numel() and tuple(weights.shape) != tuple(arr.shape):
            raise InvalidArgumentError(None, None, f"Input arr and weights must have the same "
                                       f"shape, got {list(arr.shape)} and "
                                       f"{list(weights.shape)}")
        rows = arr if arr.dim() == 2 else arr.reshape(1, -1)
        keep = rows < n  # values beyond `size` are not counted
        values = weights.reshape(rows.shape).to(out_dtype) if weights.numel() and not binary \
            else torch.ones(rows.shape, dtype=out_dtype, device=arr.device)
        values = torch.where(keep, values, torch.zeros((), dtype=out_dtype, device=arr.device))
        out = torch.zeros((rows.shape[0], n), dtype=out_dtype, device=arr.device)
        out.scatter_add_(1, torch.where(keep, rows, 0).long(), values)
        if binary:
            out = (out > 0).to(out_dtype)
        return out if arr.dim() == 2 else out.reshape(n)
    return dense_bincount


@kernel(histogram.HistogramFixedWidth)
def _histogram_fixed_width(node):
    out_dtype = node.attrs["dtype"].torch_dtype

    def histogram_fixed_width(values, value_range, nbins):
        n = int(nbins)
        if n <= 0:
            raise InvalidArgumentError(None, None, f"nbins should be a positive number, but "
                                       f"got '{n}'")
        lo, hi = (float(v) for v in value_range.reshape(-1)[:2].tolist())
        if not lo < hi:
            raise InvalidArgumentError(None, None, f"value_range should satisfy "
                                       f"value_range[0] < value_range[1], but got '[{lo}, {hi}]'")
        scaled = (values.double().reshape(-1) - lo) / (hi - lo) * n
        bins = scaled.floor().clamp_(0, n - 1).long()
        return torch.bincount(bins, minlength=n).to(out_dtype)
    return histogram_fixed_width
