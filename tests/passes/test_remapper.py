"""Remapper: Conv2D/MatMul + bias [+ activation] and MaxPool/MaxPoolGrad fusions.

Every fusion is checked by running the same graph with the remapper on and off (forward
values and gradients), and by the patterns it must leave alone.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core import dtypes
from ndflow.kernels import nn_fused as nn_fused_kernels
from ndflow.ops import nn_pool
from ndflow.ops.apply import apply_op
from ndflow.passes.pass_config import PassConfig, resolve_pass_config
from ndflow.passes.pass_context import PassContext
from ndflow.passes.pipeline import pass_names, run_pipeline
from ndflow.passes.remapper import remapper
from ndflow.runtime.config_proto import ConfigProto, RewriterConfig
from tests.ops import nn_reference as ref
from tests.passes.graph_helpers import op_counts, run_graph, snapshot

v1 = tf.compat.v1
RNG = np.random.default_rng(0)
ACTS = {None: None, "Relu": tf.nn.relu, "Relu6": tf.nn.relu6, "Elu": tf.nn.elu,
        "LeakyRelu": lambda t: tf.nn.leaky_relu(t, alpha=0.3)}


def _optimize(g, fetches, feeds, remap=True, targets=()):
    config = PassConfig() if remap else PassConfig(disabled_passes=frozenset({"remapper"}))
    ctx = PassContext(fetches=fetches, feeds=list(feeds), targets=targets, config=config)
    return run_pipeline(g, ctx)


def _run_both(g, fetches, feeds):
    """(fused graph, fused values, unfused values) for `fetches` by name."""
    out = {}
    for remap in (True, False):
        g2, names = _optimize(g, fetches, feeds, remap)
        out[remap] = (g2, run_graph(g2, [names[f] for f in fetches],
                                    {names[k]: v for k, v in feeds.items()}))
    return out[True][0], out[True][1], out[False][1]


def _assert_close(a_list, b_list, dtype):
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for a, b in zip(a_list, b_list):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _fused(g2, op_type):
    return [op for op in g2.get_operations() if op.type == op_type]


# -- Conv2D + BiasAdd [+ activation] ---------------------------------------------------------------

# LeakyReluGrad reads the activation's input, so with gradients the BiasAdd output has a
# second consumer and only Conv2D + BiasAdd fuse (as in TensorFlow).
READS_INPUT = ("LeakyRelu",)


def _conv_graph(act, dtype, fmt, padding="SAME", strides=(1, 1), grads=True):
    np_dt = dtype.np_dtype
    shape = [2, 7, 6, 3] if fmt == "NHWC" else [2, 3, 7, 6]
    xv = RNG.normal(size=shape).astype(np_dt)
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtype, shape, name="x")
        w = tf.constant(RNG.normal(size=[3, 2, 3, 4]).astype(np_dt), name="w")
        b = tf.constant(RNG.normal(size=[4]).astype(np_dt), name="b")
        y = tf.nn.conv2d(x, w, strides=list(strides), padding=padding, data_format=fmt)
        y = tf.nn.bias_add(y, b, data_format=fmt)
        if act is not None:
            y = ACTS[act](y)
        y = tf.identity(y, name="y")
        if not grads:
            return g, [y.name], {"x:0": xv}
        loss = tf.reduce_sum(y * y)
        gx, gw, gb = v1.gradients(loss, [x, w, b])
    return g, [y.name, gx.name, gw.name, gb.name], {"x:0": xv}


@pytest.mark.parametrize("act", list(ACTS))
@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float64])
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("grads", [False, True])
def test_conv_bias_activation_fuses_and_preserves_values(act, dtype, fmt, grads):
    g, fetches, feeds = _conv_graph(act, dtype, fmt, grads=grads)
    g2, fused, plain = _run_both(g, fetches, feeds)
    _assert_close(fused, plain, dtype.np_dtype)
    (op,) = _fused(g2, "_FusedConv2D")
    if grads and act in READS_INPUT:
        assert op.attrs["fused_ops"] == ["BiasAdd"] and op_counts(g2)[act] == 1
        return
    assert op.attrs["fused_ops"] == ["BiasAdd"] + ([act] if act else [])
    assert op.attrs["num_args"] == 1 and op.attrs["TArgs"] == [dtype]
    assert op.attrs["data_format"] == fmt and op.attrs["padding"] == "SAME"
    assert op.attrs["strides"] == [1, 1, 1, 1] and op.attrs["filter_format"] == "HWIO"
    assert op.attrs["leakyrelu_alpha"] == pytest.approx(0.3 if act == "LeakyRelu" else 0.2)
    counts = op_counts(g2)
    assert counts["Conv2D"] == 0 and counts["BiasAdd"] == 0
    if act is not None:
        assert counts.get(act, 0) == 0
    # The last op of the chain (the activation, else the BiasAdd) became the fused op: it keeps
    # that name, and "y" (and the backward ops) read its output.
    assert op.name == (act if act else "BiasAdd")
    assert g2.get_operation_by_name("y").inputs[0].op is op


def _conv_scale_bias_graph(act, dtype, x_shape=(2, 7, 6, 3), w_shape=(3, 2, 3, 4),
                           scale_shape=None, swap=False, fmt="NHWC"):
    """`conv(x, w) * scale + bias [-> act]`, Keras' BatchNormalization in inference; scale
    and bias are fed (so nothing folds them into constants)."""
    np_dt = dtype.np_dtype
    channels = w_shape[3]
    scale_shape = scale_shape or [channels]
    feeds = {"x:0": RNG.normal(size=x_shape).astype(np_dt),
             "scale:0": RNG.uniform(0.5, 2.0, size=scale_shape).astype(np_dt),
             "bias:0": RNG.normal(size=[channels]).astype(np_dt)}
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtype, x_shape, name="x")
        scale = v1.placeholder(dtype, scale_shape, name="scale")
        bias = v1.placeholder(dtype, [channels], name="bias")
        w = tf.constant(RNG.normal(size=w_shape).astype(np_dt), name="w")
        y = tf.nn.conv2d(x, w, strides=1, padding="VALID", data_format=fmt)
        y = (scale * y if swap else y * scale) + bias if fmt == "NHWC" else \
            y * tf.reshape(scale, [channels, 1, 1]) + tf.reshape(bias, [channels, 1, 1])
        if act is not None:
            y = ACTS[act](y)
        tf.identity(y, name="y")
    return g, ["y:0"], feeds


@pytest.mark.parametrize("act", [None, "Relu", "Relu6"])
@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float64])
@pytest.mark.parametrize("swap", [False, True])
def test_conv_scale_bias_folds_the_scale_into_the_filter(act, dtype, swap):
    """Keras' inference BatchNormalization after a conv, `conv * inv + (beta - mean * inv)`:
    the per-channel scale multiplies the filter, the shift is the fused conv's bias."""
    g, fetches, feeds = _conv_scale_bias_graph(act, dtype, swap=swap)
    g2, fused, plain = _run_both(g, fetches, feeds)
    _assert_close(fused, plain, dtype.np_dtype)
    (op,) = _fused(g2, "_FusedConv2D")
    assert op.attrs["fused_ops"] == ["BiasAdd"] + ([act] if act else [])
    assert op.inputs[1].op.type == "Mul" and op.inputs[1].op.inputs[0].op.type == "Const"
    assert op.inputs[2].op.name == "bias"
    counts = op_counts(g2)
    assert counts["Conv2D"] == 0 and counts.get("AddV2", 0) == 0 and counts["Mul"] == 1
    w = np.asarray(g.get_operation_by_name("w").attrs["value"], np.float64)
    z = ref.conv2d(feeds["x:0"].astype(np.float64), w, (1, 1), "VALID")
    z = z * feeds["scale:0"] + feeds["bias:0"]
    z = {None: z, "Relu": np.maximum(z, 0), "Relu6": np.clip(z, 0, 6)}[act]
    np.testing.assert_allclose(fused[0], z, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["filter_larger_than_output", "scalar_scale", "NCHW"])
