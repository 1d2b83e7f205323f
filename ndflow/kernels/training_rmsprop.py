"""The kernel of `_GroupedApplyKerasRMSProp` (ndflow/passes/keras_rmsprop.py): Keras' RMSprop
without momentum, which Keras writes as ten elementwise ops and two assignments a variable,

    ms <- rho * ms + (1 - rho) * grad^2;    var <- var - lr * grad / sqrt(ms + epsilon),

applied to N variables at once. Each op is one small ATen call (~5-10 us for a small
variable): a hundred variables of 64 floats cost ~6 ms a step (TensorFlow ~2). Here the
variables sharing lr, rho and epsilon are updated by the same ATen ops over lists
(`torch._foreach_*`), op for op in the graph's order, so bit for bit as the separate ops; the
results are new tensors, as the assignments store them.
"""

from __future__ import annotations

from collections import defaultdict

import torch

from ndflow.kernels.registry import kernel
from ndflow.kernels.training import _check_same, _read, scalars_once
from ndflow.ops import nn_fused

_SCALARS = ("lr", "rho", "one_minus_rho", "epsilon")


def rmsprop_values(vs: list, mss: list, grads: list, lr: float, rho: float,
                   one_minus_rho: float, eps: float) -> tuple:
    """New (vars, mss) of the update over lists; the scalars are the graph's constants' values
    (already rounded to the variables' type)."""
    mul, add = torch._foreach_mul, torch._foreach_add
    ms = add(mul(mss, rho), mul(mul(grads, grads), one_minus_rho))   # rho*ms + omr*g^2
    step = torch._foreach_div(mul(grads, lr), torch._foreach_sqrt(add(ms, eps)))
    return torch._foreach_sub(vs, step), ms


@kernel(nn_fused.GroupedApplyKerasRMSProp)
def _grouped_keras_rmsprop(node):
    n, dtype = node.attrs["N"], node.attrs["T"].torch_dtype

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
        values = []
        for i in range(n):
            v, ms = _read(res_v[i], "var", dtype), _read(res_ms[i], "ms", dtype)
            if not v.shape == ms.shape == grads[i].shape:
                _check_same(v, ms, "ms")
                _check_same(v, grads[i], "grad")
            values.append((v, ms))
        batches: dict = defaultdict(list)
        for i, shared in enumerate(scalars):
            batches[shared].append(i)
        for shared, members in batches.items():
            new_v, new_ms = rmsprop_values([values[i][0] for i in members],
                                           [values[i][1] for i in members],
                                           [grads[i] for i in members], *shared)
            for i, v, ms in zip(members, new_v, new_ms):
                res_v[i].value, res_ms[i].value = v, ms
    return run
