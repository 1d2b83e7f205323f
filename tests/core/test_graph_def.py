"""GraphDef: graph -> GraphDef -> bytes -> GraphDef -> graph keeps ops, attrs, shapes, values."""

from __future__ import annotations

import os

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import attr_value_pb2, graph_pb2, tensor_pb2

import ndflow as tf
from ndflow.core import dtypes
from ndflow.core.graph import Graph
from ndflow.core.graph_def import (
    GRAPH_DEF_VERSION,
    attr_from_proto,
    attr_to_proto,
    dtype_name,
    ndarray_to_tensor_proto,
    tensor_proto_to_ndarray,
)
from ndflow.core.graph_io import write_graph
from ndflow.core.shapes import TensorShape
from ndflow.ops.importer import import_graph_def
from ndflow.runtime.session import Session


def _model():
    g = Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtypes.float32, [None, 3], name="x")
        tf.compat.v1.placeholder(dtypes.float32, None, name="anything")
        w = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
        k = tf.constant(np.int32(5), name="k")
        tf.constant(np.array([[1, 2]], np.int64), name="i64")
        tf.constant(np.array([True, False]), name="flags")
        tf.constant(np.array([0.5, -1.25], np.float16), name="half")
        tf.constant(np.array([1.5, 2.25]), dtype=dtypes.bfloat16, name="bf16")
        tf.constant(["ab", "c"], name="strings")
        with g.control_dependencies([k.op]):
            h = tf.matmul(x, w, transpose_b=False, name="h")
        with g.device("/device:CPU:0"):
            r = tf.nn.relu(h, name="r")
        s = tf.reduce_sum(r, [0, 1], keepdims=True, name="s")
        tf.stack([k, k], axis=0, name="pair")
        tf.matmul(w, w, transpose_a=True, name="wtw")
    del s
    return g


def _roundtrip(g: Graph) -> Graph:
    data = g.as_graph_def().SerializeToString()
    g2 = Graph()
    with g2.as_default():
        assert import_graph_def(graph_pb2.GraphDef.FromString(data), name="") is None
    return g2


def _as_bytes_array(a: np.ndarray) -> list:
    return [x.encode() if isinstance(x, str) else x for x in a.reshape(-1)]


def _same_attr(a, b) -> bool:
    if isinstance(a, np.ndarray) and a.dtype.kind in "UO":  # strings come back as bytes
        return a.shape == b.shape and _as_bytes_array(a) == _as_bytes_array(b)
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


def test_roundtrip_keeps_ops_attrs_shapes_and_values():
    g = _model()
    g2 = _roundtrip(g)
    ops, ops2 = g.get_operations(), g2.get_operations()
    assert [(o.name, o.type) for o in ops] == [(o.name, o.type) for o in ops2]
    for a, b in zip(ops, ops2):
        assert [t.name for t in a.inputs] == [t.name for t in b.inputs]
        assert [c.name for c in a.control_inputs] == [c.name for c in b.control_inputs]
        assert a.device == b.device
        assert sorted(a.attrs) == sorted(b.attrs), a.name
        for key in a.attrs:
            assert _same_attr(a.attrs[key], b.attrs[key]), (a.name, key)
        assert [(t.dtype, t.shape) for t in a.outputs] == [(t.dtype, t.shape) for t in b.outputs]
    fetches = ["s:0", "pair:0", "wtw:0", "bf16:0", "strings:0", "half:0", "flags:0", "i64:0"]
    feed = np.array([[1.0, -2.0, 3.0], [0.5, 0.5, 0.5]], np.float32)
    with Session(graph=g) as s1, Session(graph=g2) as s2:
        got1 = s1.run(fetches, {"x:0": feed})
        got2 = s2.run(fetches, {"x:0": feed})
    for u, v in zip(got1, got2):
        np.testing.assert_array_equal(u, v)
    np.testing.assert_allclose(got1[0], np.maximum(feed @ np.arange(6).reshape(3, 2), 0).sum(
        keepdims=True))


def test_node_defs_look_like_tensorflows():
    gd = _model().as_graph_def()
    assert gd.versions.producer == GRAPH_DEF_VERSION
    nodes = {n.name: n for n in gd.node}
    assert list(nodes["h"].input) == ["x", "w", "^k"]
    assert nodes["r"].device == "/device:CPU:0"
    assert nodes["h"].attr["T"].type == 1  # DT_FLOAT
    assert nodes["h"].attr["transpose_a"].b is False
    assert nodes["pair"].attr["N"].i == 2
    assert [d.size for d in nodes["x"].attr["shape"].shape.dim] == [-1, 3]
    assert nodes["anything"].attr["shape"].shape.unknown_rank
    bf = nodes["bf16"].attr["value"].tensor
    assert bf.dtype == 14 and bf.tensor_content == np.array([0x3FC0, 0x4010], "<u2").tobytes()
    assert list(nodes["strings"].attr["value"].tensor.string_val) == [b"ab", b"c"]
    shapes = _model().as_graph_def(add_shapes=True).node[0].attr["_output_shapes"]
    assert [d.size for d in shapes.list.shape[0].dim] == [-1, 3]


