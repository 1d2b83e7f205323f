"""CSE: identical ops merge into the first; state, placeholders and preserved ops never."""

from __future__ import annotations

import numpy as np

import ndflow as tf
from ndflow.core import dtypes
from ndflow.core.graph import Graph
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import REGISTRY, op_def
from ndflow.passes.cse import cse
from ndflow.passes.pass_context import PassContext
from tests.passes.graph_helpers import counter, op_counts, run_graph, snapshot

X = np.array([[1.0, -2.0], [3.0, 0.5]], np.float32)
Y = np.array([[0.0, 1.0], [-1.0, 2.0]], np.float32)


def _inputs():
    x = tf.compat.v1.placeholder(dtypes.float32, [2, 2], name="x")
    y = tf.compat.v1.placeholder(dtypes.float32, [2, 2], name="y")
    return x, y


def test_merges_duplicates_and_their_consumers():
    g = Graph()
    with g.as_default():
        x, y = _inputs()
        m1 = tf.matmul(x, y, name="m1")
        m2 = tf.matmul(x, y, name="m2")
        r1 = tf.nn.relu(m1, name="r1")
        r2 = tf.nn.relu(m2, name="r2")  # a duplicate once m2 is merged into m1
        out = tf.add(r1, r2, name="out")
    del out
    before = snapshot(g)
    ctx = PassContext(fetches=["out:0"], feeds=["x:0", "y:0"])
    g2 = cse(g, ctx)
    assert op_counts(g) == {"Placeholder": 2, "MatMul": 2, "Relu": 2, "AddV2": 1}
    assert op_counts(g2) == {"Placeholder": 2, "MatMul": 1, "Relu": 1, "AddV2": 1}
    assert [t.op.name for t in g2.get_operation_by_name("out").inputs] == ["r1", "r1"]
    assert snapshot(g) == before
    feeds = {"x:0": X, "y:0": Y}
    np.testing.assert_allclose(run_graph(g2, ["out:0"], feeds)[0],
                               run_graph(g, ["out:0"], feeds)[0])


def test_commutative_inputs_in_any_order():
    g = Graph()
    with g.as_default():
        x, y = _inputs()
        a = tf.add(x, y, name="a")
        b = tf.add(y, x, name="b")
        m1 = tf.matmul(x, y, name="m1")
        m2 = tf.matmul(y, x, name="m2")  # not commutative
        out = tf.stack([a, b, m1, m2], name="out")
    del out
    g2 = cse(g, PassContext(fetches=["out:0"], feeds=["x:0", "y:0"]))
    assert op_counts(g2) == {"Placeholder": 2, "AddV2": 1, "MatMul": 2, "Pack": 1}
    feeds = {"x:0": X, "y:0": Y}
    np.testing.assert_allclose(run_graph(g2, ["out:0"], feeds)[0],
                               run_graph(g, ["out:0"], feeds)[0])


def test_attrs_devices_and_control_inputs_must_match():
    g = Graph()
    with g.as_default():
        x, y = _inputs()
        plain = tf.matmul(x, y, name="plain")
        transposed = tf.matmul(x, y, transpose_a=True, name="transposed")
        with g.device("/CPU:0"):
            pinned = tf.matmul(x, y, name="pinned")
        with g.control_dependencies([plain.op]):
            ordered = tf.matmul(x, y, name="ordered")
        out = tf.stack([plain, transposed, pinned, ordered], name="out")
    del out
    g2 = cse(g, PassContext(fetches=["out:0"], feeds=["x:0", "y:0"]))
    assert op_counts(g2) == op_counts(g)


def test_stateful_placeholders_and_preserved_ops_are_never_merged():
    g = Graph()
    with g.as_default():
        x, y = _inputs()
        p2 = tf.compat.v1.placeholder(dtypes.float32, [2, 2], name="x_again")
        c1 = counter(x, name="c1")
        c2 = counter(x, name="c2")
        f1 = tf.nn.relu(x, name="f1")
        f2 = tf.nn.relu(x, name="f2")  # fetched: keeps its own node
        out = tf.stack([c1, c2, f1, p2], name="out")
    del out, f2, y
    ctx = PassContext(fetches=["out:0", "f2:0"], feeds=["x:0", "x_again:0"])
    g2 = cse(g, ctx)
    assert op_counts(g2) == op_counts(g)
    assert ctx.name_map() == {"out:0": "out:0", "f2:0": "f2:0", "x:0": "x:0",
                              "x_again:0": "x_again:0"}


def test_identical_constants_merge():
    g = Graph()
    with g.as_default():
        a = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3), name="a")
        b = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3), name="b")
        c = tf.constant(np.arange(6, dtype=np.int32).reshape(2, 3), name="c")
        d = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2), name="d")
        s = tf.add(a, b, name="s")
        out = tf.stack([c, c], name="out")
    del s, out, d
    g2 = cse(g, PassContext(fetches=["s:0", "out:0"]))
    assert [op.name for op in g2.get_operations()] == ["a", "c", "d", "s", "out"]
    assert [t.op.name for t in g2.get_operation_by_name("s").inputs] == ["a", "a"]
    np.testing.assert_allclose(run_graph(g2, ["s:0"])[0], 2 * np.arange(6).reshape(2, 3))


def test_ops_reading_resources_are_never_merged():
    handle_def = REGISTRY.get("NdflowTestHandle") or op_def(
        "NdflowTestHandle", outputs=["h: resource"], shape=lambda ctx: [TensorShape([])],
        stateful=True)
    peek_def = REGISTRY.get("NdflowTestPeek") or op_def(
        "NdflowTestPeek", inputs=["h: resource"], outputs=["v: float"],
        shape=lambda ctx: [TensorShape([])])  # deliberately not marked stateful
    g = Graph()
    with g.as_default():
        h = apply_op(handle_def, [], name="h").outputs[0]
        p1 = apply_op(peek_def, [h], name="p1").outputs[0]
        p2 = apply_op(peek_def, [h], name="p2").outputs[0]
        out = tf.stack([p1, p2], name="out")
    del out
    g2 = cse(g, PassContext(fetches=["out:0"]))
    assert op_counts(g2) == {"NdflowTestHandle": 1, "NdflowTestPeek": 2, "Pack": 1}
