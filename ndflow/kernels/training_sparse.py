"""ATen kernels of the sparse training ops (`ndflow.ops.training_sparse`): each gathers the
rows `indices` of the variable and its slots, computes TF's update on those rows only
(`training_ops.cc`'s sparse CPU kernels), and writes them back with `index_copy_` into the
variables' tensors — in place unless a read of them is still alive (`writable`)."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import adam_numba
from ndflow.kernels.identity_cache import IdentityCache
from ndflow.kernels.registry import kernel
from ndflow.kernels.state import check_dtype, exclusive_values, not_found, update_targets
from ndflow.kernels.state_sparse import out_of_range, writable
from ndflow.kernels.training import adam_params, scalars_once
from ndflow.ops import nn_fused
from ndflow.ops import training_sparse as ops


def _dims(shape) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def _rows(node, resources: list, names: list, grad: torch.Tensor, indices: torch.Tensor):
    """(row numbers, [the gathered rows of each resource]) after TF's checks."""
    idx = _checked_indices(node, resources, names, grad, indices)
    return idx, [res.value.index_select(0, idx) for res in resources]


def _checked_indices(node, resources: list, names: list, grad: torch.Tensor,
                     indices: torch.Tensor, check_range: bool = True) -> torch.Tensor:
    """The row numbers (int64, on the variables' device) after TF's checks of the
    variables, grad and indices (of the ids' range too unless `check_range` is False: a
    kernel that walks them checks it)."""
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
    i = out_of_range(idx, shape[0]) if check_range else None
    if i is not None:
        raise InvalidArgumentError(None, None, f"Index {int(idx[i])} at offset {i} in indices "
                                   f"is out of range")
    return idx


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


_KERAS_ADAM_SCALARS = ("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon")


def _keras_adam_update(node, resources: list, owned: bool, scalars: list, grad,
                       indices) -> tuple:
    """A `_ResourceSparseApplyKerasAdam` after its checks: (the tensors the new var, m, v go
    into, adam_numba.update's arguments to write them, or None where ATen already did: another
    dtype or device). Every row's moments decay and its weight moves, as Keras' dense form."""
    values = [res.value for res in resources]
    # adam_numba's pass over the ids checks their range (before anything is written)
    one_pass = all(t is not None and t.is_contiguous() for t in values) and \
        values[0].numel() > 0 and adam_numba.applies(values[0])
    idx = _checked_indices(node, resources, ["var", "m", "v"], grad, indices,
                           check_range=not one_pass)
    c1, c2, alpha, eps = adam_params(scalars)
    outs = update_targets(owned, values)
    grad = grad.to(values[0].device)
    w, m_, v_ = values
    if one_pass:   # the ids as they are (int32 or int64) where they are on the CPU already
        ids = indices if indices.device.type == "cpu" else idx.cpu()
        return outs, (w, m_, v_, outs, grad, ids, c1, c2, alpha, eps)
    g = torch.zeros_like(w).index_add_(0, idx, grad)
    g2 = torch.zeros_like(w).index_add_(0, idx, grad * grad)
    m_ = torch.lerp(m_, g, c1, out=outs[1])               # m + (g - m) * c1
    v_ = torch.lerp(v_, g2, c2, out=outs[2])
    torch.sub(w, m_ * alpha / (torch.sqrt(v_) + eps), out=outs[0])
    return outs, None


def _laid_out_rows(cached, grads, indices) -> bool:
    """Whether the grads and ids of a launch laid out before (`cached`: its layout and each
    variable's shape past the rows) pass TF's checks as they are: one id per row of a grad
    of the variable's row shape, on the CPU (else the full checks run, and raise TF's error
    where one is due)."""
    for g, ids, tail in zip(grads, indices, cached[1]):
        if not (ids.dim() == 1 and g.shape[0] == ids.shape[0] and g.shape[1:] == tail
                and g.is_cpu and ids.is_cpu):
            return False
    return True


@kernel(ops.ResourceSparseApplyKerasAdam)
def _sparse_keras_adam(node):
    """One pass over var, m and v (kernels/adam_numba.py) for float32 on CPUs, else the
    densified gradient and its squares through ATen."""
    def run(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad, indices):
        resources = [var, m, v]
        owned = all(exclusive_values(resources))
        scalars = _scalars(" ".join(_KERAS_ADAM_SCALARS), beta1_power, beta2_power, lr, beta1,
                           beta2, epsilon)
        outs, pending = _keras_adam_update(node, resources, owned, scalars, grad, indices)
        if pending is not None:
            adam_numba.update_many([pending])
        var.value, m.value, v.value = outs
    return run


@kernel(nn_fused.GroupedSparseApplyKerasAdam)
def _grouped_sparse_keras_adam(node):
    """N `_ResourceSparseApplyKerasAdam`s (a model's embedding tables): each checked as
    alone, the float32 CPU ones by one launch claiming all their rows (adam_numba.update_many:
    a small table's update was mostly its own call's setup), each giving the bits it gives
    alone."""
    n = node.attrs["N"]
    laid_out = IdentityCache()   # the launch's layout while the tables update in place

    def run(*args):
        res = [args[k * n:(k + 1) * n] for k in range(3)]            # var, m, v
        scalar_inputs = [args[k * n:(k + 1) * n] for k in range(3, 9)]
        grads, indices = args[9 * n:10 * n], args[10 * n:11 * n]
        for k in range(6):
            for t in scalar_inputs[k]:
                if t.dim() != 0:
                    raise InvalidArgumentError(None, None, f"{_KERAS_ADAM_SCALARS[k]} is not a "
                                               f"scalar : {_dims(t.shape)}")
        seen: dict = {}
        scalars = list(zip(*(scalars_once(scalar_inputs[k], _KERAS_ADAM_SCALARS[k], seen)
                             for k in range(6))))
        free = exclusive_values(list(res[0] + res[1] + res[2]))  # before any value is held
        if all(free):
            # the same tables as the last launch, in place: its layout and checks hold
            cached = laid_out.get([getattr(r, "value", None) for column in res for r in column])
            if cached is not None and _laid_out_rows(cached, grads, indices):
                adam_numba.update_laid_out(cached[0], indices, grads, [
                    x for i in range(n) for x in adam_params(scalars[i])])
                return
        pending, written = [], []
        for i in range(n):
            resources = [res[0][i], res[1][i], res[2][i]]
            owned = free[i] and free[n + i] and free[2 * n + i]
            outs, update = _keras_adam_update(node, resources, owned, scalars[i], grads[i],
                                              indices[i])
            written.append((resources, outs))
            if update is not None:
                pending.append(update)
        layout = adam_numba.update_many(pending)
        in_place = True
        for resources, outs in written:
            for r, out in zip(resources, outs):
                in_place = in_place and out is r.value
                r.value = out
        if layout is not None and len(layout.columns) == n and in_place:
            laid_out.put([r.value for column in res for r in column],
                         (layout, [tuple(r.value.shape[1:]) for r in res[0]]))
    return run