def test_attr_conversions():
    cases = [
        (dtypes.int64, "type"), (True, "b"), (3, "i"), (2.5, "f"), ("SAME", "s"),
        (TensorShape([None, 4]), "shape"), (TensorShape(None), "shape"),
        (np.arange(3, dtype=np.int32), "tensor"),
    ]
    for value, field in cases:
        proto = attr_to_proto(value)
        assert proto.WhichOneof("value") == field
        back = attr_from_proto(attr_value_pb2.AttrValue.FromString(proto.SerializeToString()))
        assert _same_attr(value, back), value
    assert attr_from_proto(attr_to_proto([1, 2, 3])) == [1, 2, 3]
    assert attr_from_proto(attr_to_proto([1, 2.5])) == [1.0, 2.5]
    assert attr_from_proto(attr_to_proto([dtypes.float32, dtypes.int32])) == [dtypes.float32,
                                                                             dtypes.int32]
    assert attr_from_proto(attr_to_proto([TensorShape([1]), TensorShape(None)])) == [
        TensorShape([1]), TensorShape(None)]
    empty = attr_to_proto([])
    assert empty.WhichOneof("value") == "list" and attr_from_proto(empty) == []
    assert attr_to_proto(2, kind="float").f == 2.0
    with pytest.raises(TypeError, match="unsupported value"):
        attr_to_proto(object())
    with pytest.raises(TypeError, match="mixes value kinds"):
        attr_to_proto([1, "a"])
    assert dtype_name(dtypes.float32) == "float" and dtype_name(dtypes.float16) == "half"


def test_unconvertible_attr_names_the_node():
    g = Graph()
    with g.as_default():
        x = tf.constant(1.0, name="x")
    g.create_op(x.op.op_def, [], {"value": np.float32(1), "dtype": dtypes.float32,
                                  "weird": object()}, [(dtypes.float32, TensorShape([]))],
                "odd")
    with pytest.raises(TypeError, match="Cannot convert attr 'weird' of node 'odd' \\(Const\\)"):
        g.as_graph_def()


def test_tensor_protos_in_tensorflows_compact_forms():
    def parse(text):
        return tensor_proto_to_ndarray(text_format.Parse(text, tensor_pb2.TensorProto()))

    arr, dt = parse("dtype: DT_INT32 tensor_shape {} int_val: 5")
    assert dt is dtypes.int32 and arr.shape == () and arr == 5
    arr, _ = parse("dtype: DT_FLOAT tensor_shape { dim { size: 4 } } float_val: 1 float_val: 2")
    np.testing.assert_array_equal(arr, [1, 2, 2, 2])  # the last value repeats
    arr, _ = parse("dtype: DT_DOUBLE tensor_shape { dim { size: 2 } }")
    np.testing.assert_array_equal(arr, [0, 0])
    arr, dt = parse("dtype: DT_HALF tensor_shape { dim { size: 1 } } half_val: 15360")
    assert arr.dtype == np.float16 and arr[0] == 1.0
    arr, dt = parse("dtype: DT_BFLOAT16 tensor_shape { dim { size: 1 } } half_val: 16320")
    assert dt is dtypes.bfloat16 and arr.dtype == np.float32 and arr[0] == 1.5
    arr, _ = parse("dtype: DT_STRING tensor_shape { dim { size: 2 } } string_val: 'x'")
    assert list(arr) == [b"x", b"x"]
    arr, _ = parse("dtype: DT_BOOL tensor_shape { dim { size: 2 } } bool_val: true")
    assert arr.dtype == np.bool_ and arr.all()
    with pytest.raises(ValueError, match="needs 1"):
        parse("dtype: DT_INT32 tensor_shape {} int_val: 5 int_val: 6")
    with pytest.raises(ValueError, match="holds 1 values"):
        parse("dtype: DT_INT32 tensor_shape { dim { size: 2 } } tensor_content: '\\001\\0\\0\\0'")
    arr, dt = parse("dtype: DT_COMPLEX64 tensor_shape { dim { size: 2 } } scomplex_val: 1 "
                    "scomplex_val: 2")  # (real, imag) pairs
    assert dt is dtypes.complex64 and list(arr) == [1 + 2j, 1 + 2j]
    with pytest.raises(ValueError, match="Unsupported DataType DT_QINT8_REF"):
        parse("dtype: DT_QINT8_REF tensor_shape {}")
    arr, dt = parse("dtype: DT_QINT8 tensor_shape { dim { size: 2 } } int_val: -3")
    assert dt is dtypes.qint8 and arr.dtype == np.int8 and list(arr) == [-3, -3]
    p = ndarray_to_tensor_proto(np.arange(4, dtype=np.int64).reshape(2, 2))
    back, dt = tensor_proto_to_ndarray(p)
    assert dt is dtypes.int64 and back.shape == (2, 2) and back.flags.writeable


def test_write_graph_text_and_binary(tmp_path):
    g = _model()
    logdir = tmp_path / "new" / "dir"
    path = write_graph(g, str(logdir), "graph.pbtxt")
    assert path == os.path.join(str(logdir), "graph.pbtxt")
    parsed = text_format.Parse(open(path).read(), graph_pb2.GraphDef())
    assert parsed == g.as_graph_def()
    path = write_graph(g.as_graph_def(), logdir, "graph.pb", as_text=False)
    assert graph_pb2.GraphDef.FromString(open(path, "rb").read()) == g.as_graph_def()
    assert sorted(os.listdir(logdir)) == ["graph.pb", "graph.pbtxt"]  # no temp files left
    with pytest.raises(TypeError, match="must be a Graph or a GraphDef"):
        write_graph(42, str(logdir), "x.pb")
