"""Kernels of ndflow/ops/training_adaptive.py (Adagrad, Adadelta, FTRL, proximal updates),
TF's CPU formulas; dense ones validate as the other training kernels (`_prepare`), sparse ones
update only the rows `indices` (`_rows` / `_store`)."""

from __future__ import annotations

import torch

from ndflow.kernels import adaptive_numba
from ndflow.kernels.registry import kernel
from ndflow.kernels.training import _prepare
from ndflow.kernels.training_sparse import _rows, _scalars, _store
from ndflow.ops import training_adaptive as ops


def _adagrad(v, a, g, lr, update_slots: bool):
    a = a + g * g if update_slots else a
    return v - lr * g * torch.rsqrt(a), a


def _adadelta(v, a, au, g, lr, rho, eps):
    a = a * rho + g * g * (1 - rho)
    update = torch.sqrt(au + eps) * torch.rsqrt(a + eps) * g
    return v - update * lr, a, au * rho + update * update * (1 - rho)


def _proximal(prox, lr_t, l1, l2):
    """TF's proximal step of `prox` with step size lr_t (a number or per-element tensor)."""
    if l1 > 0:
        return torch.sign(prox) * torch.clamp(prox.abs() - lr_t * l1, min=0) / (1 + lr_t * l2)
    return prox / (1 + lr_t * l2)


def _proximal_adagrad(v, a, g, lr, l1, l2):
    a = a + g * g
    lr_t = torch.rsqrt(a) * lr
    return _proximal(v - g * lr_t, lr_t, l1, l2), a


def _ftrl(v, a, lin, g, lr, l1, l2, lr_power, shrinkage=None):
    g_used = g if shrinkage is None else g + 2 * shrinkage * v
    n = a + g * g
    if lr_power == -0.5:
        n_p, a_p = torch.sqrt(n), torch.sqrt(a)
    else:
        n_p, a_p = torch.pow(n, -lr_power), torch.pow(a, -lr_power)
    lin = lin + g_used - (n_p - a_p) / lr * v
    v = (torch.clamp(lin, -l1, l1) - lin) / (n_p / lr + 2 * l2)
    return v, n, lin


def _set(resources, values) -> None:
    for r, x in zip(resources, values):
        r.value = x


@kernel(ops.ResourceApplyAdagrad)
def _apply_adagrad(node):
    update_slots = bool(node.attrs["update_slots"])

    def run(var, accum, lr, grad):
        (v, a), (lr,), _, grad = _prepare(
            node, ("var", "accum"), ("lr",), (var, accum), (lr,), grad, "grad")
        _set([var, accum], _adagrad(v, a, grad, lr, update_slots))
    return run


@kernel(ops.ResourceApplyAdadelta)
def _apply_adadelta(node):
    def run(var, accum, accum_update, lr, rho, epsilon, grad):
        tensors, nums, outs, grad = _prepare(
            node, ("var", "accum", "accum_update"), ("lr", "rho", "epsilon"),
            (var, accum, accum_update), (lr, rho, epsilon), grad, "grad")
        if adaptive_numba.applies([*tensors, *outs, grad]):   # one pass, into `outs`
            adaptive_numba.adadelta(*tensors, outs, grad, *nums)
            _set([var, accum, accum_update], outs)
            return
        _set([var, accum, accum_update], _adadelta(*tensors, grad, *nums))
    return run


@kernel(ops.ResourceApplyProximalGradientDescent)
def _apply_proximal_gd(node):
    def run(var, alpha, l1, l2, delta):
        (v,), (lr, l1_, l2_), _, delta = _prepare(
            node, ("var",), ("alpha", "l1", "l2"), (var,), (alpha, l1, l2), delta, "delta")
        var.value = _proximal(v - delta * lr, lr, l1_, l2_)
    return run


@kernel(ops.ResourceApplyProximalAdagrad)
def _apply_proximal_adagrad(node):
    def run(var, accum, lr, l1, l2, grad):
        (v, a), nums, _, grad = _prepare(
            node, ("var", "accum"), ("lr", "l1", "l2"), (var, accum), (lr, l1, l2), grad, "grad")
        _set([var, accum], _proximal_adagrad(v, a, grad, *nums))
    return run


