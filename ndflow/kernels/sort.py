"""ATen kernel for TopKV2: a stable descending sort of the last axis (TF's tie rule: equal
values keep the lower index first), narrowed to k. `torch.topk` does not order ties."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import sort


@kernel(sort.TopKV2)
def _top_k(node):
    index_dtype = node.attrs["index_type"].torch_dtype

    def top_k(x, k_t):
        k = int(k_t)
        if k < 0:
            raise InvalidArgumentError(None, None, f"Need k >= 0, got {k}")
        if x.dim() < 1:
            raise InvalidArgumentError(None, None, "input must be >= 1-D, got shape []")
        n = x.shape[-1]
        if n < k:
            raise InvalidArgumentError(None, None, f"input must have at least k columns. Had "
                                       f"{n}, needed {k}")
        values, indices = torch.sort(x, dim=-1, descending=True, stable=True)
        if k < n:
            values, indices = values[..., :k].contiguous(), indices[..., :k].contiguous()
        return values, indices.to(index_dtype)
    return top_k


@kernel(sort.ApproxTopK)
def _approx_top_k(node):
    """The exact top (or bottom) k along the dimension, as TF's CPU kernel (a sort)."""
    k, dim = node.attrs["k"], node.attrs["reduction_dimension"]
    largest = node.attrs["is_max_k"]

    def approx_top_k(x):
        if not -x.dim() <= dim < x.dim():
            raise InvalidArgumentError(None, None, f"Invalid reduction dimension {dim} for an "
                                       f"input of rank {x.dim()}")
        n = x.shape[dim]
        if n < k:
            raise InvalidArgumentError(None, None, f"input must have at least k columns. Had "
                                       f"{n}, needed {k}")
        values, indices = torch.sort(x, dim=dim, descending=largest, stable=True)
        return (values.narrow(dim, 0, k).contiguous(),
                indices.narrow(dim, 0, k).to(torch.int32).contiguous())
    return approx_top_k


@kernel(sort.InTopKV2)
def _in_top_k(node):
    def in_top_k(predictions, targets, k_t):
        if predictions.dim() != 2:
            raise InvalidArgumentError(None, None, "predictions must be 2-dimensional")
        if targets.dim() != 1:
            raise InvalidArgumentError(None, None, "targets must be 1-dimensional")
        batch, classes = predictions.shape
        if targets.shape[0] != batch:
            raise InvalidArgumentError(None, None, f"First dimension of predictions {batch} "
                                       f"must match length of targets {targets.shape[0]}")
        k = int(k_t)
        known = (targets >= 0) & (targets < classes)
        target_pred = predictions.gather(1, targets.clamp(0, max(classes - 1, 0)).long()
                                         .unsqueeze(1)) if classes else \
            torch.zeros((batch, 1), dtype=predictions.dtype, device=predictions.device)
        finite = torch.isfinite(predictions).all(dim=1) if classes else known
        above = (predictions > target_pred).sum(dim=1)
        return known & finite & (above < k)
    return in_top_k
