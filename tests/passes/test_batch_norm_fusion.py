"""Remapper: FusedBatchNormV3 [+ side input] + Relu -> _FusedBatchNormEx, before/after with
values and gradients, and the cases grappler leaves alone."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import dtypes
from ndflow.passes.batch_norm_fusion import fuse_batch_norm_activation
from ndflow.passes.pass_config import PassConfig
from ndflow.passes.pass_context import PassContext
from ndflow.passes.pipeline import run_pipeline
from tests.passes.graph_helpers import op_counts, run_graph, snapshot

v1 = tf.compat.v1
RNG = np.random.default_rng(1)


def _graph(fmt="NHWC", training=True, side=False, grads=True, dtype=dtypes.float32):
    shape = [2, 5, 4, 3] if fmt == "NHWC" else [2, 3, 5, 4]
    np_dt = dtype.np_dtype
    feeds = {"x:0": RNG.normal(size=shape).astype(np_dt),
             "s:0": RNG.normal(size=shape).astype(np_dt)}
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtype, shape, name="x")
        s = v1.placeholder(dtype, shape, name="s")
        scale = tf.constant(RNG.uniform(0.5, 1.5, size=[3]).astype(np_dt), name="scale")
        offset = tf.constant(RNG.normal(size=[3]).astype(np_dt), name="offset")
        kw = {} if training else {
            "mean": tf.constant(RNG.normal(size=[3]).astype(np_dt)),
            "variance": tf.constant(RNG.uniform(0.5, 2, size=[3]).astype(np_dt))}
        y, mean, var = v1.nn.fused_batch_norm(x, scale, offset, data_format=fmt,
                                              is_training=training, **kw)
        if side:
            y = y + s
        y = tf.nn.relu(y)
        out = tf.identity(y, name="y")
        fetches = [out.name, tf.identity(mean, name="m").name, tf.identity(var, name="v").name]
        if grads:
            gs = v1.gradients(tf.reduce_sum(out * out), [x, scale, offset] + ([s] if side else []))
            fetches += [tf.identity(t, name=f"g{i}").name for i, t in enumerate(gs)]
    return g, fetches, feeds


def _run(g, fetches, feeds, remap):
    cfg = PassConfig() if remap else PassConfig(disabled_passes=frozenset({"remapper"}))
    g2, names = run_pipeline(g, PassContext(fetches=fetches, feeds=list(feeds), config=cfg))
    return g2, run_graph(g2, [names[f] for f in fetches], feeds)


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("side", [False, True])
def test_batch_norm_relu_fuses_with_equal_values_and_gradients(fmt, training, side):
    g, fetches, feeds = _graph(fmt, training, side)
    before = snapshot(g)
    g2, fused = _run(g, fetches, feeds, True)
    _, plain = _run(g, fetches, feeds, False)
    assert snapshot(g) == before
    for a, b in zip(fused, plain):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    (op,) = [o for o in g2.get_operations() if o.type == "_FusedBatchNormEx"]
    assert op.attrs["activation_mode"] == "Relu" and op.attrs["data_format"] == fmt
    assert op.attrs["num_side_inputs"] == (1 if side else 0)
    assert op.attrs["is_training"] is training
    counts = op_counts(g2)
    assert counts.get("Relu", 0) == 0 and counts.get("FusedBatchNormV3", 0) == 0
    if training:  # the gradient reads the fused op's reserve spaces and output
        (grad,) = [o for o in g2.get_operations() if o.type == "FusedBatchNormGradV3"]
        assert grad.inputs[3].op is op and grad.inputs[0].op.inputs[1].op is op


def test_forward_only_values_against_numpy():
    g, fetches, feeds = _graph("NHWC", training=True, side=True, grads=False)
    g2, fused = _run(g, fetches, feeds, True)
    assert op_counts(g2)["_FusedBatchNormEx"] == 1
    x = feeds["x:0"].astype(np.float64)
    mean, var = x.mean((0, 1, 2)), x.var((0, 1, 2))
    scale = g.get_operation_by_name("scale").attrs["value"]
    offset = g.get_operation_by_name("offset").attrs["value"]
    ref = np.maximum((x - mean) / np.sqrt(var + 1e-3) * scale + offset + feeds["s:0"], 0)
    np.testing.assert_allclose(fused[0], ref, rtol=1e-4, atol=1e-4)


def test_fetched_relu_keeps_its_name_as_an_identity():
    g, _, feeds = _graph(grads=False)
    relu = [o for o in g.get_operations() if o.type == "Relu"][0]
    fetches = [relu.outputs[0].name]
    g2, fused = _run(g, fetches, feeds, True)
    _, plain = _run(g, fetches, feeds, False)
    np.testing.assert_allclose(fused[0], plain[0], rtol=1e-5)
    kept = g2.get_operation_by_name(relu.name)
    assert kept.type == "Identity" and kept.inputs[0].op.type == "_FusedBatchNormEx"


def _bn_relu(extra):
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtypes.float32, [2, 4, 4, 3], name="x")
        y, _, _ = v1.nn.fused_batch_norm(x, tf.ones([3]), tf.zeros([3]))
        fetches = extra(g, x, y)
    return g, fetches


@pytest.mark.parametrize("case", ["bn_output_read_twice", "bn_output_fetched", "broadcast_add",
                                  "side_created_later", "elu"])
def test_not_fused(case):
    def extra(g, x, y):
        if case == "bn_output_read_twice":
            return [tf.nn.relu(y).name, tf.identity(y, name="other").name]
        if case == "bn_output_fetched":
            return [tf.nn.relu(y).name, y.name]
        if case == "broadcast_add":
            return [tf.nn.relu(y + tf.ones([3])).name]
        if case == "side_created_later":
            later = tf.nn.relu(x * 2.0)
            return [tf.nn.relu(y + later).name]
        return [tf.nn.elu(y).name]  # grappler fuses Relu only

    g, fetches = _bn_relu(extra)
    ctx = PassContext(fetches=fetches, feeds=["x:0"])
    assert fuse_batch_norm_activation(g, ctx) is g


def test_float64_training_gradients_match():
    g, fetches, feeds = _graph("NHWC", True, True, dtype=dtypes.float64)
    g2, fused = _run(g, fetches, feeds, True)
    _, plain = _run(g, fetches, feeds, False)
    assert op_counts(g2)["_FusedBatchNormEx"] == 1
    for a, b in zip(fused, plain):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
