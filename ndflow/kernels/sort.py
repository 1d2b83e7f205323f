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
