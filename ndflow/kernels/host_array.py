"""Array ops on string tensors: NumPy kernels over object arrays of bytes (ATen has no string
type), chosen by `registry.kernel_for` when a string flows through the op. Index, shape and
axis inputs still arrive as ATen tensors; shapes come back as ATen tensors."""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import TensorShape, fmt
from ndflow.kernels.array_nd import _rows as gather_rows
from ndflow.kernels.array_nd import gather_nd_ignores, gather_nd_node_name
from ndflow.kernels.array_slicing import compile_strided_slice
from ndflow.kernels.registry import host_kernel
from ndflow.kernels.state import check_dtype, not_found
from ndflow.ops import (
    arithmetic,
    array_core,
    array_fill,
    array_gather,
    array_nd,
    array_reorder,
    array_search,
    array_slicing,
    array_split,
    array_transpose,
    comparison,
    state,
)


def _ints(t) -> list:
    return [int(v) for v in (t.reshape(-1).tolist() if hasattr(t, "reshape") else t)]


def _axis(a: int, rank: int, op: str) -> int:
    if not -rank <= a < rank:
        raise InvalidArgumentError(None, None, f"{op}: axis {a} is out of range for a tensor of "
                                   f"rank {rank}")
    return a % rank


@host_kernel(array_core.Identity)
@host_kernel(array_core.StopGradient)
@host_kernel(array_core.EnsureShape)
def _identity(node):
    return lambda x: x


@host_kernel(array_core.IdentityN)
def _identity_n(node):
    return lambda *xs: xs if len(xs) != 1 else xs[0]


@host_kernel(array_core.Shape)
def _shape(node):
    dt = node.attrs["out_type"].torch_dtype
    return lambda x: torch.tensor(list(x.shape), dtype=dt)


@host_kernel(array_core.Size)
def _size(node):
    dt = node.attrs["out_type"].torch_dtype
    return lambda x: torch.tensor(x.size, dtype=dt)


@host_kernel(array_core.Rank)
def _rank(node):
    return lambda x: torch.tensor(x.ndim, dtype=torch.int32)


@host_kernel(array_core.Reshape)
def _reshape(node):
    def reshape(x, shape):
        dims = _ints(shape)
        try:
            return x.reshape(dims)
        except ValueError:
            raise InvalidArgumentError(None, None, f"Input to reshape is a tensor with {x.size} "
                                       f"values, but the requested shape has "
                                       f"{int(np.prod(dims))}") from None
    return reshape


@host_kernel(array_core.ExpandDims)
def _expand_dims(node):
    def expand_dims(x, dim):
        d = _ints(dim)[0]
        return np.expand_dims(x, _axis(d, x.ndim + 1, "ExpandDims"))
    return expand_dims


@host_kernel(array_core.Squeeze)
def _squeeze(node):
    dims = list(node.attrs.get("squeeze_dims") or [])
    return lambda x: np.squeeze(x, tuple(d % x.ndim for d in dims) if dims else None)


@host_kernel(array_core.Pack)
def _pack(node):
    axis = node.attrs["axis"]
    return lambda *xs: np.stack(xs, axis=axis if axis >= 0 else axis + xs[0].ndim + 1)


@host_kernel(array_core.Unpack)
def _unpack(node):
    axis = node.attrs["axis"]
    return lambda x: tuple(np.moveaxis(x, axis, 0))


@host_kernel(array_slicing.ConcatV2)
def _concat(node):
    def concat(*args):
        *xs, axis = args
        return np.concatenate(xs, axis=_axis(_ints(axis)[0], xs[0].ndim, "ConcatV2"))
    return concat


@host_kernel(array_slicing.StridedSlice)
def _strided_slice(node):
    masks = {k: node.attrs[k] for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                        "new_axis_mask", "shrink_axis_mask")}

    def strided_slice(x, begin, end, strides):
        index, flips = compile_strided_slice(list(x.shape), tuple(_ints(begin)),
                                             tuple(_ints(end)), tuple(_ints(strides)),
                                             masks)[:2]
        out = x[tuple(np.newaxis if i is None else i for i in index)]
        return np.flip(out, flips).copy() if flips else np.asarray(out, dtype=object)
    return strided_slice


