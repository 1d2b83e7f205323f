"""L2Loss on float32 CPU tensors by kernels/sum_squares_numba.py's blocks, and the sum of
squares a large weight's update records for it (kernels/gemm_epilogue.py).

Checked: the blocked sum against NumPy in float64 (shapes with tails, empty, one row longer
than a block), NaN and inf reaching the sum; the same bits on every call; L2Loss's value and
gradient (tensors of 64K elements and more; smaller ones keep ATen's dot); after a training
step whose `_MatMulApplyMomentum` (plain step) or in-place speculative update (loss-scale
step) wrote an L2-regularized weight, the next step's L2Loss takes the recorded sum without
reading the weight, and that sum is bit for bit the one computed afresh; any later write of
the weight (an assignment, `assign_add`) makes L2Loss read it again.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import gemm_epilogue, sum_squares_numba, value_bounds

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


class _Reads:
    """Counts the sums L2Loss computes by reading its input (not recorded ones)."""

    def __init__(self, monkeypatch):
        self.count = 0
        real = sum_squares_numba.sum_of_squares

        def counted(t):
            self.count += 1
            return real(t)
        monkeypatch.setattr(sum_squares_numba, "sum_of_squares", counted)


def _training(loss_scale: bool):
    """A tf.function step of a 320x256 L2-regularized layer fed by another (so the layer's
    momentum update is the remapper's product update) and the loss it returns."""
    rng = np.random.default_rng(3)
    x = tf.constant(rng.normal(size=(16, 64)).astype(np.float32))
    v = tf.Variable(rng.normal(size=(64, 320)).astype(np.float32) * 0.1)
    w = tf.Variable(rng.normal(size=(320, 256)).astype(np.float32) * 0.05)
    opt = tf.keras.optimizers.SGD(0.01, momentum=0.9)
    if loss_scale:
        opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(x, v))
            loss = tf.reduce_sum(tf.square(tf.matmul(h, w))) * 1e-3 + 1e-2 * tf.nn.l2_loss(w)
            scaled = opt.get_scaled_loss(loss) if loss_scale else loss
        grads = tape.gradient(scaled, [v, w])
        if loss_scale:
            grads = opt.get_unscaled_gradients(grads)
        opt.apply_gradients(zip(grads, [v, w]))
        return loss
    return step, w


@pytest.mark.parametrize("loss_scale", [False, True])
def test_l2_loss_takes_the_sum_the_update_recorded(loss_scale, monkeypatch):
    if not gemm_epilogue.available():
        pytest.skip("MKL's sgemm is missing")
    step, w = _training(loss_scale)
    step()
    step()
    reads = _Reads(monkeypatch)
    value = w.handle._value.value
    recorded = value_bounds.recorded_squares(value)
    assert recorded is not None
    fresh = torch.from_numpy(np.array(sum_squares_numba.sum_of_squares(value),
                                      dtype=np.float32))
    assert recorded == float(fresh)                    # bit for bit the blocked sum
    reads.count = 0
    step()
    assert reads.count == 0                            # the weight was not read again
    # any other write: the next L2Loss reads the weight
    w.assign_add(tf.ones_like(w))
    assert value_bounds.recorded_squares(w.handle._value.value) is None
    assert float(tf.nn.l2_loss(w)) == pytest.approx(
        float(np.sum(w.numpy().astype(np.float64) ** 2) / 2), rel=1e-5)
    assert reads.count == 1
    w.assign(w.numpy() * 0.5)
    reads.count = 0
    tf.nn.l2_loss(w)
    assert reads.count == 1
