"""Remapper: conv (few input channels) + bias + relu + 2x2/2 max pool, with its ReluGrad,
MaxPoolGrad, Conv2DBackpropFilter and BiasAddGrad -> `_Conv2DBiasReluMaxPool(Grad)`
(passes/conv_pool_fusion.py): values and gradients with the fusion on and off, the MNIST
model's training steps, and the graphs it must leave alone."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import ndflow as tf
from ndflow.kernels import conv_pool_numba
from ndflow.models.image.mnist.model import model, regularized_loss
from ndflow.passes import conv_pool_fusion
from ndflow.passes.pass_config import PassConfig
from ndflow.passes.pass_context import PassContext
from ndflow.passes.pipeline import run_pipeline
from tests.passes.graph_helpers import op_counts, run_graph, snapshot
from tests.passes.remapping_toggle import PassOff

v1 = tf.compat.v1
FUSED = ("_Conv2DBiasReluMaxPool", "_Conv2DBiasReluMaxPoolGrad")


def _block(shape=(2, 9, 7, 1), cout=16, k=3, padding="SAME", pool="SAME", dtype=tf.float32,
           fmt="NHWC", grads=True, pool_k=2, pool_s=2, stride=1, input_grad=False,
           extra=None, bias_grad=True, device=""):
    """relu(conv(x, w) + b) -> max_pool -> loss on `device`; fetches the pool, the loss and
    the gradients of w and b (and of x with `input_grad`). `extra(relu, pool)` adds a term to
    the loss."""
    rng = np.random.default_rng(3)
    np_dt = dtype.np_dtype
    cin = shape[3] if fmt == "NHWC" else shape[1]
    feeds = {"x:0": rng.uniform(-1, 1, shape).astype(np_dt)}
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        x = v1.placeholder(dtype, shape, name="x")
        w = tf.constant(rng.normal(0, 0.3, (k, k, cin, cout)).astype(np_dt), name="w")
        b = tf.constant(rng.normal(0, 0.3, cout).astype(np_dt), name="b")
        relu = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, stride, padding, data_format=fmt),
                                         b, data_format=fmt))
        pooled = tf.nn.max_pool(relu, pool_k, pool_s, pool, data_format=fmt)
        fetches = [tf.identity(pooled, name="pooled").name]
        weights = tf.constant(rng.normal(size=pooled.shape.as_list()).astype(np_dt))
        loss = tf.reduce_sum(pooled * weights, name="loss")
        if extra is not None:
            loss = loss + extra(relu, pooled)
        fetches.append(tf.identity(loss, name="total").name)
        if grads:
            gs = v1.gradients(loss, [w] + ([b] if bias_grad else []) + ([x] if input_grad
                                                                       else []))
            fetches += [tf.identity(t, name=f"g{i}").name for i, t in enumerate(gs)]
    return g, fetches, feeds


def _run(g, fetches, feeds, remap=True, off=frozenset()):
    config = PassConfig(disabled_passes=off) if remap else \
        PassConfig(disabled_passes=frozenset({"remapper"}))
    g2, names = run_pipeline(g, PassContext(fetches=fetches, feeds=list(feeds), config=config))
    return g2, run_graph(g2, [names[f] for f in fetches], feeds)


def _fused_and_plain(g, fetches, feeds, monkeypatch):
    g2, fused = _run(g, fetches, feeds)
    g3, plain = _run(g, fetches, feeds, off=frozenset({"conv_pool_fusion"}))
    return g2, g3, fused, plain


def _assert_close(fused, plain):
    for a, b in zip(fused, plain):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(b).max()))


@pytest.mark.parametrize("shape,cout,k,padding,pool", [
    ((2, 9, 7, 1), 16, 3, "SAME", "SAME"),
    ((2, 12, 12, 3), 32, 5, "SAME", "SAME"),
    ((2, 11, 10, 2), 48, 3, "VALID", "VALID"),
])
def test_training_block_fuses_with_equal_values_and_gradients(shape, cout, k, padding, pool,
                                                               monkeypatch):
    g, fetches, feeds = _block(shape, cout, k, padding, pool)
    before = snapshot(g)
    g2, g3, fused, plain = _fused_and_plain(g, fetches, feeds, monkeypatch)
    assert snapshot(g) == before
    _assert_close(fused, plain)
    a, b = op_counts(g2), op_counts(g3)
    assert a["_Conv2DBiasReluMaxPool"] == a["_Conv2DBiasReluMaxPoolGrad"] == 1
    for t in ("_FusedConv2D", "_MaxPoolWithIndices", "_MaxPoolGradWithIndices", "ReluGrad",
              "Conv2DBackpropFilter", "BiasAddGrad"):
        assert b[t] == 1 and a.get(t, 0) == 0, t
    (fwd,) = [op for op in g2.get_operations() if op.type == FUSED[0]]
    (bwd,) = [op for op in g2.get_operations() if op.type == FUSED[1]]
    assert fwd.name == "MaxPool" and fwd.attrs["pool_padding"] == pool
    assert bwd.inputs[2] is fwd.outputs[1] and bwd.attrs["filter_shape"] == [k, k, shape[3],
                                                                              cout]


def test_filter_gradient_alone_fuses(monkeypatch):
    g, fetches, feeds = _block(bias_grad=False)
    g2, g3, fused, plain = _fused_and_plain(g, fetches, feeds, monkeypatch)
    _assert_close(fused, plain)
    a = op_counts(g2)
    assert a["_Conv2DBiasReluMaxPoolGrad"] == 1 and "BiasAddGrad" not in op_counts(g3)


def test_inference_block_fuses(monkeypatch):
    g, fetches, feeds = _block(grads=False)
    g2, g3, fused, plain = _fused_and_plain(g, fetches, feeds, monkeypatch)
    _assert_close(fused, plain)
    a = op_counts(g2)
    assert a["_Conv2DBiasReluMaxPool"] == 1 and "MaxPool" not in a and "_FusedConv2D" not in a
    assert op_counts(g3)["MaxPool"] == 1


def _relu_fetched(relu, pooled):
    return 0.0 * tf.reduce_sum(tf.identity(relu, name="relu_out"))


def _relu_read_twice(relu, pooled):
    return tf.reduce_sum(relu)


@pytest.mark.parametrize("why,kwargs", [
    ("relu read elsewhere", {"extra": _relu_read_twice}),
    ("relu read elsewhere, forward only", {"extra": _relu_read_twice, "grads": False}),
    ("input gradient needed", {"input_grad": True}),
    ("NCHW", {"shape": (2, 1, 8, 8), "fmt": "NCHW"}),
    ("float64", {"dtype": tf.float64}),
    ("8 input channels", {"shape": (2, 8, 8, 8)}),
    ("12 output channels", {"cout": 12}),
    ("3x3 pool", {"pool_k": 3}),
    ("pool stride 1", {"pool_s": 1}),
    ("conv stride 2", {"stride": 2}),
])
def test_other_graphs_are_left_alone(why, kwargs, monkeypatch):
    g, fetches, feeds = _block(**kwargs)
    g2, _, fused, plain = _fused_and_plain(g, fetches, feeds, monkeypatch)
    _assert_close(fused, plain)
    a = op_counts(g2)
    assert not any(t in a for t in FUSED), why


def test_fetched_intermediates_stop_the_fusion(monkeypatch):
    g, fetches, feeds = _block(extra=_relu_fetched)
    g2, _, fused, plain = _fused_and_plain(g, fetches + ["relu_out:0"], feeds, monkeypatch)
    _assert_close(fused, plain)
    assert not any(t in op_counts(g2) for t in FUSED)


def test_a_block_placed_on_a_gpu_is_left_alone(monkeypatch):
    # the fused kernels are oneDNN's (CPU); ops without a device run on the CPU, GPU or not
    monkeypatch.setattr(conv_pool_fusion.devices, "gpu_count", lambda: 1)
    config = PassConfig(auto_mixed_precision_gpu={"architecture": "9.0"})  # no CUDA queries
    g, fetches, feeds = _block(device="/GPU:0")
    g2, _ = run_pipeline(g, PassContext(fetches=fetches, feeds=list(feeds), config=config))
    assert not any(t in op_counts(g2) for t in FUSED)
    assert "_Conv2DBiasReluMaxPool" in op_counts(run_pipeline(
        _block()[0], PassContext(fetches=fetches, feeds=list(feeds), config=config))[0])


def test_remapping_off_leaves_the_block():
    g, fetches, feeds = _block()
    g2, _ = _run(g, fetches, feeds, remap=False)
    assert not any(t in op_counts(g2) for t in FUSED)
    assert op_counts(g2)["Conv2D"] == 1


def test_mnist_training_steps_match_with_the_fusion_off(monkeypatch):
    """Three momentum steps of the MNIST example's model (tf.function, batch 8): the same
    losses and weights to float32 tolerance with and without the fusion."""
    rng = np.random.default_rng(0)
    data = rng.uniform(-0.5, 0.5, (8, 28, 28, 1)).astype(np.float32)
    labels = rng.integers(0, 10, 8)
    shapes = {"conv1_weights": (5, 5, 1, 32), "conv1_biases": (32,),
              "conv2_weights": (5, 5, 32, 64), "conv2_biases": (64,),
              "fc1_weights": (3136, 512), "fc1_biases": (512,), "fc2_weights": (512, 10),
              "fc2_biases": (10,)}
    init = {k: rng.normal(0, 0.1, s).astype(np.float32) for k, s in shapes.items()}

    def train():
        p = {k: tf.Variable(v) for k, v in init.items()}
        opt = tf.keras.optimizers.SGD(0.05, momentum=0.9)

        @tf.function
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = regularized_loss(p, model(p, x), y)
            opt.apply_gradients(zip(tape.gradient(loss, list(p.values())), p.values()))
            return loss
        losses = [float(step(tf.constant(data), tf.constant(labels))) for _ in range(3)]
        return losses, {k: v.numpy() for k, v in p.items()}

    fused_losses, fused_weights = train()
    with PassOff("conv_pool_fusion"):
        plain_losses, plain_weights = train()
    np.testing.assert_allclose(fused_losses, plain_losses, rtol=1e-5)
    assert fused_losses[2] != fused_losses[0]
    for k in init:
        np.testing.assert_allclose(fused_weights[k], plain_weights[k], rtol=1e-4, atol=1e-6,
                                   err_msg=k)
    assert not np.allclose(fused_weights["conv1_weights"], init["conv1_weights"])


def _bf16_block():
    """The block on bfloat16 values (as the mixed-precision rewrite leaves conv1): float32
    feeds and constants rounded to bfloat16 in the graph; fetches the pooled values and the
    filter and bias gradients as float32."""
    rng = np.random.default_rng(7)
    feeds = {"x:0": rng.uniform(-1, 1, (4, 12, 10, 1)).astype(np.float32)}
    w0 = rng.normal(0, 0.3, (5, 5, 1, 16)).astype(np.float32)
    b0 = rng.normal(0, 0.3, 16).astype(np.float32)
    g0 = rng.normal(size=(4, 6, 5, 16)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        x = tf.cast(v1.placeholder(tf.float32, feeds["x:0"].shape, name="x"), tf.bfloat16)
        w, b = tf.cast(tf.constant(w0), tf.bfloat16), tf.cast(tf.constant(b0), tf.bfloat16)
        pooled = tf.nn.max_pool(tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, 1, "SAME"), b)),
                                2, 2, "SAME")
        loss = tf.reduce_sum(pooled * tf.cast(tf.constant(g0), tf.bfloat16))
        outs = [pooled] + v1.gradients(loss, [w, b])
        fetches = [tf.identity(tf.cast(t, tf.float32), name=f"f{i}").name
                   for i, t in enumerate(outs)]
    return g, fetches, feeds, (w0, b0, g0)


def _bf16(a):
    return torch.from_numpy(np.asarray(a, np.float32)).bfloat16().double()


@pytest.mark.parametrize("path", ["numba", "aten"])
def test_a_bfloat16_block_fuses_and_computes_in_float32(path, monkeypatch):
    """The fused kernels widen the bfloat16 values and round each result once: within a
    bfloat16 rounding of float64's results from the same bfloat16 inputs (oneDNN's unfused
    bfloat16 filter gradient is off by several percent on MNIST's conv1)."""
    if path == "aten":
        monkeypatch.setattr(conv_pool_numba, "applies", lambda x, channels: False)
    g, fetches, feeds, (w0, b0, g0) = _bf16_block()
    g2, g3, fused, plain = _fused_and_plain(g, fetches, feeds, monkeypatch)
    a = op_counts(g2)
    assert a["_Conv2DBiasReluMaxPool"] == a["_Conv2DBiasReluMaxPoolGrad"] == 1
    assert "_Conv2DBiasReluMaxPool" not in op_counts(g3)
    x, w, b, dy = (_bf16(v) for v in (feeds["x:0"], w0, b0, g0))
    conv = torch.relu(F.conv2d(x.permute(0, 3, 1, 2), w.permute(3, 2, 0, 1), b, padding=2))
    pooled, idx = F.max_pool2d(conv, 2, 2, return_indices=True)
    dense = torch.zeros_like(conv).flatten(2).scatter_(
        2, idx.flatten(2), dy.permute(0, 3, 1, 2).flatten(2)).view_as(conv) * (conv > 0)
    dw = torch.nn.grad.conv2d_weight(x.permute(0, 3, 1, 2), (16, 1, 5, 5), dense, padding=2)
    want = [t.numpy() for t in (pooled.permute(0, 2, 3, 1), dw.permute(2, 3, 1, 0),
                                dense.sum((0, 2, 3)))]
    for got, ref in zip(fused, want):
        np.testing.assert_allclose(got, ref, rtol=2 ** -8, atol=2 ** -8 * np.abs(ref).max())
    for got, ref in zip(plain, want):    # the unfused ops agree to their own precision
        np.testing.assert_allclose(got, ref, rtol=0.1, atol=0.1 * np.abs(ref).max())
