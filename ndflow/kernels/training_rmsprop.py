"""The kernel of `_GroupedApplyKerasRMSProp` (ndflow/passes/keras_rmsprop.py): Keras' RMSprop
without momentum, which Keras writes as ten elementwise ops and two assignments a variable,

    ms <- rho * ms + (1 - rho) * grad^2;    var <- var - lr * grad / sqrt(ms + epsilon),

applied to N variables at once. Each op is one small ATen call (~5-10 us for a small
variable): a hundred variables of 64 floats cost ~4-6 ms a step (TensorFlow ~2). Here the
variables sharing lr, rho and epsilon are updated together: contiguous float32 CPU ones by
one numba launch over a table of their addresses (kernels/rmsprop_numba.py: the separate
ops' bits but for an IEEE square root, ATen's differing in the last bit), in their own
buffers when nobody else holds them (`exclusive_values`), else into new ones; others by the
same ATen ops over lists (`torch._foreach_*`), op for op in the graph's order, so bit for bit
as the separate ops, into new tensors.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import torch

from ndflow.kernels import raw_memory, rmsprop_numba
from ndflow.kernels.exact_sqrt import exact_sqrt
from ndflow.kernels.identity_cache import IdentityCache
from ndflow.kernels.registry import kernel
from ndflow.kernels.state import exclusive_values
from ndflow.kernels.training import _check_same, _read, scalars_once
from ndflow.ops import nn_fused

_SCALARS = ("lr", "rho", "one_minus_rho", "epsilon")


def rmsprop_values(vs: list, mss: list, grads: list, lr: float, rho: float,
                   one_minus_rho: float, eps: float) -> tuple:
    """New (vars, mss) of the update over lists; the scalars are the graph's constants' values
    (already rounded to the variables' type)."""
    mul, add = torch._foreach_mul, torch._foreach_add
    ms = add(mul(mss, rho), mul(mul(grads, grads), one_minus_rho))   # rho*ms + omr*g^2
    roots = [exact_sqrt(t) for t in add(ms, eps)]   # TF's (Eigen's) correctly rounded root
    step = torch._foreach_div(mul(grads, lr), roots)
    return torch._foreach_sub(vs, step), ms


@kernel(nn_fused.GroupedApplyKerasRMSProp)
def _grouped_keras_rmsprop(node):
    n, dtype = node.attrs["N"], node.attrs["T"].torch_dtype
    laid_out = IdentityCache()   # the launch's layout while all update in place in it

    def run(*args):
        res_v, res_ms = args[:n], args[n:2 * n]
        scalar_inputs = [args[k * n:(k + 1) * n] for k in range(2, 6)]
        grads = args[6 * n:7 * n]
        seen: dict = {}
        scalars = list(zip(*(scalars_once(scalar_inputs[k], _SCALARS[k], seen)
                             for k in range(4))))
        if len({id(r) for r in res_v + res_ms}) < 2 * n:
            # one variable twice: one update after the other, each reading the last's values
            for i in range(n):
                (v,), (ms,) = rmsprop_values(
                    [_read(res_v[i], "var", dtype)], [_read(res_ms[i], "ms", dtype)],
                    [grads[i]], *scalars[i])
                res_v[i].value, res_ms[i].value = v, ms
            return
        free = exclusive_values(res_v + res_ms)   # before this frame holds any value
        if all(free) and _laid_out_again(laid_out, res_v, res_ms, grads, scalars):
            return
        values = []
        for i in range(n):
            v, ms = _read(res_v[i], "var", dtype), _read(res_ms[i], "ms", dtype)
            if not v.shape == ms.shape == grads[i].shape:
                _check_same(v, ms, "ms")
                _check_same(v, grads[i], "grad")
            values.append((v, ms))
        one_launch = rmsprop_numba.applies(values[0][0])
        batches: dict = defaultdict(list)
        for i, shared in enumerate(scalars):
            v, ms = values[i]
            numba = one_launch and v.is_contiguous() and ms.is_contiguous()
            batches[(shared, numba)].append(i)
        for (shared, numba), members in batches.items():
            if numba:
                owned = [free[i] and free[n + i] for i in members]
                table, sizes, total = _numba_batch(members, values, grads, owned, shared)
                if len(members) == n and all(owned):   # all in place in one launch: laid
                    table = np.array(table, dtype=np.int64)   # out for the next, g's
                    table[0::6] = 0                           # addresses to fill
                    laid_out.put([values[i][k] for k in range(2) for i in range(n)],
                                 (table, sizes, total, [tuple(v.shape) for v, _ in values]))
                continue
            new = rmsprop_values([values[i][0] for i in members],
                                 [values[i][1] for i in members],
                                 [grads[i] for i in members], *shared)
            for i, v, ms in zip(members, *new):
                values[i] = (v, ms)
        for i in range(n):
            res_v[i].value, res_ms[i].value = values[i]
    return run


def _laid_out_again(laid_out: IdentityCache, res_v, res_ms, grads, scalars: list) -> bool:
    """The launch of the last run on its variables, when they are the same tensors (all
    updated in place in one launch: their checks and addresses hold), the updates share
    their scalars and each gradient has its variable's shape on the CPU; False: the full
    checks must run."""
    cached = laid_out.get([getattr(r, "value", None) for r in res_v + res_ms])
    if cached is None or any(shared != scalars[0] for shared in scalars):
        return False
    table, sizes, total, shapes = cached
    for g, shape in zip(grads, shapes):
        if g.shape != shape or not g.is_cpu:
            return False
    rmsprop_numba.update_laid_out(table, sizes, total, grads, *scalars[0])
    return True


def _numba_batch(members: list, values: list, grads, owned: list, shared: tuple) -> tuple:
    """The float32 updates of one batch in one numba launch, in place for the variables
    nobody else holds (`owned`, in `members`' order), else into new buffers; returns the
    launch's table, the variables' sizes and their sum."""
    table, total, gs, sizes = [], 0, [], []
    for i, own in zip(members, owned):
        v, ms = values[i]
        v_out, ms_out = (v, ms) if own else (torch.empty_like(v), torch.empty_like(ms))
        g = grads[i].contiguous()   # held until the launch
        gs.append(g)
        table += (*(raw_memory.address(t, torch.float32, v.numel())
                    for t in (g, v, ms, v_out, ms_out)), v.numel())
        total += v.numel()
        sizes.append(v.numel())
        values[i] = (v_out, ms_out)
    rmsprop_numba.update_many(table, total, *shared)
    return table, sizes, total
