"""tf.compat.v1.graph_util's remove_training_nodes and must_run_on_cpu give TF 2.21's results
(tests/fixtures/train_v1_misc), the pruned graph still computes the same values;
tensor_shape_from_node_def_name and the import_graph_def alias."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from google.protobuf import text_format

import ndflow as tf

v1 = tf.compat.v1
WANT = json.loads((Path(__file__).parents[1] / "fixtures" / "train_v1_misc" /
                   "expected.json").read_text())


def _graph_def(text):
    return text_format.Parse(text, v1.GraphDef())


def test_remove_training_nodes_matches_tensorflow():
    want = WANT["remove_training_nodes"]
    gd = _graph_def(want["input"])
    got = v1.graph_util.remove_training_nodes(gd)
    assert got == _graph_def(want["plain"])
    protected = v1.graph_util.remove_training_nodes(gd, protected_nodes=["kept", "check"])
    assert protected == _graph_def(want["protected"])
    assert gd == _graph_def(want["input"])  # the input is not changed


def test_pruned_inference_graph_computes_the_same():
    with tf.Graph().as_default() as g:
        x = v1.placeholder(tf.float32, [3], name="x")
        h = tf.identity(x * 2.0, name="h")
        tf.debugging.check_numerics(h, "bad")
        y = tf.stop_gradient(tf.identity(h + 1.0), name="y")
        tf.negative(y, name="out")
    gd = g.as_graph_def()
    with tf.Graph().as_default() as g2:  # an Identity of a CheckNumerics: TF's IndexError
        tf.identity(tf.debugging.check_numerics(tf.constant(1.0), "bad"), name="h")
    with pytest.raises(IndexError, match="Identity node 'h' has no input left"):
        v1.graph_util.remove_training_nodes(g2.as_graph_def())
    pruned = v1.graph_util.remove_training_nodes(gd, protected_nodes=["out"])
    kinds = {n.op for n in pruned.node}
    assert "CheckNumerics" not in kinds and "StopGradient" not in kinds
    with tf.Graph().as_default():
        (o,) = v1.graph_util.import_graph_def(pruned, return_elements=["out:0"], name="")
        with v1.Session() as sess:
            np.testing.assert_allclose(sess.run(o, {"x:0": [1.0, 2.0, 3.0]}),
                                       [-3.0, -5.0, -7.0])


def test_must_run_on_cpu_matches_tensorflow():
    want = WANT["must_run_on_cpu"]
    for key, text in want["nodes"].items():
        node = text_format.Parse(text, v1.NodeDef())
        got = [v1.graph_util.must_run_on_cpu(node, pin) for pin in (False, True)]
        assert got == want["results"][key], key
    with tf.Graph().as_default():
        c = tf.constant(3)
        f = tf.constant(3.0)
        assert v1.graph_util.must_run_on_cpu(c.op)
        assert not v1.graph_util.must_run_on_cpu(f.op)
    with pytest.raises(AssertionError):
        v1.graph_util.must_run_on_cpu("Const")


def test_tensor_shape_from_node_def_name():
    with tf.Graph().as_default() as g:
        x = v1.placeholder(tf.float32, [None, 3], name="x")
        tf.split(x, [1, 2], axis=1, name="s")
        assert v1.graph_util.tensor_shape_from_node_def_name(g, "x").as_list() == [None, 3]
        assert v1.graph_util.tensor_shape_from_node_def_name(g, "s:1").as_list() == [None, 2]
        with pytest.raises(KeyError):
            v1.graph_util.tensor_shape_from_node_def_name(g, "nope")
    assert v1.graph_util.import_graph_def is v1.import_graph_def
