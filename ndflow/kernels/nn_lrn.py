"""ATen kernels for LRN / LRNGrad: window sums over the depth (last) axis.

The depth axis of an NHWC tensor is its innermost one, so the (N*H*W, C) view needs no copy.
Its window sums are one matmul with a 0/1 band matrix (|i - j| <= r), as TF's CPU kernel
contracts with one (measured 2.3 ms against 12.5 ms for avg_pool1d on 128x12x12x64, r=4,
one core); for deep inputs (C > 512) avg_pool1d with zero padding r and count_include_pad
(the window mean, times 2r + 1) does fewer operations. Windows are clipped at the edges, as
TF's.
"""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import nn_lrn

aten = torch.ops.aten


def _params(node):
    a = node.attrs
    return int(a["depth_radius"]), float(a["bias"]), float(a["alpha"]), float(a["beta"])


class _WindowSum:
    """Sums over depth windows of radius r; the band matrix is built once per depth/dtype."""

    def __init__(self, r: int):
        self.r = r
        self.bands: dict = {}

    def __call__(self, v: torch.Tensor) -> torch.Tensor:
        c, r = v.shape[-1], self.r
        if c > 512:
            k = 2 * r + 1
            s = aten.avg_pool1d(v.reshape(-1, 1, c), [k], [1], [r], False, True)
            return (s * k).reshape(v.shape)
        key = (c, v.dtype, v.device)
        band = self.bands.get(key)
        if band is None:
            i = torch.arange(c, device=v.device)
            band = self.bands[key] = (i[:, None] - i[None, :]).abs().le(r).to(v.dtype)
        return torch.mm(v.reshape(-1, c), band).reshape(v.shape)


def _neg_pow(norm: torch.Tensor, beta: float) -> torch.Tensor:
    """norm ** -beta; the common betas through rsqrt/reciprocal (pow is 5x slower)."""
    if beta == 0.5:
        return torch.rsqrt(norm)
    if beta == 0.75:
        return torch.rsqrt(norm * torch.sqrt(norm))
    if beta == 1.0:
        return torch.reciprocal(norm)
    return torch.pow(norm, -beta)


def _compute_dtype(x: torch.Tensor):
    # Half-precision depth sums run in float32 (ATen's CPU half matmul is slow and coarse).
    return torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype


def _check(x: torch.Tensor, r: int, what: str = "in must") -> None:
    if x.dim() != 4:
        raise InvalidArgumentError(None, None, f"{what} be 4-dimensional")
    if r < 0:
        raise InvalidArgumentError(None, None, f"depth_radius = {r} larger than int max")


@kernel(nn_lrn.LRN)
def _lrn(node):
    r, bias, alpha, beta = _params(node)
    window_sum = _WindowSum(r)

    def lrn(x):
        _check(x, r)
        xc = x.to(_compute_dtype(x))
        norm = window_sum(xc * xc) * alpha + bias
        return (xc * _neg_pow(norm, beta)).to(x.dtype)
    return lrn


@kernel(nn_lrn.LRNGrad)
def _lrn_grad(node):
    r, bias, alpha, beta = _params(node)
    window_sum = _WindowSum(r)

    def lrn_grad(g, x, y):
        for t in (g, x, y):
            _check(t, r, "inputs must")
        if not (g.shape == x.shape == y.shape):
            raise InvalidArgumentError(
                None, None, "input_grads, input_image, and out_image should have the same "
                "shape")
        dt = _compute_dtype(x)
        g, xc, y = g.to(dt), x.to(dt), y.to(dt)
        norm = window_sum(xc * xc) * alpha + bias
        # d out_i / d x_j = delta_ij N_i^-beta - 2 alpha beta x_i x_j N_i^(-beta-1), j in win(i);
        # the window is symmetric, so the sum over i is the same window sum.
        dx = g * _neg_pow(norm, beta) - (2.0 * alpha * beta) * xc * window_sum(g * y / norm)
        return dx.to(x.dtype)
    return lrn_grad
