"""The kernels of `_GroupedApplyMomentum` and `_GroupedApplyAdam`
(ndflow/passes/grouped_updates.py): N momentum or Adam updates applied by one op.

An update of one small variable costs ~15 us in a graph, nearly all of it per-call work (its
checks, reading lr and momentum to the host, three ATen calls); a Keras model of a hundred
variables paid it a hundred times a step. Here they are updated together:
- contiguous float32 CPU variables by one numba launch for all of them, each with its own
  lr, momentum, L2 scale and form (Keras or TF, Nesterov or not)
  (kernels/momentum_numba.py `update_many`, the single update's formula and rounding: a
  variable's update gives the same bits alone or grouped), each in its own buffer when
  nobody else holds the value (`exclusive_values`), else into new ones (a value read earlier
  never changes). Measured on a 31-layer Keras MLP (62 variables of 64x64 and 64 floats, AVX2
  EPYC): the kernel 510 -> ~340 us, the step 6% faster. What remained was Python: ~4 us a
  variable of reads, checks and addresses; while the variables update in place the launch's
  table is kept (kernels/identity_cache.py) and only the gradients are checked;
- large ones (from `GROUP_MAX` elements) by the single update's path: float32 by their
  own launch, split over the threads, other dtypes by ATen, in place when owned;
- other dtypes by ATen's multi-tensor calls (`torch._foreach_*`) over the variables that
  share those scalars, the single update's ATen ops over lists, so bit for bit too, into new
  tensors.

An Adam update costs ~85 us for a small variable (six scalars read, seven ATen calls).
Contiguous float32 CPU variables (not Nesterov) are updated by one launch of Adam's one-pass
kernel for all of them (kernels/adam_numba.py `update_dense_many`, the single update's
kernel and bits); the others sharing the scalars (and the Nesterov flag) by the single
update's ATen ops over lists, bit for bit, in their own buffers when nobody else holds them
(the in-place `_foreach_*_` calls), else into new ones; large ones by the single update's
path. 100 variables of 64 floats: 8.8 ms -> 1.8 ms a step on the AVX2 EPYC (TensorFlow:
5.5-6) with the lists; a wide-and-deep model's six variables 133 -> 100 us in its step.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import torch

from ndflow.kernels import adam_numba, momentum_numba, raw_memory
from ndflow.kernels.identity_cache import IdentityCache
from ndflow.kernels.registry import kernel
from ndflow.kernels.state import exclusive_values, update_targets
from ndflow.kernels.training import (
    _ADAM_SCALARS,
    _check_same,
    _read,
    adam_alpha,
    adam_params,
    adam_values,
    grad_where,
    momentum_values,
    n_update_attrs,
    one_pass_adam,
    scalar_once,
    scalars_once,
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


# From this many elements a variable takes the single update's own path (its own launch,
# split into chunks over the threads) rather than a thread of the group's launch: MNIST's
# 5x5x32x64 filter (51K) in the group's launch saved a launch (~50 us in the step).
GROUP_MAX = 1 << 17


def _large(value: torch.Tensor) -> bool:
    return value.numel() >= GROUP_MAX


def _numba_batch(members: list, values: list, grads, owned: list, keys: list) -> None:
    """The float32 updates of `members` in one numba launch (kernels/momentum_numba.py),
    each with its own scalars (`keys[i]`), in place for variables nobody else holds, else
    into new buffers."""
    table, params, total, gs = [], [], 0, []
    sizes = []
    for i in members:
        v, a = values[i][0], values[i][1]
        # (owned: v and a are two tensors, each held by its slot alone)
        v_out, a_out = (v, a) if owned[i] else (torch.empty_like(v), torch.empty_like(a))
        g = grads[i].contiguous()   # as the single update reads it; held until the launch
        gs.append(g)
        m = v.numel()
        table += (*(raw_memory.address(t, torch.float32, m) for t in (g, v, a, v_out, a_out)),
                  m)
        params += keys[i]
        total += m
        sizes.append(m)
        values[i] = (v_out, a_out)
    momentum_numba.update_many(table, total, params)
    return table, sizes, total


def _momentum_laid_out_again(laid_out: IdentityCache, res_v, res_a, grads, scalars) -> bool:
    """_GroupedApplyMomentum's launch on the variables of the last one, when they are the same
    tensors (all updated in place in it: their checks and addresses hold) and each gradient
    has its variable's shape on the CPU; `scalars()`: each update's (scale, lr, momentum,
    nesterov, keras). False: the full checks must run."""
    cached = laid_out.get([getattr(r, "value", None) for r in res_v + res_a])
    if cached is None:
        return False
    table, sizes, total, shapes = cached
    for g, shape in zip(grads, shapes):
        if g.shape != shape or not g.is_cpu:
            return False
    momentum_numba.update_laid_out(table, sizes, total, grads,
                                   [x for key in scalars() for x in key])
    return True


@kernel(nn_fused.GroupedApplyMomentum)
def _grouped_momentum(node):
    n, dtype, nesterov, keras, decay = n_update_attrs(node)
    float32_cpu = dtype == torch.float32 and node.device.type == "cpu"

    laid_out = IdentityCache()   # the launch's layout while all update in place in it

    def run(*args):
        res_v, res_a, lrs, grads, scales, moms = (args[k * n:(k + 1) * n] for k in range(6))

        def scalars() -> list:   # (scale, lr, momentum, nesterov, keras) of each update
            seen: dict = {}
            lr_of, mu_of = scalars_once(lrs, "lr", seen), scalars_once(moms, "momentum", seen)
            scale_of = [scalar_once(scales[i], "scale", seen) if decay[i] else 0.0
                        for i in range(n)] if any(decay) else [0.0] * n
            return [(scale_of[i], lr_of[i], mu_of[i], nesterov[i], keras[i]) for i in range(n)]
        # whether each variable is owned by its slot alone: before this frame holds any value
        free = exclusive_values(res_v + res_a)
        if all(free) and _momentum_laid_out_again(laid_out, res_v, res_a, grads, scalars):
            return
        owned = [free[i] and free[n + i] for i in range(n)]
        values, grads = [], list(grads)
        for i in range(n):
            v, a, g = _read(res_v[i], "var", dtype), _read(res_a[i], "accum", dtype), grads[i]
            if not v.shape == a.shape == g.shape:
                _check_same(v, a, "accum")
                _check_same(v, g, "grad")
            grads[i] = grad_where(v, g)
            values.append((v, a))
        values = [(v, a, *key[:3]) for (v, a), key in zip(values, scalars())]
        if len({id(r) for r in res_v + res_a}) < 2 * n:
            # two handles of one variable: one update after the other, each reading the
            # value the previous one left
            for i, (_, _, s, lr, mu) in enumerate(values):
                v, a = _read(res_v[i], "var", dtype), _read(res_a[i], "accum", dtype)
                res_v[i].value, res_a[i].value = momentum_values(
                    grads[i], (v, a), update_targets(False, [v, a]), s, lr, mu, nesterov[i],
                    keras[i])
            return
        one_launch = float32_cpu and momentum_numba.applies(values[0][0])
        batch, keys = [], {}
        aten_batches: dict = defaultdict(list)
        for i, (v, a, s, lr, mu) in enumerate(values):
            key = (s, lr, mu, nesterov[i], keras[i])
            if _large(v):   # the single update's path (in place when owned), any dtype
                values[i] = momentum_values(grads[i], (v, a), update_targets(owned[i], [v, a]),
                                            *key)
            elif one_launch and v.is_contiguous() and a.is_contiguous():
                batch.append(i)
                keys[i] = key
            else:
                aten_batches[key].append(i)
        if batch:
            table, sizes, total = _numba_batch(batch, values, grads, owned, keys)
            if len(batch) == n and all(owned):   # all in place in one launch: laid out for
                table = np.array(table, dtype=np.int64)   # the next, g's addresses to fill
                table[0::6] = 0
                laid_out.put([values[i][k] for k in range(2) for i in range(n)],
                             (table, sizes, total, [tuple(values[i][0].shape) for i in range(n)]))
        for (s, lr, mu, nest, ker), members in aten_batches.items():
            new_v, new_a = _foreach_momentum([values[i][0] for i in members],
                                             [values[i][1] for i in members],
                                             [grads[i] for i in members], s, lr, mu, nest, ker)
            for i, v, a in zip(members, new_v, new_a):
                values[i] = (v, a)
        for i in range(n):
            res_v[i].value, res_a[i].value = values[i][0], values[i][1]
    return run


def _foreach_adam(ws, ms, vs, grads, scalars: tuple, nesterov: bool, owned: bool) -> tuple:
    """New (vars, ms, vs): `adam_values`' ATen ops over lists, op for op (the same bits),
    into the variables' own buffers when `owned` (nobody else holds them), else new ones."""
    b1p, b2p, lr, b1, b2, eps = scalars
    if owned:
        torch._foreach_lerp_(ms, grads, 1.0 - b1)
        torch._foreach_mul_(vs, b2)
    else:
        ms, vs = torch._foreach_lerp(ms, grads, 1.0 - b1), torch._foreach_mul(vs, b2)
    torch._foreach_addcmul_(vs, grads, grads, value=1.0 - b2)
    denom = torch._foreach_sqrt(vs)
    torch._foreach_add_(denom, eps)
    num = torch._foreach_add(torch._foreach_mul(grads, 1.0 - b1), ms, alpha=b1) if nesterov \
        else ms
    alpha = -adam_alpha(b1p, b2p, lr)
    if owned:
        torch._foreach_addcdiv_(ws, num, denom, value=alpha)
        return ws, ms, vs
    return torch._foreach_addcdiv(ws, num, denom, value=alpha), ms, vs


