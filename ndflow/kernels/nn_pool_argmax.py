"""ATen kernels for MaxPoolWithArgmax / MaxPoolGradWithArgmax (NHWC).

ATen's max_pool2d_with_indices gives per-plane indices into the (-inf padded) input; they
become TF's flat NHWC indices into the unpadded input. The gradient is one index_add of the
incoming gradient at those flat positions.
"""

from __future__ import annotations

import math

import torch

from ndflow.core.errors import InvalidArgumentError, UnimplementedError
from ndflow.kernels.registry import kernel
from ndflow.ops import nn_pool_argmax
from ndflow.ops.nn_common import window_geometry

aten = torch.ops.aten


def _window(node):
    a = node.attrs
    k, s = a["ksize"], a["strides"]
    if k[0] != 1 or k[3] != 1 or s[0] != 1 or s[3] != 1:
        raise UnimplementedError(None, None, "Pooling is not yet supported on the batch nor "
                                 "depth dimension.")
    return [int(k[1]), int(k[2])], [int(s[1]), int(s[2])], a["padding"]


def _batch_offsets(n: int, plane: int, like: torch.Tensor) -> torch.Tensor:
    return (torch.arange(n, device=like.device, dtype=like.dtype) * plane).view(n, 1, 1, 1)


@kernel(nn_pool_argmax.MaxPoolWithArgmax)
def _max_pool_with_argmax(node):
    k, s, padding = _window(node)
    include_batch = node.attrs["include_batch_in_index"]
    out_dtype = node.attrs["Targmax"].torch_dtype

    def max_pool_with_argmax(x):
        if x.dim() != 4:
            raise InvalidArgumentError(None, None, "input must be 4-dimensional")
        n, h, w, c = x.shape
        try:
            _, (pt, pb, pl, pr) = window_geometry(h, w, k[0], k[1], s, (1, 1), padding)
        except ValueError as e:
            raise InvalidArgumentError(None, None, str(e)) from None
        xv = x.permute(0, 3, 1, 2)
        if not x.dtype.is_floating_point:
            xv = xv.double()
        if pt or pb or pl or pr:
            xv = aten.constant_pad_nd(xv, [pl, pr, pt, pb], -math.inf)
        y, idx = aten.max_pool2d_with_indices(xv, k, s, [0, 0], [1, 1], False)
        wp = w + pl + pr
        row, col = idx // wp - pt, idx % wp - pl
        chan = torch.arange(c, device=x.device, dtype=idx.dtype).view(1, c, 1, 1)
        flat = (row * w + col) * c + chan
        flat = flat.permute(0, 2, 3, 1)
        if include_batch:
            flat = flat + _batch_offsets(n, h * w * c, flat)
        return y.permute(0, 2, 3, 1).to(x.dtype), flat.to(out_dtype)
    return max_pool_with_argmax


@kernel(nn_pool_argmax.MaxPoolGradWithArgmax)
def _max_pool_grad_with_argmax(node):
    include_batch = node.attrs["include_batch_in_index"]

    def max_pool_grad_with_argmax(x, g, argmax):
        n = x.shape[0]
        plane = x.numel() // n if n else 0
        idx = argmax.long()
        if not include_batch:
            idx = idx + _batch_offsets(n, plane, idx)
        flat = idx.reshape(-1)
        if flat.numel() and (bool((flat < 0).any()) or bool((flat >= x.numel()).any())):
            raise InvalidArgumentError(None, None, "Invalid argmax index")
        out = torch.zeros(x.numel(), dtype=g.dtype, device=g.device)
        return out.index_add(0, flat, g.reshape(-1)).reshape(x.shape)
    return max_pool_grad_with_argmax
