"""Kernels of ndflow/ops/training_adagrad_da.py (TF's CPU formulas). The sparse kernel adds
every row's gradient into the accumulators (duplicates summed, as TF's sequential loop does),
then recomputes the touched rows of var from them: var depends only on the accumulators, so
this equals TF's row-by-row result."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.kernels.state_sparse import writable
from ndflow.kernels.training import _prepare
from ndflow.kernels.training_sparse import _rows, _scalars
from ndflow.ops import training_adagrad_da as ops

_NAMES = ("var", "gradient_accumulator", "gradient_squared_accumulator")


def _step(global_step: torch.Tensor) -> float:
    if global_step.dim() != 0:
        raise InvalidArgumentError(None, None, f"global_step is not a scalar: "
                                   f"[{','.join(str(d) for d in global_step.shape)}]")
    return float(global_step.item())


def _weights(ga, gga, lr, l1, l2, step):
    """The variable's new value from the accumulators."""
    denom = torch.sqrt(gga) + l2 * step * lr
    if l1 > 0:
        return torch.sign(-ga) * torch.clamp(ga.abs() - l1 * step, min=0) * lr / denom
    return -ga * lr / denom


@kernel(ops.ResourceApplyAdagradDA)
def _apply_adagrad_da(node):
    def run(var, ga, gga, grad, lr, l1, l2, global_step):
        (_, g_acc, gg_acc), (lr_, l1_, l2_), (out_v, out_ga, out_gga), grad = _prepare(
            node, _NAMES, ("lr", "l1", "l2"), (var, ga, gga), (lr, l1, l2), grad, "grad")
        step = _step(global_step)
        # in place where the variables' buffers are ours alone (_prepare), one temporary
        g_acc = torch.add(g_acc, grad, out=out_ga)
        gg_acc = torch.add(gg_acc, torch.mul(grad, grad), out=out_gga)
        denom = torch.sqrt(gg_acc).add_(l2_ * step * lr_)
        if l1_ > 0:
            num = g_acc.abs().sub_(l1_ * step).clamp_(min=0).mul_(torch.sign(g_acc)) \
                .mul_(-lr_)
        else:
            num = torch.mul(g_acc, -lr_)
        ga.value, gga.value = g_acc, gg_acc
        var.value = torch.div(num, denom, out=out_v)
    return run


@kernel(ops.ResourceSparseApplyAdagradDA)
def _sparse_apply_adagrad_da(node):
    def run(var, ga, gga, grad, indices, lr, l1, l2, global_step):
        idx, _ = _rows(node, [var, ga, gga], list(_NAMES), grad, indices)
        lr_, l1_, l2_ = _scalars("lr l1 l2", lr, l1, l2)
        step = _step(global_step)
        g_acc, gg_acc = writable(ga), writable(gga)
        g_acc.index_add_(0, idx, grad)
        gg_acc.index_add_(0, idx, grad * grad)
        rows = torch.unique(idx)
        new = _weights(g_acc.index_select(0, rows), gg_acc.index_select(0, rows), lr_, l1_,
                       l2_, step)
        writable(var).index_copy_(0, rows, new)
    return run
