"""ATen kernels for Cumsum, Cumprod, CumulativeLogsumexp (exclusive / reverse as TF's ScanOp)
and DivNoNan."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import math_cumulative as mc


def _scan_kernel(node, scan, identity: int):
    exclusive, reverse = node.attrs["exclusive"], node.attrs["reverse"]

    def run(x, axis_t):
        axis, r = int(axis_t), x.dim()
        if not -r <= axis < r:
            raise InvalidArgumentError(None, None, f"ScanOp: Expected scan axis in the range "
                                       f"[{-r}, {r}), but got {axis}")
        if reverse:
            x = x.flip(axis)
        out = scan(x, axis, dtype=x.dtype)
        if exclusive and x.shape[axis]:
            head = torch.full_like(out.narrow(axis, 0, 1), identity)
            out = torch.cat([head, out.narrow(axis, 0, x.shape[axis] - 1)], axis)
        return out.flip(axis) if reverse else out
    return run


@kernel(mc.Cumsum)
def _cumsum(node):
    return _scan_kernel(node, torch.cumsum, 0)


@kernel(mc.Cumprod)
def _cumprod(node):
    return _scan_kernel(node, torch.cumprod, 1)


@kernel(mc.CumulativeLogsumexp)
def _cumulative_logsumexp(node):
    def logcumsumexp(x, axis, dtype):
        return torch.logcumsumexp(x, axis)
    return _scan_kernel(node, logcumsumexp, float("-inf"))
