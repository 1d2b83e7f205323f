"""ATen kernels for Unique, UniqueWithCounts, LowerBound and UpperBound."""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import array_search


def _unique(x: torch.Tensor):
    """(values in order of first appearance, index of each element's value, counts)."""
    if x.dim() != 1:
        raise InvalidArgumentError(None, None, "unique expects a 1D vector.")
    values, inverse, counts = torch.unique(x, sorted=True, return_inverse=True,
                                           return_counts=True)
    # torch sorts; TF keeps the order of first appearance.
    first = torch.full((values.numel(),), x.numel(), dtype=torch.long, device=x.device)
    first.scatter_reduce_(0, inverse, torch.arange(x.numel(), device=x.device), "amin")
    order = torch.argsort(first)
    rank = torch.empty_like(order)
    rank[order] = torch.arange(order.numel(), device=x.device)
    return values[order], rank[inverse], counts[order]


@kernel(array_search.Unique)
def _unique_kernel(node):
    out_dtype = node.attrs["out_idx"].torch_dtype

    def unique(x):
        y, idx, _ = _unique(x)
        return y, idx.to(out_dtype)
    return unique


@kernel(array_search.UniqueWithCounts)
def _unique_with_counts_kernel(node):
    out_dtype = node.attrs["out_idx"].torch_dtype

    def unique_with_counts(x):
        y, idx, count = _unique(x)
        return y, idx.to(out_dtype), count.to(out_dtype)
    return unique_with_counts


def _bound(right: bool):
    def factory(node):
        out_dtype = node.attrs["out_type"].torch_dtype

        def bound(sorted_inputs, values):
            if sorted_inputs.dim() != 2 or values.dim() != 2 or \
                    sorted_inputs.shape[0] != values.shape[0]:
                raise InvalidArgumentError(
                    None, None, "Leading dim_size of both tensors must match.")
            return torch.searchsorted(sorted_inputs.contiguous(), values.contiguous(),
                                      right=right).to(out_dtype)
        return bound
    return factory


kernel(array_search.LowerBound)(_bound(right=False))
kernel(array_search.UpperBound)(_bound(right=True))


@kernel(array_search.Bucketize)
def _bucketize(node):
    # boundaries are float32 attrs, compared in the input's precision as TF's upper_bound
    bounds = np.asarray(node.attrs["boundaries"], np.float32).astype(np.float64)
    if np.any(bounds[1:] < bounds[:-1]):
        raise InvalidArgumentError(None, None, "Expected sorted boundaries")

    def bucketize(x):
        b = torch.from_numpy(bounds).to(x.device)
        values = x.double() if not x.is_floating_point() else x
        return torch.bucketize(values, b.to(values.dtype), right=True).to(torch.int32)
    return bucketize
