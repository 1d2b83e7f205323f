"""Kernels of the sparse reductions (ops/sparse_reductions.py): entries are grouped by the
row-major key of their kept coordinates and reduced with index_add / scatter_reduce; only
explicit entries take part (TensorFlow's semantics)."""

from __future__ import annotations

import math

import torch

from ndflow.kernels.registry import kernel
from ndflow.kernels.sparse_common import (
    bad,
    check_entries,
    dims,
    linear,
    long,
    same_shape,
    unravel,
)
from ndflow.ops import sparse_bincount, sparse_dense_cwise
from ndflow.ops import sparse_reductions as red


def _groups(indices: torch.Tensor, shape: list[int], axes_t, keep_dims: bool):
    """(key of each entry's output element, the output's dense shape, its kept shape)."""
    rank = len(shape)
    axes = set()
    for a in long(axes_t).reshape(-1).tolist():
        if not -rank <= a < rank:
            raise bad(f"Invalid reduction dimension {a}, for input with {rank} dimensions.")
        axes.add(a % rank)
    kept = [d for d in range(rank) if d not in axes]
    kept_shape = [shape[d] for d in kept]
    key = linear(indices[:, kept], kept_shape)
    out_shape = [1 if d in axes else shape[d] for d in range(rank)] if keep_dims else kept_shape
    return key, out_shape, kept_shape, kept


def _reduced(values: torch.Tensor, key: torch.Tensor, size: int, how: str):
    """Per-key reductions of values; keys with no entry hold 0. Also the per-key counts."""
    counts = torch.bincount(key, minlength=size) if key.numel() else torch.zeros(
        size, dtype=torch.int64)
    if how == "sum":
        out = torch.zeros(size, dtype=values.dtype, device=values.device)
        out.index_add_(0, key.to(values.device), values)
        return out, counts
    out = torch.zeros(size, dtype=values.dtype, device=values.device)
    out.scatter_reduce_(0, key.to(values.device), values, how, include_self=False)
    return out, counts


def _reduce_factory(how: str, sparse: bool):
    def factory(node):
        keep_dims = node.attrs["keep_dims"]

        def reduce(indices, values, shape, axes):
            indices, shape_l = long(indices), dims(shape)
            check_entries(indices, values, long(shape))
            key, out_shape, kept_shape, kept = _groups(indices, shape_l, axes, keep_dims)
            size = math.prod(kept_shape)
            out, counts = _reduced(values, key, size, how)
            if not sparse:
                return out.reshape(out_shape)
            present = torch.nonzero(counts).reshape(-1)
            out_idx = unravel(present, kept_shape)
            if keep_dims:   # the reduced dimensions come back as zero columns
                full = torch.zeros((present.shape[0], len(shape_l)), dtype=torch.int64)
                full[:, kept] = out_idx
                out_idx = full
            return out_idx, out[present.to(out.device)], torch.tensor(out_shape,
                                                                      dtype=torch.int64)
        return reduce
    return factory


kernel(red.SparseReduceSum)(_reduce_factory("sum", False))
kernel(red.SparseReduceSumSparse)(_reduce_factory("sum", True))
kernel(red.SparseReduceMax)(_reduce_factory("amax", False))
kernel(red.SparseReduceMaxSparse)(_reduce_factory("amax", True))


@kernel(red.SparseSoftmax)
def _softmax(node):
    def softmax(indices, values, shape):
        indices, shape_l = long(indices), dims(shape)
        check_entries(indices, values, long(shape))
        if len(shape_l) < 2:
            raise bad(f"Input should have rank >= 2, but received shape: "
                      f"{' '.join(map(str, shape_l))}")
        key = linear(indices[:, :-1], shape_l[:-1]).to(values.device)
        size = math.prod(shape_l[:-1])
        top = torch.full((size,), -math.inf, dtype=values.dtype, device=values.device)
        top.scatter_reduce_(0, key, values, "amax", include_self=True)
        e = torch.exp(values - top[key])
        total = torch.zeros(size, dtype=values.dtype, device=values.device)
        total.index_add_(0, key, e)
        return e / total[key]
    return softmax


