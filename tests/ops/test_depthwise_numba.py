"""kernels/depthwise_numba.py: the float32 NHWC depthwise filter gradient (channel multiplier
1) in channel vectors, against the float64 gradient of TF's depthwise convolution (ATen's
grouped convolution, finite-difference-checked in the op tables): channel counts with and
without a tail of c % 16, strides, dilations, SAME and VALID windows, images smaller than
the window."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import depthwise_numba

pytestmark = pytest.mark.skipif(
    not depthwise_numba.applies(torch.zeros(1, 1, 1, 1), torch.zeros(1, 1, 1, 1), 1),
    reason="needs numba and ATen's OpenMP launcher")


def _pads(size, k, s, d, padding):
    """TF's (before, after) padding of one spatial dimension."""
    if padding == "VALID":
        return 0, 0
    out = -(-size // s)
    total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
    return total // 2, total - total // 2


def _reference(x, g, k1, k2, s, d, padding):
    xv = tf.constant(x.astype(np.float64))
    wv = tf.Variable(np.zeros((k1, k2, x.shape[3], 1)))
    with tf.GradientTape() as tape:
        y = tf.nn.depthwise_conv2d(xv, wv, [1, s, s, 1], padding, dilations=[d, d])
        loss = tf.reduce_sum(y * g.astype(np.float64))
    return tape.gradient(loss, wv).numpy()


@pytest.mark.parametrize("trial", range(16))
def test_the_vector_kernel_matches_the_float64_gradient(trial):
    rng = np.random.default_rng(trial)
    n, h, w = int(rng.integers(1, 4)), int(rng.integers(1, 12)), int(rng.integers(1, 12))
    c = [1, 5, 16, 20, 33, 64][trial % 6]
    k1, k2 = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    s = 1 + trial % 2
    d = 1 + (trial // 2) % 2 if s == 1 else 1
    padding = "SAME" if trial % 3 else "VALID"
    if padding == "VALID" and (h < (k1 - 1) * d + 1 or w < (k2 - 1) * d + 1):
        padding = "SAME"
    x = rng.standard_normal((n, h, w, c)).astype(np.float32)
    y = tf.nn.depthwise_conv2d(x, np.ones((k1, k2, c, 1), np.float32), [1, s, s, 1], padding,
                               dilations=[d, d])
    g = rng.standard_normal(y.shape).astype(np.float32)
    (pt, pb), (pl, pr) = _pads(h, k1, s, d, padding), _pads(w, k2, s, d, padding)
    got = depthwise_numba.backprop_filter(torch.from_numpy(x), torch.from_numpy(g), k1, k2,
                                          (s, s), (d, d), (pt, pb, pl, pr)).numpy()
    want = _reference(x, g, k1, k2, s, d, padding)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(want).max()))


def test_other_configurations_keep_aten():
    x = torch.zeros(1, 4, 4, 3)
    assert not depthwise_numba.applies(x, torch.zeros(1, 4, 4, 6), 2)          # multiplier 2
    assert not depthwise_numba.applies(x.double(), torch.zeros(1, 4, 4, 3).double(), 1)
