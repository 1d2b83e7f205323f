"""The kernel of `_SpeculativeApplyMomentum` (ndflow/passes/speculative_momentum.py): N
momentum updates computed into new buffers, the variables left as they are, and whether
every gradient is finite.

Large float32 CPU variables (those the in-place update would run in one numba pass,
kernels/training.py `one_pass`) go through kernels/speculative_numba.py: one pass over g,
var and accum that both checks the gradient and writes the new values, for all of them in
one parallel launch, which also checks the other float32 gradients. The others take the
ATen forms of the ops they replace: the check of `_AllFinite`/`_AllFiniteAddScaled`
(kernels/math.py), then `momentum_values` into new buffers. Where the plan proves a
gradient dies here and nobody else sees it, the new var is written into the gradient's own
buffer (runtime/inplace.py `donating_kernel`). So each value and each decision is bit for
bit the one the check ops and the in-place update give. When a gradient is not finite the
outputs are the variables' current values (the step's If does not commit them anyway).

An entry whose gradient is a MatMul's product (`matmul`) gets it computed here: on that
path by kernels/gemm_epilogue.py a block of rows at a time, each block checked and turned
into the new values while in the cache (the gradient never written to memory), else by
ATen's matmul first. When the op commits the values itself and nobody else holds the
variable, a product gradient proven finite before it is computed (its operands' and the
variable's magnitude bounds, kernels/value_bounds.py) is applied in place instead, after
every other gradient is checked: plain stores into the weight's own buffer (MNIST's
loss-scale step 1.033-1.050x -> 0.998-1.011x the plain step). So is a gradient whose maker
recorded its bound (`_CastDecayedGradient`, the bfloat16 rewrite's L2-regularized gradient,
kernels/momentum_numba.py), by the in-place update's own kernel.

`_ProvenMatMulApplyMomentum` (ndflow/passes/speculative_backprop.py) applies one such
weight's update earlier, where the layer's input gradient is computed, from the same blocks
(`matmul_speculate` with `backprop`), when its bound program proves every gradient of the
step finite; the speculative op then skips that entry (`applied`).
"""

from __future__ import annotations

import math

import torch

from ndflow.core.errors import InternalError
from ndflow.kernels import gemm_epilogue, momentum_numba, speculative_numba, value_bounds
from ndflow.kernels.math import _all_finite
from ndflow.kernels.registry import kernel
from ndflow.kernels.state import exclusive_values
from ndflow.kernels.training import (
    _check_same,
    _read,
    momentum_values,
    n_update_attrs,
    one_pass,
    scalar_once,
)
from ndflow.ops import nn_fused


def _product(a, b, ta: bool, tb: bool, v):
    """The gradient op(a) @ op(b), or None when `v` (the variable) is given and the product
    can be computed by blocks inside the update (gemm_epilogue.matmul_speculate). A small
    variable's product is ATen's: its gradient stays in the cache, and its update joins the
    one launch of the other small ones (MNIST's 512x10 fc2: 106 us on its own by blocks)."""
    if (v is not None and v.numel() >= speculative_numba.STREAM_MIN and a.dim() == b.dim() == 2
            and gemm_epilogue.applies(a, b, v)):
        rows, cols = (a.shape[1] if ta else a.shape[0]), (b.shape[0] if tb else b.shape[1])
        if (rows, cols) == tuple(v.shape):
            return None
    return torch.matmul(a.t() if ta else a, b.t() if tb else b)


def _large(res) -> bool:
    """Whether a variable is large enough to gain from an update in place (a small one's
    new buffers stay in the cache)."""
    value = getattr(res, "value", None)
    return value is not None and value.numel() >= speculative_numba.STREAM_MIN


def _gradient(g: torch.Tensor, v: torch.Tensor, s: float, decay: bool) -> torch.Tensor:
    """What the check reads: g + v * s (product rounded, then the sum) or g."""
    return torch.add(g, torch.mul(v, s)) if decay else g