@host_kernel(array_gather.GatherV2)
def _gather(node):
    def gather(params, indices, axis):
        a = _axis(_ints(axis)[0], params.ndim, "GatherV2")
        idx = indices.cpu().numpy()
        if idx.size and (idx.min() < 0 or idx.max() >= params.shape[a]):
            bad = idx[(idx < 0) | (idx >= params.shape[a])].reshape(-1)[0]
            raise InvalidArgumentError(None, None, f"indices = {bad} is not in [0, "
                                       f"{params.shape[a]})")
        return np.take(params, idx, axis=a)
    return gather


@host_kernel(array_transpose.Transpose)
def _transpose(node):
    return lambda x, perm: np.transpose(x, _ints(perm)).copy()


@host_kernel(array_fill.Tile)
def _tile(node):
    return lambda x, multiples: np.tile(x, _ints(multiples))


@host_kernel(array_fill.Fill)
def _fill(node):
    def fill(dims, value):
        out = np.empty(_ints(dims), dtype=object)
        out.fill(np.asarray(value, dtype=object).item())
        return out
    return fill


@host_kernel(array_fill.ZerosLike)
def _zeros_like(node):
    def zeros_like(x):
        out = np.empty(x.shape, dtype=object)
        out.fill(b"")
        return out
    return zeros_like


@host_kernel(array_split.SplitV)
def _split_v(node):
    def split_v(x, sizes, axis):
        a = _axis(_ints(axis)[0], x.ndim, "SplitV")
        cuts = np.cumsum(_ints(sizes))[:-1]
        return tuple(np.split(x, cuts, axis=a))
    return split_v


@host_kernel(array_split.Split)
def _split(node):
    n = node.attrs["num_split"]

    def split(dim, x):
        a = _axis(_ints(dim)[0], x.ndim, "Split")
        if x.shape[a] % n:
            raise InvalidArgumentError(None, None, f"Number of ways to split should evenly "
                                       f"divide the split dimension, but got split_dim {a} "
                                       f"(size = {x.shape[a]}) and num_split {n}")
        return tuple(np.split(x, n, axis=a))
    return split


@host_kernel(array_slicing.Slice)
def _slice(node):
    def slice_(x, begin, size):
        b, n = _ints(begin), _ints(size)
        index = []
        for d, (start, count) in enumerate(zip(b, n)):
            stop = x.shape[d] if count == -1 else start + count
            if not 0 <= start <= stop <= x.shape[d]:
                raise InvalidArgumentError(None, None, f"Expected size[{d}] in [0, "
                                           f"{x.shape[d] - start}], but got {count}")
            index.append(slice(start, stop))
        return x[tuple(index)].copy()
    return slice_


@host_kernel(array_reorder.ReverseV2)
def _reverse(node):
    return lambda x, axis: np.flip(x, tuple(_axis(a, x.ndim, "ReverseV2")
                                            for a in _ints(axis))).copy()


def _pad(x, paddings, value):
    pads = [tuple(p) for p in np.asarray(paddings.cpu()).reshape(-1, 2).tolist()]
    if len(pads) != x.ndim or min((min(p) for p in pads), default=0) < 0:
        raise InvalidArgumentError(None, None, f"The first dimension of paddings must be the "
                                   f"rank of inputs{[len(pads), 2]}, {list(x.shape)} and "
                                   "paddings must be non-negative")
    out = np.empty([d + a + b for d, (a, b) in zip(x.shape, pads)], dtype=object)
    out.fill(value)
    out[tuple(slice(a, a + d) for d, (a, _) in zip(x.shape, pads))] = x
    return out


@host_kernel(array_fill.Pad)
def _pad_kernel(node):
    return lambda x, paddings: _pad(x, paddings, b"")


@host_kernel(array_fill.PadV2)
def _pad_v2(node):
    return lambda x, paddings, value: _pad(x, paddings, np.asarray(value).item())


@host_kernel(array_fill.BroadcastTo)
def _broadcast_to(node):
    def broadcast_to(x, shape):
        try:
            return np.broadcast_to(x, _ints(shape)).copy()
        except ValueError:
            raise InvalidArgumentError(None, None, f"Incompatible shapes: {list(x.shape)} vs. "
                                       f"{_ints(shape)}") from None
    return broadcast_to


