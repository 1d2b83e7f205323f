"""Kernels for FusedBatchNormV3 (and `_FusedBatchNormEx`'s side input and ReLU) and
FusedBatchNormGradV3 on NHWC (channels_last) or NCHW.

On contiguous NHWC float32 tensors with channels in 16-lane vectors the forward runs
kernels/batch_norm_numba.py's passes (training two, inference one), which add the side
input and apply the ReLU as they write y. Elsewhere ATen: training runs `native_batch_norm`
with fresh zeroed running buffers and momentum 1 (or the incoming statistics and momentum =
exponential_avg_factor), which leaves the Bessel-corrected batch variance (TF's
batch_variance) in the buffer without a second pass over x; the side input and the ReLU are
applied to its fresh output in place.

The gradient stays ATen's: numba's two passes (with or without the ReLU's gradient taken in
them) were faster alone but no faster inside a ResNet-20 step, where both read their inputs
from memory at the same bandwidth.
"""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import batch_norm_numba
from ndflow.kernels.registry import kernel
from ndflow.ops import nn_norm

aten = torch.ops.aten


def _nchw(x, nhwc):
    return x.permute(0, 3, 1, 2) if nhwc else x


def _nhwc(y, nhwc):
    return y.permute(0, 2, 3, 1) if nhwc else y


def _vectorized(nhwc: bool, x, vectors, optional=()) -> bool:
    """Whether batch_norm_numba runs this batch norm: its per-channel `vectors` float32 of
    one value a channel (`optional` ones may be empty); other shapes get ATen's errors."""
    if not (nhwc and batch_norm_numba.applies(x)):
        return False
    c = x.shape[-1]
    groups = ((vectors, (c,)), (optional, (0, c)))
    return all(v.dtype == torch.float32 and v.device.type == "cpu" and v.dim() == 1
               and v.is_contiguous() and v.numel() in sizes
               for group, sizes in groups for v in group)


def _fusible(x, side) -> bool:
    """Whether the numba pass can add `side` (None, or x's own shape and layout)."""
    return side is None or (side.shape == x.shape and side.dtype == x.dtype
                            and side.device == x.device and side.is_contiguous())


def _side_and_activation(y, side, relu):
    """The side input added to and the ReLU applied to ATen's fresh output, in place."""
    if side is not None:
        y.add_(side)
    if relu:
        aten.relu_(y)
    return y


@kernel(nn_norm.FusedBatchNormV3)
def fused_batch_norm_kernel(node):
    """FusedBatchNormV3's kernel; `_FusedBatchNormEx`'s passes its side input and ReLU."""
    a = node.attrs
    nhwc = a["data_format"] == "NHWC"
    eps = float(a["epsilon"])
    factor = float(a["exponential_avg_factor"])
    training = a["is_training"]

    def nan_statistics(x, scale):
        """TF's result for an empty batch: y empty, every statistic NaN (in both modes)."""
        c = scale.shape[0]
        nan = torch.full((c,), float("nan"), dtype=scale.dtype, device=x.device)
        empty = torch.empty(0, dtype=scale.dtype, device=x.device)
        return torch.empty_like(x), nan, nan.clone(), nan.clone(), nan.clone(), empty

    def train(x, scale, offset, mean, var, side=None, relu=False):
        if x.numel() == 0:
            return nan_statistics(x, scale)
        if _vectorized(nhwc, x, (scale, offset), (mean, var)) and _fusible(x, side):
            return (*batch_norm_numba.train(x, scale, offset, mean, var, eps, factor, side,
                                            relu), torch.empty(0, dtype=scale.dtype))
        xv = _nchw(x, nhwc)
        c = xv.shape[1]
        if factor == 1.0 or mean.numel() == 0:
            run_mean = torch.zeros(c, dtype=scale.dtype, device=x.device)
            run_var = torch.zeros(c, dtype=scale.dtype, device=x.device)
            momentum = 1.0
        else:
            run_mean, run_var, momentum = mean.clone(), var.clone(), factor
        y, save_mean, save_invstd = aten.native_batch_norm(xv, scale, offset, run_mean,
                                                           run_var, True, momentum, eps)
        n = xv.numel() // c
        if n == 1:  # TF: the variance of one value is 0 (ATen's unbiased estimate is NaN)
            run_var = torch.nan_to_num(run_var, nan=0.0) if momentum == 1.0 else \
                torch.where(torch.isnan(run_var), var * (1 - momentum), run_var)
        biased = save_invstd.pow(-2).sub_(eps) if momentum != 1.0 else \
            run_var * ((n - 1) / n if n > 1 else 1.0)
        empty = torch.empty(0, dtype=scale.dtype, device=x.device)
        y = _side_and_activation(_nhwc(y, nhwc), side, relu)
        return y, run_mean, run_var, save_mean.to(scale.dtype), biased, empty

    def infer(x, scale, offset, mean, var, side=None, relu=False):
        xv = _nchw(x, nhwc)
        if mean.numel() != xv.shape[1] or var.numel() != xv.shape[1]:
            raise InvalidArgumentError(
                None, None, f"When is_training=false, mean must have the same number of "
                f"elements as the channels of x, got {mean.numel()} and {xv.shape[1]}")
        if x.numel() == 0:
            return nan_statistics(x, scale)
        empty = torch.empty(0, dtype=scale.dtype, device=x.device)
        if _vectorized(nhwc, x, (scale, offset, mean, var)) and _fusible(x, side):
            y = batch_norm_numba.infer(x, scale, offset, mean, var, eps, side, relu)
            return y, mean, var, mean, var, empty
        y = aten.native_batch_norm(xv, scale, offset, mean, var, False, 0.0, eps)[0]
        return _side_and_activation(_nhwc(y, nhwc), side, relu), mean, var, mean, var, empty

    return train if training else infer


@kernel(nn_norm.FusedBatchNormGradV3)
def _fused_batch_norm_grad(node):
    a = node.attrs
    nhwc = a["data_format"] == "NHWC"
    eps = float(a["epsilon"])
    training = a["is_training"]
    mask = [True, True, True]

    def grad(dy, x, scale, r1, r2, r3):
        xv = _nchw(x, nhwc)
        gv = _nchw(dy, nhwc)
        if gv.dtype != xv.dtype:
            gv = gv.to(xv.dtype)
        if training:
            invstd = torch.rsqrt(r2 + eps)
            dx, dscale, doffset = aten.native_batch_norm_backward(
                gv, xv, scale, None, None, r1, invstd, True, eps, mask)
        else:
            dx, dscale, doffset = aten.native_batch_norm_backward(
                gv, xv, scale, r1, r2, None, None, False, eps, mask)
        empty = torch.empty(0, dtype=scale.dtype, device=x.device)
        return _nhwc(dx, nhwc), dscale, doffset, empty, empty.clone()

    return grad
