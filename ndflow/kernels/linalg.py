"""ATen kernels for MatMul and BatchMatMulV2 (transposes are views, not copies)."""

from __future__ import annotations

import torch

from ndflow.kernels.registry import kernel
from ndflow.ops import linalg


@kernel(linalg.MatMul)
def _matmul(node):
    ta, tb = node.attrs["transpose_a"], node.attrs["transpose_b"]
    if not ta and not tb:
        return torch.mm
    return lambda a, b: torch.mm(a.t() if ta else a, b.t() if tb else b)


@kernel(linalg.BatchMatMulV2)
def _batch_matmul(node):
    adj_x, adj_y = node.attrs["adj_x"], node.attrs["adj_y"]
    if not adj_x and not adj_y:
        return torch.matmul
    # .mH: the adjoint (conjugate transpose; the transpose of a real matrix)
    return lambda x, y: torch.matmul(x.mH if adj_x else x, y.mH if adj_y else y)
