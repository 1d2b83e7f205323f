"""ATen kernels for LRN / LRNGrad: window sums over the depth (last) axis by avg_pool1d.

The depth axis of an NHWC tensor is its innermost one, so the (N*H*W, 1, C) view needs no
copy; avg_pool1d with zero padding r and count_include_pad gives the window mean, times
2r + 1 the window sum (windows clipped at the edges, as TF's).
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


def _window_sum(v: torch.Tensor, r: int) -> torch.Tensor:
    c = v.shape[-1]
    k = 2 * r + 1
    flat = v.reshape(-1, 1, c)
    s = aten.avg_pool1d(flat, [k], [1], [r], False, True)
    return (s * k).reshape(v.shape)


def _check(x: torch.Tensor, r: int, what: str = "in must") -> None:
    if x.dim() != 4:
        raise InvalidArgumentError(None, None, f"{what} be 4-dimensional")
    if r < 0:
        raise InvalidArgumentError(None, None, f"depth_radius = {r} larger than int max")


@kernel(nn_lrn.LRN)
def _lrn(node):
    r, bias, alpha, beta = _params(node)

    def lrn(x):
        _check(x, r)
        norm = _window_sum(x * x, r) * alpha + bias
        if beta == 0.5:
            return x * torch.rsqrt(norm)
        if beta == 1.0:
            return x / norm
        return x * torch.pow(norm, -beta)
    return lrn


@kernel(nn_lrn.LRNGrad)
def _lrn_grad(node):
    r, bias, alpha, beta = _params(node)

    def lrn_grad(g, x, y):
        for t in (g, x, y):
            _check(t, r, "inputs must")
        if not (g.shape == x.shape == y.shape):
            raise InvalidArgumentError(
                None, None, "input_grads, input_image, and out_image should have the same "
                "shape")
        norm = _window_sum(x * x, r) * alpha + bias
        # d out_i / d x_j = delta_ij N_i^-beta - 2 alpha beta x_i x_j N_i^(-beta-1), j in win(i);
        # the window is symmetric, so the sum over i is the same window sum.
        return g * torch.pow(norm, -beta) - (2.0 * alpha * beta) * x * _window_sum(
            g * y / norm, r)
    return lrn_grad
