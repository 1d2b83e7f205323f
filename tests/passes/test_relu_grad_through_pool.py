"""ReluGrad hoisted through MaxPoolGrad (arithmetic optimizer): `ReluGrad(MaxPoolGrad(F, P,
g), F)` with `P = MaxPool(F)` becomes `MaxPoolGrad(F, P, ReluGrad(g, P))` — gradients equal
with and without the rewrite (ties, NaNs, overlapping and padded windows), equal to finite
differences, and the rewrite stays off where it would not be exact or not pay."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import dtypes
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import lookup
from ndflow.passes.pass_config import PassConfig
from ndflow.passes.pass_context import PassContext
from ndflow.passes.pipeline import run_pipeline
from tests.passes.graph_helpers import run_graph

v1 = tf.compat.v1
RNG = np.random.default_rng(7)
SHAPE = [2, 7, 7, 3]
OFF = PassConfig(disabled_passes=frozenset({"arithmetic_optimizer"}))
WINDOWS = [([1, 2, 2, 1], [1, 2, 2, 1], "VALID"), ([1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
           ([1, 2, 2, 1], [1, 1, 1, 1], "SAME")]


def _graph(ksize, strides, padding, fetch_pool_grad=False):
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtypes.float64, SHAPE, name="x")
        w = tf.constant(RNG.normal(size=[3]), dtype=tf.float64)
        features = tf.nn.relu(x * 1.5 - 0.2)
        pooled = tf.nn.max_pool2d(features, ksize, strides, padding)
        loss = tf.reduce_sum(pooled * w + 0.5 * pooled * pooled)
        (gx,) = v1.gradients(loss, [x])
        tf.identity(gx, name="gx")
        tf.identity(loss, name="loss")
        if fetch_pool_grad:
            pool_grad = [op for op in g.get_operations() if op.type == "MaxPoolGrad"][0]
            tf.identity(pool_grad.outputs[0], name="pool_grad")
    return g


def _run(g, xv, config, fetches=("gx:0",)):
    g2, names = run_pipeline(g, PassContext(fetches=list(fetches), feeds=["x:0"],
                                            config=config))
    return g2, run_graph(g2, [names[f] for f in fetches], {"x:0": xv})


def _relu_grad_shapes(g2):
    return [op.outputs[0].shape.as_list() for op in g2.get_operations()
            if op.type == "ReluGrad"]


@pytest.mark.parametrize("window", WINDOWS, ids=["valid_2x2", "same_3x3_s2", "same_2x2_s1"])
def test_gradient_equals_the_unrewritten_one_and_finite_differences(window):
    g = _graph(*window)
    xv = RNG.normal(size=SHAPE)
    g2, (got,) = _run(g, xv, PassConfig())
    _, (ref,) = _run(g, xv, OFF)
    # the only ReluGrad left is on the pooled size
    pooled_shape = [op for op in g2.get_operations()
                    if op.type in ("MaxPool", "_MaxPoolWithIndices")][0].outputs[0].shape
    assert _relu_grad_shapes(g2) == [pooled_shape.as_list()]
    np.testing.assert_array_equal(got, ref)
    # central differences of the loss in float64 at a few points away from kinks
    loss_of = lambda v: _run(g, v, OFF, ("loss:0",))[1][0]  # noqa: E731
    for idx in map(tuple, RNG.integers(0, [2, 7, 7, 3], size=(6, 4))):
        e = np.zeros(SHAPE)
        e[idx] = 1e-6
        fd = (loss_of(xv + e) - loss_of(xv - e)) / 2e-6
        assert abs(fd - got[idx]) < 1e-5 * max(1.0, abs(fd))


@pytest.mark.parametrize("window", WINDOWS, ids=["valid_2x2", "same_3x3_s2", "same_2x2_s1"])
def test_ties_zeros_and_nans_give_the_same_gradient(window):
    g = _graph(*window)
    xv = RNG.integers(-2, 3, size=SHAPE).astype(np.float64) / 2  # many ties, many relu zeros
    xv[0, 1, 1, 0] = xv[1, 4, 2, 2] = np.nan
    (got,) = _run(g, xv, PassConfig())[1]
    (ref,) = _run(g, xv, OFF)[1]
    np.testing.assert_array_equal(got, ref)   # NaNs at the same places


def test_kept_when_the_pool_gradient_is_fetched():
    g = _graph(*WINDOWS[0], fetch_pool_grad=True)
    g2, (got, pg) = _run(g, RNG.normal(size=SHAPE), PassConfig(), ("gx:0", "pool_grad:0"))
    assert SHAPE in _relu_grad_shapes(g2)


def test_kept_when_relu_grad_masks_with_another_tensor():
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtypes.float64, SHAPE, name="x")
        pooled = tf.nn.max_pool2d(x, 2, 2, "VALID")
        (gp,) = v1.gradients(tf.reduce_sum(pooled * pooled), [x])
        # a ReluGrad of the pool gradient whose features are not the pool's input
        relu_grad = apply_op(lookup("ReluGrad"), [gp, x + 1.0], {"T": dtypes.float64})
        tf.identity(relu_grad.outputs[0], name="gx")
    g2, _ = _run(g, RNG.normal(size=SHAPE), PassConfig())
    assert _relu_grad_shapes(g2) == [SHAPE]
