"""TF1 graph freezing (`tf.compat.v1.graph_util`): a graph TensorFlow 2.21 froze
(tests/fixtures/frozen_graph, made by its generate.py) loads and runs here; the same graph
frozen by ndflow has TensorFlow's ops (variables as Consts, their reads as Identity, a
gather as GatherV2), no unused variable, and the same output; and the errors."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

tf1 = tf.compat.v1
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "frozen_graph"
EXPECTED = np.load(FIXTURES / "expected.npz")
sys.path.insert(0, str(FIXTURES))
import frozen_model  # noqa: E402 - the graph TensorFlow froze for the fixture


def _run_frozen(graph_def):
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        with tf1.Session(graph=g) as sess:
            return sess.run("y:0", {"x:0": EXPECTED["x"], "ids:0": EXPECTED["ids"]})


def _model(freeze, **kwargs):
    return frozen_model.run(tf, lambda sess, y: freeze(sess, y, **kwargs))


def _freeze(sess, y, **kwargs):
    return tf1.graph_util.convert_variables_to_constants(sess, sess.graph.as_graph_def(),
                                                         ["y"], **kwargs)


def test_tensorflows_frozen_graph_runs():
    frozen = tf1.GraphDef.FromString((FIXTURES / "frozen.pb").read_bytes())
    np.testing.assert_array_equal(_run_frozen(frozen), EXPECTED["y"])


def test_freezing_matches_tensorflows():
    theirs = tf1.GraphDef.FromString((FIXTURES / "frozen.pb").read_bytes())
    ours = _model(_freeze)
    assert sorted(n.op for n in ours.node) == sorted(n.op for n in theirs.node)
    assert {n.name for n in ours.node if n.op == "Const" and n.name in ("w", "emb")} == \
        {"w", "emb"}
    assert "unused" not in {n.name for n in ours.node}
    np.testing.assert_array_equal(_run_frozen(ours), EXPECTED["y"])


def test_the_lists_and_extract_sub_graph():
    kept = _model(_freeze, variable_names_blacklist=["emb"])
    assert {n.name: n.op for n in kept.node}["emb"] == "VarHandleOp"
    only_w = _model(_freeze, variable_names_whitelist=["w"])
    ops = {n.name: n.op for n in only_w.node}
    assert ops["w"] == "Const" and ops["emb"] == "VarHandleOp"
    sub = _model(lambda sess, y: tf1.graph_util.extract_sub_graph(
        sess.graph.as_graph_def(), ["ids"]))
    assert [n.name for n in sub.node] == ["ids"]
    with pytest.raises(AssertionError, match="missing is not in graph"):
        _model(lambda sess, y: tf1.graph_util.extract_sub_graph(
            sess.graph.as_graph_def(), ["missing"]))
    with pytest.raises(TypeError, match="graph_def must be a graph_pb2.GraphDef proto"):
        tf1.graph_util.extract_sub_graph("not a graph", ["y"])


def test_a_variable_written_in_the_graph_is_refused():
    def freeze_assign(sess, y):
        with sess.graph.as_default():
            w = [v for v in tf1.global_variables() if v.op.name == "w"][0]
            up = w.assign_add([[1.0], [1.0], [1.0]], name="up")
        return tf1.graph_util.convert_variables_to_constants(
            sess, sess.graph.as_graph_def(), [up.op.name])

    with pytest.raises(ValueError, match=r"node up.*AssignAddVariableOp.*uses variable w"):
        _model(freeze_assign)
