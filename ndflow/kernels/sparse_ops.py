"""Kernels of the sparse ops that rearrange entries (ops/sparse_ops.py): vectorised index
arithmetic on row-major entry keys (stable sorts, masks, index_add), with TensorFlow's error
messages. Ops that carry values of any type also run on the host for string values."""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.shapes import reshape_sizes
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.kernels.sparse_common import (
    bad,
    cat,
    check_entries,
    common_keys,
    dims,
    linear,
    long,
    same_shape,
    take,
    unravel,
)
from ndflow.ops import sparse_ops


def _any_type(op):
    """Registers a kernel factory for numbers (ATen) and for strings (host)."""
    def register(factory):
        kernel(op)(factory)
        host_kernel(op)(factory)
        return factory
    return register


@_any_type(sparse_ops.SparseReorder)
def _reorder(node):
    def reorder(indices, values, shape):
        indices, shape = long(indices), long(shape)
        check_entries(indices, values, shape)
        perm = torch.argsort(linear(indices, dims(shape)), stable=True)
        return indices.index_select(0, perm), take(values, perm)
    return reorder


@kernel(sparse_ops.SparseReshape)
def _reshape(node):
    def reshape(indices, shape, new_shape):
        indices, old = long(indices), dims(shape)
        new = dims(new_shape)
        if indices.dim() != 2:
            raise bad(f"Input indices should be a matrix but received shape "
                      f"{list(indices.shape)}")
        total = 1
        for d in old:
            total *= d
        product, unknown, message = reshape_sizes(new, "only one output dimension", "size")
        if message is not None:
            raise bad(message)
        shown = f"input_shape=[{','.join(map(str, old))}]"
        if unknown:
            if product == 0 or total % product:
                out = [1 if d == -1 else d for d in new]
                raise bad(f"Input to reshape is a SparseTensor with {total} dense values, but "
                          f"the requested shape requires a multiple of {product}. {shown} "
                          f"output_shape=[{','.join(map(str, out))}]")
            new[unknown[0]] = total // product
        elif product != total:
            raise bad(f"Input to reshape is a tensor with {total} dense values, but the "
                      f"requested shape has {product}. {shown} "
                      f"output_shape=[{','.join(map(str, new))}]")
        out_shape = torch.tensor(new, dtype=torch.int64)
        if old == new:
            return indices, out_shape
        return unravel(linear(indices, old), new), out_shape
    return reshape


@kernel(sparse_ops.SparseAdd)
def _add(node):
    def add(a_idx, a_val, a_shape, b_idx, b_val, b_shape, thresh):
        a_idx, b_idx = long(a_idx), long(b_idx)
        check_entries(a_idx, a_val, long(a_shape))
        check_entries(b_idx, b_val, long(b_shape))
        shape = dims(a_shape)
        same_shape(shape, dims(b_shape))
        # Sorting both sides' keys together merges them (TF walks two ordered lists).
        keys = torch.cat([linear(a_idx, shape), linear(b_idx, shape)])
        order = torch.argsort(keys, stable=True)
        unique, group, counts = torch.unique_consecutive(keys[order], return_inverse=True,
                                                         return_counts=True)
        vals = torch.cat([a_val, b_val])[order]
        sums = torch.zeros(unique.shape[0], dtype=vals.dtype, device=vals.device)
        sums.index_add_(0, group, vals)
        keep = (counts == 1) | (sums.abs() >= thresh.to(sums.device)) if sums.numel() else \
            counts == 1
        return unravel(unique[keep], shape), sums[keep], long(a_shape).clone()
    return add


@kernel(sparse_ops.SparseAddGrad)
def _add_grad(node):
    def add_grad(grad, a_idx, b_idx, sum_idx):
        a_idx, b_idx, sum_idx = long(a_idx), long(b_idx), long(sum_idx)
        ka, kb, ks = common_keys(a_idx, b_idx, sum_idx)
        return _matched(grad, ks, ka), _matched(grad, ks, kb)
    return add_grad


