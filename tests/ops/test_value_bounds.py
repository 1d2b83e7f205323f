"""Proven magnitude bounds of variables' values (ndflow/kernels/value_bounds.py).

Checked: max|t| against NumPy (NaN, inf, empty); a recorded bound is returned only while
nothing has written the tensor (an ATen in-place op, an update that asked
`exclusive_values`, as `assign_add` does, a new value); the product bound holds for random
float32 GEMMs; the momentum bounds hold for the float32 update formulas (TF's and Keras'
forms, Nesterov, the L2 term) evaluated in float32 at the bounds' extremes and at random, and
are refused where a value could overflow or a coefficient is not finite.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import value_bounds as vb


def test_max_abs_matches_numpy_and_reports_non_finite_values():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(37, 53)).astype(np.float32) * 7
    assert vb.max_abs(torch.from_numpy(x)) == float(np.max(np.abs(x)))
    assert vb.max_abs(torch.tensor([-3.0, 2.0])) == 3.0
    assert math.isnan(vb.max_abs(torch.tensor([1.0, float("nan"), -5.0])))
    assert vb.max_abs(torch.tensor([1.0, -float("inf")])) == math.inf
    assert vb.max_abs(torch.empty(0)) == 0.0


def test_a_recorded_bound_lasts_until_the_tensor_is_written():
    t = torch.ones(8)
    assert vb.recorded(t) is None
    vb.record(t, 1.0)
    assert vb.recorded(t) == 1.0
    assert vb.recorded(torch.ones(8)) is None            # another tensor
    t.add_(1.0)                                           # ATen's in-place op: version bump
    assert vb.recorded(t) is None
    vb.record(t, 2.0)
    vb.mark_written(t)
    assert vb.recorded(t) is None


def test_an_update_that_may_write_in_place_invalidates_the_bound():
    v = tf.Variable(np.ones((64, 64), np.float32))
    res = v.handle._value
    before = res.value.data_ptr()
    vb.record(res.value, 1.0)
    assert vb.recorded(res.value) == 1.0
    v.assign_add(np.full((64, 64), 1e30, np.float32))
    assert res.value.data_ptr() == before                 # written in place ...
    assert vb.recorded(res.value) is None                 # ... and the bound is gone
    vb.record(res.value, 1e30)
    v.assign(np.zeros((64, 64), np.float32))
    assert vb.recorded(res.value) is None


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True)])
def test_the_product_bound_holds(ta, tb):
    rng = np.random.default_rng(1)
    for scale in (1.0, 1e15):
        a = (rng.normal(size=(48, 33)) * scale).astype(np.float32)
        b = rng.normal(size=(48, 29) if ta else (33, 29)).astype(np.float32)
        a_op, k = (a.T, 48) if ta else (a, 33)
        b_t = torch.from_numpy(np.ascontiguousarray(b.T) if tb else b)
        prod = torch.from_numpy(np.ascontiguousarray(a_op)) @ (b_t.t() if tb else b_t)
        bound = vb.product_bound(torch.from_numpy(a), b_t, k)
        assert float(prod.abs().max()) <= bound
        exact = np.abs(a_op.astype(np.float64)) @ np.abs(b.astype(np.float64))
        assert bound >= exact.max() and bound <= 2 * k * np.abs(a).max() * np.abs(b).max()
    assert vb.product_bound(torch.ones(2, 2), torch.ones(2, 2), (1 << 22) + 1) == math.inf


def _update(g, w, a, s, lr, mu, nesterov, keras, decay):
    """kernels/momentum_numba.py's formulas, in float32."""
    f = np.float32
    g, w, a, s, lr, mu = (f(x) for x in (g, w, a, s, lr, mu))
    grad = g + s * w if decay and s != 0 else g
    if keras:
        acc = a * mu - lr * grad
        return w + (acc * mu - lr * grad if nesterov else acc), acc
    acc = a * mu + grad
    return w - (lr * (grad + mu * acc) if nesterov else lr * acc), acc


@pytest.mark.parametrize("nesterov,keras,decay", list(itertools.product([0, 1], repeat=3)))
def test_momentum_bounds_hold_for_the_float32_update(nesterov, keras, decay):
    rng = np.random.default_rng(2)
    with np.errstate(over="ignore", invalid="ignore"):
        for bw, ba, bg in ((3.0, 0.5, 2.0), (1e30, 1e29, 1e30), (1e-3, 0.0, 1e5)):
            for s, lr, mu in ((5e-4, 0.01, 0.9), (-0.3, 2.0, 0.99), (1.0, 1.0, 1.0)):
                got = vb.momentum_bounds(bw, ba, bg, s, lr, mu, nesterov, keras, decay)
                assert got is not None
                new_b, acc_b = got
                corners = itertools.product((-bg, bg), (-bw, bw), (-ba, ba))
                randoms = zip(rng.uniform(-bg, bg, 200), rng.uniform(-bw, bw, 200),
                              rng.uniform(-ba, ba, 200))
                for g, w, a in itertools.chain(corners, randoms):
                    new, acc = _update(g, w, a, s, lr, mu, nesterov, keras, decay)
                    assert np.isfinite(new) and abs(float(new)) <= new_b
                    assert np.isfinite(acc) and abs(float(acc)) <= acc_b


def test_momentum_bounds_refuse_what_could_overflow():
    big = vb.LIMIT
    assert vb.momentum_bounds(1.0, 1.0, big, 0.0, 0.01, 0.9, False, True, False) is None
    assert vb.momentum_bounds(big, 1.0, 1.0, 1e-4, 0.01, 0.9, False, True, True) is None
    assert vb.momentum_bounds(1.0, 1.0, math.nan, 0.0, 0.01, 0.9, False, True, False) is None
    assert vb.momentum_bounds(1.0, 1.0, math.inf, 0.0, 0.01, 0.9, False, True, False) is None
    assert vb.momentum_bounds(1.0, 1.0, 1.0, 0.0, math.inf, 0.9, False, True, False) is None
    assert vb.momentum_bounds(1.0, 1.0, 1.0, math.nan, 0.01, 0.9, False, True, True) is None
    # a coefficient that multiplies a bounded value past the limit
    assert vb.momentum_bounds(1.0, big / 4, 1.0, 0.0, 8.0, 8.0, False, False, False) is None
    # the scale of an entry without the L2 term is not read
    assert vb.momentum_bounds(1.0, 1.0, 1.0, math.nan, 0.01, 0.9, False, True, False)
