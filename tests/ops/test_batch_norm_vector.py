"""The vector kernels of training-mode batch normalization (kernels/batch_norm_numba.py) behind
FusedBatchNormV3 and _FusedBatchNormEx on NHWC float32: values, statistics and gradients
against float64 NumPy, a large mean, the running-average factor, and thread-count
independence."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import batch_norm_numba
from ndflow.passes.pass_config import PassConfig
from ndflow.passes.pass_context import PassContext
from ndflow.passes.pipeline import run_pipeline
from tests.passes.graph_helpers import op_counts, run_graph

v1 = tf.compat.v1
SHAPE = [4, 16, 16, 32]   # 32768 elements, 32 channels: the vector path's
EPS = 1e-3

pytestmark = pytest.mark.skipif(
    not batch_norm_numba.applies(torch.zeros(SHAPE)), reason="numba or ATen's OpenMP missing")


def _reference(x, scale, offset, side, relu, dy=None):
    """float64 batch norm over all but the last axis (+ side, relu), its batch mean, unbiased
    variance and, for dy, the gradients of x, scale and offset."""
    axes = tuple(range(x.ndim - 1))
    n = x.size // x.shape[-1]
    mean, var = x.mean(axes), x.var(axes)
    xhat = (x - mean) / np.sqrt(var + EPS)
    y = xhat * scale + offset + (side if side is not None else 0.0)
    if relu:
        y = np.maximum(y, 0.0)
    out = [y, mean, var * n / (n - 1)]
    if dy is not None:
        g = dy * (y > 0) if relu else dy
        doffset, dscale = g.sum(axes), (g * xhat).sum(axes)
        dx = scale / np.sqrt(var + EPS) * (g - doffset / n - xhat * dscale / n)
        out += [dx, dscale, doffset]
    return out


def _graph(x_np, side: bool, relu: bool, factor: float = 1.0):
    c = x_np.shape[-1]
    rng = np.random.default_rng(3)
    feeds = {"x:0": x_np, "s:0": rng.normal(size=x_np.shape).astype(np.float32),
             "dy:0": rng.normal(size=x_np.shape).astype(np.float32)}
    consts = {"scale": rng.uniform(0.5, 1.5, c), "offset": rng.normal(size=c),
              "mean": rng.normal(size=c), "var": rng.uniform(0.5, 2.0, c)}
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, x_np.shape, name="x")
        s = v1.placeholder(tf.float32, x_np.shape, name="s")
        dy = v1.placeholder(tf.float32, x_np.shape, name="dy")
        scale, offset, mean, var = (tf.constant(consts[k].astype(np.float32))
                                    for k in ("scale", "offset", "mean", "var"))
        kw = {} if factor == 1.0 else {"mean": mean, "variance": var,
                                       "exponential_avg_factor": factor}
        y, m, v = v1.nn.fused_batch_norm(x, scale, offset, epsilon=EPS, is_training=True, **kw)
        if side:
            y = y + s
        if relu:
            y = tf.nn.relu(y)
        grads = v1.gradients(y, [x, scale, offset], grad_ys=dy)
        fetches = [t.name for t in [tf.identity(y), tf.identity(m), tf.identity(v), *grads]]
    g2, names = run_pipeline(g, PassContext(fetches=fetches, feeds=list(feeds),
                                            config=PassConfig()))
    return g2, [names[f] for f in fetches], feeds, consts


@pytest.mark.parametrize("side,relu", [(False, False), (False, True), (True, True)])
def test_values_statistics_and_gradients_against_numpy(side, relu):
    x = np.random.default_rng(0).normal(0.5, 2.0, SHAPE).astype(np.float32)
    g2, fetches, feeds, k = _graph(x, side, relu)
    if relu:
        assert op_counts(g2)["_FusedBatchNormEx"] == 1
    got = run_graph(g2, fetches, feeds)
    want = _reference(x.astype(np.float64), k["scale"].astype(np.float32).astype(np.float64),
                      k["offset"].astype(np.float32).astype(np.float64),
                      feeds["s:0"].astype(np.float64) if side else None, relu,
                      feeds["dy:0"].astype(np.float64))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-4 * max(1.0, np.abs(b).max()))


def test_large_mean_keeps_the_variance():
    # x = 1000 + unit noise: sums of squares without the shift lose the variance in float32
    rng = np.random.default_rng(1)
    x = (1000.0 + rng.normal(size=SHAPE)).astype(np.float32)
    g2, fetches, feeds, k = _graph(x, False, True)
    y, mean, var = run_graph(g2, fetches[:3], feeds)
    ref = _reference(x.astype(np.float64), k["scale"].astype(np.float32),
                     k["offset"].astype(np.float32), None, True)
    np.testing.assert_allclose(mean, ref[1], rtol=1e-6)
    np.testing.assert_allclose(var, ref[2], rtol=1e-4)
    np.testing.assert_allclose(y, ref[0], atol=2e-3)


def test_running_average_factor():
    x = np.random.default_rng(2).normal(size=SHAPE).astype(np.float32)
    g2, fetches, feeds, k = _graph(x, False, False, factor=0.25)
    _, mean, var = run_graph(g2, fetches[:3], feeds)
    _, bm, bv = _reference(x.astype(np.float64), 1.0, 0.0, None, False)
    np.testing.assert_allclose(mean, 0.75 * k["mean"].astype(np.float32) + 0.25 * bm, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(var, 0.75 * k["var"].astype(np.float32) + 0.25 * bv, rtol=1e-5)


def test_results_do_not_depend_on_the_thread_count():
    x = torch.from_numpy(np.random.default_rng(4).normal(size=[8, 32, 32, 48]).astype(np.float32))
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = batch_norm_numba.statistics(x)
        torch.set_num_threads(max(2, threads))
        two = batch_norm_numba.statistics(x)
    finally:
        torch.set_num_threads(threads)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)


def test_small_or_odd_channel_inputs_take_aten():
    assert not batch_norm_numba.applies(torch.zeros([2, 4, 4, 32]))          # too small
    assert not batch_norm_numba.applies(torch.zeros([64, 16, 16, 24]))       # 24 channels
    assert not batch_norm_numba.applies(torch.zeros([64, 16, 16, 32]).double())
    assert not batch_norm_numba.applies(torch.zeros([64, 16, 32, 16]).transpose(1, 2))
