"""ATen kernels for Cumsum, Cumprod, CumulativeLogsumexp (exclusive / reverse as TF's ScanOp)
and DivNoNan."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import math_cumulative as mc

_NARROW = (torch.float32, torch.float16, torch.bfloat16)


def _in_dtype(scan, step, product: bool):
    """`scan` as TF's Eigen scan computes it, one element after another in the input's dtype.
    ATen accumulates float32 in double (16-bit floats in float), so a running sum or product
    that overflows comes back finite (and one that underflows comes back non-zero) where TF's
    stays inf (or 0). Only then - a non-finite (or, for products, zero or subnormal) result
    after finite (non-zero) inputs - is the scan redone step by step in the dtype (16-bit
    steps round as Eigen's half and bfloat16 arithmetic does); finite scans keep ATen's wider
    accumulation, which can differ from TF's in the last bit."""
    def run(x, axis, dtype):
        out = scan(x, axis, dtype=dtype)
        if x.dtype not in _NARROW or not x.numel():
            return out
        quiet = torch.isfinite(out.sum(dtype=torch.float32))     # one pass answers mostly
        if product:
            quiet &= out.abs().amin() >= torch.finfo(x.dtype).tiny
        if bool(quiet):
            return out
        clean = torch.isfinite(x)
        odd = ~torch.isfinite(out)
        if product:
            clean &= x != 0
            odd |= out.abs() < torch.finfo(x.dtype).tiny
        if not bool((odd & (torch.cumsum(~clean, axis) == 0)).any()):
            return out
        xs, result = x.movedim(axis, 0), torch.empty_like(x).movedim(axis, 0)
        result[0] = xs[0]
        for i in range(1, xs.shape[0]):
            result[i] = step(result[i - 1], xs[i])
        return result.movedim(0, axis)
    return run


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
    return _scan_kernel(node, _in_dtype(torch.cumsum, torch.add, False), 0)


@kernel(mc.Cumprod)
def _cumprod(node):
    return _scan_kernel(node, _in_dtype(torch.cumprod, torch.mul, True), 1)


@kernel(mc.CumulativeLogsumexp)
def _cumulative_logsumexp(node):
    def logcumsumexp(x, axis, dtype):
        return torch.logcumsumexp(x, axis)
    return _scan_kernel(node, logcumsumexp, float("-inf"))