def _pairwise_factory(how):
    def factory(node):
        def pairwise(a_idx, a_val, a_shape, b_idx, b_val, b_shape):
            a_idx, b_idx = long(a_idx), long(b_idx)
            check_entries(a_idx, a_val, long(a_shape))
            check_entries(b_idx, b_val, long(b_shape))
            shape = dims(a_shape)
            same_shape(shape, dims(b_shape))
            ka, kb = linear(a_idx, shape), linear(b_idx, shape)
            keys, group = torch.unique(torch.cat([ka, kb]), return_inverse=True)
            n = keys.shape[0]
            # An entry missing on one side counts as 0 there.
            av = torch.zeros(n, dtype=a_val.dtype, device=a_val.device)
            bv = torch.zeros(n, dtype=b_val.dtype, device=b_val.device)
            av[group[:ka.shape[0]]] = a_val
            bv[group[ka.shape[0]:]] = b_val
            return unravel(keys, shape), how(av, bv)
        return pairwise
    return factory


kernel(red.SparseSparseMaximum)(_pairwise_factory(torch.maximum))
kernel(red.SparseSparseMinimum)(_pairwise_factory(torch.minimum))


def _segment_factory(kind: str, counted: bool):
    def factory(node):
        def segment(data, indices, segment_ids, num_segments=None):
            indices, ids = long(indices).to(data.device), long(segment_ids).to(data.device)
            if indices.dim() != 1:
                raise bad("indices should be a vector.")
            if ids.dim() != 1 or ids.shape[0] != indices.shape[0]:
                raise bad("segment_ids and indices should have same size.")
            rows = data.shape[0] if data.dim() else 0
            wrong = (indices < 0) | (indices >= rows)
            if bool(wrong.any()):
                i = int(torch.nonzero(wrong)[0])
                raise bad(f"Bad: indices[{i}] == {int(indices[i])} out of range [0, {rows})")
            if ids.numel() and bool((ids[1:] < ids[:-1]).any()):
                raise bad("segment ids are not increasing")
            if ids.numel() and int(ids[0]) < 0:
                raise bad("segment ids must be >= 0")
            last = int(ids[-1]) + 1 if ids.numel() else 0
            if counted:
                out_rows = int(num_segments)
                if last > out_rows:
                    raise bad("segment ids must be < num_segments")
            else:
                out_rows = last
            picked = data[indices]
            out = torch.zeros((out_rows,) + tuple(data.shape[1:]), dtype=data.dtype,
                              device=data.device)
            out.index_add_(0, ids, picked)
            if kind != "sum":
                counts = torch.bincount(ids, minlength=out_rows).clamp(min=1).to(data.dtype)
                scale = counts if kind == "mean" else counts.sqrt()
                out = out / scale.reshape((-1,) + (1,) * (data.dim() - 1))
            return out
        return segment
    return factory


for _kind, _ops in (("sum", (red.SparseSegmentSum, red.SparseSegmentSumWithNumSegments)),
                    ("mean", (red.SparseSegmentMean, red.SparseSegmentMeanWithNumSegments)),
                    ("sqrt_n", (red.SparseSegmentSqrtN, red.SparseSegmentSqrtNWithNumSegments))):
    kernel(_ops[0])(_segment_factory(_kind, False))
    kernel(_ops[1])(_segment_factory(_kind, True))