def _apply_ftrl_kernel(node, v2: bool):
    names = ("lr", "l1", "l2", "l2_shrinkage", "lr_power") if v2 else ("lr", "l1", "l2",
                                                                        "lr_power")

    def run(var, accum, linear, grad, *scalars):
        (v, a, lin), nums, outs, grad = _prepare(
            node, ("var", "accum", "linear"), names, (var, accum, linear), scalars, grad, "grad")
        lr, l1, l2 = nums[:3]
        shrinkage = nums[3] if v2 else None
        if adaptive_numba.applies([v, a, lin, *outs, grad]):   # one pass, into `outs`
            adaptive_numba.ftrl(v, a, lin, outs, grad, lr, l1, l2, nums[-1], shrinkage)
            _set([var, accum, linear], outs)
            return
        _set([var, accum, linear], _ftrl(v, a, lin, grad, lr, l1, l2, nums[-1], shrinkage))
    return run


kernel(ops.ResourceApplyFtrl)(lambda node: _apply_ftrl_kernel(node, False))
kernel(ops.ResourceApplyFtrlV2)(lambda node: _apply_ftrl_kernel(node, True))


@kernel(ops.ResourceSparseApplyAdagrad)
def _sparse_adagrad(node):
    update_slots = bool(node.attrs["update_slots"])

    def run(var, accum, lr, grad, indices):
        idx, (v, a) = _rows(node, [var, accum], ["var", "accum"], grad, indices)
        (lr_,) = _scalars("lr", lr)
        v, a = _adagrad(v, a, grad, lr_, update_slots)
        _store([var, accum], idx, [v, a if update_slots else None])
    return run


@kernel(ops.ResourceSparseApplyAdadelta)
def _sparse_adadelta(node):
    def run(var, accum, accum_update, lr, rho, epsilon, grad, indices):
        idx, rows = _rows(node, [var, accum, accum_update], ["var", "accum", "accum_update"],
                          grad, indices)
        nums = _scalars("lr rho epsilon", lr, rho, epsilon)
        _store([var, accum, accum_update], idx, list(_adadelta(*rows, grad, *nums)))
    return run


@kernel(ops.ResourceSparseApplyProximalGradientDescent)
def _sparse_proximal_gd(node):
    def run(var, alpha, l1, l2, grad, indices):
        idx, (v,) = _rows(node, [var], ["var"], grad, indices)
        lr, l1_, l2_ = _scalars("alpha l1 l2", alpha, l1, l2)
        _store([var], idx, [_proximal(v - grad * lr, lr, l1_, l2_)])
    return run


@kernel(ops.ResourceSparseApplyProximalAdagrad)
def _sparse_proximal_adagrad(node):
    def run(var, accum, lr, l1, l2, grad, indices):
        idx, (v, a) = _rows(node, [var, accum], ["var", "accum"], grad, indices)
        nums = _scalars("lr l1 l2", lr, l1, l2)
        _store([var, accum], idx, list(_proximal_adagrad(v, a, grad, *nums)))
    return run


def _sparse_ftrl_kernel(node, v2: bool):
    names = "lr l1 l2 l2_shrinkage lr_power" if v2 else "lr l1 l2 lr_power"

    def run(var, accum, linear, grad, indices, *scalars):
        idx, (v, a, lin) = _rows(node, [var, accum, linear], ["var", "accum", "linear"], grad,
                                 indices)
        nums = _scalars(names, *scalars)
        shrinkage = nums[3] if v2 else None
        v, a, lin = _ftrl(v, a, lin, grad, nums[0], nums[1], nums[2], nums[-1], shrinkage)
        _store([var, accum, linear], idx, [v, a, lin])
    return run


kernel(ops.ResourceSparseApplyFtrl)(lambda node: _sparse_ftrl_kernel(node, False))
kernel(ops.ResourceSparseApplyFtrlV2)(lambda node: _sparse_ftrl_kernel(node, True))
