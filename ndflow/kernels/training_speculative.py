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
ATen's matmul first.
"""

from __future__ import annotations

import torch

from ndflow.kernels import gemm_epilogue, speculative_numba
from ndflow.kernels.math import _all_finite
from ndflow.kernels.registry import kernel
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
        grads, products = list(grads), {}
        olds, nums, seen = [], [], {}
        for i in range(n):
            v, a = _read(res_v[i], "var", dtype), _read(res_a[i], "accum", dtype)
            _check_same(v, a, "accum")
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
        slow = [i for i in range(n) if not fast[i]]
        # the other float32 CPU gradients are checked in the same launch; the rest as one
        # exact predicate over all their elements (the same decision as one check each)
        in_launch = [i for i in slow if speculative_numba.applies(olds[i][0])
                     and grads[i].is_contiguous() and olds[i][0].is_contiguous()]
        sums = {i: _gradient(grads[i], olds[i][0], nums[i][0], decay[i])
                for i in slow if i not in in_launch}
        ok = not sums or bool(_all_finite(torch.cat([t.reshape(-1) for t in sums.values()])))
        new = list(olds)
        if ok:
            entries, blocked = [], []
            for i in (i for i in range(n) if fast[i]):
                v, a = olds[i]
                s, lr, mu = nums[i]
                if grads[i] is None:    # op(a) @ op(b) computed by blocks (gemm_epilogue)
                    new[i] = (torch.empty_like(v), torch.empty_like(a))
                    blocked.append((*products[i], ta[i], tb[i], v, a, *new[i], s, lr, mu,
                                    nesterov[i], keras[i], decay[i]))
                    continue
                g = grads[i].contiguous()
                own = (i in donated and not matmul[i] and g is grads[i]
                       and g.dtype == v.dtype)
                new[i] = (g if own else torch.empty_like(v), torch.empty_like(a))
                entries.append((g, v, a, *new[i], s, lr, mu, nesterov[i], keras[i], decay[i]))
            checks = [(grads[i], olds[i][0], nums[i][0], decay[i]) for i in in_launch]
            ok = speculative_numba.update_all(entries, checks)
            for entry in blocked:
                ok = ok and gemm_epilogue.matmul_speculate(*entry)
        if not ok:
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

    return make(frozenset())
