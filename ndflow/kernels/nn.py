"""ATen kernels for neural-network ops."""

from __future__ import annotations

import torch

from ndflow.kernels.registry import kernel
from ndflow.ops import nn


@kernel(nn.Relu)
def _relu(node):
    return torch.relu


@kernel(nn.ReluGrad)
def _relu_grad(node):
    return lambda g, y: torch.where(y > 0, g, torch.zeros((), dtype=g.dtype, device=g.device))