def test_conv_scale_bias_is_left_alone(case):
    """Not folded where scaling the filter costs more than scaling the output, where the
    scale is not one per output channel, or in NCHW (the scale broadcasts over H, W)."""
    kwargs = {"filter_larger_than_output": dict(x_shape=(1, 3, 3, 8), w_shape=(3, 3, 8, 16)),
              "scalar_scale": dict(scale_shape=[1]),
              "NCHW": dict(x_shape=(2, 3, 7, 6), fmt="NCHW")}[case]
    if case == "NCHW" and not torch.backends.mkldnn.is_available():
        pytest.skip("NCHW convolutions need oneDNN here")
    g, fetches, feeds = _conv_scale_bias_graph("Relu", dtypes.float32, **kwargs)
    g2, fused, plain = _run_both(g, fetches, feeds)
    _assert_close(fused, plain, np.float32)
    assert op_counts(g2).get("_FusedConv2D", 0) == 0


@pytest.mark.parametrize("padding,strides", [("VALID", (2, 2)), ("SAME", (2, 1)),
                                             ([[0, 0], [1, 2], [0, 1], [0, 0]], (1, 1))])
def test_conv_fusion_other_paddings_and_strides(padding, strides):
    g, fetches, feeds = _conv_graph("Relu", dtypes.float64, "NHWC", padding, strides)
    g2, fused, plain = _run_both(g, fetches, feeds)
    assert op_counts(g2)["_FusedConv2D"] == 1
    _assert_close(fused, plain, np.float64)


