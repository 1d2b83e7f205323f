"""MaxPool3DGrad on NDHWC float32 (kernels/max_pool3d_grad_numba.py): TensorFlow's rule (the
gradient to every position within 1e-5 of its window's max, summed over the windows) against
TensorFlow 2.21's own values (tests/fixtures/max_pool3d_grad/generate.py) and a NumPy float64
reference."""

from __future__ import annotations

import os

import numpy as np
import pytest

import ndflow as tf
from ndflow.kernels import max_pool3d_grad_numba
from ndflow.ops import nn_pool3d

FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "max_pool3d_grad",
                       "values.npz")
CASES = {   # name -> (window, strides, padding), as generate.py has them
    "valid": (2, 2, "VALID"), "remainder": (2, 2, "VALID"), "same_padded": (3, 3, "SAME"),
    "ties": (2, 2, "VALID"), "overlap": (3, 2, "VALID"), "overlap_same": (3, 1, "SAME"),
    "overlap_ties": (3, 2, "SAME")}

# where numba or ATen's OpenMP launcher is missing, ATen's argmax path runs (one position
# per window): TensorFlow's tie rule is this kernel's
pytestmark = pytest.mark.skipif(max_pool3d_grad_numba._callbacks() is None,
                                reason="numba or ATen's OpenMP launcher not found")


def _grad(x, g, k, s, padding):
    x = tf.constant(x)
    y = tf.nn.max_pool3d(x, k, s, padding)
    return nn_pool3d.max_pool3d_grad(x, y, tf.constant(g), [1, k, k, k, 1], [1, s, s, s, 1],
                                     padding).numpy()


def _reference(x, g, k, s, padding):
    """TensorFlow's rule in float64: per window (clipped to the input), the positions whose
    float32 distance to the window's max is under 1e-5 add the window's gradient."""
    n, d, h, w, c = x.shape
    outs = g.shape[1:4]
    pads = [0, 0, 0]
    if padding == "SAME":
        pads = [max((o - 1) * s + k - size, 0) // 2 for o, size in zip(outs, (d, h, w))]
    dx = np.zeros(x.shape, np.float64)
    for o in np.ndindex(*outs):
        lo = [max(i * s - p, 0) for i, p in zip(o, pads)]
        hi = [min(i * s - p + k, size) for i, p, size in zip(o, pads, (d, h, w))]
        win = (slice(None),) + tuple(slice(a, b) for a, b in zip(lo, hi))
        xs = x[win]
        top = np.nanmax(np.where(np.isnan(xs), -np.inf, xs), axis=(1, 2, 3), keepdims=True)
        with np.errstate(invalid="ignore"):
            near = np.abs(xs - top.astype(np.float32)) < np.float32(1e-5)
        dx[win] += np.where(near, g[(slice(None),) + o][:, None, None, None, :], 0.0)
    return dx


@pytest.mark.parametrize("name", list(CASES))
def test_tensorflow_values(name):
    data = np.load(FIXTURE)
    k, s, padding = CASES[name]
    x, g, want = data[f"{name}_x"], data[f"{name}_g"], data[f"{name}_dx"]
    got = _grad(x, g, k, s, padding)
    if k > s:   # overlapping windows: sums of several windows, added in another order
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
        np.testing.assert_array_equal(got == 0, want == 0)   # the same positions take none
        return
    np.testing.assert_array_equal(got, want)
    # a -0 gradient is summed into zeros: +0, as TensorFlow's is
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("name", list(CASES))
def test_numpy_reference(name):
    data = np.load(FIXTURE)
    k, s, padding = CASES[name]
    x, g = data[f"{name}_x"], data[f"{name}_g"]
    # float64 sums of float32 values: the overlapping windows' sums may round differently
    np.testing.assert_allclose(_grad(x, g, k, s, padding), _reference(x, g, k, s, padding),
                               rtol=1e-6, atol=1e-6)


def test_ties_all_take_the_gradient():
    x = np.zeros((1, 2, 2, 2, 1), np.float32)
    got = _grad(x, np.full((1, 1, 1, 1, 1), 3.0, np.float32), 2, 2, "VALID")
    np.testing.assert_array_equal(got, np.full(x.shape, 3.0))


def test_the_fast_path_runs_where_it_applies(monkeypatch):
    calls = []
    real = max_pool3d_grad_numba.gradient
    monkeypatch.setattr(max_pool3d_grad_numba, "gradient",
                        lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 4, 4, 16)).astype(np.float32)
    g = rng.standard_normal((2, 2, 2, 2, 16)).astype(np.float32)
    _grad(x, g, 2, 2, "VALID")
    assert calls
    # NCDHW keeps ATen's argmax path: one position per window
    calls.clear()
    xt = tf.constant(np.zeros((1, 1, 2, 2, 2), np.float32))
    y = nn_pool3d.max_pool3d(xt, [1, 1, 2, 2, 2], [1, 1, 2, 2, 2], "VALID", "NCDHW")
    dx = nn_pool3d.max_pool3d_grad(xt, y, tf.ones_like(y), [1, 1, 2, 2, 2], [1, 1, 2, 2, 2],
                                   "VALID", "NCDHW").numpy()
    assert not calls
    assert dx.sum() == 1.0


def test_gradient_through_a_training_step():
    """tf.nn.max_pool3d's registered gradient takes the path: a Conv3D + MaxPooling3D loss's
    input gradient against finite differences (no ties in random data)."""
    rng = np.random.default_rng(2)
    x = tf.constant(rng.standard_normal((1, 4, 4, 4, 16)).astype(np.float32))
    w = tf.constant(rng.standard_normal((1, 1, 1, 16, 16)).astype(np.float32) * 0.3)

    def loss(v):
        h = tf.nn.max_pool3d(tf.nn.conv3d(v, w, [1] * 5, "SAME"), 2, 2, "VALID")
        return tf.reduce_sum(h * h)

    with tf.GradientTape() as tape:
        tape.watch(x)
        value = loss(x)
    got = tape.gradient(value, x).numpy()
    xv = x.numpy().astype(np.float64)
    eps = 1e-3
    for idx in [(0, 0, 0, 0, 0), (0, 1, 2, 3, 5), (0, 3, 3, 3, 15)]:
        up, down = xv.copy(), xv.copy()
        up[idx] += eps
        down[idx] -= eps
        fd = (loss(tf.constant(up.astype(np.float32))).numpy()
              - loss(tf.constant(down.astype(np.float32))).numpy()) / (2 * eps)
        assert got[idx] == pytest.approx(fd, rel=2e-2, abs=2e-2)
