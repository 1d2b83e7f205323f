"""Kernels of ResourceGather, VariableShape and ResourceScatter*: rows read from and written
into the variable's tensor directly, so a step costs the rows it touches, not the table.

Writes are in place when nothing else holds the variable's tensor (no live read result or view
of it); otherwise the tensor is copied first, so a value read earlier never changes (values
are immutable, as everywhere in ndflow)."""

from __future__ import annotations

import warnings

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.kernels.state import check_dtype, exclusive_value, not_found
from ndflow.ops import state_sparse


def _table(res) -> torch.Tensor:
    if res.value is None:
        raise not_found(res)
    return res.value


def out_of_range(flat: torch.Tensor, n: int) -> int | None:
    """The position of the first entry of the 1-D integer `flat` outside [0, n), or None. One
    aminmax where all are in range (the mask of both tests and its any() took 6.6 us for an
    embedding's 256 ids, this 1.5; a step of eight embeddings checks 16 times); the search
    only on failure."""
    if flat.numel() == 0:
        return None
    lo, hi = torch.aminmax(flat)
    if lo.item() >= 0 and hi.item() < n:
        return None
    return int(((flat < 0) | (flat >= n)).nonzero()[0])


def _rows(indices: torch.Tensor, n: int, what: str) -> torch.Tensor:
    flat = indices.reshape(-1).long()
    pos = out_of_range(flat, n)
    if pos is not None:
        raise InvalidArgumentError(None, None, f"{what}[{pos}] = {int(flat[pos])} is not in "
                                   f"[0, {n})")
    return flat


@kernel(state_sparse.ResourceGather)
def _resource_gather(node):
    dtype = node.attrs["dtype"]
    if node.attrs["batch_dims"]:
        raise InvalidArgumentError(None, None, "ResourceGather with batch_dims is not supported")

    def gather(res, indices):
        table = _table(res)
        check_dtype(res, dtype, "read")
        flat = indices if indices.dim() == 1 else indices.reshape(-1)
        if table.is_cpu and flat.is_cpu:
            # ATen's CPU index_select checks the range itself (int32 ids as they are): an
            # embedding's lookup in one call (~5 us a table before, in checks and copies)
            try:
                out = table.index_select(0, flat)
            except (IndexError, RuntimeError):
                _rows(indices, table.shape[0], "indices")   # names the bad entry
                raise
        else:
            out = table.index_select(0, _rows(indices, table.shape[0], "indices")
                                     .to(table.device))
        return out if indices.dim() == 1 else \
            out.reshape(tuple(indices.shape) + tuple(table.shape[1:]))
    return gather


@kernel(state_sparse.VariableShape)
def _variable_shape(node):
    dt = node.attrs["out_type"].torch_dtype
    return lambda res: torch.tensor(list(_table(res).shape), dtype=dt)


def writable(res) -> torch.Tensor:
    """The variable's tensor, safe to update in place (copied if anything else holds it)."""
    if exclusive_value(res):
        return res.value
    res.value = res.value.clone()
    return res.value


def _dims(shape) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def _check_scatter_shapes(params: tuple, indices: tuple, updates: tuple) -> None:
    """TF's checks of a ResourceScatter* op's shapes (updates = indices + params[1:], or [])."""
    if updates and len(updates) != len(indices) + len(params) - 1:
        raise InvalidArgumentError(
            None, None, "Must have updates.shape = indices.shape + params.shape[1:] or "
            f"updates.shape = [], got updates.shape {_dims(updates)}, indices.shape "
            f"{_dims(indices)}, params.shape {_dims(params)}")
    if updates and updates[:len(indices)] != indices:
        raise InvalidArgumentError(
            None, None, f"The shape of indices ({_dims(indices)}) must be a prefix of the shape "
            f"of updates ({_dims(updates)})")
    if updates and updates[len(indices):] != params[1:]:
        raise InvalidArgumentError(
            None, None, f"updates.shape {_dims(updates)} != indices.shape {_dims(indices)} + "
            f"params.shape[1:] {_dims(params[1:])}")


def _divide_rows(table: torch.Tensor, flat: torch.Tensor, rows: torch.Tensor) -> None:
    """table[i] /= each row for i (repeated indices divide in turn: by their product, which
    is the same for floats up to rounding and exact for integers' truncating division)."""
    uniq, inverse = torch.unique(flat, return_inverse=True)
    den = torch.ones((uniq.numel(),) + tuple(rows.shape[1:]), dtype=rows.dtype,
                     device=rows.device)
    with warnings.catch_warnings():  # ATen marks index_reduce_ as beta
        warnings.simplefilter("ignore", UserWarning)
        den.index_reduce_(0, inverse, rows, "prod", include_self=True)
    sel = table.index_select(0, uniq)
    mode = None if table.is_floating_point() or table.is_complex() else "trunc"
    table.index_copy_(0, uniq, torch.div(sel, den, rounding_mode=mode))


def _scatter(kind: str):
    def factory(node):
        dtype = node.attrs["dtype"]

        def scatter(res, indices, updates):
            table = _table(res)
            if res.dtype is not dtype:
                raise InvalidArgumentError(None, None, "DType of scatter resource and updates "
                                           "does not match.")
            _check_scatter_shapes(tuple(table.shape), tuple(indices.shape),
                                  tuple(updates.shape))
            flat = _rows(indices, table.shape[0], "indices")
            want = tuple(indices.shape) + tuple(table.shape[1:])
            if updates.device != table.device:
                updates = updates.to(table.device)
            if flat.device != table.device:
                flat = flat.to(table.device)
            rows = updates.expand(want).reshape((flat.numel(),) + tuple(table.shape[1:]))
            del table  # writable counts who holds the variable's tensor: not this frame
            table = writable(res)
            if kind == "add":
                table.index_add_(0, flat, rows)
            elif kind == "sub":
                table.index_add_(0, flat, rows, alpha=-1)
            elif kind == "update":
                table.index_copy_(0, flat, rows)
            elif kind == "div":
                _divide_rows(table, flat, rows)
            else:
                reduce = {"mul": "prod", "min": "amin", "max": "amax"}[kind]
                with warnings.catch_warnings():  # ATen marks index_reduce_ as beta
                    warnings.simplefilter("ignore", UserWarning)
                    table.index_reduce_(0, flat, rows, reduce, include_self=True)
        return scatter
    return factory


for _kind, _op in state_sparse.SCATTERS.items():
    kernel(_op)(_scatter(_kind))
