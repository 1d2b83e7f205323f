"""ATen kernels for math ops."""

from __future__ import annotations

import torch

from ndflow.kernels.registry import kernel
from ndflow.ops import math


@kernel(math.AddV2)
def _add(node):
    return torch.add


@kernel(math.MatMul)
def _matmul(node):
    ta, tb = node.attrs["transpose_a"], node.attrs["transpose_b"]
    if not ta and not tb:
        return torch.mm
    return lambda a, b: torch.mm(a.t() if ta else a, b.t() if tb else b)


@kernel(math.Sum)
def _sum(node):
    keep = node.attrs["keep_dims"]
    return lambda x, axes: torch.sum(x, dim=axes.tolist(), keepdim=keep)


@kernel(math.Reshape)
def _reshape(node):
    return lambda x, shape: torch.reshape(x, shape.tolist())
