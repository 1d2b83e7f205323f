"""Kernels of `_LayerNorm` / `_LayerNormGrad` (ops/layer_norm_fused.py): ATen's layer norm
and its backward, one pass each way where Keras' ops took about nine forward and fifteen
backward (a [4096, 64] LayerNormalization's forward and gradient: see docs/performance.md)."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import layer_norm_fused as ops


def _normalized(node, x: torch.Tensor, params: tuple) -> list:
    """The normalized axes' sizes, after checking the parameters against them."""
    begin = node.attrs["begin_norm_axis"]
    if not -x.dim() <= begin < max(x.dim(), 1):
        raise InvalidArgumentError(None, None, f"{node.op_def.name}: begin_norm_axis {begin} "
                                   f"is out of range for an input of shape {list(x.shape)}")
    shape = list(x.shape[begin % x.dim():])
    for t, name, present in params:
        want = shape if present else [0]
        if list(t.shape) != want:
            raise InvalidArgumentError(None, None, f"{node.op_def.name}: {name} must have "
                                       f"shape {want}, got {list(t.shape)} (input shape "
                                       f"{list(x.shape)})")
    return shape


@kernel(ops.LayerNorm)
def _layer_norm(node):
    eps, scale, center = node.attrs["epsilon"], node.attrs["scale"], node.attrs["center"]

    def run(x, gamma, beta):
        shape = _normalized(node, x, ((gamma, "gamma", scale), (beta, "beta", center)))
        return torch.native_layer_norm(x, shape, gamma if scale else None,
                                       beta if center else None, eps)
    return run


@kernel(ops.LayerNormGrad)
def _layer_norm_grad(node):
    scale, center = node.attrs["scale"], node.attrs["center"]

    def run(dy, x, mean, rstd, gamma):
        shape = _normalized(node, x, ((gamma, "gamma", scale),))
        if tuple(dy.shape) != tuple(x.shape):
            raise InvalidArgumentError(None, None, f"{node.op_def.name}: dy must have x's "
                                       f"shape {list(x.shape)}, got {list(dy.shape)}")
        weight = gamma if scale else None
        bias = torch.empty(shape, dtype=x.dtype, device=x.device) if center else None
        dx, dgamma, dbeta = torch.ops.aten.native_layer_norm_backward(
            dy, x, shape, mean, rstd, weight, bias, [True, scale, center])
        empty = x.new_zeros(0)
        return dx, dgamma if scale else empty, dbeta if center else empty
    return run
