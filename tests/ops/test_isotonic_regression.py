"""tf.nn.isotonic_regression (IsotonicRegression): TF 2.21's results, exact
(tests/fixtures/isotonic_regression), plain-Python references (pool-adjacent-violators for the
segments, the max-min formula for the values) and finite-difference gradients."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import errors
from tests import fixture_modules

CONFIGS = fixture_modules.load("isotonic_regression")
TF_VALUES = json.loads(
    (fixture_modules.FIXTURES / "isotonic_regression" / "values.json").read_text())
CASES = CONFIGS.cases(tf)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name):
    want = TF_VALUES[name]
    got = CONFIGS.record(CASES[name])
    if name.startswith("gradient"):
        assert got["dtype"] == want["dtype"] and got["shape"] == want["shape"]
        rtol, atol = CONFIGS.GRADIENT_TOLERANCE
        np.testing.assert_allclose(got["values"], want["values"], rtol=rtol, atol=atol)
    elif "error" in want:
        assert got == want
    else:   # bit for bit (NaN where TF's is NaN)
        assert [(g["dtype"], g["shape"]) for g in got] == [(w["dtype"], w["shape"]) for w in want]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g["values"], w["values"])


def test_tensorflow_fixture_covers_every_case():
    assert sorted(TF_VALUES) == sorted(CASES)


def _pav(row, decreasing=True):
    """(values, segments) by pool-adjacent-violators, adjacent equal pools kept apart."""
    pools = []                      # [sum, count]
    for v in (row if decreasing else [-v for v in row]):
        pools.append([float(v), 1])
        while len(pools) > 1 and pools[-1][0] / pools[-1][1] > pools[-2][0] / pools[-2][1]:
            total, count = pools.pop()
            pools[-1][0] += total
            pools[-1][1] += count
    values, segments = [], []
    for i, (total, count) in enumerate(pools):
        mean = total / count if decreasing else -total / count
        values += [mean] * count
        segments += [i] * count
    return values, segments


def _max_min(row, decreasing=True):
    """y_i = min over j <= i of max over k >= i of mean(row[j..k]) (non-increasing fit)."""
    x = np.asarray(row, np.float64) if decreasing else -np.asarray(row, np.float64)
    n = len(x)
    out = [min(max(x[j:k + 1].mean() for k in range(i, n)) for j in range(i + 1))
           for i in range(n)]
    return out if decreasing else [-v for v in out]


@pytest.mark.parametrize("decreasing", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_matches_python_references(decreasing, seed):
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.standard_normal((4, 25)), rng.integers(0, 3, (4, 25))]).round(3)
    y, segments = tf.nn.isotonic_regression(tf.constant(x), decreasing=decreasing)
    assert y.dtype == tf.float64 and segments.dtype == tf.int32
    for i, row in enumerate(x):
        values, segs = _pav(row, decreasing)
        np.testing.assert_allclose(y.numpy()[i], values, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(y.numpy()[i], _max_min(row, decreasing), rtol=1e-12,
                                   atol=1e-12)
        assert segments.numpy()[i].tolist() == segs
    # monotone, and the fit keeps each segment's sum
    steps = np.diff(y.numpy(), axis=1)
    assert np.all(steps <= 1e-12) if decreasing else np.all(steps >= -1e-12)
    np.testing.assert_allclose(y.numpy().sum(1), x.sum(1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_any_axis_is_the_last_one_moved(axis):
    x = np.random.default_rng(7).standard_normal((3, 4, 5))
    y, s = tf.nn.isotonic_regression(tf.constant(x), axis=axis)
    moved = np.moveaxis(x, axis, -1)
    for idx in np.ndindex(moved.shape[:-1]):
        values, segs = _pav(moved[idx])
        np.testing.assert_allclose(np.moveaxis(y.numpy(), axis, -1)[idx], values, rtol=1e-14)
        assert np.moveaxis(s.numpy(), axis, -1)[idx].tolist() == segs


@pytest.mark.parametrize("shape,axis", [((7,), -1), ((4, 6), 0), ((4, 6), 1), ((2, 3, 5), 1),
                                        ((2, 3, 5), -1)])
@pytest.mark.parametrize("decreasing", [True, False])
def test_gradient_matches_finite_differences(shape, axis, decreasing):
    """Every rank (TF's own gradient has the wrong shape for rank 1 and mixes rows for rank
    3: ndflow's is the derivative)."""
    rng = np.random.default_rng(len(shape) + axis)
    x = rng.standard_normal(shape)
    w = rng.standard_normal(shape)

    def loss(v):
        return tf.reduce_sum(tf.nn.isotonic_regression(v, decreasing=decreasing, axis=axis)[0]
                             * w)
    v = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(v)
        value = loss(v)
    got = tape.gradient(value, v).numpy()
    assert got.shape == x.shape
    eps, want = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        want[i] = (loss(tf.constant(x + step)).numpy()
                   - loss(tf.constant(x - step)).numpy()) / (2 * eps)
    np.testing.assert_allclose(got, want, atol=1e-7)


def test_result_is_tf_namedtuple_for_the_raw_op():
    out = tf.raw_ops.IsotonicRegression(input=np.array([[3.0, 1.0, 2.0]], np.float32))
    assert out._fields == ("output", "segments")
    np.testing.assert_array_equal(out.segments.numpy(), [[0, 1, 1]])


def test_unsupported_types_name_the_kernel():
    with pytest.raises(errors.NotFoundError, match="IsotonicRegression"):
        tf.nn.isotonic_regression(np.array([[1, 2]], np.uint32))
    with pytest.raises(errors.InvalidArgumentError, match="dim"):
        tf.nn.isotonic_regression(np.zeros((2, 2), np.float32), axis=5)
