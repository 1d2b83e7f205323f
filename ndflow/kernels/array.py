"""ATen kernels for array ops."""

from __future__ import annotations

import torch

from ndflow.kernels.registry import kernel
from ndflow.ops import array


@kernel(array.Identity)
def _identity(node):
    return lambda x: x


@kernel(array.PlaceholderWithDefault)
def _placeholder_with_default(node):
    return lambda x: x


@kernel(array.Pack)
def _pack(node):
    axis = node.attrs["axis"]
    return lambda *xs: torch.stack(xs, axis)


@kernel(array.ZerosLike)
def _zeros_like(node):
    return torch.zeros_like


@kernel(array.OnesLike)
def _ones_like(node):
    return torch.ones_like


@kernel(array.Reshape)
def _reshape(node):
    return lambda x, shape: torch.reshape(x, shape.tolist())