def test_conv_fusion_stops_at_a_fetched_intermediate():
    g, fetches, feeds = _conv_graph("Relu", dtypes.float32, "NHWC")
    g2, fused, plain = _run_both(g, fetches + ["BiasAdd:0"], feeds)
    (op,) = _fused(g2, "_FusedConv2D")
    assert op.attrs["fused_ops"] == ["BiasAdd"] and op.name == "BiasAdd"
    assert op_counts(g2)["Relu"] == 1
    _assert_close(fused, plain, np.float32)
    g2, fused, plain = _run_both(g, fetches + ["Conv2D:0"], feeds)
    assert "_FusedConv2D" not in op_counts(g2)
    _assert_close(fused, plain, np.float32)


def _conv_variant(kind):
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [1, 4, 4, 2], name="x")
        w = tf.constant(RNG.normal(size=[2, 2, 2, 3]).astype(np.float32))
        b = tf.constant(RNG.normal(size=[3]).astype(np.float32))
        if kind == "other_device":
            with g.device("/CPU:1"):
                c = tf.nn.conv2d(x, w, 1, "SAME")
        else:
            c = tf.nn.conv2d(x, w, 1, "SAME")
        if kind == "control_dep":
            with g.control_dependencies([c.op]):
                extra = tf.identity(x)
        y = tf.nn.relu(tf.nn.bias_add(c, b))
        if kind == "two_consumers":
            y = y + tf.reduce_sum(c)
        if kind == "control_dep":
            y = y + tf.reduce_sum(extra)
        tf.identity(y, name="y")
    return g


@pytest.mark.parametrize("kind", ["two_consumers", "control_dep", "other_device"])
def test_conv_fusion_does_not_fire(kind):
    g = _conv_variant(kind)
    g2, _ = _optimize(g, ["y:0"], ["x:0"])
    assert "_FusedConv2D" not in op_counts(g2)
    assert op_counts(g2)["Conv2D"] == 1


def test_activation_with_two_consumers_is_left_out():
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [1, 4, 4, 2], name="x")
        c = tf.nn.conv2d(x, tf.ones([2, 2, 2, 3]), 1, "SAME")
        ba = tf.nn.bias_add(c, tf.ones([3]))
        y = tf.nn.relu(ba) + ba
        tf.identity(y, name="y")
    g2, _ = _optimize(g, ["y:0"], ["x:0"])
    (op,) = _fused(g2, "_FusedConv2D")
    assert op.attrs["fused_ops"] == ["BiasAdd"] and op_counts(g2)["Relu"] == 1


# -- MatMul + bias [+ activation] ------------------------------------------------------------------