@kernel(nn_fused.SpeculativeApplyMomentum)
def _speculative_momentum(node):
    n, dtype, nesterov, keras, decay = n_update_attrs(node)
    commit = bool(node.attrs.get("commit", False))
    matmul = [bool(x) for x in node.attrs.get("matmul") or [0] * n]
    ta = [bool(x) for x in node.attrs.get("transpose_a") or [0] * n]
    tb = [bool(x) for x in node.attrs.get("transpose_b") or [0] * n]
    operand_b = {i: k for k, i in enumerate(i for i in range(n) if matmul[i])}
    # the entry a `_ProvenMatMulApplyMomentum` may have applied already (its flag the last
    # input): then it is neither checked nor updated here
    applied_entry = node.attrs.get("applied_entry", -1) if node.attrs.get("D", 0) else -1

    def make(donated: frozenset):
        """The kernel; entries in `donated` may write the new var into their gradient's
        buffer (the plan proved it dies here, runtime/inplace.py `donating_kernel`)."""
        def run(*args):
            return _run(args, donated)
        run.donating = lambda inputs: make(frozenset(i - 3 * n for i in inputs
                                                     if 3 * n <= i < 4 * n))
        return run

    def _run(args, donated):
        res_v, res_a, lrs, grads, scales, moms = (args[k * n:(k + 1) * n] for k in range(6))
        done = applied_entry >= 0 and bool(args[-1])
        live = [i for i in range(n) if not (done and i == applied_entry)]
        # weights this op commits may be updated in place when their gradient is proven
        # finite (a product's from its operands, another from the bound its maker recorded):
        # their recorded bounds are looked up before exclusive_values (which invalidates
        # them), which is asked before any value is held
        grad_bounds = {i: value_bounds.recorded(grads[i]) for i in live
                       if commit and not matmul[i]}
        candidates = [i for i in live if _large(res_v[i])
                      and (matmul[i] or grad_bounds[i] is not None)] if commit else []
        priors = {i: (value_bounds.recorded(res_v[i].value),
                      value_bounds.recorded(res_a[i].value)) for i in candidates}
        free = exclusive_values([res_v[i] for i in candidates] + [res_a[i] for i in candidates])
        owned = {i for k, i in enumerate(candidates) if free[k] and free[len(candidates) + k]}
        grads, products = list(grads), {}
        olds, nums, seen = [], [], {}
        for i in range(n):
            v, a = _read(res_v[i], "var", dtype), _read(res_a[i], "accum", dtype)
            _check_same(v, a, "accum")
            if i not in live:   # applied (its gradient proven finite): left as it is now
                olds.append((v, a))
                nums.append(None)
                continue
            if matmul[i]:   # the gradient's GEMM, here a block at a time where it can be
                products[i] = (grads[i], args[6 * n + operand_b[i]])
                grads[i] = _product(*products[i], ta[i], tb[i], v)
            if grads[i] is not None:
                _check_same(v, grads[i], "grad")
            olds.append((v, a))
            nums.append((scalar_once(scales[i], "scale", seen), scalar_once(lrs[i], "lr", seen),
                         scalar_once(moms[i], "momentum", seen)))
        fast = [one_pass(v, a) and speculative_numba.applies(v) for v, a in olds]
        for i in products:   # the GEMM runs on its own where the blocked path cannot
            if grads[i] is None and not fast[i]:
                grads[i] = _product(*products[i], ta[i], tb[i], None)
        slow = [i for i in live if not fast[i]]
        # the other float32 CPU gradients are checked in the same launch; the rest as one
        # exact predicate over all their elements (the same decision as one check each)
        in_launch = [i for i in slow if speculative_numba.applies(olds[i][0])
                     and grads[i].is_contiguous() and olds[i][0].is_contiguous()]
        sums = {i: _gradient(grads[i], olds[i][0], nums[i][0], decay[i])
                for i in slow if i not in in_launch}
        ok = not sums or bool(_all_finite(torch.cat([t.reshape(-1) for t in sums.values()])))
        new = list(olds)
        if ok:
            entries, blocked, in_place = [], [], []
            for i in (i for i in live if fast[i]):
                v, a = olds[i]
                s, lr, mu = nums[i]
                if grads[i] is None:    # op(a) @ op(b) computed by blocks (gemm_epilogue)
                    bounds = _proven_bounds(i, products, grad_bounds, priors, owned, olds[i],
                                            nums[i])
                    if bounds is not None:   # written in place once all else is checked
                        new[i] = (v, a)
                        in_place.append((i, bounds))
                        continue
                    new[i] = (torch.empty_like(v), torch.empty_like(a))
                    blocked.append((*products[i], ta[i], tb[i], v, a, *new[i], s, lr, mu,
                                    nesterov[i], keras[i], decay[i]))
                    continue
                g = grads[i].contiguous()
                bounds = None if matmul[i] else _proven_bounds(
                    i, products, grad_bounds, priors, owned, olds[i], nums[i])
                if bounds is not None:   # (a gradient whose maker recorded its bound)
                    new[i] = (v, a)
                    in_place.append((i, bounds))
                    continue
                own = (i in donated and not matmul[i] and g is grads[i]
                       and g.dtype == v.dtype)
                if own:   # the gradient's buffer becomes the new var: its bound is void
                    value_bounds.mark_written(g)
                new[i] = (g if own else torch.empty_like(v), torch.empty_like(a))
                entries.append((g, v, a, *new[i], s, lr, mu, nesterov[i], keras[i], decay[i]))
            checks = [(grads[i], olds[i][0], nums[i][0], decay[i]) for i in in_launch]
            ok = speculative_numba.update_all(entries, checks)
            for entry in blocked:
                ok = ok and gemm_epilogue.matmul_speculate(*entry)
            for i, (bound_v, bound_a) in in_place if ok else ():
                v, a = olds[i]
                if i not in products:   # the in-place update's own kernel: the same bits
                    s, lr, mu = nums[i]
                    momentum_numba.update(grads[i].contiguous(), v, a, v, a,
                                          s if decay[i] else 0.0, lr, mu, nesterov[i],
                                          keras[i], squares=True)
                elif not gemm_epilogue.matmul_speculate(*products[i], ta[i], tb[i], v, a, v,
                                                        a, *nums[i], nesterov[i], keras[i],
                                                        decay[i], squares=decay[i]):
                    raise InternalError(None, None, f"{node.name}: a gradient proven finite "
                                        "was not: the variable's update is lost")
                value_bounds.record(v, bound_v)
                value_bounds.record(a, bound_a)
        if not ok:
            if done:
                raise InternalError(None, None, f"{node.name}: a gradient proven finite was "
                                    "not: the step was applied to one variable")
            return (torch.tensor(False), *(v for v, _ in olds), *(a for _, a in olds))
        for i in slow:
            s, lr, mu = nums[i]
            outs = (torch.empty_like(olds[i][0]), torch.empty_like(olds[i][1]))
            # g + var * s is the sum the check made, when it made one (rounded the same way);
            # with s == 0 the update reads g alone, as the in-place kernel does
            s = s if decay[i] else 0.0
            g, s = (sums[i], 0.0) if s and i in sums else (grads[i], s)
            new[i] = momentum_values(g, olds[i], outs, s, lr, mu, nesterov[i], keras[i])
        if commit:   # the new values replace the old ones (nobody holds these buffers)
            for i in range(n):
                res_v[i].value, res_a[i].value = new[i]
        return (torch.tensor(True), *(v for v, _ in new), *(a for _, a in new))

    def _proven_bounds(i, products, grad_bounds, priors, owned, values, nums):
        """Bounds on entry i's new (var, accum) when its gradient (a product bounded by
        its operands, else by the bound its maker recorded) is proven finite and the update
        may be written in place, else None (kernels/value_bounds.py)."""
        if i not in owned:      # (nor a small weight: `candidates`)
            return None
        if i in products:
            x, y = products[i]
            grad_bound = value_bounds.product_bound(x, y, x.shape[0] if ta[i] else x.shape[1])
        else:
            grad_bound = grad_bounds[i]
        (v, a), (prior_v, prior_a) = values, priors[i]
        return value_bounds.momentum_bounds(value_bounds.or_measured(prior_v, v),
                                            value_bounds.or_measured(prior_a, a), grad_bound,
                                            *nums,
                                            nesterov[i], keras[i], decay[i])

    return make(frozenset())


