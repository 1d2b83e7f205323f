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
