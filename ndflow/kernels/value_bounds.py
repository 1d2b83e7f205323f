"""Proven bounds on the magnitude of variables' values, kept from one step to the next, so
that a loss-scale optimizer's update can be proven finite before it is written in place.

A loss-scale step applies its updates only when every gradient is finite, so it computes a
weight's new values into new buffers and commits them after the check
(kernels/training_speculative.py). Writing weight-sized new buffers costs the step more
than the check: for MNIST's fc1 (3136x512) the step with the new buffers took 1.033-1.050x
the plain step, written in place 0.998-1.009x. In place is exact only when the gradient is
known to be finite before the first element is written. For a gradient that is a product
op(a) @ op(b) over K terms, |g| <= K * max|a| * max|b| (the operands are small: activations
and the upstream gradient); with bounds on |var| and |accum|, the momentum formulas bound
every value the update computes, and when all stay far below float32's largest value none
can overflow: the gradient is finite and the update runs in place.

Measuring max|var| reads the whole weight (as much as the update itself), so the bound is
carried: after an in-place update, the new values' bound follows from the old ones and the
gradient's (`momentum_bounds`), recorded against the tensor and its version counter.
Anything else that writes a variable's buffer in place either uses an ATen in-place op
(which bumps the version) or first asks `kernels/state.py` `exclusive_values` (which bumps
it for every variable it lets be overwritten), so a recorded bound is used only while
nothing but the update that recorded it has written the buffer. The first step, or the one
after another writer, measures the bound exactly.

The same records hold a weight's sum of squares (`record_squares`), which an update writing
it by blocks computed on the way (kernels/sum_squares_numba.py), for its L2Loss.
"""

from __future__ import annotations

import math
import weakref

import torch
from torch.autograd.graph import increment_version

# Far below float32's largest value (3.4e38): every value an update computes that is bounded
# by this (times its largest coefficient) is finite.
LIMIT = 2.0 ** 120
# Relative growth allowed per bound for the rounding of the few float32 operations between
# the bounded values (each rounds by at most 2^-24).
ROUNDING = 1.0 + 2.0 ** -20

_RECORDED: dict = {}    # id(tensor) -> (weak reference, version, bound)
# the same for sum(t * t) by kernels/sum_squares_numba.py's blocks, which an update that wrote
# the tensor by those blocks computed on the way: its L2Loss, next, need not read it again
_SQUARES: dict = {}


def _version(t: torch.Tensor):
    try:
        return t._version
    except RuntimeError:    # an inference tensor has no version counter
        return None


def _lookup(table: dict, t: torch.Tensor) -> float | None:
    entry = table.get(id(t))
    if entry is None or entry[0]() is not t or entry[1] != _version(t):
        return None
    return entry[2]


def _store(table: dict, t: torch.Tensor, value: float) -> None:
    version = _version(t)
    if version is None:
        return
    key = id(t)
    # the entry leaves with the tensor (before its id can be reused)
    ref = weakref.ref(t, lambda _, k=key: table.pop(k, None))
    table[key] = (ref, version, float(value))


def recorded(t: torch.Tensor) -> float | None:
    """The bound recorded for `t` when nothing has written it since, else None."""
    return _lookup(_RECORDED, t)


def record(t: torch.Tensor, bound: float) -> None:
    """Records `bound` >= max|t| for t as it is now."""
    _store(_RECORDED, t, bound)


def recorded_squares(t: torch.Tensor) -> float | None:
    """sum(t * t) (kernels/sum_squares_numba.py's) recorded for `t` when nothing has written
    it since, else None."""
    return _lookup(_SQUARES, t)


def record_squares(t: torch.Tensor, total: float) -> None:
    """Records `total`, sum(t * t) by kernels/sum_squares_numba.py's blocks, for t as it is."""
    _store(_SQUARES, t, total)


def mark_written(t: torch.Tensor) -> None:
    """Invalidates what is recorded of `t`, about to be written in place."""
    key = id(t)
    if key in _RECORDED or key in _SQUARES:
        try:
            increment_version(t)
        except RuntimeError:
            _RECORDED.pop(key, None)
            _SQUARES.pop(key, None)


def max_abs(t: torch.Tensor) -> float:
    """max|t| (NaN when t holds a NaN, inf when an infinity; 0 for an empty tensor)."""
    if t.numel() == 0:
        return 0.0
    lo, hi = torch.aminmax(t)
    lo, hi = float(lo), float(hi)
    if math.isnan(lo) or math.isnan(hi):
        return math.nan
    return max(-lo, hi)


def or_measured(bound: float | None, t: torch.Tensor) -> float:
    """`bound` (a recorded one, looked up earlier), else max|t| measured."""
    return max_abs(t) if bound is None else bound


def sum_factor(k: int) -> float:
    """What bounds a float32 sum of `k` terms (in any order) by max|term|: k, doubled for
    the rounding of the partial sums (k u / (1 - k u) <= 1 for u = 2^-24 and k <= 2^22;
    infinite beyond)."""
    return 2.0 * k if k <= 1 << 22 else math.inf


def product_bound_of(max_a: float, max_b: float, k: int) -> float:
    """A bound on |op(a) @ op(b)| computed in float32 over `k` terms from max|a| and max|b|
    (NaN when one is NaN, or 0 times infinity: no bound)."""
    return sum_factor(k) * max_a * max_b


def product_bound(a: torch.Tensor, b: torch.Tensor, k: int) -> float:
    """`product_bound_of` the two matrices' magnitudes."""
    return product_bound_of(max_abs(a), max_abs(b), k)


def momentum_bounds(var: float, accum: float, grad: float, scale: float, lr: float,
                    momentum: float, nesterov: bool, keras: bool, decay: bool):
    """Bounds (var, accum) on the values the momentum update (kernels/momentum_numba.py's
    formulas) computes from values bounded by `var`, `accum` and a product gradient bounded
    by `grad`, or None when a value could overflow (or a bound or coefficient is not
    finite)."""
    coefficients = (abs(scale) if decay else 0.0, abs(lr), abs(momentum))
    if not all(math.isfinite(c) for c in coefficients) or not all(
            math.isfinite(x) for x in (var, accum, grad)):
        return None
    s, lr, mu = coefficients
    r = ROUNDING
    g = r * (grad + s * var)                      # g + var * scale (or g)
    if keras:
        acc = r * (mu * accum + lr * g)           # accum * mu - lr * g
        new = r * (var + (mu * acc + lr * g if nesterov else acc))
    else:
        acc = r * (mu * accum + g)                # accum * mu + g
        new = r * (var + lr * (g + mu * acc if nesterov else acc))
    largest = max(g, acc, new, accum, var) * max(1.0, s, lr, mu)
    return (new, acc) if largest < LIMIT else None