def _matmul_graph(act, dtype, bias_kind, ta=False, tb=False, grads=True):
    np_dt = dtype.np_dtype
    xv = RNG.normal(size=[4, 5] if ta else [5, 4]).astype(np_dt)
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtype, xv.shape, name="x")
        w = tf.constant(RNG.normal(size=[3, 4] if tb else [4, 3]).astype(np_dt), name="w")
        b = tf.constant(RNG.normal(size=[3]).astype(np_dt), name="b")
        m = tf.matmul(x, w, transpose_a=ta, transpose_b=tb)
        if bias_kind == "BiasAdd":
            y = tf.nn.bias_add(m, b)
        elif bias_kind == "add":
            y = m + b
        else:
            y = b + m
        if act is not None:
            y = ACTS[act](y)
        y = tf.identity(y, name="y")
        if not grads:
            return g, [y.name], {"x:0": xv}
        gx, gw, gb = v1.gradients(tf.reduce_sum(y * y), [x, w, b])
    return g, [y.name, gx.name, gw.name, gb.name], {"x:0": xv}


@pytest.mark.parametrize("act", list(ACTS))
@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float64])
@pytest.mark.parametrize("bias_kind", ["BiasAdd", "add", "radd"])
@pytest.mark.parametrize("grads", [False, True])
def test_matmul_bias_activation_fuses_and_preserves_values(act, dtype, bias_kind, grads):
    g, fetches, feeds = _matmul_graph(act, dtype, bias_kind, grads=grads)
    g2, fused, plain = _run_both(g, fetches, feeds)
    _assert_close(fused, plain, dtype.np_dtype)
    (op,) = _fused(g2, "_FusedMatMul")
    if grads and act in READS_INPUT:
        assert op.attrs["fused_ops"] == ["BiasAdd"] and op_counts(g2)[act] == 1
        return
    assert op.attrs["fused_ops"] == ["BiasAdd"] + ([act] if act else [])
    assert op.attrs["num_args"] == 1 and op.attrs["T"] is dtype


@pytest.mark.parametrize("ta,tb", [(True, False), (False, True), (True, True)])
def test_matmul_fusion_with_transposes(ta, tb):
    g, fetches, feeds = _matmul_graph("Relu", dtypes.float64, "add", ta, tb)
    g2, fused, plain = _run_both(g, fetches, feeds)
    (op,) = _fused(g2, "_FusedMatMul")
    assert (op.attrs["transpose_a"], op.attrs["transpose_b"]) == (ta, tb)
    _assert_close(fused, plain, np.float64)


@pytest.mark.parametrize("other", ["matrix", "row", "scalar", "int"])
def test_add_of_a_non_bias_is_not_fused(other):
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [2, 3], name="x")
        m = tf.matmul(x, tf.ones([3, 3]))
        t = {"matrix": tf.ones([2, 3]), "row": tf.ones([1, 3]), "scalar": tf.constant(2.0),
             "int": None}[other]
        if other == "int":
            m = tf.matmul(tf.cast(x, tf.int32), tf.ones([3, 3], tf.int32))
            t = tf.ones([3], tf.int32)
        tf.identity(m + t, name="y")
    g2, _ = _optimize(g, ["y:0"], ["x:0"])
    assert "_FusedMatMul" not in op_counts(g2)


# -- AddN(MatMul, Mul(y, scalar)) ------------------------------------------------------------------

def _scaled_add_graph(dtype, kind="AddN", swap=False, ta=False, scale_shape=()):
    np_dt = dtype.np_dtype
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtype, [5, 4], name="x")
        d = v1.placeholder(dtype, [5, 3], name="d")
        s = v1.placeholder(dtype, scale_shape, name="s")
        w = tf.constant(RNG.normal(size=[4, 3]).astype(np_dt), name="w")
        m = tf.matmul(tf.transpose(x) if ta else x, d, transpose_a=not ta)
        u = w * s if not swap else s * w
        terms = [u, m] if not swap else [m, u]
        y = tf.add_n(terms) if kind == "AddN" else terms[0] + terms[1]
        tf.identity(y, name="y")
    feeds = {"x:0": RNG.normal(size=[5, 4]).astype(np_dt),
             "d:0": RNG.normal(size=[5, 3]).astype(np_dt),
             "s:0": np.asarray(RNG.normal(size=scale_shape), np_dt)}
    return g, ["y:0"], feeds


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float64])
@pytest.mark.parametrize("kind", ["AddN", "AddV2"])
@pytest.mark.parametrize("swap", [False, True])
def test_matmul_plus_scaled_term_fuses(dtype, kind, swap):
    g, fetches, feeds = _scaled_add_graph(dtype, kind, swap, ta=swap)
    g2, fused, plain = _run_both(g, fetches, feeds)
    (op,) = _fused(g2, "_MatMulAddScaled")
    assert op.name == ("AddN" if kind == "AddN" else "add") and op.attrs["transpose_a"] != swap
    assert "MatMul" not in op_counts(g2) and "Mul" not in op_counts(g2)
    _assert_close(fused, plain, dtype.np_dtype)


