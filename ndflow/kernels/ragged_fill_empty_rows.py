"""Kernels of RaggedFillEmptyRows / RaggedFillEmptyRowsGrad (ops/ragged_fill_empty_rows.py).

RaggedFillEmptyRows checks its inputs as TF's kernel does (nrows a scalar, value_rowids and
values vectors of one length, default_value a scalar; nrows >= 0, no values when it is 0;
row ids in [0, nrows), with TF's messages), then computes what SparseFillEmptyRows computes
(kernels/sparse_ops.py) for row ids alone, vectorised: the values per row (a bincount), each
value's place (its index plus the number of empty rows before its row; through a stable sort
when the rows are out of order), the output row ids as the running count of row ends (a
cumsum), the values scattered over a vector of the default (any value type; strings on the
host). Rows in order with none empty come back as they are. As TF's, an input with no rows
gives output_value_rowids of shape [0, 1].

RaggedFillEmptyRowsGrad is TF's FillEmptyRowsGrad: d_values = grad_values[reverse_index_map]
and d_default_value the sum of the entries of grad_values that no input value went to (a
repeated index counts once); number types only (TF has no bool or string kernel).
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core.shapes import fmt
from ndflow.kernels.registry import host_kernel, kernel, no_kernel_error
from ndflow.kernels.sparse_common import bad, long
from ndflow.ops import ragged_fill_empty_rows as ops


def _shape(x) -> list:
    return list(x.shape)


def _check_inputs(rowids, values, nrows, default) -> int:
    """TF's checks of the inputs, in its order; the number of rows."""
    if len(_shape(nrows)) != 0:
        raise bad(f"nrows must be a scalar, saw: {fmt(_shape(nrows))}")
    if len(_shape(rowids)) != 1:
        raise bad(f"value_rowids must be a vector, saw: {fmt(_shape(rowids))}")
    if len(_shape(values)) != 1:
        raise bad(f"values must be a vector, saw: {fmt(_shape(values))}")
    n = _shape(rowids)[0]
    if _shape(values)[0] != n:
        raise bad(f"The length of `values` ({_shape(values)[0]}) must match the first "
                  f"dimension of `value_rowids` ({n}).")
    if len(_shape(default)) != 0:
        raise bad(f"default_value must be a scalar, saw: {fmt(_shape(default))}")
    rows = int(long(nrows))
    if rows < 0:
        raise bad(f"Expected shape dimensions to be non-negative, got {rows}")
    if rows == 0 and n:
        raise bad(f"Received SparseTensor with dense_shape[0] = 0 but indices.shape[0] = {n}")
    return rows


def _placed_values(values, default, place: torch.Tensor, total: int):
    """`default` everywhere but at `place`, where `values` go (ATen or NumPy strings)."""
    if isinstance(values, torch.Tensor):
        out = torch.empty(total, dtype=values.dtype, device=values.device)
        out.fill_(default.reshape(()).to(values.device, values.dtype))
        return out.index_copy_(0, place.to(values.device), values)
    out = np.empty(total, dtype=object)
    out[:] = np.asarray(default, dtype=object).reshape(())
    out[place.cpu().numpy()] = values
    return out


def _fill_empty_rows(node):
    def ragged_fill_empty_rows(rowids, values, nrows, default):
        rows = _check_inputs(rowids, values, nrows, default)
        rowids = long(rowids)
        n, dev = rowids.shape[0], rowids.device
        if rows == 0:   # (TF's output_value_rowids is then [0, 1])
            none = torch.zeros(0, dtype=torch.int64, device=dev)
            return (torch.zeros((0, 1), dtype=torch.int64, device=dev), values,
                    torch.zeros(0, dtype=torch.bool, device=dev), none)
        if n:
            lo, hi = (int(v) for v in torch.aminmax(rowids))
            if lo < 0 or hi >= rows:
                i = int(torch.nonzero((rowids < 0) | (rowids >= rows))[0, 0])
                raise bad(f"indices({i}, 0) is invalid: {int(rowids[i])} >= {rows}")
        counts = torch.bincount(rowids, minlength=rows)
        empty = counts == 0
        empties_before = torch.cumsum(empty, 0)   # (at a row with values: before it)
        ordered = n < 2 or bool((rowids[1:] >= rowids[:-1]).all())
        if ordered and int(empties_before[-1]) == 0:   # nothing to fill or move
            return rowids, values, empty, torch.arange(n, device=dev)
        # A value moves down by the number of empty rows before its row (a filled row has
        # one entry), values of a row keep their order (a stable sort by row if unordered).
        if ordered:
            place = torch.arange(n, device=dev) + empties_before.index_select(0, rowids)
        else:
            order = torch.argsort(rowids, stable=True)
            moved = torch.arange(n, device=dev) + empties_before.index_select(
                0, rowids.index_select(0, order))
            place = torch.empty_like(moved).index_copy_(0, order, moved)
        ends = torch.cumsum(counts + empty, 0)   # each row's end in the output
        total = int(ends[-1])
        # the output's row ids: one more after each row's end
        starts = torch.zeros(total, dtype=torch.int64, device=dev)
        out_rowids = torch.cumsum(starts.index_fill_(0, ends[:-1], 1), 0)
        return out_rowids, _placed_values(values, default, place, total), empty, place
    return ragged_fill_empty_rows


kernel(ops.RaggedFillEmptyRows)(_fill_empty_rows)
host_kernel(ops.RaggedFillEmptyRows)(_fill_empty_rows)   # string values

_GRAD_TYPES = ("DT_COMPLEX128", "DT_COMPLEX64", "DT_DOUBLE", "DT_FLOAT", "DT_BFLOAT16",
               "DT_HALF", "DT_INT32", "DT_INT8", "DT_UINT8", "DT_INT16", "DT_UINT16",
               "DT_UINT32", "DT_INT64", "DT_UINT64")


def _no_kernel(node):
    """TF's error for a type with no kernel: the eager lookup's NotFoundError, the graph
    executor's InvalidArgumentError (a graph's NodeInfo knows its inputs' readers)."""
    name = ops.RaggedFillEmptyRowsGrad.name
    t = f"DT_{node.attrs['T'].name.upper()}"
    registered = "\n".join(f"  device='CPU'; T in [{r}]" for r in _GRAD_TYPES)
    return no_kernel_error(node, name, f"T={t}", registered)


@kernel(ops.RaggedFillEmptyRowsGrad)
def _fill_empty_rows_grad(node):
    if node.attrs["T"] in (dtypes.bool, dtypes.string):
        raise _no_kernel(node)

    def ragged_fill_empty_rows_grad(reverse, grad):
        if reverse.dim() != 1:
            raise bad(f"reverse_index_map must be a vector, saw: {fmt(list(reverse.shape))}")
        if grad.dim() != 1:
            raise bad(f"grad_values must be a vector, saw: {fmt(list(grad.shape))}")
        full = grad.shape[0]
        reverse = reverse.long().to(grad.device)
        wrong = (reverse < 0) | (reverse >= full)
        if bool(wrong.any()):
            got = int(reverse[torch.nonzero(wrong)[0, 0]])
            raise bad(f"Elements in reverse index must be in [0, {full}) but got {got}")
        d_values = grad.index_select(0, reverse)
        visited = torch.zeros(full, dtype=torch.bool, device=grad.device).index_fill_(
            0, reverse, True)
        rest = torch.where(visited, torch.zeros((), dtype=grad.dtype, device=grad.device),
                           grad)
        exact = grad.is_floating_point() or grad.is_complex()
        return d_values, rest.sum(dtype=None if exact else torch.int64).to(grad.dtype)
    return ragged_fill_empty_rows_grad

