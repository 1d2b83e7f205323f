"""Prune: keeps what fetches/targets need (data and control edges), cut at feeds."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import dtypes
from ndflow.core.graph import Graph
from ndflow.passes.pass_context import PassContext
from ndflow.passes.prune import prune
from tests.passes.graph_helpers import counter, op_counts, run_graph, snapshot, split2


def _graph():
    g = Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtypes.float32, [2, 2], name="x")
        w = tf.constant(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), name="w")
        h = tf.matmul(x, w, name="h")
        y = tf.nn.relu(h, name="y")
        unused = tf.add(x, w, name="unused")
        side = tf.identity(w, name="side")
    return g, x, y, unused, side


def test_keeps_only_what_the_fetch_needs():
    g, *_ = _graph()
    before = snapshot(g)
    out = prune(g, PassContext(fetches=["y:0"], feeds=["x:0"]))
    assert op_counts(g) == {"Placeholder": 1, "Const": 1, "MatMul": 1, "Relu": 1, "AddV2": 1,
                            "Identity": 1}
    assert op_counts(out) == {"Placeholder": 1, "Const": 1, "MatMul": 1, "Relu": 1}
    assert [op.name for op in out.get_operations()] == ["x", "w", "h", "y"]  # creation order
    assert snapshot(g) == before and out is not g
    x = np.array([[1.0, -1.0], [0.5, 2.0]], np.float32)
    w = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    np.testing.assert_allclose(run_graph(out, ["y:0"], {"x:0": x})[0], np.maximum(x @ w, 0))


def test_follows_control_edges_and_targets():
    g = Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtypes.float32, [2], name="x")
        tick = counter(x, name="tick")
        with g.control_dependencies([tick]):
            y = tf.identity(x, name="y")
        other = tf.identity(x, name="other")
        del other
        target = tf.add(x, x, name="target")
        del target
    out = prune(g, PassContext(fetches=["y:0"], feeds=["x:0"], targets=["target"]))
    assert [op.name for op in out.get_operations()] == ["x", "tick", "y", "target"]
    assert [c.name for c in out.get_operation_by_name("y").control_inputs] == ["tick"]
    assert y.op.control_inputs[0].name == "tick"


def test_feeding_an_intermediate_cuts_its_inputs():
    g, *_ = _graph()
    ctx = PassContext(fetches=["y:0"], feeds=["h:0"])
    out = prune(g, ctx)
    # h becomes a placeholder of its dtype and static shape, under its own name.
    assert op_counts(out) == {"Placeholder": 1, "Relu": 1}
    h = out.get_operation_by_name("h")
    assert h.type == "Placeholder" and h.attrs["shape"] == [2, 2]
    assert h.attrs["dtype"] is dtypes.float32
    assert ctx.name_map() == {"y:0": "y:0", "h:0": "h:0"}
    v = np.array([[-1.0, 2.0], [3.0, -4.0]], np.float32)
    np.testing.assert_allclose(run_graph(out, ["y:0"], {"h:0": v})[0], np.maximum(v, 0))


def test_feeding_a_constant_makes_it_an_input():
    g, *_ = _graph()
    out = prune(g, PassContext(fetches=["h:0"], feeds=["x:0", "w:0"]))
    assert op_counts(out) == {"Placeholder": 2, "MatMul": 1}
    x = np.eye(2, dtype=np.float32)
    w = np.full((2, 2), 5.0, np.float32)
    np.testing.assert_allclose(run_graph(out, ["h:0"], {"x:0": x, "w:0": w})[0], w)


def test_feeding_one_output_of_a_needed_multi_output_op():
    g = Graph()
    with g.as_default():
        v = tf.constant(np.arange(4, dtype=np.float32), name="v")
        a, b = split2(v, name="split")
        ya = tf.identity(a, name="ya")
        yb = tf.identity(b, name="yb")
    del ya, yb
    ctx = PassContext(fetches=["ya:0", "yb:0"], feeds=["split:1"])
    out = prune(g, ctx)
    names = ctx.name_map()
    assert names["split:1"] != "split:1"  # the op still runs for output 0: a new name
    fed = out.get_tensor_by_name(names["split:1"])
    assert fed.op.type == "Placeholder" and out.get_operation_by_name("split").type == \
        "NdflowTestSplit2"
    got = run_graph(out, ["ya:0", "yb:0"], {names["split:1"]: [7.0, 8.0]})
    np.testing.assert_allclose(got[0], [0.0, 1.0])
    np.testing.assert_allclose(got[1], [7.0, 8.0])


def test_unneeded_fed_placeholder_is_kept_as_an_input():
    g, *_ = _graph()
    out = prune(g, PassContext(fetches=["side:0"], feeds=["x:0"]))
    assert op_counts(out) == {"Placeholder": 1, "Const": 1, "Identity": 1}


def test_bad_names_are_clear_errors():
    g, *_ = _graph()
    with pytest.raises(ValueError, match="fetch 'nope:0' is not a tensor"):
        prune(g, PassContext(fetches=["nope:0"]))
    with pytest.raises(ValueError, match="target 'nope' is not an operation"):
        prune(g, PassContext(targets=["nope"]))