@host_kernel(arithmetic.SelectV2)
def _select_v2(node):
    def select(cond, t, e):
        c = cond.cpu().numpy()
        try:
            return np.where(c, t, e).astype(object)
        except ValueError:
            raise InvalidArgumentError(None, None, f"condition {list(c.shape)}, then "
                                       f"{list(t.shape)} and else {list(e.shape)} must be "
                                       "broadcastable") from None
    return select


@host_kernel(arithmetic.Select)
def _select(node):
    def select(cond, t, e):
        c = cond.cpu().numpy()
        if c.ndim == 1 and t.ndim > 1:  # TF1's Select: a vector picks rows
            c = c.reshape(c.shape + (1,) * (t.ndim - 1))
        return np.where(c, t, e).astype(object)
    return select


@host_kernel(array_nd.GatherNd)
def _gather_nd(node):
    ignore, node_name = gather_nd_ignores(node), gather_nd_node_name(node)

    def gather_nd(params, indices):
        indices = indices.cpu()
        lead = tuple(indices.shape[:-1])
        if indices.dim() and indices.shape[-1] == 0:   # no coordinates: all of params each
            return np.broadcast_to(params, lead + params.shape).copy()
        # the row numbers of params seen as [rows, slice...], with the ATen kernel's checks
        rows, k, keep = gather_rows(indices, params.shape, "param", ignore, node_name)
        table = params.reshape((int(np.prod(params.shape[:k])),) + params.shape[k:])
        if keep is None:
            return table[rows.numpy()].reshape(lead + params.shape[k:])
        out = np.full((rows.shape[0],) + params.shape[k:], b"", dtype=object)  # IGNORE
        keep = keep.numpy()
        out[keep] = table[rows.numpy()[keep]]
        return out.reshape(lead + params.shape[k:])
    return gather_nd


def _compare(equal: bool):
    def factory(node):
        strict = node.attrs.get("incompatible_shape_error", True)

        def compare(x, y):
            if not strict:  # shapes that do not broadcast: one scalar, as the device kernel
                try:
                    np.broadcast_shapes(np.shape(x), np.shape(y))
                except ValueError:
                    return torch.tensor(not equal)
            out = np.equal(x, y) if equal else np.not_equal(x, y)
            return torch.from_numpy(np.array(out, dtype=bool))
        return compare
    return factory


host_kernel(comparison.Equal)(_compare(True))
host_kernel(comparison.NotEqual)(_compare(False))


def _unique(with_counts: bool):
    def factory(node):
        idx_dt = node.attrs["out_idx"].torch_dtype

        def unique(x):
            flat = np.asarray(x, dtype=object).reshape(-1)
            first: dict = {}
            idx = np.empty(flat.size, dtype=np.int64)
            for i, v in enumerate(flat):  # TF's order: first occurrence
                idx[i] = first.setdefault(v, len(first))
            y = np.empty(len(first), dtype=object)
            y[:] = list(first)
            outs = (y, torch.from_numpy(idx).to(idx_dt))
            if with_counts:
                outs += (torch.bincount(torch.from_numpy(idx), minlength=len(first)).to(idx_dt),)
            return outs
        return unique
    return factory


host_kernel(array_search.Unique)(_unique(False))
host_kernel(array_search.UniqueWithCounts)(_unique(True))


# Resource variables holding strings: the value is the (immutable) object array itself.
@host_kernel(state.ReadVariableOp)
def _read_string_variable(node):
    dtype = node.attrs["dtype"]

    def read(res):
        if res.value is None:
            raise not_found(res)
        if res.dtype is not dtype:
            check_dtype(res, dtype, "read")
        return res.value
    return read


@host_kernel(state.AssignVariableOp)
def _assign_string_variable(node):
    dtype = node.attrs["dtype"]

    def assign(res, value):
        check_dtype(res, dtype, "assign")
        if not res.shape.is_compatible_with(TensorShape(value.shape)) and (
                node.attrs.get("validate_shape", False) or res.shape.is_fully_defined()):
            raise InvalidArgumentError(None, None, "Trying to assign to variable with tensor "
                                       f"with wrong shape. Expected {fmt(res.shape)} got "
                                       f"{fmt(TensorShape(value.shape))}")
        res.value = value
    return assign
