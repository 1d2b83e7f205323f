"""TF1 Adagrad, Adadelta, FTRL (V1, lr_power, V2 shrinkage + beta) and proximal optimizers:
weights and slots after 3 steps equal TF 2.21's (fixture; dense and sparse gradients with a
repeated row), eagerly too; TF's argument errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

HERE = Path(__file__).parents[1] / "fixtures" / "adaptive_optimizers"
_configs = fixture_modules.load("adaptive_optimizers")
E0 = _configs.E0
OPTIMIZERS = _configs.OPTIMIZERS
ROWS = _configs.ROWS
W0 = _configs.W0
train = _configs.train
WANT = json.loads((HERE / "trajectories.json").read_text())


@pytest.mark.parametrize("key", sorted(OPTIMIZERS))
def test_matches_tensorflow(key):
    got, want = train(tf, key), WANT[key]
    np.testing.assert_allclose(got["w"], want["w"], rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(got["emb"], want["emb"], rtol=2e-6, atol=1e-7)
    assert sorted(got["slots"]) == sorted(want["slots"])
    for name in want["slots"]:
        np.testing.assert_allclose(got["slots"][name], want["slots"][name], rtol=2e-6,
                                   atol=1e-7)


def test_eager_steps_match_the_graph():
    name, args, kwargs = OPTIMIZERS["ftrl"]
    w, emb = tf.Variable(W0), tf.Variable(E0)
    opt = getattr(tf.compat.v1.train, name)(*args, **kwargs)
    for _ in range(3):
        opt.minimize(lambda: tf.reduce_sum(w * w * w)
                     + tf.reduce_sum(tf.gather(emb, ROWS) ** 2), var_list=[w, emb])
    np.testing.assert_allclose(w.numpy(), WANT["ftrl"]["w"], rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(emb.numpy(), WANT["ftrl"]["emb"], rtol=2e-6, atol=1e-7)


def test_argument_errors_are_tensorflows():
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive: 0.0"):
        tf.compat.v1.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)
    with pytest.raises(ValueError, match="learning_rate_power 0.500000 needs to be negative"):
        tf.compat.v1.train.FtrlOptimizer(0.1, learning_rate_power=0.5)
    with pytest.raises(ValueError, match="l1_regularization_strength -1.000000 needs to be "
                                         "positive or zero"):
        tf.compat.v1.train.FtrlOptimizer(0.1, l1_regularization_strength=-1.0)


@pytest.mark.parametrize("lr_power, shrinkage", [(-0.5, None), (-0.7, None), (-0.5, 0.1)])
def test_ftrl_in_one_pass_equals_float64(lr_power, shrinkage):
    """kernels/adaptive_numba.py (contiguous float32 CPU variables, several of its chunks, into
    new buffers and in place) against TF's FTRL formula in NumPy float64."""
    import torch

    from ndflow.kernels import adaptive_numba
    rng = np.random.default_rng(3)
    n = 2 * adaptive_numba.CHUNK + 77
    v, lin, g = (rng.normal(size=n).astype(np.float32) for _ in range(3))
    a = rng.uniform(0.1, 2.0, n).astype(np.float32)
    lr, l1, l2 = 0.1, 0.05, 0.2
    if not adaptive_numba.applies([torch.from_numpy(v)]):
        pytest.skip("no numba kernel here")
    v64, a64, lin64, g64 = (x.astype(np.float64) for x in (v, a, lin, g))
    used = g64 + 2 * shrinkage * v64 if shrinkage else g64
    new = a64 + g64 * g64
    lin_want = lin64 + used - (new ** -lr_power - a64 ** -lr_power) / lr * v64
    v_want = (np.clip(lin_want, -l1, l1) - lin_want) / (new ** -lr_power / lr + 2 * l2)
    for in_place in (False, True):
        ins = [torch.from_numpy(x.copy()) for x in (v, a, lin)]
        outs = ins if in_place else [torch.empty(n) for _ in range(3)]
        adaptive_numba.ftrl(*ins, outs, torch.from_numpy(g), lr, l1, l2, lr_power, shrinkage)
        for got, want in zip(outs, (v_want, new, lin_want)):
            np.testing.assert_allclose(got.numpy(), want, rtol=2e-5, atol=2e-5)


def test_adadelta_in_one_pass_equals_float64():
    """kernels/adaptive_numba.py's Adadelta (several chunks, into new buffers and in place)
    against TF's formula in NumPy float64, and within a float32 rounding of ATen's form."""
    import torch

    from ndflow.kernels import adaptive_numba, training_adaptive
    rng = np.random.default_rng(4)
    n = 2 * adaptive_numba.CHUNK + 77
    v, g = (rng.normal(size=n).astype(np.float32) for _ in range(2))
    a, au = (rng.uniform(0.0, 2.0, n).astype(np.float32) for _ in range(2))
    lr, rho, eps = 0.7, 0.95, 1e-6
    if not adaptive_numba.applies([torch.from_numpy(v)]):
        pytest.skip("no numba kernel here")
    aten = training_adaptive._adadelta(*(torch.from_numpy(x) for x in (v, a, au, g)), lr, rho,
                                       eps)
    v64, a64, au64, g64 = (x.astype(np.float64) for x in (v, a, au, g))
    a_want = rho * a64 + (1 - rho) * g64 ** 2
    update = np.sqrt(au64 + eps) / np.sqrt(a_want + eps) * g64
    wants = (v64 - lr * update, a_want, rho * au64 + (1 - rho) * update ** 2)
    for in_place in (False, True):
        ins = [torch.from_numpy(x.copy()) for x in (v, a, au)]
        outs = ins if in_place else [torch.empty(n) for _ in range(3)]
        adaptive_numba.adadelta(*ins, outs, torch.from_numpy(g), lr, rho, eps)
        for got, other, want in zip(outs, aten, wants):
            np.testing.assert_allclose(got.numpy(), want, rtol=2e-6, atol=1e-6)
            torch.testing.assert_close(got, other, rtol=1e-6, atol=1e-6)
