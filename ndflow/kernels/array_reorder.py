"""ATen kernels for ReverseV2, Roll and ReverseSequence."""

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


@kernel(array_reorder.ReverseSequence)
def _reverse_sequence(node):
    seq_dim, batch_dim = node.attrs["seq_dim"], node.attrs["batch_dim"]

    def reverse_sequence(x, lengths):
        rank = x.dim()
        s, b = seq_dim % rank if rank else 0, batch_dim % rank if rank else 0
        if not (-rank <= seq_dim < rank and -rank <= batch_dim < rank) or s == b:
            raise InvalidArgumentError(None, None, f"Invalid seq_dim {seq_dim} / batch_dim "
                                       f"{batch_dim} for input of rank {rank}")
        if lengths.dim() != 1 or lengths.shape[0] != x.shape[b]:
            raise InvalidArgumentError(None, None, f"Length of seq_lengths != input.dims({b}), "
                                       f"({lengths.numel()} vs. {x.shape[b]})")
        too_long = (lengths > x.shape[s]).nonzero()
        if too_long.numel():
            i = int(too_long[0, 0])
            raise InvalidArgumentError(None, None, f"seq_lens({i}) > input.dims({s})")
        # position j of entry i comes from lengths[i] - 1 - j when j < lengths[i]
        n = x.shape[s]
        j = torch.arange(n, device=x.device)
        lens = lengths.long().unsqueeze(1)
        source = torch.where(j < lens, lens - 1 - j, j)            # [batch, seq]
        shape = [1] * rank
        shape[b], shape[s] = x.shape[b], n
        index = source.reshape(shape) if b < s else source.t().reshape(shape)
        return torch.gather(x, s, index.expand(x.shape))
    return reverse_sequence