def bound_program(attrs) -> list:
    """[(factor, value indices, leaf indices)] of a `_ProvenMatMulApplyMomentum`: step t
    bounds value t + 1 by factor * (the sum of its values' bounds, or 1) * the product of
    its leaves' magnitudes (ndflow/passes/speculative_backprop.py); value 0 is the input
    gradient's."""
    values, leaves = list(attrs["step_values"]), list(attrs["step_leaves"])
    program, v, w = [], 0, 0
    for factor, nv, nl in zip(attrs["step_factors"], attrs["step_value_counts"],
                              attrs["step_leaf_counts"]):
        program.append((float(factor), values[v:v + nv], leaves[w:w + nl]))
        v, w = v + nv, w + nl
    return program


def run_bound_program(program: list, first: float, magnitudes) -> bool:
    """Whether every value's bound stays under value_bounds.LIMIT (a NaN or infinite
    magnitude makes its bound fail), from the first value's bound and `magnitudes(l)`, leaf
    l's max|.|: then no value of the chain overflows, so none is infinite or NaN."""
    values = [first]
    for factor, summed, leaves in program:
        bound = sum(values[j] for j in summed) if summed else 1.0
        for leaf in leaves:
            bound *= magnitudes(leaf)
        values.append(factor * bound)
    return all(v < value_bounds.LIMIT for v in values)


