"""ATen kernels for BroadcastArgs, UnravelIndex, ParallelConcat, GuaranteeConst and Bitcast."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import array_misc, cast_bits


def _fmt(dims) -> str:
    return "[" + ",".join(str(int(d)) for d in dims) + "]"


@kernel(array_misc.BroadcastArgs)
def _broadcast_args(node):
    def broadcast_args(s0, s1):
        for i, s in enumerate((s0, s1)):
            if s.dim() != 1:
                raise InvalidArgumentError(None, None,
                                           f"In[{i}] must be a vector.{_fmt(s.shape)}")
        a, b = s0.tolist(), s1.tolist()
        n = max(len(a), len(b))
        x, y = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
        out = []
        for da, db in zip(x, y):
            if da != db and da != 1 and db != 1:
                raise InvalidArgumentError(None, None,
                                           f"Incompatible shapes: {_fmt(a)} vs. {_fmt(b)}")
            out.append(db if da == 1 else da)
        return torch.tensor(out, dtype=s0.dtype, device=s0.device)
    return broadcast_args


@kernel(array_misc.UnravelIndex)
def _unravel_index(node):
    def unravel_index(indices, dims):
        if dims.dim() != 1:
            raise InvalidArgumentError(None, None, f"The indices can only be 1-D, got "
                                       f"\"{_fmt(dims.shape)}\"")
        if indices.dim() > 1:
            raise InvalidArgumentError(None, None, f"The indices can only be scalar or vector, "
                                       f"got \"{_fmt(indices.shape)}\"")
        sizes = dims.tolist()
        for i, d in enumerate(sizes):
            if d == 0:
                raise InvalidArgumentError(None, None, f"Input dims cannot contain a dim of "
                                           f"zero, but dims contains zero at index {i}")
        total = 1
        for d in sizes:
            total *= d
        if indices.numel() and (bool((indices < 0).any()) or bool((indices >= total).any())):
            raise InvalidArgumentError(None, None, "index is out of bound as with dims")
        out, rest = [], indices
        for d in reversed(sizes):
            out.append(torch.remainder(rest, d))
            rest = torch.div(rest, d, rounding_mode="floor")
        return torch.stack(out[::-1], 0)
    return unravel_index


@kernel(array_misc.ParallelConcat)
def _parallel_concat(node):
    def parallel_concat(*values):
        return torch.cat(values, 0)
    return parallel_concat


@kernel(array_misc.GuaranteeConst)
def _guarantee_const(node):
    return lambda x: x


@kernel(cast_bits.Bitcast)
def _bitcast(node):
    src, dst = node.attrs["T"], node.attrs["type"]
    dt = dst.torch_dtype

    def bitcast(x):
        x = x.contiguous()
        if src.size == dst.size:
            return x.view(dt)
        if src.size > dst.size:
            return x.reshape(-1).view(dt).reshape(list(x.shape) + [src.size // dst.size])
        if x.dim() == 0 or x.shape[-1] != dst.size // src.size:
            raise InvalidArgumentError(None, None,
                                       f"Cannot bitcast from {src.enum} to {dst.enum}")
        return x.view(dt).reshape(x.shape[:-1])
    return bitcast