def test_scaled_add_needs_a_scalar_and_private_terms():
    g, fetches, feeds = _scaled_add_graph(dtypes.float32, scale_shape=(3,))
    g2, fused, plain = _run_both(g, fetches, feeds)
    assert "_MatMulAddScaled" not in op_counts(g2)
    _assert_close(fused, plain, np.float32)
    g, fetches, feeds = _scaled_add_graph(dtypes.float32)
    for extra in ("MatMul:0", "mul:0"):
        g2, fused, plain = _run_both(g, fetches + [extra], feeds)
        assert "_MatMulAddScaled" not in op_counts(g2), extra
        _assert_close(fused, plain, np.float32)


# -- MaxPool / MaxPoolGrad -------------------------------------------------------------------------

def _pool_graph(dtype, fmt, ksize, stride, padding, size=(7, 6)):
    np_dt = dtype.np_dtype
    shape = [2, *size, 3] if fmt == "NHWC" else [2, 3, *size]
    xv = RNG.normal(size=shape).astype(np_dt)
    xv.flat[::5] = 0.25  # ties inside windows
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtype, shape, name="x")
        h = tf.nn.relu(x)
        p = tf.nn.max_pool(h, ksize, stride, padding, data_format=fmt)
        p = tf.identity(p, name="y")
        (gx,) = v1.gradients(tf.reduce_sum(p * p), [x])
    return g, [p.name, gx.name], {"x:0": xv}


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float64])
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("ksize,stride,padding", [(2, 2, "SAME"), (3, 2, "VALID"),
                                                  (3, 1, "SAME"), (2, 1, "SAME"),
                                                  (3, 2, "SAME")])
def test_max_pool_with_indices_preserves_values(dtype, fmt, ksize, stride, padding):
    g, fetches, feeds = _pool_graph(dtype, fmt, ksize, stride, padding)
    g2, fused, plain = _run_both(g, fetches, feeds)
    counts = op_counts(g2)
    assert counts["_MaxPoolWithIndices"] == 1 and counts["_MaxPoolGradWithIndices"] == 1
    assert "MaxPool" not in counts and "MaxPoolGrad" not in counts
    for a, b in zip(fused, plain):
        np.testing.assert_array_equal(a, b)


def test_max_pool_keeps_its_name_for_fetches():
    g, fetches, feeds = _pool_graph(dtypes.float32, "NHWC", 2, 2, "SAME")
    g2, fused, plain = _run_both(g, fetches + ["MaxPool:0"], feeds)
    (op,) = _fused(g2, "_MaxPoolWithIndices")
    assert op.name == "MaxPool" and op.outputs[1].dtype is dtypes.int64
    for a, b in zip(fused, plain):
        np.testing.assert_array_equal(a, b)


def test_max_pool_grad_with_another_orig_input_is_not_fused():
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [1, 4, 4, 1], name="x")
        p = tf.nn.max_pool(x, 2, 2, "VALID")
        other = x * 2.0
        mpg = apply_op(nn_pool.MaxPoolGrad, [other, p, tf.ones_like(p)],
                       {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID",
                        "data_format": "NHWC"}).outputs[0]
        tf.identity(mpg, name="y")
    g2, _ = _optimize(g, ["y:0"], ["x:0"])
    counts = op_counts(g2)
    assert counts["MaxPool"] == 1 and counts["MaxPoolGrad"] == 1
    assert "_MaxPoolWithIndices" not in counts


def test_forward_only_max_pool_is_unchanged():
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [1, 4, 4, 1], name="x")
        tf.identity(tf.nn.max_pool(x, 2, 2, "VALID"), name="y")
    g2, _ = _optimize(g, ["y:0"], ["x:0"])
    assert op_counts(g2)["MaxPool"] == 1


