"""ATen kernels for DepthToSpace / SpaceToDepth / SpaceToBatchND / BatchToSpaceND: one
reshape-permute-reshape each (plus a pad or a crop)."""

from __future__ import annotations

import math

import torch

from ndflow.core.errors import InvalidArgumentError, UnimplementedError
from ndflow.kernels.registry import kernel
from ndflow.ops import array_space


def _layout(node):
    fmt = node.attrs["data_format"]
    if fmt == "NCHW_VECT_C":
        raise UnimplementedError(None, None, "NCHW_VECT_C is not supported by ndflow")
    return int(node.attrs["block_size"]), fmt == "NHWC"


def _nhwc_dims(x: torch.Tensor, nhwc: bool) -> tuple:
    """(n, h, w, c) of a rank-4 batch of images in either layout."""
    if x.dim() != 4:
        raise InvalidArgumentError(None, None,
                                   f"Input rank should be: 4 instead of: {x.dim()}")
    if nhwc:
        n, h, w, c = x.shape
    else:
        n, c, h, w = x.shape
    return n, h, w, c


@kernel(array_space.DepthToSpace)
def _depth_to_space(node):
    bs, nhwc = _layout(node)

    def depth_to_space(x):
        n, h, w, c = _nhwc_dims(x, nhwc)
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
        n, h, w, c = _nhwc_dims(x, nhwc)
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


# -- SpaceToBatchND / BatchToSpaceND ---------------------------------------------------------------


def _block_args(x, block, pads, op_what: str):
    block = [int(b) for b in block.reshape(-1).tolist()]
    m = len(block)
    if pads.dim() != 2 or list(pads.shape) != [m, 2]:
        raise InvalidArgumentError(
            None, None, f"{op_what} should have shape [{m}, 2] instead of "
            f"[{','.join(str(d) for d in pads.shape)}]")
    if x.dim() < 1 + m:
        raise InvalidArgumentError(None, None, f"input rank should be >= {1 + m} instead of "
                                   f"{x.dim()}")
    return block, [[int(a), int(b)] for a, b in pads.tolist()]


@kernel(array_space.SpaceToBatchND)
def _space_to_batch_nd(node):
    def space_to_batch_nd(x, block_shape, paddings):
        block, pads = _block_args(x, block_shape, paddings, "paddings")
        for i, b in enumerate(block):
            if b < 1:
                raise InvalidArgumentError(None, None, f"All values in block_shape must be "
                                           f"positive, got value, {b} at index {i}.")
        if any(p < 0 for pair in pads for p in pair):
            raise InvalidArgumentError(None, None, "Paddings must be non-negative")
        m = len(block)
        if any(p for pair in pads for p in pair):
            spec = [0, 0] * (x.dim() - 1 - m)
            for a, b in reversed(pads):
                spec += [a, b]
            x = torch.constant_pad_nd(x, spec, 0)
        n = x.shape[0]
        rest = list(x.shape[1 + m:])
        split = [n]
        for i, b in enumerate(block):
            size = x.shape[1 + i]
            if size % b:
                raise InvalidArgumentError(None, None, f"padded_shape[{i}]={size} is not "
                                           f"divisible by block_shape[{i}]={b}")
            split += [size // b, b]
        y = x.reshape(split + rest)
        # [n, s0/b0, b0, s1/b1, b1, ...] -> [b0, b1, ..., n, s0/b0, s1/b1, ...]
        perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + \
            list(range(1 + 2 * m, 1 + 2 * m + len(rest)))
        y = y.permute(perm)
        return y.reshape([n * math.prod(block)] + split[1::2] + rest)
    return space_to_batch_nd


@kernel(array_space.BatchToSpaceND)
def _batch_to_space_nd(node):
    def batch_to_space_nd(x, block_shape, crops):
        block, crop = _block_args(x, block_shape, crops, "crops")
        prod = math.prod(block)
        if prod <= 0:
            raise InvalidArgumentError(None, None, f"Product of block sizes must be positive, "
                                       f"got {prod}")
        if any(c < 0 for pair in crop for c in pair):
            raise InvalidArgumentError(None, None, "Crops must be non-negative")
        n = x.shape[0]
        if n % prod:
            raise InvalidArgumentError(None, None, f"Input batch dimension ({n}) is not "
                                       f"divisible by product of block sizes ({prod})")
        m = len(block)
        spatial = list(x.shape[1:1 + m])
        rest = list(x.shape[1 + m:])
        for i, (s, b, (c0, c1)) in enumerate(zip(spatial, block, crop)):
            if s * b - c0 - c1 < 0:
                raise InvalidArgumentError(None, None, f"cropped_shape[{i}]={s * b - c0 - c1} "
                                           f"must be non-negative")
        y = x.reshape(block + [n // prod] + spatial + rest)
        # [b0, ..., n', s0, s1, ...] -> [n', s0, b0, s1, b1, ...]
        perm = [m]
        for i in range(m):
            perm += [m + 1 + i, i]
        perm += list(range(1 + 2 * m, 1 + 2 * m + len(rest)))
        y = y.permute(perm).reshape([n // prod] + [s * b for s, b in zip(spatial, block)] + rest)
        if any(c for pair in crop for c in pair):
            y = y[(slice(None),) + tuple(slice(c0, s * b - c1) for s, b, (c0, c1)
                                         in zip(spatial, block, crop))]
        return y
    return batch_to_space_nd
