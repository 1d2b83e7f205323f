"""Constant folding: constant subgraphs become Consts; state, feeds and limits respected."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.passes.constant_folding import constant_folding
from ndflow.passes.pass_config import PassConfig
from ndflow.passes.pass_context import PassContext
from ndflow.runtime.state import RuntimeContext
from tests.passes.graph_helpers import (
    counter,
    fails,
    op_counts,
    run_graph,
    snapshot,
    split2,
    static_shape,
)

A = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
B = np.array([[0.5, -1.0], [2.0, 0.0]], np.float32)


def _graph():
    g = Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtypes.float32, [2, 2], name="x")
        a = tf.constant(A, name="a")
        b = tf.constant(B, name="b")
        ab = tf.matmul(a, b, name="ab")
        s = tf.add(ab, a, name="s")
        r = tf.nn.relu(s, name="r")
        tf.matmul(x, r, name="y")
    return g


def test_folds_constant_chain_keeping_fetched_names():
    g = _graph()
    before = snapshot(g)
    ctx = PassContext(fetches=["y:0", "r:0"], feeds=["x:0"])
    out = constant_folding(g, ctx)
    assert op_counts(g) == {"Placeholder": 1, "Const": 2, "MatMul": 2, "AddV2": 1, "Relu": 1}
    assert op_counts(out) == {"Placeholder": 1, "Const": 1, "MatMul": 1}
    assert [op.name for op in out.get_operations()] == ["x", "r", "y"]
    r = out.get_operation_by_name("r")
    assert r.type == "Const" and r.attrs["dtype"] is dtypes.float32
    expected_r = np.maximum(A @ B + A, 0)
    np.testing.assert_allclose(r.attrs["value"], expected_r)
    assert snapshot(g) == before
    x = np.array([[1.0, 0.0], [2.0, 1.0]], np.float32)
    got_before = run_graph(g, ["y:0", "r:0"], {"x:0": x})
    got_after = run_graph(out, ["y:0", "r:0"], {"x:0": x})
    for u, v in zip(got_before, got_after):
        np.testing.assert_allclose(u, v)
    np.testing.assert_allclose(got_after[0], x @ expected_r, rtol=1e-6)


def test_placeholders_and_stateful_ops_are_not_folded():
    g = Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtypes.float32, [2], name="x")
        c = tf.constant(np.array([1.0, 2.0], np.float32), name="c")
        px = tf.add(x, c, name="px")  # depends on a placeholder
        t = counter(c, name="tick")  # stateful, constant input
        after = tf.add(t, c, name="after")  # downstream of state
    del px, after
    out = constant_folding(g, PassContext(fetches=["px:0", "after:0"], feeds=["x:0"]))
    assert op_counts(out) == op_counts(g)
    assert snapshot(out) == snapshot(g)


def test_folded_constant_keeps_control_dependencies():
    g = Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtypes.float32, [2], name="x")
        tick = counter(x, name="tick")
        with g.control_dependencies([tick]):
            c = tf.constant(np.array([1.0, 2.0], np.float32), name="c")
        d = tf.add(c, c, name="d")
        e = tf.nn.relu(d, name="e")
    del e
    out = constant_folding(g, PassContext(fetches=["e:0"], feeds=["x:0"]))
    assert op_counts(out) == {"Placeholder": 1, "NdflowTestCounter": 1, "Const": 1}
    e_op = out.get_operation_by_name("e")
    assert e_op.type == "Const"
    assert [c.name for c in e_op.control_inputs] == ["tick"]
    # The stateful op still runs, before the fetch, through the control edge.
    ctx = RuntimeContext()
    np.testing.assert_allclose(run_graph(out, ["e:0"], {"x:0": [0.0, 0.0]}, ctx=ctx)[0],
                               [2.0, 4.0])


def test_size_limit():
    g = Graph()
    with g.as_default():
        c = tf.constant(np.ones((64, 64), np.float32), name="c")
        d = tf.add(c, c, name="d")
    del d
    small = constant_folding(g, PassContext(fetches=["d:0"],
                                            config=PassConfig(max_constant_size_in_bytes=1024)))
    assert op_counts(small) == {"Const": 1, "AddV2": 1}
    big = constant_folding(g, PassContext(fetches=["d:0"]))
    assert op_counts(big) == {"Const": 1}
    np.testing.assert_allclose(run_graph(small, ["d:0"])[0], np.full((64, 64), 2.0))


def test_failing_kernel_is_left_for_the_runtime_to_report():
    g = Graph()
    with g.as_default():
        c = tf.constant(np.array([1.0], np.float32), name="c")
        f = fails(c, name="broken")
        y = tf.add(f, c, name="y")
    del y
    out = constant_folding(g, PassContext(fetches=["y:0"]))
    assert op_counts(out) == op_counts(g)
    with pytest.raises(InvalidArgumentError, match="broken"):
        run_graph(out, ["y:0"])


def test_multi_output_op_folds_to_renamed_constants():
    g = Graph()
    with g.as_default():
        v = tf.constant(np.arange(4, dtype=np.float32), name="v")
        a, b = split2(v, name="split")
        y = tf.add(b, b, name="y")
    del a, y
    ctx = PassContext(fetches=["y:0", "split:0"])
    out = constant_folding(g, ctx)
    assert op_counts(out) == {"Const": 2}
    names = ctx.name_map()
    assert names["split:0"] == "ConstantFolding/split-0:0"
    got = run_graph(out, [names["y:0"], names["split:0"]])
    np.testing.assert_allclose(got[0], [4.0, 6.0])
    np.testing.assert_allclose(got[1], [0.0, 1.0])


def test_fed_constant_is_not_folded():
    g = Graph()
    with g.as_default():
        c = tf.constant(np.array([1.0, 2.0], np.float32), name="c")
        d = tf.add(c, c, name="d")
    del d
    out = constant_folding(g, PassContext(fetches=["d:0"], feeds=["c:0"]))
    assert op_counts(out) == {"Const": 1, "AddV2": 1}


def test_ops_with_static_values_fold_without_constant_inputs():
    g = Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtypes.float32, [3, 5], name="x")
        shape = static_shape(x, name="shape")
        y = tf.add(shape, tf.constant(np.int32(1)), name="y")
        u = tf.compat.v1.placeholder(dtypes.float32, [None, 5], name="u")
        unknown = static_shape(u, name="unknown")
    del y, unknown
    out = constant_folding(g, PassContext(fetches=["y:0", "unknown:0"], feeds=["x:0", "u:0"]))
    # `shape` folds from x's static shape, then `y` from it; `shape` is then unused.
    assert [op.name for op in out.get_operations()] == ["x", "y", "u", "unknown"]
    assert out.get_operation_by_name("y").type == "Const"
    assert out.get_operation_by_name("unknown").type == "NdflowTestShape"
    got = run_graph(out, ["y:0", "unknown:0"], {"x:0": np.zeros((3, 5)), "u:0": np.zeros((2, 5))})
    np.testing.assert_array_equal(got[0], [4, 6])
    np.testing.assert_array_equal(got[1], [2, 5])


def test_ones_like_and_zeros_like_of_static_shapes_fold_without_their_input():
    g = Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtypes.float32, [3, 5], name="x")
        loss = tf.reduce_sum(x * x, name="loss")
        seed = tf.ones_like(loss, name="seed")
        zeros = tf.zeros_like(x, name="zeros")
        tf.add(seed * 2.0, tf.reduce_sum(zeros), name="y")
        u = tf.compat.v1.placeholder(dtypes.bfloat16, [None, 5], name="u")
        tf.ones_like(u, name="unknown")
    out = constant_folding(g, PassContext(fetches=["y:0", "unknown:0", "loss:0"],
                                          feeds=["x:0", "u:0"]))
    # as grappler materializes them: the seed no longer reads the loss, nor zeros x
    assert out.get_operation_by_name("y").type == "Const"
    assert out.get_operation_by_name("unknown").type == "OnesLike"
    got = run_graph(out, ["y:0", "unknown:0"], {"x:0": np.ones((3, 5)),
                                               "u:0": np.zeros((2, 5), np.float32)})
    assert got[0] == 2.0
    np.testing.assert_array_equal(got[1], np.ones((2, 5)))
    g2 = Graph()
    with g2.as_default():
        b = tf.compat.v1.placeholder(dtypes.bfloat16, [2], name="b")
        tf.ones_like(b, name="ones")
    out = constant_folding(g2, PassContext(fetches=["ones:0"], feeds=["b:0"]))
    ones = out.get_operation_by_name("ones")
    assert ones.type == "Const" and ones.outputs[0].dtype == dtypes.bfloat16
    assert not ones.control_inputs


def test_unused_constants_are_removed_but_preserved_ones_stay():
    g = Graph()
    with g.as_default():
        a = tf.constant(np.float32(2.0), name="a")
        b = tf.add(a, a, name="b")
    del b
    out = constant_folding(g, PassContext(fetches=["b:0"]))
    assert [op.name for op in out.get_operations()] == ["b"]
    out = constant_folding(g, PassContext(fetches=["b:0", "a:0"]))
    assert [op.name for op in out.get_operations()] == ["a", "b"]