# -- Whole pass ------------------------------------------------------------------------------------

def _mnist_train_graph():
    rng = np.random.default_rng(7)
    g = tf.Graph()
    with g.as_default():
        data = v1.placeholder(tf.float32, [8, 28, 28, 1], name="data")
        labels = v1.placeholder(tf.int64, [8], name="labels")

        def var(shape, value=None):
            return tf.Variable(rng.normal(0, 0.1, shape).astype(np.float32)
                               if value is None else np.full(shape, value, np.float32))
        c1w, c1b, c2w, c2b = var([5, 5, 1, 32]), var([32], 0), var([5, 5, 32, 64]), var([64], .1)
        f1w, f1b, f2w, f2b = var([3136, 512]), var([512], .1), var([512, 10]), var([10], .1)
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(data, c1w, 1, "SAME"), c1b))
        h = tf.nn.max_pool(h, 2, 2, "SAME")
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, c2w, 1, "SAME"), c2b))
        h = tf.nn.max_pool(h, 2, 2, "SAME")
        h = tf.nn.relu(tf.matmul(tf.reshape(h, [8, 3136]), f1w) + f1b)
        logits = tf.matmul(h, f2w) + f2b
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
        loss = tf.identity(loss + 5e-4 * (tf.nn.l2_loss(f1w) + tf.nn.l2_loss(f2w)), name="loss")
        train = v1.train.MomentumOptimizer(0.01, 0.9).minimize(loss, name="train")
        init = v1.global_variables_initializer()
    return g, loss, train, init


def test_mnist_training_graph_op_counts_before_and_after():
    g, loss, train, _ = _mnist_train_graph()
    f1w = g.get_collection("variables")[4]
    before, _ = _optimize(g, [loss.name], ["data:0", "labels:0"], False, [train.name])
    after, _ = _optimize(g, [loss.name], ["data:0", "labels:0"], True, [train.name])
    b, a = op_counts(before), op_counts(after)
    assert (b["Conv2D"], b["BiasAdd"], b["Relu"], b["MatMul"], b["AddV2"]) == (2, 2, 3, 6, 4)
    assert (b["MaxPool"], b["MaxPoolGrad"]) == (2, 2)
    # conv1 (one input channel) + bias + relu + pool and its ReluGrad, MaxPoolGrad,
    # Conv2DBackpropFilter and BiasAddGrad -> the conv/pool fusion (its ShapeN goes dead);
    # conv2 -> _FusedConv2D + _MaxPoolWithIndices
    assert a["_Conv2DBiasReluMaxPool"] == a["_Conv2DBiasReluMaxPoolGrad"] == 1
    assert a["_FusedConv2D"] == 1 and a["_FusedMatMul"] == 2
    assert a["_MaxPoolWithIndices"] == 1 and a["_MaxPoolGradWithIndices"] == 1
    assert (a["Conv2DBackpropFilter"], a["BiasAddGrad"], a["ShapeN"]) == (1, 1, 1)
    assert (b["Conv2DBackpropFilter"], b["BiasAddGrad"], b["ShapeN"]) == (2, 2, 2)
    for t in ("Conv2D", "BiasAdd", "Relu", "MaxPool", "MaxPoolGrad"):
        assert a[t] == 0, t
    # L2-regularized updates: ResourceApplyMomentum(AddN(grad, Mul(w, 5e-4 * dloss))) of the
    # two fc weights: fc1's (3136x512) with its weight gradient's MatMul ->
    # _MatMulApplyMomentum, fc2's -> _ResourceApplyMomentumWithDecay (its weight grad stays a
    # MatMul); then the seven small updates -> one _GroupedApplyMomentum (and a zero Const:
    # the scale of the six without an L2 term)
    assert b["ResourceApplyMomentum"] == 8 and a["_GroupedApplyMomentum"] == 1
    (group,) = [op for op in after.get_operations() if op.type == "_GroupedApplyMomentum"]
    assert group.attrs["N"] == 7 and sum(group.attrs["decay"]) == 1
    (fc1,) = [op for op in after.get_operations() if op.type == "_MatMulApplyMomentum"]
    assert fc1.attrs["transpose_a"] and not fc1.attrs["keras"]
    assert fc1.inputs[0].op.name == f1w.handle.op.name
    assert a["ResourceApplyMomentum"] == a["_ResourceApplyMomentumWithDecay"] == 0
    assert a["AddN"] == 0 and b["AddN"] == 2
    assert a["_MatMulAddScaled"] == 0
    # the MatMuls left: fc1's input gradient, fc2's weight and input gradients
    assert a["MatMul"] == 3 and a["AddV2"] == 2 and a["Mul"] == b["Mul"] - 2
    assert a["ReluGrad"] == 2 and b["ReluGrad"] == 3    # reading the fused ops' outputs
    # conv chains (3 + 3 ops), dense layers (3 + 2) and decayed updates (2 x 3): 17 ops -> 6;
    # conv1's block (conv, pool, ReluGrad, MaxPoolGrad, filter/bias grads, ShapeN) 7 -> 2;
    # the eight updates -> 2, one of them taking in its gradient's MatMul
    assert sum(a.values()) == sum(b.values()) - 22

