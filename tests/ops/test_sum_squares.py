"""L2Loss on large float32 CPU tensors by kernels/sum_squares_numba.py's blocks.

Checked: the blocked sum against NumPy in float64 (shapes with tails, empty, one row longer
than a block), NaN and inf reaching the sum; the same bits on every call; L2Loss's value and
gradient (tensors of 64K elements and more; smaller ones keep ATen's dot).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import sum_squares_numba

pytestmark = pytest.mark.skipif(sum_squares_numba._callback() is None,
                                reason="numba or ATen's OpenMP launcher is missing")


@pytest.mark.parametrize("shape", [(3136, 512), (65, 5, 32, 64), (70001,), (1 << 16,),
                                   (30000, 3), (2, 100003), (0,)])
def test_the_blocked_sum_matches_numpy(shape):
    rng = np.random.default_rng(1)
    x = rng.normal(size=shape).astype(np.float32)
    got = sum_squares_numba.sum_of_squares(torch.from_numpy(x))
    want = float(np.sum(x.astype(np.float64) ** 2))
    assert got == pytest.approx(want, rel=1e-5, abs=0.0)
    assert got == sum_squares_numba.sum_of_squares(torch.from_numpy(x.copy()))   # same bits


def test_non_finite_values_reach_the_sum():
    x = torch.ones(1000)
    x[700] = float("nan")
    assert math.isnan(sum_squares_numba.sum_of_squares(x))
    x[700] = float("inf")
    assert sum_squares_numba.sum_of_squares(x) == math.inf


def test_l2_loss_value_and_gradient():
    rng = np.random.default_rng(2)
    w0 = rng.normal(size=(300, 250)).astype(np.float32)   # the blocked sum's size
    w = tf.Variable(w0)
    with tf.GradientTape() as tape:
        loss = tf.nn.l2_loss(w)
    np.testing.assert_allclose(loss.numpy(), np.sum(w0.astype(np.float64) ** 2) / 2, rtol=1e-6)
    np.testing.assert_array_equal(tape.gradient(loss, w).numpy(), w0)
