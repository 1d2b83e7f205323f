"""ATen kernels for ReverseV2 and Roll."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import array_reorder


def _axes(axis: torch.Tensor, rank: int) -> list:
    out = []
    for i, a in enumerate(axis.reshape(-1).tolist()):
        if not -rank <= a < rank:
            raise InvalidArgumentError(None, None, f"'axis'[{i}] = {a} is out of valid range "
                                       f"[0, {rank - 1}")
        a %= rank
        if a in out:
            raise InvalidArgumentError(None, None, f"axis {a} specified more than once.")
        out.append(a)
    return out


@kernel(array_reorder.ReverseV2)
def _reverse(node):
    def reverse(x, axis):
        if axis.dim() != 1:
            raise InvalidArgumentError(None, None, f"'dims' must be 1-dimension, not "
                                       f"{axis.dim()}")
        axes = _axes(axis, x.dim())
        return torch.flip(x, axes) if axes else x
    return reverse


@kernel(array_reorder.Roll)
def _roll(node):
    def roll(x, shift, axis):
        if shift.dim() > 1:
            raise InvalidArgumentError(None, None, "shift must be a scalar or a 1-D vector. "
                                       f"Found: {list(shift.shape)}")
        if axis.dim() > 1:
            raise InvalidArgumentError(None, None, "axis must be a scalar or a 1-D vector. "
                                       f"Found: {list(axis.shape)}")
        shifts, axes = shift.reshape(-1).tolist(), axis.reshape(-1).tolist()
        if len(shifts) != len(axes):
            raise InvalidArgumentError(None, None, "shift and axis must have the same size")
        total = [0] * x.dim()
        for s, a in zip(shifts, axes):
            if not -x.dim() <= a < x.dim():
                raise InvalidArgumentError(None, None, f"axis {a} is out of range")
            total[a % x.dim()] += s
        dims = [d for d, s in enumerate(total) if s]
        return torch.roll(x, [total[d] for d in dims], dims) if dims else x
    return roll