@pytest.mark.parametrize("remapping", [RewriterConfig.ON, RewriterConfig.OFF])
def test_session_training_matches_with_and_without_remapping(remapping):
    results = []
    for mode in (remapping, RewriterConfig.OFF if remapping == RewriterConfig.ON
                 else RewriterConfig.ON):
        g, loss, train, init = _mnist_train_graph()
        cfg = ConfigProto()
        cfg.graph_options.rewrite_options.remapping = mode
        assert resolve_pass_config(cfg).pass_enabled("remapper", "remapping") == \
            (mode != RewriterConfig.OFF)
        rng = np.random.default_rng(1)
        feed = {"data:0": rng.uniform(-.5, .5, (8, 28, 28, 1)).astype(np.float32),
                "labels:0": rng.integers(0, 10, 8)}
        with v1.Session(graph=g, config=cfg) as sess:
            sess.run(init)
            results.append([sess.run([train, loss], feed)[1] for _ in range(3)])
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5)
    assert results[0][2] != results[0][0]


def test_pass_is_pure_and_in_the_pipeline_after_cse():
    names = pass_names()
    assert names.index("cse") < names.index("arithmetic_optimizer") < names.index("remapper")
    g, fetches, feeds = _conv_graph("Relu", dtypes.float32, "NHWC")
    before = snapshot(g)
    g2 = remapper(g, PassContext(fetches=fetches, feeds=list(feeds)))
    assert snapshot(g) == before and g2 is not g
    assert op_counts(g)["Conv2D"] == 1
    plain = tf.Graph()
    with plain.as_default():
        tf.constant(1.0, name="c")
    assert remapper(plain, PassContext(fetches=["c:0"])) is plain


def test_session_settings_turn_the_pass_off():
    assert resolve_pass_config(None).pass_enabled("remapper", "remapping") is True
    cfg = ConfigProto()
    cfg.graph_options.rewrite_options.disable_meta_optimizer = True
    assert resolve_pass_config(cfg).pass_enabled("remapper", "remapping") is False


@pytest.mark.parametrize("fused_ops,dtype,device,expected", [
    (["BiasAdd", "Relu"], dtypes.float32, "cpu", ("relu", [])),
    (["BiasAdd", "Relu6"], dtypes.float32, "cpu", ("hardtanh", [0.0, 6.0])),
    (["BiasAdd", "LeakyRelu"], dtypes.float32, "cpu", ("leaky_relu", [0.3])),
    (["BiasAdd"], dtypes.float32, "cpu", ("none", [])),
    (["BiasAdd", "Elu"], dtypes.float32, "cpu", None),       # no oneDNN post-op: ATen path
    (["BiasAdd", "Relu"], dtypes.float64, "cpu", None),
    (["BiasAdd", "Relu"], dtypes.float32, "cuda", None),
])
def test_fused_conv_takes_onednn_post_ops_on_float32_cpu(fused_ops, dtype, device, expected):
    node = SimpleNamespace(attrs={"T": dtype, "fused_ops": fused_ops, "leakyrelu_alpha": 0.3})
    post_op = nn_fused_kernels._onednn_post_op(node, torch.device(device))
    assert post_op == (expected if nn_fused_kernels._ONEDNN else None)
