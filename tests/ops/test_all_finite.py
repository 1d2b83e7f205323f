"""The ndflow-internal _AllFinite op (the loss-scale optimizers' gradient check): equal to
NumPy's isfinite().all() for every float dtype, with inf/-inf/NaN anywhere, finite values whose
sum overflows, empty tensors; and in graphs."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.ops import comparison

RNG = np.random.default_rng(17)


@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16, tf.float32, tf.float64])
def test_matches_numpy(dtype):
    big = {tf.float16: 6e4, tf.bfloat16: 3e38, tf.float32: 3e38, tf.float64: 1.7e308}[dtype]
    cases = [RNG.normal(size=(4, 5, 6)), np.full(64, big), np.zeros((0, 3)), np.array(2.5)]
    for bad in (np.inf, -np.inf, np.nan):
        x = RNG.normal(size=(3, 50))
        x[RNG.integers(3), RNG.integers(50)] = bad
        cases.append(x)
    for x in cases:
        t = tf.cast(tf.constant(x, tf.float64), dtype)
        want = bool(np.isfinite(t.numpy().astype(np.float64)).all())
        got = comparison.all_finite(t)
        assert got.dtype == tf.bool and got.shape.as_list() == [] and bool(got) == want


def test_in_a_graph():
    f = tf.function(lambda x: comparison.all_finite(x))
    assert bool(f(tf.constant([1.0, 2.0])))
    assert not bool(f(tf.constant([1.0, np.nan])))
