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
"""

from __future__ import annotations

import torch

from ndflow.kernels import speculative_numba
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


def _gradient(g: torch.Tensor, v: torch.Tensor, s: float, decay: bool) -> torch.Tensor:
    """What the check reads: g + v * s (product rounded, then the sum) or g."""
    return torch.add(g, torch.mul(v, s)) if decay else g


@kernel(nn_fused.SpeculativeApplyMomentum)
def _speculative_momentum(node):
    n, dtype, nesterov, keras, decay = n_update_attrs(node)
    commit = bool(node.attrs.get("commit", False))

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
        olds, nums, seen = [], [], {}
        for i in range(n):
            v, a = _read(res_v[i], "var", dtype), _read(res_a[i], "accum", dtype)
            _check_same(v, a, "accum")
            _check_same(v, grads[i], "grad")
            olds.append((v, a))
            nums.append(tuple(scalar_once(t, what, seen) for t, what in
                              ((scales[i], "scale"), (lrs[i], "lr"), (moms[i], "momentum"))))
        fast = [one_pass(v, a) and speculative_numba.applies(v) for v, a in olds]
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
            entries = []
            for i in (i for i in range(n) if fast[i]):
                v, a = olds[i]
                g = grads[i].contiguous()
                own = i in donated and g is grads[i] and g.dtype == v.dtype
                new[i] = (g if own else torch.empty_like(v), torch.empty_like(a))
                s, lr, mu = nums[i]
                entries.append((g, v, a, *new[i], s, lr, mu, nesterov[i], keras[i], decay[i]))
            checks = [(grads[i], olds[i][0], nums[i][0], decay[i]) for i in in_launch]
            ok = speculative_numba.update_all(entries, checks)
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
