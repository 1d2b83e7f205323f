"""ATen kernels of the sparse training ops (`ndflow.ops.training_sparse`): each gathers the
rows `indices` of the variable and its slots, computes TF's update on those rows only
(`training_ops.cc`'s sparse CPU kernels), and writes them back with `index_copy_` into the
variables' tensors — in place unless a read of them is still alive (`writable`)."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.kernels.state import check_dtype, not_found
from ndflow.kernels.state_sparse import writable
from ndflow.ops import training_sparse as ops


def _dims(shape) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def _rows(node, resources: list, names: list, grad: torch.Tensor, indices: torch.Tensor):
    """(row numbers, [the gathered rows of each resource]) after TF's checks."""
    dtype = node.attrs["T"]
    for res in resources:
        if res.value is None:
            raise not_found(res)
        check_dtype(res, dtype, "update")
    shape = tuple(resources[0].value.shape)
    for res, name in zip(resources[1:], names[1:]):
        if tuple(res.value.shape) != shape:
            raise InvalidArgumentError(None, None, f"var and {name} do not have the same shape"
                                       f"{_dims(shape)} {_dims(res.value.shape)}")
    if indices.dim() != 1:
        raise InvalidArgumentError(None, None, "indices must be one-dimensional")
    if len(shape) == 0:
        raise InvalidArgumentError(None, None, "var must be at least 1 dimensional")
    if grad.dim() != len(shape):
        raise InvalidArgumentError(None, None, "var and grad must have the same rank")
    for d in range(1, len(shape)):
        if grad.shape[d] != shape[d]:
            raise InvalidArgumentError(None, None, f"var and grad must match in dimension {d}")
    if grad.shape[0] != indices.shape[0]:
        raise InvalidArgumentError(None, None, "grad must be the same size as indices in the "
                                   "first dimension.")
    idx = indices.long().to(resources[0].value.device)
    bad = (idx < 0) | (idx >= shape[0])
    if idx.numel() and bool(bad.any()):
        i = int(bad.nonzero()[0])
        raise InvalidArgumentError(None, None, f"Index {int(idx[i])} at offset {i} in indices "
                                   f"is out of range")
    return idx, [res.value.index_select(0, idx) for res in resources]


def _store(resources: list, idx: torch.Tensor, rows: list) -> None:
    for res, r in zip(resources, rows):
        if r is not None:
            writable(res).index_copy_(0, idx, r)


def _scalars(names: str, *ts) -> list:
    for name, t in zip(names.split(), ts):
        if t.dim() != 0:
            raise InvalidArgumentError(None, None, f"{name} is not a scalar : {_dims(t.shape)}")
    return [t.item() for t in ts]


@kernel(ops.ResourceSparseApplyMomentum)
def _sparse_momentum(node):
    nesterov = node.attrs["use_nesterov"]

    def run(var, accum, lr, grad, indices, momentum):
        idx, (v, a) = _rows(node, [var, accum], ["var", "accum"], grad, indices)
        lr_, m = _scalars("lr momentum", lr, momentum)
        a = a * m + grad
        v = v - (grad * lr_ + a * (m * lr_) if nesterov else a * lr_)
        _store([var, accum], idx, [v, a])
    return run


@kernel(ops.ResourceSparseApplyRMSProp)
def _sparse_rms_prop(node):
    def run(var, ms, mom, lr, rho, momentum, epsilon, grad, indices):
        idx, (v, s, m) = _rows(node, [var, ms, mom], ["var", "ms", "mom"], grad, indices)
        lr_, rho_, mo, eps = _scalars("lr rho momentum epsilon", lr, rho, momentum, epsilon)
        s = s + (grad * grad - s) * (1 - rho_)
        m = m * mo + grad * lr_ / torch.sqrt(s + eps)
        _store([var, ms, mom], idx, [v - m, s, m])
    return run


@kernel(ops.ResourceSparseApplyCenteredRMSProp)
def _sparse_centered_rms_prop(node):
    def run(var, mg, ms, mom, lr, rho, momentum, epsilon, grad, indices):
        idx, (v, g, s, m) = _rows(node, [var, mg, ms, mom], ["var", "mg", "ms", "mom"], grad,
                                  indices)
        lr_, rho_, mo, eps = _scalars("lr rho momentum epsilon", lr, rho, momentum, epsilon)
        s = s + (grad * grad - s) * (1 - rho_)
        g = g + (grad - g) * (1 - rho_)
        m = m * mo + grad * lr_ / torch.sqrt(s - g * g + eps)
        _store([var, mg, ms, mom], idx, [v - m, g, s, m])
    return run


@kernel(ops.ResourceSparseApplyAdagradV2)
def _sparse_adagrad_v2(node):
    update_slots = node.attrs["update_slots"]

    def run(var, accum, lr, epsilon, grad, indices):
        idx, (v, a) = _rows(node, [var, accum], ["var", "accum"], grad, indices)
        lr_, eps = _scalars("lr epsilon", lr, epsilon)
        if update_slots:
            a = a + grad * grad
        v = v - grad * lr_ / (torch.sqrt(a) + eps)
        _store([var, accum], idx, [v, a if update_slots else None])
    return run
