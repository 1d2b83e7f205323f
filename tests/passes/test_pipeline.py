"""The pass pipeline: order, switches, registration, name map, purity."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import dtypes
from ndflow.core.graph import Graph
from ndflow.passes import pipeline
from ndflow.passes.pass_config import PassConfig
from ndflow.passes.pass_context import PassContext, op_name_of
from ndflow.passes.pipeline import PassSpec, register_pass, run_pipeline
from tests.passes.graph_helpers import op_counts, run_graph, snapshot, split2


def _graph():
    g = Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtypes.float32, [2], name="x")
        c = tf.constant(np.array([1.0, 2.0], np.float32), name="c")
        c2 = tf.add(c, c, name="c2")
        c3 = tf.add(c, c, name="c3")
        a = tf.add(x, c2, name="a")
        b = tf.add(x, c3, name="b")
        y = tf.nn.relu(tf.add(a, b, name="ab"), name="y")
        dead = tf.add(x, x, name="dead")
    del y, dead
    return g


def test_default_pipeline_order_and_result():
    assert pipeline.pass_names()[:6] == ["prune", "loop_forward_reuse", "shape_specialization",
                                         "constant_folding", "auto_mixed_precision", "cse"]
    g = _graph()
    before = snapshot(g)
    out, names = run_pipeline(g, PassContext(fetches=["y:0"], feeds=["x:0"]))
    assert names == {"y:0": "y:0", "x:0": "x:0"}
    # prune drops `dead`; folding makes c2/c3 constants; CSE merges them and then a/b.
    assert op_counts(out) == {"Placeholder": 1, "Const": 1, "AddV2": 2, "Relu": 1}
    assert snapshot(g) == before
    x = np.array([-3.0, 1.0], np.float32)
    np.testing.assert_allclose(run_graph(out, ["y:0"], {"x:0": x})[0],
                               np.maximum(2 * (x + [2.0, 4.0]), 0))


def test_passes_switch_off_by_name_but_prune_always_runs():
    g = _graph()
    off = PassConfig(disabled_passes=frozenset({"constant_folding", "cse", "prune"}))
    out, _ = run_pipeline(g, PassContext(fetches=["y:0"], feeds=["x:0"], config=off))
    assert op_counts(out) == {"Placeholder": 1, "Const": 1, "AddV2": 5, "Relu": 1}


def test_register_pass_positions_and_errors(monkeypatch):
    monkeypatch.setattr(pipeline, "PIPELINE", list(pipeline.PIPELINE))
    seen = []

    def spy(graph, ctx):
        seen.append(op_counts(graph))
        return graph

    register_pass("spy_before_cse", spy, before="cse")
    register_pass("spy_last", spy)
    names = pipeline.pass_names()
    assert names.index("spy_before_cse") == names.index("cse") - 1 and names[-1] == "spy_last"
    with pytest.raises(ValueError, match="already registered"):
        register_pass("spy_last", spy)
    with pytest.raises(ValueError, match="No graph pass named 'nope'"):
        register_pass("other", spy, after="nope")
    run_pipeline(_graph(), PassContext(fetches=["y:0"], feeds=["x:0"]))
    assert seen[0]["AddV2"] == 3 and seen[1]["AddV2"] == 2  # before and after CSE


def test_pass_must_return_a_graph():
    def bad(graph, ctx):
        return None

    with pytest.raises(TypeError, match="Graph pass 'bad' returned NoneType"):
        run_pipeline(_graph(), PassContext(fetches=["y:0"]), passes=[PassSpec("bad", bad)])


def test_name_map_follows_renames_across_passes():
    g = Graph()
    with g.as_default():
        v = tf.constant(np.arange(4, dtype=np.float32), name="v")
        a, b = split2(v, name="split")
        y = tf.identity(b, name="y")
    del a, y
    out, names = run_pipeline(g, PassContext(fetches=["split:1", "y:0"]))
    assert names["split:1"] == "ConstantFolding/split-1:0"
    got = run_graph(out, [names["split:1"], names["y:0"]])
    np.testing.assert_allclose(got[0], [2.0, 3.0])
    np.testing.assert_allclose(got[1], [2.0, 3.0])


def test_pass_context_helpers():
    ctx = PassContext(fetches=["a:0"], feeds=["b:1"], targets=["t"])
    ctx.rename("a:0", "x:0")
    ctx.rename("x:0", "z:0")
    assert ctx.current_name("a:0") == "z:0"
    assert ctx.preserved_op_names() == {"z", "b", "t"}
    assert op_name_of("scope/op:12") == "scope/op" and op_name_of("op") == "op"
    with pytest.raises(TypeError):
        PassContext(fetches=[object()])