def _laid_out_again(laid_out: IdentityCache, res: list, grads: list, scalar_inputs: list) -> bool:
    """_GroupedApplyAdam's launch on the variables of the last one, when they are the same
    tensors (each updated in place in it: the checks of their dtypes and shapes and their
    layout hold) and each gradient has its variable's shape on the CPU; False: the full
    checks must run."""
    cached = laid_out.get([getattr(r, "value", None) for column in res for r in column])
    if cached is None:
        return False
    layout, shapes = cached
    for g, shape in zip(grads, shapes):
        if g.shape != shape or not g.is_cpu:
            return False
    seen: dict = {}
    scalars = zip(*(scalars_once(scalar_inputs[k], _ADAM_SCALARS[k], seen) for k in range(6)))
    adam_numba.update_dense_laid_out(layout, grads, [x for shared in scalars
                                                     for x in adam_params(shared)])
    return True


@kernel(nn_fused.GroupedApplyAdam)
def _grouped_adam(node):
    n, dtype = node.attrs["N"], node.attrs["T"].torch_dtype
    nesterov = [bool(x) for x in node.attrs["use_nesterov"]]
    names = ("var", "m", "v")
    laid_out = IdentityCache()   # the launch's layout while all update in place in it

    def run(*args):
        res = [args[k * n:(k + 1) * n] for k in range(3)]            # var, m, v
        scalar_inputs = [args[k * n:(k + 1) * n] for k in range(3, 9)]
        grads = list(args[9 * n:10 * n])
        # whether each variable is owned by its slots alone: before this frame holds values
        free = exclusive_values(res[0] + res[1] + res[2])
        if all(free) and _laid_out_again(laid_out, res, grads, scalar_inputs):
            return
        owned = [free[i] and free[n + i] and free[2 * n + i] for i in range(n)]
        values = []
        for i in range(n):
            w, m, v = (_read(res[k][i], names[k], dtype) for k in range(3))
            if not w.shape == m.shape == v.shape == grads[i].shape:
                _check_same(w, m, "m")
                _check_same(w, v, "v")
                _check_same(w, grads[i], "grad")
            grads[i] = grad_where(w, grads[i])
            values.append((w, m, v))
        seen: dict = {}
        scalars = list(zip(*(scalars_once(scalar_inputs[k], _ADAM_SCALARS[k], seen)
                             for k in range(6))))
        if len({id(r) for column in res for r in column}) < 3 * n:
            # two handles of one variable: one update after the other, as separate ops run
            for i in range(n):
                tensors = tuple(_read(res[k][i], names[k], dtype) for k in range(3))
                res[0][i].value, res[1][i].value, res[2][i].value = adam_values(
                    grads[i], tensors, update_targets(False, list(tensors)), scalars[i],
                    nesterov[i])
            return
        batches: dict = defaultdict(list)
        one_launch = []
        for i, tensors in enumerate(values):
            if _large(tensors[0]):   # the single update's path, in place when owned
                values[i] = adam_values(grads[i], tensors,
                                        update_targets(owned[i], list(tensors)), scalars[i],
                                        nesterov[i])
            elif one_pass_adam(*tensors, grads[i], nesterov[i]):
                outs = update_targets(owned[i], list(tensors))
                one_launch.append((*tensors, outs, grads[i], *adam_params(scalars[i])))
                values[i] = tuple(outs)
            else:
                batches[(scalars[i], nesterov[i], owned[i])].append(i)
        layout = adam_numba.update_dense_many(one_launch) if one_launch else None
        if layout is not None and len(layout.sizes) == n and all(
                u[3][k] is u[k] for u in one_launch for k in range(3)):
            # each variable in place in the one launch: the same values next step are laid out
            laid_out.put([r.value for column in res for r in column],
                         (layout, [tuple(u[0].shape) for u in one_launch]))
        for (shared, nest, own), members in batches.items():
            new = _foreach_adam(*([values[i][k] for i in members] for k in range(3)),
                                [grads[i] for i in members], shared, nest, own)
            for j, i in enumerate(members):
                values[i] = (new[0][j], new[1][j], new[2][j])
        for i in range(n):
            res[0][i].value, res[1][i].value, res[2][i].value = values[i]
    return run
