"""import_graph_def: scopes, input_map, return_elements, TF-written GraphDefs, clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

import ndflow as tf
from ndflow.core import dtypes
from ndflow.core.errors import NotFoundError
from ndflow.core.graph import Graph
from ndflow.ops.importer import import_graph_def
from ndflow.runtime.session import Session

# A GraphDef as TensorFlow 2.21 writes it (compact int_val scalars, MatMul's grad_a/grad_b
# attrs, the `_has_manual_control_dependencies` internal attr), plus an attr from a "future"
# TensorFlow holding its zero value.
TF_GRAPH = """
node { name: "p" op: "Placeholder"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } } } } }
node { name: "w" op: "Const"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT
    tensor_shape { dim { size: 2 } dim { size: 1 } } float_val: 2.0 } } } }
node { name: "k" op: "Const"
  attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "_has_manual_control_dependencies" value { b: true } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 5 } } } }
node { name: "MatMul" op: "MatMul" input: "p" input: "w" input: "^k"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "transpose_a" value { b: false } }
  attr { key: "transpose_b" value { b: false } }
  attr { key: "grad_a" value { b: false } }
  attr { key: "grad_b" value { b: false } } }
node { name: "out" op: "Relu" input: "MatMul" attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "future_flag" value { b: false } } }
versions { producer: 2474 }
"""


def _tf_graph_def() -> graph_pb2.GraphDef:
    return text_format.Parse(TF_GRAPH, graph_pb2.GraphDef())


def _source():
    g = Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtypes.float32, [None, 3], name="x")
        w = tf.constant(np.ones((3, 2), np.float32), name="w")
        h = tf.matmul(x, w, name="h")
        tf.nn.relu(h, name="r")
        tf.constant(np.int32(7), name="k")
    return g.as_graph_def()


def test_imports_a_tensorflow_written_graph_def():
    g = Graph()
    with g.as_default():
        out, mm = import_graph_def(_tf_graph_def(), return_elements=["out:0", "MatMul"])
    assert out.name == "import/out:0" and out.shape == [None, 1]
    assert mm.type == "MatMul" and "future_flag" not in out.op.attrs
    assert "_has_manual_control_dependencies" not in g.get_operation_by_name("import/k").attrs
    assert [c.name for c in mm.control_inputs] == ["import/k"]
    with Session(graph=g) as sess:
        got = sess.run(out, {"import/p:0": [[1.0, -2.0], [3.0, 1.0]]})
    np.testing.assert_allclose(got, [[0.0], [8.0]])


def test_scopes_are_unique_and_empty_name_imports_at_the_root():
    g = Graph()
    with g.as_default():
        import_graph_def(_source())
        import_graph_def(_source())
        with g.name_scope("outer"):
            import_graph_def(_source(), name="net")
        import_graph_def(_source(), name="")
    names = [op.name for op in g.get_operations()]
    assert "import/h" in names and "import_1/h" in names and "outer/net/h" in names
    assert "h" in names


def test_input_map_and_return_elements():
    g = Graph()
    with g.as_default():
        mine = tf.constant(np.full((4, 3), 2.0, np.float32), name="mine")
        r, x, k = import_graph_def(_source(), input_map={"x": mine},
                                   return_elements=["r:0", "x:0", "k"])
    assert x is mine  # a mapped return tensor is the mapped tensor, as in TF
    assert r.shape == [4, 2] and k.name == "import/k"
    assert g.get_operation_by_name("import/h").inputs[0] is mine
    with Session(graph=g) as sess:
        np.testing.assert_allclose(sess.run(r), np.full((4, 2), 6.0))


def test_unknown_op_is_not_found():
    gd = _source()
    gd.node.add(name="bad", op="NoSuchOp")
    with Graph().as_default():
        with pytest.raises(NotFoundError, match="Op type not registered 'NoSuchOp'"):
            import_graph_def(gd)


@pytest.mark.parametrize("edit,error", [
    (lambda gd: gd.node.add(name="bad", op="Identity", input=["nosuch:0"]).attr["T"].type == 1
     or gd.node[-1].attr["T"].CopyFrom(gd.node[0].attr["dtype"]),
     "Node 'bad': Unknown input node 'nosuch:0'"),
    (lambda gd: gd.node[2].input.__setitem__(0, "x:3"),
     "Node 'h': Connecting to invalid output 3 of source node x which has 1 outputs"),
    (lambda gd: gd.node[2].input.append("w"),
     "NodeDef expected inputs 'float, float' do not match 3 inputs specified"),
    (lambda gd: gd.node[2].input.insert(0, "^k"),
     "Control dependencies must come after regular dependencies"),
    (lambda gd: gd.node[2].input.__setitem__(1, "k"),
     "Input 1 of node import/h was passed int32 from k:0 incompatible with expected float."),
    (lambda gd: gd.node[2].attr.pop("T"), "NodeDef missing attr 'T' from Op<name=MatMul"),
    (lambda gd: gd.node[2].attr["T"].CopyFrom(gd.node[4].attr["dtype"]) or
     gd.node[2].attr["T"].__setattr__("type", 10),
     "Value for attr 'T' of bool is not in the list of allowed values"),
    (lambda gd: gd.node[2].attr["transpose_a"].__setattr__("i", 3),
     "AttrValue for attr 'transpose_a' must be a bool, got 3; NodeDef: {{node h}}"),
    (lambda gd: gd.node[2].attr["mystery"].__setattr__("i", 3),
     "NodeDef mentions attr 'mystery' not in Op<name=MatMul"),
    (lambda gd: gd.node.add().CopyFrom(gd.node[0]), "Node 'x' is not unique"),
    (lambda gd: gd.node[0].input.append("^r"), "contains a cycle"),
])
def test_malformed_graph_defs_are_clear_errors_and_leave_the_graph_alone(edit, error):
    gd = _source()
    edit(gd)
    g = Graph()
    with g.as_default():
        tf.constant(1.0, name="existing")
        with pytest.raises(ValueError, match=error.replace("(", r"\(").replace(")", r"\)")):
            import_graph_def(gd)
    assert [op.name for op in g.get_operations()] == ["existing"]


def test_shape_errors_leave_the_graph_alone():
    g = Graph()
    with g.as_default():
        wrong = tf.constant(np.zeros((2, 5), np.float32), name="wrong")
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 5 and 3 for "
                                             "'{{node import/h}} = MatMul"):
            import_graph_def(_source(), input_map={"x:0": wrong})
    assert [op.name for op in g.get_operations()] == ["wrong"]


def test_argument_errors():
    g = Graph()
    with g.as_default():
        c = tf.constant(1.0)
        with pytest.raises(ValueError, match=r"Attempted to map inputs that were not found in "
                                             r"graph_def: \[zz:0\]"):
            import_graph_def(_source(), input_map={"zz:0": c})
        with pytest.raises(ValueError, match="Requested return node 'zz' not found"):
            import_graph_def(_source(), return_elements=["zz"])
        with pytest.raises(ValueError, match="Requested return tensor 'r:1' not found"):
            import_graph_def(_source(), return_elements=["r:1"])
        with pytest.raises(TypeError, match="must be a GraphDef proto"):
            import_graph_def(b"not a proto")
    other = Graph()
    with other.as_default():
        foreign = tf.constant(np.zeros((1, 3), np.float32))
    with g.as_default():
        with pytest.raises(ValueError, match="not an element of the graph being imported"):
            import_graph_def(_source(), input_map={"x:0": foreign})
