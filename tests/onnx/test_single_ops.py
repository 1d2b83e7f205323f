"""ndflow.onnx.export, op by op: each graph holds the TensorFlow op under test (checked), is
exported with a dynamic batch dimension, passes the onnx checker and gives ndflow's values
in ONNX Runtime.

The default suite exports the whole table as one function (one input and one output per
case: one export, one ONNX Runtime session, ~0.5 s); CI's slow pass also runs each case as
its own graph, so a failure names its op."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import ndflow as tf

ort = pytest.importorskip("onnxruntime")
onnx_export = pytest.importorskip("ndflow.onnx").export

_RNG = np.random.RandomState(7)


def W(*shape):
    return tf.constant(_RNG.uniform(-1, 1, shape).astype(np.float32))


v1 = tf.compat.v1

# (TF op type that must be in the graph, input shape, function of x, input kind)
CASES = [
    ("Conv2D", (2, 7, 7, 3), lambda x: tf.nn.conv2d(x, W(3, 3, 3, 4), 1, "SAME"), "any"),
    ("Conv2D", (2, 9, 8, 3), lambda x: tf.nn.conv2d(x, W(3, 2, 3, 4), 2, "VALID"), "any"),
    ("Conv2D", (1, 8, 8, 2), lambda x: tf.nn.conv2d(x, W(3, 3, 2, 2), 1, "SAME",
                                                     dilations=2), "any"),
    ("DepthwiseConv2dNative", (2, 6, 6, 3),
     lambda x: tf.nn.depthwise_conv2d(x, W(3, 3, 3, 2), [1, 1, 1, 1], "SAME"), "any"),
    ("MatMul", (3, 4), lambda x: tf.matmul(x, W(4, 5)), "any"),
    ("MatMul", (3, 4), lambda x: tf.matmul(x, W(5, 4), transpose_b=True), "any"),
    ("BatchMatMulV2", (2, 3, 4), lambda x: tf.matmul(x, W(4, 5)), "any"),
    ("BiasAdd", (2, 3, 4), lambda x: tf.nn.bias_add(x, W(4)), "any"),
    ("AddV2", (2, 3), lambda x: x + W(3), "any"),
    ("Sub", (2, 3), lambda x: W(2, 1) - x, "any"),
    ("Mul", (2, 3), lambda x: x * W(1, 3), "any"),
    ("RealDiv", (2, 3), lambda x: x / W(3), "pos"),
    ("Maximum", (2, 3), lambda x: tf.maximum(x, 0.25), "any"),
    ("Minimum", (2, 3), lambda x: tf.minimum(x, 0.25), "any"),
    ("Relu", (2, 5), tf.nn.relu, "any"),
    ("Relu6", (2, 5), lambda x: tf.nn.relu6(x * 8), "any"),
    ("Sigmoid", (2, 5), tf.sigmoid, "any"),
    ("Tanh", (2, 5), tf.tanh, "any"),
    ("Elu", (2, 5), tf.nn.elu, "any"),
    ("Selu", (2, 5), tf.nn.selu, "any"),
    ("LeakyRelu", (2, 5), lambda x: tf.nn.leaky_relu(x, alpha=0.3), "any"),
    ("Softplus", (2, 5), tf.math.softplus, "any"),
    ("Softmax", (2, 5), tf.nn.softmax, "any"),
    ("LogSoftmax", (2, 5), tf.nn.log_softmax, "any"),
    ("Exp", (2, 5), tf.exp, "any"),
    ("Log", (2, 5), tf.math.log, "pos"),
    ("Sqrt", (2, 5), tf.sqrt, "pos"),
    ("Rsqrt", (2, 5), tf.math.rsqrt, "pos"),
    ("Square", (2, 5), tf.square, "any"),
    ("SquaredDifference", (2, 5), lambda x: tf.math.squared_difference(x, W(5)), "any"),
    ("Neg", (2, 5), tf.negative, "any"),
    ("Abs", (2, 5), tf.abs, "any"),
    ("MaxPool", (2, 7, 7, 3), lambda x: tf.nn.max_pool2d(x, 3, 2, "SAME"), "any"),
    ("MaxPool", (2, 6, 6, 3), lambda x: tf.nn.max_pool2d(x, 2, 2, "VALID"), "any"),
    ("AvgPool", (2, 7, 7, 3), lambda x: tf.nn.avg_pool2d(x, 3, 2, "SAME"), "any"),
    ("AvgPool", (2, 6, 6, 3), lambda x: tf.nn.avg_pool2d(x, 2, 2, "VALID"), "any"),
    ("LRN", (2, 4, 4, 8), lambda x: tf.nn.lrn(x, 2, bias=1.0, alpha=0.1, beta=0.75), "any"),
    ("LRN", (1, 3, 3, 16), lambda x: tf.nn.lrn(x, 4, bias=2.0, alpha=0.001 / 9.0,
                                               beta=0.75), "any"),
    ("FusedBatchNormV3", (2, 4, 4, 3),
     lambda x: v1.nn.fused_batch_norm(x, W(3), W(3), mean=W(3), variance=tf.abs(W(3)) + 0.5,
                                      is_training=False)[0], "any"),
    ("Reshape", (2, 3, 4), lambda x: tf.reshape(x, [-1, 12]), "any"),
    ("Reshape", (2, 3, 4), lambda x: tf.reshape(x, tf.stack([tf.shape(x)[0], 4, 3])), "any"),
    ("Transpose", (2, 3, 4), lambda x: tf.transpose(x, [0, 2, 1]), "any"),
    ("ConcatV2", (2, 3), lambda x: tf.concat([x, tf.nn.relu(x), -x], axis=-1), "any"),
    ("Identity", (2, 3), lambda x: tf.identity(x) + 1, "any"),
    ("Cast", (2, 3), lambda x: tf.cast(x * 4, tf.int32), "any"),
    ("Mean", (2, 3, 4), lambda x: tf.reduce_mean(x, axis=[1, 2]), "any"),
    ("Sum", (2, 3, 4), lambda x: tf.reduce_sum(x, axis=1, keepdims=True), "any"),
    ("Max", (2, 3, 4), lambda x: tf.reduce_max(x, axis=-1), "any"),
    ("Min", (2, 3, 4), lambda x: tf.reduce_min(x, axis=2), "any"),
    ("Prod", (2, 3, 4), lambda x: tf.reduce_prod(x, axis=1), "any"),
    ("Squeeze", (2, 1, 3), lambda x: tf.squeeze(x, axis=1), "any"),
    ("ExpandDims", (2, 3), lambda x: tf.expand_dims(x, -1), "any"),
    ("Pad", (2, 3, 3, 1), lambda x: tf.pad(x, [[0, 0], [1, 2], [2, 1], [0, 0]]), "any"),
    ("PadV2", (2, 3), lambda x: tf.pad(x, [[0, 0], [1, 1]], constant_values=5.0), "any"),
    ("MirrorPad", (2, 4), lambda x: tf.pad(x, [[0, 0], [2, 1]], mode="REFLECT"), "any"),
    ("StridedSlice", (2, 5, 4), lambda x: x[:, 1:4, ::2], "any"),
    ("StridedSlice", (2, 5, 4), lambda x: x[:, -1], "any"),
    ("Pack", (2, 3), lambda x: tf.stack([x, x * 2], axis=1), "any"),
]


def _ids():
    seen: dict = {}
    out = []
    for op_type, *_ in CASES:
        seen[op_type] = seen.get(op_type, 0) + 1
        out.append(f"{op_type}-{seen[op_type]}")
    return out


def _input(shape, kind, seed=1):
    x = np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)
    return np.abs(x) + 0.1 if kind == "pos" else x


def test_op_table_as_one_model_matches_onnx_runtime():
    signature = [tf.TensorSpec((None,) + shape[1:], tf.float32, name=f"x{i}")
                 for i, (_, shape, _, _) in enumerate(CASES)]

    def table(*xs):
        return [fn(x) for x, (_, _, fn, _) in zip(xs, CASES)]

    table.__signature__ = inspect.Signature(  # one named parameter per case
        [inspect.Parameter(s.name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for s in signature])

    f = tf.function(table, input_signature=signature)
    cf = f.get_concrete_function()
    types = {op.type for op in cf.graph.get_operations()}
    assert {case[0] for case in CASES} <= types
    model = onnx_export(cf)
    assert all(i.type.tensor_type.shape.dim[0].dim_param for i in model.graph.input)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    xs = [_input(shape, kind, seed=i) for i, (_, shape, _, kind) in enumerate(CASES)]
    want = [t.numpy() for t in f(*xs)]
    got = session.run(None, {f"x{i}": x for i, x in enumerate(xs)})
    for case_id, g, w in zip(_ids(), got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, case_id
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, err_msg=case_id)


@pytest.mark.slow
@pytest.mark.parametrize("op_type,shape,fn,kind", CASES, ids=_ids())
def test_single_op_graph_matches_onnx_runtime(op_type, shape, fn, kind):
    signature = [tf.TensorSpec((None,) + shape[1:], tf.float32, name="x")]
    f = tf.function(fn, input_signature=signature)
    cf = f.get_concrete_function()
    assert op_type in {op.type for op in cf.graph.get_operations()}
    model = onnx_export(cf)
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param  # dynamic batch
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    x = _input(shape, kind)
    want = f(x).numpy()
    got = session.run(None, {"x": x})[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
