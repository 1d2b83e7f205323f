"""TF1's AdagradDAOptimizer and its fused ops against TF 2.21 (tests/fixtures/adagrad_da):
weights, slots and global step after 3 steps (dense and sparse gradients with a repeated row,
with/without l1 and l2, float32 and float64), eagerly too; the raw ops' values (the sparse op
with a duplicate index); TF's argument and kernel errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

HERE = Path(__file__).parents[1] / "fixtures" / "adagrad_da"
configs = fixture_modules.load("adagrad_da")
WANT = json.loads((HERE / "expected.json").read_text())


@pytest.mark.parametrize("key", sorted(configs.CONFIGS))
def test_training_matches_tensorflow(key):
    got, want = configs.train(tf, key), WANT["train"][key]
    tol = dict(rtol=1e-6, atol=1e-7) if configs.CONFIGS[key][1] == "float32" else \
        dict(rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(got["w"], want["w"], **tol)
    np.testing.assert_allclose(got["emb"], want["emb"], **tol)
    assert sorted(got["slots"]) == ["gradient_accumulator", "gradient_squared_accumulator"]
    for name in want["slots"]:
        np.testing.assert_allclose(got["slots"][name], want["slots"][name], **tol)
    assert got["step"] == want["step"] == 3


@pytest.mark.parametrize("case", sorted(configs.RAW_CASES))
def test_raw_ops_match_tensorflow(case):
    got, want = configs.raw_ops(tf, *configs.RAW_CASES[case]), WANT["raw"][case]
    for kind in ("dense", "sparse"):
        for g, w in zip(got[kind], want[kind]):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


def test_eager_steps_match_the_graph():
    gs = tf.Variable(0, dtype=tf.int64)
    w = tf.Variable(np.array(configs.W0, np.float32))
    emb = tf.Variable(np.array(configs.E0, np.float32))
    opt = tf.compat.v1.train.AdagradDAOptimizer(0.1, gs)
    for _ in range(3):
        opt.minimize(lambda: tf.reduce_sum(w * w * w)
                     + tf.reduce_sum(tf.gather(emb, configs.ROWS) ** 2),
                     global_step=gs, var_list=[w, emb])
    np.testing.assert_allclose(w.numpy(), WANT["train"]["plain"]["w"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(emb.numpy(), WANT["train"]["plain"]["emb"], rtol=1e-6,
                               atol=1e-7)
    assert int(gs.numpy()) == 3


def _numpy_update(var, ga, gga, grad, lr, l1, l2, step):
    ga, gga = ga + grad, gga + grad * grad
    denom = l2 * step * lr + np.sqrt(gga)
    if l1 > 0:
        return np.sign(-ga) * np.maximum(np.abs(ga) - l1 * step, 0) * lr / denom, ga, gga
    return -ga * lr / denom, ga, gga


@pytest.mark.parametrize("l1", [0.0, 0.4])
def test_dense_op_matches_numpy_float64(l1):
    rng = np.random.default_rng(0)
    var, ga, grad = (rng.standard_normal((3, 4)) for _ in range(3))
    gga = rng.uniform(0.1, 1.0, (3, 4))
    v, a, b = tf.Variable(var), tf.Variable(ga), tf.Variable(gga)
    tf.raw_ops.ResourceApplyAdagradDA(
        var=v.handle, gradient_accumulator=a.handle, gradient_squared_accumulator=b.handle,
        grad=grad, lr=np.float64(0.3), l1=np.float64(l1), l2=np.float64(0.2),
        global_step=np.int64(5))
    for got, want in zip((v, a, b), _numpy_update(var, ga, gga, grad, 0.3, l1, 0.2, 5)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-14, atol=1e-15)


def test_errors_are_tensorflows():
    with pytest.raises(ValueError, match="initial_gradient_squared_accumulator_value must be "
                                         "positive: 0.0"):
        tf.compat.v1.train.AdagradDAOptimizer(0.1, None,
                                              initial_gradient_squared_accumulator_value=0.0)
    v, a, b = tf.Variable([1.0, 2.0]), tf.Variable([0.0, 0.0]), tf.Variable([1.0, 1.0])
    slots = dict(var=v.handle, gradient_accumulator=a.handle,
                 gradient_squared_accumulator=b.handle)
    hyper = dict(lr=0.1, l1=0.0, l2=0.0)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"global_step is not a scalar: \[2\]"):
        tf.raw_ops.ResourceApplyAdagradDA(grad=[1.0, 1.0], global_step=np.array([1, 2]),
                                          **slots, **hyper)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"var and grad do not have the same shape\[2\] \[3\]"):
        tf.raw_ops.ResourceApplyAdagradDA(grad=[1.0, 1.0, 1.0], global_step=np.int64(1),
                                          **slots, **hyper)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Index 5 at offset 0 in indices is out of range"):
        tf.raw_ops.ResourceSparseApplyAdagradDA(grad=[1.0], indices=[5],
                                                global_step=np.int64(1), **slots, **hyper)
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])  # nothing was written
