"""Layout: convolutional graphs keep channels-last (NHWC) memory from op to op on the CPU —
NHWC graphs always, NCHW graphs with TF_ENABLE_NHWC=1 — with unchanged values and
gradients. Intermediates are fetched straight from a Plan (ATen tensors) to read their
memory format."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core import dtypes
from ndflow.passes.pass_config import PassConfig
from ndflow.runtime.compile import compile_plan
from ndflow.runtime.state import RuntimeContext

v1 = tf.compat.v1
CL = torch.channels_last


def _graph(fmt):
    shape = [2, 9, 9, 3] if fmt == "NHWC" else [2, 3, 9, 9]
    rng = np.random.default_rng(3)
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtypes.float32, shape, name="x")
        w1 = tf.constant(rng.normal(size=[3, 3, 3, 8]).astype(np.float32))
        w2 = tf.constant(rng.normal(size=[3, 3, 8, 4]).astype(np.float32))
        b = tf.constant(rng.normal(size=[8]).astype(np.float32))
        h = tf.nn.conv2d(x, w1, [1, 1, 1, 1], "SAME", data_format=fmt)
        h = tf.nn.relu(tf.nn.bias_add(h, b, data_format=fmt))
        ksize = [1, 2, 2, 1] if fmt == "NHWC" else [1, 1, 2, 2]
        p = tf.nn.max_pool2d(h, ksize, ksize, "VALID", data_format=fmt)
        y = tf.nn.conv2d(p, w2, [1, 1, 1, 1], "SAME", data_format=fmt)
        gx, gw1 = v1.gradients(tf.reduce_sum(y * y), [x, w1])
    return g, x, [h, p, y, gx, gw1], rng.normal(size=shape).astype(np.float32)


def _run(fmt):
    g, x, fetches, xv = _graph(fmt)
    plan = compile_plan(g, [x], fetches, [], PassConfig(
        disabled_passes=frozenset({"remapper"})), RuntimeContext())
    return plan.run([torch.from_numpy(xv)])


def test_nhwc_graph_stays_nhwc_without_copies():
    h, p, y, gx, _ = _run("NHWC")
    for t in (h, p, y, gx):  # plain NHWC tensors: viewed as NCHW they are channels_last
        assert t.is_contiguous() and t.permute(0, 3, 1, 2).is_contiguous(memory_format=CL)


def test_tf_enable_nhwc_keeps_nchw_graphs_channels_last(monkeypatch):
    monkeypatch.delenv("TF_ENABLE_NHWC", raising=False)
    plain = _run("NCHW")
    assert all(t.is_contiguous() for t in plain[:3])
    monkeypatch.setenv("TF_ENABLE_NHWC", "1")
    nhwc = _run("NCHW")
    h, p, y = nhwc[:3]
    for t in (h, p, y):  # conv, bias, relu, pool, conv: channels-last all the way
        assert t.is_contiguous(memory_format=CL) and not t.is_contiguous()
    for a, b in zip(nhwc, plain):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("value", ["0", "false"])
def test_tf_enable_nhwc_off_leaves_nchw_contiguous(monkeypatch, value):
    monkeypatch.setenv("TF_ENABLE_NHWC", value)
    assert all(t.is_contiguous() for t in _run("NCHW")[:3])