@kernel(nn_fused.ProvenMatMulApplyMomentum)
def _proven_matmul_momentum(node):
    a = node.attrs
    nesterov, keras, decay = (bool(a.get(k, False)) for k in ("use_nesterov", "keras", "decay"))
    n_leaves = a["L"]
    program = bound_program(a)

    def run(res_v, res_a, lr, x, dy, scale, momentum, *rest):
        leaves, leaf_vars = rest[:n_leaves], rest[n_leaves:]
        priors = (value_bounds.recorded(res_v.value) if _large(res_v) else None,
                  value_bounds.recorded(res_a.value) if _large(res_a) else None)
        owned = _large(res_v) and all(exclusive_values([res_v, res_a]))
        v, acc = _read(res_v, "var", torch.float32), _read(res_a, "accum", torch.float32)
        _check_same(v, acc, "accum")
        out = torch.empty((dy.shape[0], v.shape[0]), dtype=v.dtype, device=v.device)
        bounds = None
        if owned and x.dim() == dy.dim() == 2 and gemm_epilogue.applies(x, dy, v, acc, out):
            # (on the CPU only: the scalars and magnitudes are read on the host)
            seen: dict = {}
            s, lr, mu = (scalar_once(t, what, seen) for t, what in
                         ((scale, "scale"), (lr, "lr"), (momentum, "momentum")))
            bound_v = value_bounds.or_measured(priors[0], v)
            bound_a = value_bounds.or_measured(priors[1], acc)
            first = value_bounds.product_bound_of(value_bounds.max_abs(dy), bound_v,
                                                  dy.shape[1])
            if run_bound_program(program, first, _magnitudes(leaves, leaf_vars)):
                bounds = value_bounds.momentum_bounds(
                    bound_v, bound_a, value_bounds.product_bound(x, dy, x.shape[0]), s, lr,
                    mu, nesterov, keras, decay)
        if bounds is None:   # the MatMul's own product; the variables as they were
            for t, prior in zip((v, acc), priors):   # (unwritten: exclusive_values
                if prior is not None:                   # forgot them)
                    value_bounds.record(t, prior)
            torch.mm(dy, v.t(), out=out)
            return out, torch.tensor(False)
        if not gemm_epilogue.matmul_speculate(x, dy, True, False, v, acc, v, acc, s, lr, mu,
                                              nesterov, keras, decay, squares=decay,
                                              backprop=out):
            raise InternalError(None, None, f"{node.name}: a gradient proven finite was not: "
                                "the variable's update is lost")
        value_bounds.record(v, bounds[0])
        value_bounds.record(acc, bounds[1])
        return out, torch.tensor(True)

    return run


def _magnitudes(leaves, leaf_vars):
    """max|.| of leaf l, measured once: a tensor's, or a variable's recorded bound (else its
    value's)."""
    found: dict = {}

    def magnitude(leaf: int) -> float:
        if leaf not in found:
            if leaf < len(leaves):
                found[leaf] = value_bounds.max_abs(leaves[leaf])
            else:
                value = getattr(leaf_vars[leaf - len(leaves)], "value", None)
                if value is None:
                    return math.nan
                found[leaf] = value_bounds.or_measured(value_bounds.recorded(value), value)
        return found[leaf]
    return magnitude
