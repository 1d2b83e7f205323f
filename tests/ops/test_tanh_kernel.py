"""Tanh's float32 CPU kernel (kernels/tanh_numba.py, Eigen's rational function as TF
computes it): values within a few ulp of the float64 tanh over the whole range, TF's edge
values (NaN, +-inf, +-0, tiny and huge inputs), the small-tensor and non-contiguous paths,
in place inside a graph, and the gradient."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.kernels import tanh_numba


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    spacing = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / spacing


@pytest.mark.parametrize("n", [7, tanh_numba.MIN_ELEMENTS - 1, tanh_numba.MIN_ELEMENTS,
                               100_003])
def test_values_within_a_few_ulp(n):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32) * 5
    got = tf.tanh(tf.constant(x)).numpy()
    assert _ulps(got, np.tanh(x.astype(np.float64))).max() <= 8


def test_edge_values():
    edges = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -3e-4, 5e-4, 7.9, 8.0, 30.0,
                      -1e30, np.finfo(np.float32).max], np.float32)
    x = np.tile(edges, tanh_numba.MIN_ELEMENTS // len(edges) + 1)
    got = tf.tanh(tf.constant(x)).numpy()[:len(edges)]
    want = np.tanh(edges.astype(np.float64)).astype(np.float32)
    assert np.isnan(got[0])
    np.testing.assert_array_equal(got[1:6], want[1:6])
    assert np.signbit(got[4]) and not np.signbit(got[3])
    np.testing.assert_array_equal(got[[5, 6]], edges[[5, 6]])   # x itself near 0
    np.testing.assert_allclose(got[7:], want[7:], rtol=1e-6)
    assert np.all(np.abs(got[8:]) <= 1.0)


def test_non_contiguous_and_graph_in_place():
    x = np.random.default_rng(1).standard_normal((256, 64)).astype(np.float32)
    got = tf.tanh(tf.transpose(tf.constant(x))).numpy()
    np.testing.assert_allclose(got, np.tanh(x.T), rtol=2e-6, atol=1e-7)

    @tf.function
    def f(v):
        return tf.tanh(v * 2.0) + 1.0   # the product dies at Tanh: Tanh may run in place
    np.testing.assert_allclose(f(tf.constant(x)).numpy(), np.tanh(2 * x) + 1, rtol=2e-6,
                               atol=1e-6)


def test_gradient():
    x = tf.constant(np.linspace(-4, 4, 5000, dtype=np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.tanh(x)
    g = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(g, 1 - np.tanh(x.numpy().astype(np.float64)) ** 2, atol=2e-6)
