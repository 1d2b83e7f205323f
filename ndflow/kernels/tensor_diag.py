"""ATen kernels of Diag and DiagPart (`tf.linalg.tensor_diag` / `tensor_diag_part`): with
n the diagonal's element count, the rank-2k tensor is an n x n matrix in memory, and its
diagonal is every (n + 1)-th element."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import fmt
from ndflow.kernels.registry import kernel
from ndflow.ops import tensor_diag as td


@kernel(td.Diag)
def _diag(node):
    def run(diagonal):
        if diagonal.dim() == 0:
            raise InvalidArgumentError(None, None, "Input must be at least rank 1, got 0")
        n = diagonal.numel()
        out = torch.zeros(n * n, dtype=diagonal.dtype, device=diagonal.device)
        out[::n + 1] = diagonal.reshape(-1)
        return out.reshape(diagonal.shape + diagonal.shape)
    return run


@kernel(td.DiagPart)
def _diag_part(node):
    def run(x):
        rank = x.dim()
        if rank % 2:
            raise InvalidArgumentError(
                None, None, "The rank of the tensor should be                                  "
                f"        even and positive, got shape {fmt(tuple(x.shape))}")
        k = rank // 2
        for i in range(k):
            if x.shape[i] != x.shape[i + k]:
                raise InvalidArgumentError(
                    None, None, f"Invalid shape {fmt(tuple(x.shape))}: dimensions {i} and "
                    f"{i + k} do not match.")
        out_shape = x.shape[:k]
        n = out_shape.numel()
        return x.reshape(-1)[::n + 1].reshape(out_shape).clone() if n else \
            x.new_empty(out_shape)
    return run