def _matched(grad: torch.Tensor, sum_keys: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """grad's value at each key's entry among `sum_keys`, 0 where the key is absent."""
    out = torch.zeros(keys.shape[0], dtype=grad.dtype, device=grad.device)
    if not sum_keys.numel() or not keys.numel():
        return out
    order = torch.argsort(sum_keys)
    pos = torch.searchsorted(sum_keys[order], keys).clamp(max=sum_keys.shape[0] - 1)
    hit = sum_keys[order][pos] == keys
    out[hit] = grad[order[pos[hit]]]
    return out


@kernel(sparse_ops.SparseTensorDenseAdd)
def _tensor_dense_add(node):
    def tensor_dense_add(a_idx, a_val, a_shape, b):
        a_idx, shape = long(a_idx), dims(a_shape)
        check_entries(a_idx, a_val, long(a_shape))
        for d, (x, y) in enumerate(zip(shape, b.shape)):
            if x != y:
                raise bad(f"Dimension {d} does not equal (no broadcasting is supported): sparse "
                          f"side {x} vs dense side {y}")
        if len(shape) != b.dim():
            raise bad(f"Dimension mismatch: a_shape [{','.join(map(str, shape))}] and b.shape "
                      f"[{','.join(map(str, b.shape))}]")
        if a_idx.numel():
            upper = torch.tensor(shape, dtype=torch.int64)
            wrong = (a_idx < 0) | (a_idx >= upper)
            if bool(wrong.any()):
                i, d = (int(v) for v in torch.nonzero(wrong)[0])
                raise bad(f"Sparse tensor has an invalid index on dimension {d}: "
                          f"a_indices({i},{d}) = {int(a_idx[i, d])}, dense tensor shape: "
                          f"{' '.join(map(str, shape))}")
        out = b.clone()
        out.index_put_(tuple(a_idx.t()), a_val.to(b.dtype), accumulate=True)
        return out
    return tensor_dense_add


@_any_type(sparse_ops.SparseConcat)
def _concat(node):
    n, axis = node.attrs["N"], node.attrs["concat_dim"]

    def concat(*flat):
        idxs = [long(i) for i in flat[:n]]
        vals, shapes = flat[n:2 * n], [dims(s) for s in flat[2 * n:]]
        rank = len(shapes[0])
        dim = axis + rank if axis < 0 else axis
        if not 0 <= dim < rank:
            raise bad(f"Concat dimension must be in range [{-rank}, {rank}), got {axis}")
        for i, (idx, val, s) in enumerate(zip(idxs, vals, shapes)):
            check_entries(idx, val, long(flat[2 * n + i]))
            if len(s) != rank:
                raise bad(f"Ranks of all input tensors must match: expected {rank} but got "
                          f"{len(s)} at position {i}")
            for d in range(rank):
                if d != dim and s[d] != shapes[0][d]:
                    raise bad(f"Input shapes must match: expected {shapes[0][d]} for dimension "
                              f"{d} but got {s[d]} at position {i}")
        out_shape = list(shapes[0])
        out_shape[dim] = sum(s[dim] for s in shapes)
        shifted, offset = [], 0
        for idx, s in zip(idxs, shapes):
            idx = idx.clone()
            idx[:, dim] += offset
            shifted.append(idx)
            offset += s[dim]
        indices, values = torch.cat(shifted, 0), cat(list(vals))
        if dim != 0:   # along another dimension the entries interleave: row-major order
            perm = torch.argsort(linear(indices, out_shape), stable=True)
            indices, values = indices.index_select(0, perm), take(values, perm)
        return indices, values, torch.tensor(out_shape, dtype=torch.int64)
    return concat


@_any_type(sparse_ops.SparseSlice)
def _slice(node):
    def sparse_slice(indices, values, shape, start, size):
        indices = long(indices)
        check_entries(indices, values, long(shape))
        shape, start, size = dims(shape), dims(start), dims(size)
        for what, v in (("start", start), ("size", size)):
            if len(v) != len(shape):
                raise bad(f"Expected {what} to be a vector of length {len(shape)} but got "
                          f"length {len(v)}")
        lo = torch.tensor(start, dtype=torch.int64, device=indices.device)
        hi = lo + torch.tensor(size, dtype=torch.int64, device=indices.device)
        inside = ((indices >= lo) & (indices < hi)).all(1)
        pos = torch.nonzero(inside).reshape(-1)
        out_shape = [max(0, min(st + sz, d) - st) for st, sz, d in zip(start, size, shape)]
        return (indices.index_select(0, pos) - lo, take(values, pos),
                torch.tensor(out_shape, dtype=torch.int64))
    return sparse_slice


@kernel(sparse_ops.SparseSliceGrad)
def _slice_grad(node):
    def slice_grad(grad, in_idx, start, out_idx):
        in_idx, out_idx = long(in_idx), long(out_idx)
        shifted = out_idx + long(start).reshape(1, -1)
        k_in, k_out = common_keys(in_idx, shifted)
        return _matched(grad, k_out, k_in)
    return slice_grad


@_any_type(sparse_ops.SparseSplit)
def _split(node):
    num = node.attrs["num_split"]

    def split(split_dim, indices, values, shape):
        indices = long(indices)
        check_entries(indices, values, long(shape))
        shape = dims(shape)
        rank, axis = len(shape), int(long(split_dim).reshape(()))
        dim = axis + rank if axis < 0 else axis
        if not 0 <= dim < rank:
            raise bad(f"Input axis should be in range [{-rank}, {rank}), got {axis}")
        if not 1 <= num <= shape[dim]:
            raise bad(f"Input num_split should be between 1 and the splitting dimension size "
                      f"({shape[dim]}), got {num}")
        base, extra = divmod(shape[dim], num)
        sizes = [base + (1 if i < extra else 0) for i in range(num)]
        out_idx, out_val, out_shape, offset = [], [], [], 0
        for s in sizes:
            coord = indices[:, dim]
            pos = torch.nonzero((coord >= offset) & (coord < offset + s)).reshape(-1)
            idx = indices.index_select(0, pos)
            idx[:, dim] -= offset
            out_idx.append(idx)
            out_val.append(take(values, pos))
            piece = list(shape)
            piece[dim] = s
            out_shape.append(torch.tensor(piece, dtype=torch.int64))
            offset += s
        return tuple(out_idx + out_val + out_shape)
    return split


@_any_type(sparse_ops.SparseFillEmptyRows)
def _fill_empty_rows(node):
    def fill_empty_rows(indices, values, dense_shape, default):
        indices = long(indices)
        check_entries(indices, values, long(dense_shape))
        shape = dims(dense_shape)
        if not shape:
            raise bad("Input dense_shape must be a non-empty vector")
        rows_n, n = shape[0], indices.shape[0]
        rows = indices[:, 0] if n else torch.zeros(0, dtype=torch.int64)
        wrong = (rows < 0) | (rows >= rows_n)
        if bool(wrong.any()):
            i = int(torch.nonzero(wrong)[0])
            r = int(rows[i])
            raise bad(f"indices({i}, 0) is invalid: {r} >= {rows_n}")   # (TF's text for < 0 too)
        counts = torch.bincount(rows, minlength=rows_n)
        empty = counts == 0
        in_order = n < 2 or bool((rows[1:] >= rows[:-1]).all())
        if in_order and not bool(empty.any()):   # nothing to fill or move
            return indices, values, empty, torch.arange(n, dtype=torch.int64)
        per_row = counts + empty.long()           # an empty row gets its one default entry
        out_start = torch.cumsum(per_row, 0) - per_row
        # An entry moves down by the number of empty rows before its row; entries keep their
        # order within a row (a stable sort by row when the rows are not in order).
        shift = out_start - (torch.cumsum(counts, 0) - counts)
        order = None if in_order else torch.argsort(rows, stable=True)
        ordered_rows = rows if in_order else rows.index_select(0, order)
        place = torch.arange(n) + shift.index_select(0, ordered_rows)
        if not in_order:
            place = torch.empty_like(place).index_copy_(0, order, place)
        total = int(per_row.sum())
        empty_rows = torch.nonzero(empty).reshape(-1)
        fill = out_start.index_select(0, empty_rows)   # where the default entries go
        # Each output entry's source entry (a gather: much faster than scattering rows).
        is_fill = torch.zeros(total, dtype=torch.int64).index_fill_(0, fill, 1)
        src = (torch.arange(total) - torch.cumsum(is_fill, 0)).clamp_(0, max(n - 1, 0))
        if order is not None:
            src = order.index_select(0, src)
        filler = torch.zeros((empty_rows.numel(), len(shape)), dtype=torch.int64)
        filler[:, 0] = empty_rows
        out_idx = indices.index_select(0, src) if n else torch.zeros(
            (total, len(shape)), dtype=torch.int64)
        out_idx.index_copy_(0, fill, filler)
        return out_idx, _gathered_values(values, default, src, fill, total), empty, place
    return fill_empty_rows


def _gathered_values(values, default, src: torch.Tensor, fill: torch.Tensor, total: int):
    """values[src] with `default` at the `fill` positions (ATen or NumPy string values)."""
    if isinstance(values, torch.Tensor):
        if not values.numel():
            return default.reshape(1).to(values.device, values.dtype).expand(total).clone()
        out = values.index_select(0, src.to(values.device))
        return out.index_fill_(0, fill.to(values.device),
                               default.reshape(()).to(values.device, values.dtype))
    out = values[src.numpy()] if values.size else np.empty(total, dtype=object)
    out[fill.numpy()] = np.asarray(default, dtype=object).reshape(())
    return out


@kernel(sparse_ops.SparseFillEmptyRowsGrad)
def _fill_empty_rows_grad(node):
    def fill_empty_rows_grad(reverse_map, grad):
        reverse_map = long(reverse_map).to(grad.device)
        d_values = grad[reverse_map]
        return d_values, grad.sum() - d_values.sum()
    return fill_empty_rows_grad


@kernel(sparse_ops.SparseTensorDenseMatMul)
def _dense_matmul(node):
    adj_a, adj_b = node.attrs["adjoint_a"], node.attrs["adjoint_b"]

    def dense_matmul(a_idx, a_val, a_shape, b):
        a_idx, shape = long(a_idx), dims(a_shape)
        if len(shape) != 2:
            raise bad("Tensor 'a_shape' must have 2 elements")
        if a_idx.dim() != 2 or a_idx.shape[1] != 2:
            raise bad(f"Tensor 'a_indices' is not a matrix of 2 columns: "
                      f"{list(a_idx.shape)}")
        if b.dim() != 2:
            raise bad(f"Tensor 'b' is not a matrix: {list(b.shape)}")
        if a_val.dim() != 1 or a_val.shape[0] != a_idx.shape[0]:
            raise bad(f"Number of rows of a_indices does not match number of entries in "
                      f"a_values: {a_idx.shape[0]} vs. {a_val.shape[0]}")
        rows, cols = (a_idx[:, 1], a_idx[:, 0]) if adj_a else (a_idx[:, 0], a_idx[:, 1])
        m, k = (shape[1], shape[0]) if adj_a else (shape[0], shape[1])
        bm = b.conj().t() if adj_b else b
        if bm.shape[0] != k:
            raise bad(f"Cannot multiply A and B because inner dimension does not match: {k} "
                      f"vs. {bm.shape[0]}.  Did you forget a transpose?  Dimensions of A: "
                      f"[{shape[0]}, {shape[1]}).  Dimensions of B: "
                      f"[{b.shape[0]},{b.shape[1]}]")
        for what, coord, bound, col in (("k", cols, k, 0 if adj_a else 1),
                                        ("m", rows, m, 1 if adj_a else 0)):
            wrong = (coord < 0) | (coord >= bound)
            if bool(wrong.any()):
                i = int(torch.nonzero(wrong)[0])
                raise bad(f"{what} ({int(coord[i])}) from index[{i},{col}] out of bounds "
                          f"(>={bound})")
        vals = a_val.conj() if adj_a else a_val
        if vals.numel() and (b.dtype.is_floating_point or b.dtype.is_complex) and \
                b.dtype not in (torch.float16, torch.bfloat16):
            # ATen's sparse x dense product (duplicate entries add up, as in TF's kernel).
            coo = torch.sparse_coo_tensor(torch.stack([rows, cols]).to(b.device),
                                          vals.to(b.dtype), (m, k), check_invariants=False)
            return torch.sparse.mm(coo, bm.contiguous())
        out = torch.zeros((m, bm.shape[1]), dtype=b.dtype, device=b.device)
        if vals.numel():
            out.index_add_(0, rows.to(b.device), vals.reshape(-1, 1) * bm[cols.to(b.device)])
        return out
    return dense_matmul
