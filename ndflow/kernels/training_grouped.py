"""The kernel of `_GroupedApplyMomentum` (ndflow/passes/grouped_momentum.py): N momentum
updates applied by one op.

An update of one small variable costs ~15 us in a graph, nearly all of it per-call work (its
checks, reading lr and momentum to the host, three ATen calls); a Keras model of a hundred
variables paid it a hundred times a step. Here the variables that share lr, momentum, the
L2 scale and the form (Keras or TF, Nesterov or not) are updated by ATen's multi-tensor
calls (`torch._foreach_*`): the same per-tensor ATen ops as the single update's, so the
values are bit for bit the ones N separate updates give. The new values are new tensors
(small ones: allocating costs less than proving a buffer may be overwritten), so a value read
earlier never changes. Large float32 variables take the single update's own path
(kernels/training.py `momentum_values`: one numba pass, in place when nobody else holds the
value).
"""

from __future__ import annotations

from collections import defaultdict

import torch

from ndflow.kernels.registry import kernel
from ndflow.kernels.state import exclusive_value, update_targets
from ndflow.kernels.training import (
    _ONE_PASS_MIN,
    _check_same,
    _read,
    momentum_values,
    n_update_attrs,
    scalar_once,
)
from ndflow.ops import nn_fused


def _foreach_momentum(vs, accs, grads, scale: float, lr: float, mu: float, nesterov: bool,
                      keras: bool) -> tuple:
    """New (vars, accums): `momentum_values`' ATen path over lists, op for op."""
    add, mul = torch._foreach_add, torch._foreach_mul
    by_scale, by_mu = scale, mu   # the multipliers of mul (alpha takes Python numbers)
    if vs[0].dtype in (torch.float32, torch.float64):
        # a 0-d tensor of the variables' dtype holds what a Python scalar becomes in ATen's
        # float kernels, and ATen's CPU list-by-scalar calls take it at half the cost
        by_scale, by_mu = (torch.tensor(x, dtype=vs[0].dtype) for x in (scale, mu))
    gs = add(mul(vs, by_scale), grads) if scale else grads    # grad + var * scale, rounded
    if keras:
        accs = add(mul(accs, by_mu), gs, alpha=-lr)             # accum * momentum - lr * g
        vs = add(add(vs, accs, alpha=mu), gs, alpha=-lr) if nesterov else add(vs, accs)
    else:
        accs = add(gs, accs, alpha=mu)                          # accum * momentum + g
        vs = add(vs, add(gs, accs, alpha=mu) if nesterov else accs, alpha=-lr)
    return vs, accs


def _large(res) -> bool:
    """A variable the single update's own path serves better (one numba pass, in place)."""
    value = getattr(res, "value", None)
    return isinstance(value, torch.Tensor) and value.numel() >= _ONE_PASS_MIN


@kernel(nn_fused.GroupedApplyMomentum)
def _grouped_momentum(node):
    n, dtype, nesterov, keras, decay = n_update_attrs(node)

    def run(*args):
        res_v, res_a, lrs, grads, scales, moms = (args[k * n:(k + 1) * n] for k in range(6))
        # whether each large variable is owned by its slot alone: before this frame holds
        # any value (small ones get new tensors, kernels/training_grouped.py)
        owned = {i: exclusive_value(res_v[i]) and exclusive_value(res_a[i]) for i in range(n)
                 if _large(res_v[i])}
        values, seen = [], {}
        for i in range(n):
            v, a = _read(res_v[i], "var", dtype), _read(res_a[i], "accum", dtype)
            _check_same(v, a, "accum")
            _check_same(v, grads[i], "grad")
            s = scalar_once(scales[i], "scale", seen) if decay[i] else 0.0
            values.append((v, a, s, scalar_once(lrs[i], "lr", seen),
                           scalar_once(moms[i], "momentum", seen)))
        if len({id(r) for r in res_v + res_a}) < 2 * n:
            # two handles of one variable: one update after the other, each reading the
            # value the previous one left
            for i, (_, _, s, lr, mu) in enumerate(values):
                v, a = _read(res_v[i], "var", dtype), _read(res_a[i], "accum", dtype)
                res_v[i].value, res_a[i].value = momentum_values(
                    grads[i], (v, a), update_targets(False, [v, a]), s, lr, mu, nesterov[i],
                    keras[i])
            return
        batches: dict = defaultdict(list)
        for i, (v, a, s, lr, mu) in enumerate(values):
            if i in owned:
                res_v[i].value, res_a[i].value = momentum_values(
                    grads[i], (v, a), update_targets(owned[i], [v, a]), s, lr, mu,
                    nesterov[i], keras[i])
            else:
                batches[(s, lr, mu, nesterov[i], keras[i])].append(i)
        for (s, lr, mu, nest, ker), members in batches.items():
            new_v, new_a = _foreach_momentum([values[i][0] for i in members],
                                             [values[i][1] for i in members],
                                             [grads[i] for i in members], s, lr, mu, nest, ker)
            for i, v, a in zip(members, new_v, new_a):
                res_v[i].value, res_a[i].value = v, a
    return run
