"""ATen kernels for Slice, StridedSlice, StridedSliceGrad, ConcatV2 and ConcatOffset.

StridedSlice compiles (input shape, begin, end, strides) once into a basic-indexing tuple
(ints, positive-step slices, None) plus the dimensions to flip for negative strides, using
the same `strided_slice_spec` as shape inference; results are cached per distinct key.
"""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import fmt
from ndflow.kernels.registry import kernel
from ndflow.ops import array_slicing as ops
from ndflow.ops.array_slicing import concat_offsets, strided_slice_spec

_CACHE_LIMIT = 256


def invalid(msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, msg)


def compile_strided_slice(dims: list, begin, end, strides, masks: dict):
    """(index with new axes, flips in the output, index without new axes, flips there)."""
    try:
        spec = strided_slice_spec(dims, begin, end, strides, masks)
    except ValueError as e:
        raise invalid(str(e)) from None
    full, full_flips, bare, bare_flips = [], [], [], []
    for j in spec.entries:
        if j is None:
            full.append(None)
            continue
        b, e, s, sh, size = spec.dense[j]
        if sh:
            full.append(b)
            bare.append(b)
            continue
        if size == 0:
            ix = slice(0, 0)
        elif s > 0:
            ix = slice(b, e, s)
        else:
            ix = slice(b + (size - 1) * s, b + 1, -s)
            if size > 1:
                full_flips.append(len([x for x in full if not isinstance(x, int)]))
                bare_flips.append(len([x for x in bare if not isinstance(x, int)]))
        full.append(ix)
        bare.append(ix)
    return tuple(full), tuple(full_flips), tuple(bare), tuple(bare_flips)


def _masks(node) -> dict:
    return {k: node.attrs[k] for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                       "new_axis_mask", "shrink_axis_mask")}


@kernel(ops.StridedSlice)
def _strided_slice(node):
    masks = _masks(node)
    cache: dict = {}

    def strided_slice(x, begin, end, strides):
        key = (tuple(x.shape), tuple(begin.tolist()), tuple(end.tolist()),
               tuple(strides.tolist()))
        plan = cache.get(key)
        if plan is None:
            if len(cache) > _CACHE_LIMIT:
                cache.clear()
            plan = cache[key] = compile_strided_slice(list(key[0]), *key[1:], masks)[:2]
        index, flips = plan
        out = x[index]
        return out.flip(flips) if flips else out
    return strided_slice


@kernel(ops.StridedSliceGrad)
def _strided_slice_grad(node):
    masks = _masks(node)
    cache: dict = {}

    def strided_slice_grad(shape, begin, end, strides, dy):
        key = (tuple(shape.tolist()), tuple(begin.tolist()), tuple(end.tolist()),
               tuple(strides.tolist()))
        plan = cache.get(key)
        if plan is None:
            if len(cache) > _CACHE_LIMIT:
                cache.clear()
            plan = cache[key] = compile_strided_slice(list(key[0]), *key[1:], masks)[2:]
        index, flips = plan
        out = torch.zeros(key[0], dtype=dy.dtype, device=dy.device)
        view = out[index]
        src = dy.reshape(view.shape)
        view.copy_(src.flip(flips) if flips else src)  # `out` is our own fresh buffer
        return out
    return strided_slice_grad


@kernel(ops.Slice)
def _slice(node):
    def slice_(x, begin, size):
        b, s = begin.tolist(), size.tolist()
        if len(b) != x.dim() or len(s) != x.dim():
            raise invalid(f"Expected begin and size arguments to be 1-D tensors of size "
                          f"{x.dim()}, but got shapes [{len(b)}] and [{len(s)}] instead.")
        index = []
        for i, (bi, si, d) in enumerate(zip(b, s, x.shape)):
            if si == -1:
                si = d - bi
            if not 0 <= bi <= d:
                raise invalid(f"Expected begin[{i}] in [0, {d}], but got {bi}")
            if not 0 <= si <= d - bi:
                raise invalid(f"Expected size[{i}] in [0, {d - bi}], but got {si}")
            index.append(slice(bi, bi + si))
        return x[tuple(index)]
    return slice_


def _concat_error(xs, axis) -> InvalidArgumentError:
    r = xs[0].dim()
    if not -r <= axis < r:
        return invalid(f"ConcatOp : Expected concatenating dimensions in the range [{-r}, {r}), "
                       f"but got {axis}")
    a = axis + r if axis < 0 else axis
    for i, x in enumerate(xs[1:], 1):
        if x.dim() != r:
            return invalid(f"ConcatOp : Ranks of all input tensors should match: shape[0] = "
                           f"{fmt(list(xs[0].shape))} vs. shape[{i}] = {fmt(list(x.shape))}")
        for j in range(r):
            if j != a and x.shape[j] != xs[0].shape[j]:
                return invalid(f"ConcatOp : Dimension {j} in both shapes must be equal: "
                               f"shape[0] = {fmt(list(xs[0].shape))} vs. shape[{i}] = "
                               f"{fmt(list(x.shape))}")
    return invalid("ConcatOp : invalid inputs")


@kernel(ops.ConcatV2)
def _concat(node):
    def concat(*args):
        xs, axis = args[:-1], int(args[-1])
        try:
            return torch.cat(xs, axis)
        except (RuntimeError, IndexError):
            raise _concat_error(xs, axis) from None
    return concat


@kernel(ops.ConcatOffset)
def _concat_offset(node):
    dev = node.device

    def concat_offset(dim, *shapes):
        sizes = [s.tolist() for s in shapes]
        r = len(sizes[0])
        axis = int(dim)
        if not -r <= axis < r:
            raise invalid(f"Concat dim is out of range: {axis} vs. {r}")
        offs = concat_offsets(axis % r, sizes)
        outs = tuple(torch.tensor(o, dtype=shapes[0].dtype, device=dev) for o in offs)
        return outs if len(outs) > 1 else outs[0]
    return concat_offset
