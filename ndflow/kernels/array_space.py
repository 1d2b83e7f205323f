"""ATen kernels for DepthToSpace / SpaceToDepth: one reshape-permute-reshape each."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError, UnimplementedError
from ndflow.kernels.registry import kernel
from ndflow.ops import array_space


def _layout(node):
    fmt = node.attrs["data_format"]
    if fmt == "NCHW_VECT_C":
        raise UnimplementedError(None, None, "NCHW_VECT_C is not supported by ndflow")
    return int(node.attrs["block_size"]), fmt == "NHWC"


def _check_rank(x: torch.Tensor) -> None:
    if x.dim() != 4:
        raise InvalidArgumentError(None, None,
                                   f"Input rank should be: 4 instead of: {x.dim()}")


@kernel(array_space.DepthToSpace)
def _depth_to_space(node):
    bs, nhwc = _layout(node)

    def depth_to_space(x):
        _check_rank(x)
        if nhwc:
            n, h, w, c = x.shape
        else:
            n, c, h, w = x.shape
        if c % (bs * bs):
            raise InvalidArgumentError(
                None, None, f"Input depth dimension {c} should be divisible by: {bs * bs}")
        oc = c // (bs * bs)
        if nhwc:
            y = x.reshape(n, h, w, bs, bs, oc).permute(0, 1, 3, 2, 4, 5)
            return y.reshape(n, h * bs, w * bs, oc)
        y = x.reshape(n, bs, bs, oc, h, w).permute(0, 3, 4, 1, 5, 2)
        return y.reshape(n, oc, h * bs, w * bs)
    return depth_to_space


@kernel(array_space.SpaceToDepth)
def _space_to_depth(node):
    bs, nhwc = _layout(node)

    def space_to_depth(x):
        _check_rank(x)
        if nhwc:
            n, h, w, c = x.shape
        else:
            n, c, h, w = x.shape
        if h % bs or w % bs:
            raise InvalidArgumentError(
                None, None, f"Image width {w} and height {h} should be divisible by "
                f"block_size: {bs}")
        oh, ow = h // bs, w // bs
        if nhwc:
            y = x.reshape(n, oh, bs, ow, bs, c).permute(0, 1, 3, 2, 4, 5)
            return y.reshape(n, oh, ow, bs * bs * c)
        y = x.reshape(n, c, oh, bs, ow, bs).permute(0, 3, 5, 1, 2, 4)
        return y.reshape(n, bs * bs * c, oh, ow)
    return space_to_depth
