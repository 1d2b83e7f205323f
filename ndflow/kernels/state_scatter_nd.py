"""Kernels of ResourceScatterNd{Update,Add,Sub,Min,Max}: the K coordinates of each index
become a row of the variable seen as [prod(shape[:K]), shape[K:]...], and the rows are
written in place (copied first when a read of the variable is still alive), with TF's
shape checks (ValidateUpdateShape) and index errors."""

from __future__ import annotations

import warnings

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import array_nd
from ndflow.kernels.registry import kernel
from ndflow.kernels.state import check_dtype, not_found
from ndflow.kernels.state_sparse import writable
from ndflow.ops.state_scatter_nd import SCATTERS_ND


def _dims(shape) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def _check_shapes(params: tuple, indices: tuple, updates: tuple) -> None:
    """TF's ValidateUpdateShape for a variable of shape `params`."""
    batch = len(indices) - 1 if len(indices) > 1 else 1
    k = indices[-1] if len(indices) > 1 else 1

    def prefix_error():
        num_i, num_u = 1, 1
        for d in range(min(batch, len(indices))):
            num_i *= indices[d]
        for d in range(min(batch, len(updates))):
            num_u *= updates[d]
        return InvalidArgumentError(
            None, None, f"Dimensions [0,{batch}) of indices[shape={_dims(indices)}] = {num_i} "
            f"must match dimensions [0,{batch}) of updates[shape={_dims(updates)}] = {num_u}")

    def suffix_error():
        return InvalidArgumentError(
            None, None, f"Dimensions [{k},{len(params)}) of input[shape={_dims(params)}] must "
            f"match dimensions [{k},{len(updates)}) of updates[shape={_dims(updates)}]")

    if len(updates) < batch:
        raise prefix_error()
    if len(params) < k + len(updates) - batch or len(updates) != batch + len(params) - k:
        raise suffix_error()
    if any(updates[d] != indices[d] for d in range(min(batch, len(indices)))):
        raise prefix_error()
    if any(updates[batch + d] != params[k + d] for d in range(len(updates) - batch)):
        raise suffix_error()


def _row_numbers(indices: torch.Tensor, params: tuple) -> tuple:
    """(row numbers [N], K): each K-coordinate index as one row of params[:K]."""
    k = indices.shape[-1] if indices.dim() > 1 else 1
    flat = indices.reshape(-1, k).long()
    dims = torch.tensor(params[:k], dtype=torch.long, device=flat.device)
    bad = ((flat < 0) | (flat >= dims)).any(dim=1)
    if flat.numel() and bool(bad.any()):
        i = int(bad.nonzero()[0, 0])
        lead = tuple(indices.shape[:-1]) if indices.dim() > 1 else tuple(indices.shape)
        where = ",".join(str(int(p)) for p in torch.unravel_index(torch.tensor(i), lead))
        coords = ", ".join(str(int(v)) for v in flat[i])
        raise InvalidArgumentError(None, None, f"indices[{where}] = [{coords}] does not index "
                                   f"into shape {_dims(params)}")
    strides = [1] * k
    for j in range(k - 2, -1, -1):
        strides[j] = strides[j + 1] * params[j + 1]
    return (flat * torch.tensor(strides, dtype=torch.long, device=flat.device)).sum(1), k


def _scatter_nd(kind: str):
    def factory(node):
        dtype = node.attrs["T"]
        array_nd.ignores(node)   # TF's check of the policy when the kernel is made

        def scatter_nd(res, indices, updates):
            if res.value is None:
                raise not_found(res)
            check_dtype(res, dtype, "assign")
            params = tuple(res.value.shape)
            _check_shapes(params, tuple(indices.shape), tuple(updates.shape))
            rows, k = _row_numbers(indices.to(res.value.device), params)
            values = updates.to(res.value.device).reshape((-1,) + params[k:])
            table = writable(res)
            view = table.view((-1,) + params[k:])
            if kind == "update":
                view.index_copy_(0, rows, values)
            elif kind in ("add", "sub"):
                view.index_add_(0, rows, values, alpha=1 if kind == "add" else -1)
            else:
                with warnings.catch_warnings():  # ATen marks index_reduce_ as beta
                    warnings.simplefilter("ignore", UserWarning)
                    view.index_reduce_(0, rows, values, "a" + kind, include_self=True)
        return scatter_nd
    return factory


for _kind, _op in SCATTERS_ND.items():
    kernel(_op)(_scatter_nd(_kind))