def _count_factory(sparse_input: bool):
    def factory(node):
        minlength, maxlength = node.attrs["minlength"], node.attrs["maxlength"]
        binary = node.attrs["binary_output"]

        def count(*args):
            if sparse_input:
                indices, values, shape, weights = args
                indices, shape_l = long(indices), dims(shape)
                batched = len(shape_l) == 2
                rows = indices[:, 0] if batched else None
                batch = shape_l[0] if batched else 1
            else:
                values, weights = args
                batched, batch = values.dim() == 2, values.shape[0] if values.dim() == 2 else 1
                if values.dim() not in (1, 2):
                    raise bad(f"Input must be a 1 or 2-dimensional tensor. Got: "
                              f"{list(values.shape)}")
                rows = torch.arange(batch).repeat_interleave(values.shape[1]) if batched \
                    else None
            flat = values.reshape(-1).long()
            w = weights.reshape(-1)
            if w.numel() and w.numel() != flat.numel():
                raise bad(f"Weights and values must have the same shape. Weight shape: "
                          f"{list(weights.shape)}; values shape: {list(values.shape)}")
            if bool((flat < 0).any()):
                raise bad("Input values must all be non-negative")
            keep = flat < maxlength if maxlength >= 0 else torch.ones_like(flat, dtype=torch.bool)
            flat = flat[keep]
            rows = torch.zeros_like(flat) if rows is None else rows.long()[keep]
            size = maxlength if maxlength > 0 else max(int(flat.max()) + 1 if flat.numel()
                                                       else 1, minlength)
            key = rows * size + flat
            keys, group = torch.unique(key, return_inverse=True)
            out_dtype = weights.dtype
            if binary or not w.numel():
                vals = torch.zeros(keys.shape[0], dtype=out_dtype)
                vals.index_add_(0, group, torch.ones_like(flat, dtype=out_dtype))
                if binary:
                    vals = torch.ones_like(vals)
            else:
                vals = torch.zeros(keys.shape[0], dtype=out_dtype)
                vals.index_add_(0, group, w[keep].to(out_dtype))
            if batched:
                idx = torch.stack([keys // size, keys % size], 1)
                shape_out = [batch, size]
            else:
                idx, shape_out = keys.reshape(-1, 1), [size]
            return idx, vals, torch.tensor(shape_out, dtype=torch.int64)
        return count
    return factory


kernel(sparse_bincount.DenseCountSparseOutput)(_count_factory(False))
kernel(sparse_bincount.SparseCountSparseOutput)(_count_factory(True))


def _cwise_factory(how):
    def factory(node):
        def cwise(indices, values, shape, dense):
            indices, shape_l = long(indices), dims(shape)
            check_entries(indices, values, long(shape))
            d_shape = list(dense.shape)
            if len(d_shape) > len(shape_l) or any(
                    d not in (1, s) for d, s in zip(d_shape[::-1], shape_l[::-1])):
                raise bad(f"SparseDenseBinaryOpShared broadcasts dense to sparse only; got "
                          f"incompatible shapes: [{','.join(map(str, shape_l))}] vs. "
                          f"[{','.join(map(str, d_shape))}]")
            # Each entry's element of the broadcast dense operand: size-1 dims read index 0.
            cols = indices[:, len(shape_l) - len(d_shape):].to(dense.device)
            cols = cols * torch.tensor([1 if d > 1 else 0 for d in d_shape],
                                       dtype=torch.int64, device=dense.device)
            picked = dense.reshape(-1).index_select(0, linear(cols, d_shape)) if d_shape else \
                dense.reshape(1).expand(values.shape[0])
            return how(values, picked)
        return cwise
    return factory


kernel(sparse_dense_cwise.SparseDenseCwiseMul)(_cwise_factory(torch.mul))
kernel(sparse_dense_cwise.SparseDenseCwiseDiv)(_cwise_factory(
    lambda x, y: torch.div(x, y, rounding_mode="trunc") if not (x.is_floating_point() or
                                                               x.is_complex()) else x / y))
kernel(sparse_dense_cwise.SparseDenseCwiseAdd)(_cwise_factory(torch.add))


def _grad_v2_factory(kind: str):
    def factory(node):
        def grad_v2(grad, indices, segment_ids, dense_output_dim0):
            idx, ids = long(indices).to(grad.device), long(segment_ids).to(grad.device)
            if idx.reshape(-1).shape[0] != ids.reshape(-1).shape[0]:
                raise bad("segment_ids and indices should have same size.")
            idx, ids = idx.reshape(-1), ids.reshape(-1)
            dim0, n_seg = int(dense_output_dim0), grad.shape[0] if grad.dim() else 0
            if ids.numel() and bool(((ids < 0) | (ids >= n_seg)).any()):
                raise bad("Invalid number of segments")
            wrong = (idx < 0) | (idx >= dim0)
            if bool(wrong.any()):
                raise bad(f"Index {int(idx[torch.nonzero(wrong)[0]])} out of range [0, {dim0}).")
            rows = grad[ids]
            if kind != "sum":
                counts = torch.bincount(ids, minlength=n_seg).clamp(min=1).to(grad.dtype)
                scale = counts if kind == "mean" else counts.sqrt()
                rows = rows / scale[ids].reshape((-1,) + (1,) * (grad.dim() - 1))
            unique, where = torch.unique(idx, sorted=True, return_inverse=True)
            out = torch.zeros((unique.shape[0],) + tuple(grad.shape[1:]), dtype=grad.dtype,
                              device=grad.device)
            return out.index_add(0, where, rows), unique.to(indices.dtype)
        return grad_v2
    return factory


for _kind, _op in red.GRAD_V2.items():
    kernel(_op)(_grad_v2_factory(_kind))
