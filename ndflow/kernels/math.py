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


@kernel(math.AddN)
def _add_n(node):
    def add_n(*xs):
        out = xs[0] + xs[1] if len(xs) > 1 else xs[0].clone()
        for x in xs[2:]:
            out.add_(x)  # `out` is our own fresh buffer, not an input
        return out
    return add_n
