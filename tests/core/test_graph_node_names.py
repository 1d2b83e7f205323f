"""Node names as TensorFlow 2.21 gives them (tests/fixtures/graph_node_names: graphs.py builds
the graphs, generate.py recorded TF's names): a captured eager tensor or variable handle is
the placeholder named after the op and argument taking it (`MatMul/ReadVariableOp/resource`,
`add/y`), a Python shape or axis the constant `Reshape/shape`, `concat/axis`,
`pred/dimension`, and conv2d/bias_add read a variable in their own scope
(`Conv2D/ReadVariableOp`). Where ndflow differs: TF's tf.function graph ends with a NoOp for
its control outputs, and TF makes a small captured eager tensor (128 elements or fewer) a Const
node, still fed at each call, where ndflow's is a Placeholder."""

from __future__ import annotations

import json

import pytest

import ndflow as tf
from tests import fixture_modules

GRAPHS = fixture_modules.load("graph_node_names", "graphs")
with open(fixture_modules.FIXTURES / "graph_node_names" / "expected.json") as _f:
    EXPECTED = json.load(_f)


@pytest.mark.parametrize("kind,build", [("function", GRAPHS.function_graph),
                                        ("tf1", GRAPHS.tf1_graph)])
def test_node_names_are_tensorflows(kind, build):
    want = [node for node in EXPECTED[kind] if node[1] != "NoOp"]
    got = GRAPHS.nodes(build(tf))
    assert [name for name, _ in got] == [name for name, _ in want]
    captured_consts = {name for name, t in want if t == "Const"} & \
        {name for name, t in got if t == "Placeholder"}
    assert captured_consts <= ({"add/y"} if kind == "function" else set())
    assert [node for node in got if node[0] not in captured_consts] == \
        [node for node in want if node[0] not in captured_consts]
