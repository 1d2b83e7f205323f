"""import_graph_def with control flow: func attrs resolved from GraphDef.library.

Round trips (tf.function / v1 graph -> GraphDef -> bytes -> new Graph -> Session) must give
the original values; a TensorFlow 2.21 GraphDef with StatelessIf/StatelessWhile imports and
runs; FunctionDef input references (`arg`, `node:out_arg:i`) map to the right outputs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

import ndflow as tf
from ndflow.core.errors import NotFoundError
from ndflow.core.graph import Graph
from ndflow.ops.function_library import FunctionGraph
from ndflow.ops.importer import import_graph_def
from ndflow.runtime.session import Session

v1 = tf.compat.v1
DATA = Path(__file__).resolve().parent.parent / "data"


def _t(a, dtype=np.float32):
    return tf.constant(np.asarray(a, dtype))


def _reimport(gd) -> Graph:
    """GraphDef -> bytes -> a new Graph (no name scope)."""
    parsed = graph_pb2.GraphDef()
    parsed.ParseFromString(gd.SerializeToString())
    g = Graph()
    with g.as_default():
        import_graph_def(parsed, name="")
    return g


def _roundtrip_function(fn, *specimens):
    """The imported graph of fn's concrete function, a runner on it, and fn's graph."""
    cf = fn.get_concrete_function(*specimens)
    g = _reimport(cf.graph.as_graph_def())
    feeds = [t.name for t in cf.graph.inputs]
    fetches = [t.name for t in cf.graph.outputs]
    sess = Session(graph=g)

    def run(*values):
        return sess.run(fetches, dict(zip(feeds, values)))
    return g, run


def test_cond_roundtrip_through_bytes():
    @tf.function
    def f(x, y):
        return tf.cond(tf.reduce_sum(x) > y, lambda: x * 2.0 + y, lambda: tf.tanh(x) - y)

    g, run = _roundtrip_function(f, _t([1.0, 2.0]), _t(0.0))
    types = [op.type for op in g.get_operations()]
    assert "StatelessIf" in types
    op = next(op for op in g.get_operations() if op.type == "StatelessIf")
    assert isinstance(op.attrs["then_branch"], FunctionGraph)
    for x, y in [([1.0, 2.0], 0.0), ([1.0, 2.0], 5.0), ([-3.0, 0.5], -4.0)]:
        want = f(_t(x), _t(y)).numpy()
        np.testing.assert_allclose(run(np.float32(x), np.float32(y))[0], want, rtol=1e-6)


def test_while_and_nested_cond_in_while_roundtrip():
    @tf.function
    def collatz_steps(n):
        def body(k, steps):
            k = tf.cond(tf.equal(k % 2, 0), lambda: k // 2, lambda: 3 * k + 1)
            return k, steps + 1
        return tf.while_loop(lambda k, s: k > 1, body, [n, tf.constant(0)])

    _, run = _roundtrip_function(collatz_steps, _t(6, np.int32))
    for n in (6, 7, 27):
        k, steps = run(np.int32(n))
        want = collatz_steps(_t(n, np.int32))
        assert (k, steps) == (want[0].numpy(), want[1].numpy())
    assert run(np.int32(27))[1] == 111

    @tf.function
    def g(x, p):
        return tf.cond(p, lambda: tf.while_loop(lambda y: y < 50.0, lambda y: y * 3.0, [x])[0],
                       lambda: x - 1.0)

    _, run = _roundtrip_function(g, _t(1.0), _t(True, np.bool_))
    assert run(np.float32(1.0), True)[0] == 81.0
    assert run(np.float32(1.0), False)[0] == 0.0


def test_while_with_captures_and_max_iterations_roundtrip():
    @tf.function
    def f(x, scale):
        return tf.while_loop(lambda v: tf.reduce_sum(v) < 100.0, lambda v: v * scale + 1.0,
                             [x], maximum_iterations=4)[0]

    _, run = _roundtrip_function(f, _t([1.0, 2.0]), _t(2.0))
    for x, s in [([1.0, 2.0], 2.0), ([0.5, 0.5], 3.0), ([200.0, 0.0], 2.0)]:
        np.testing.assert_allclose(run(np.float32(x), np.float32(s))[0],
                                   f(_t(x), _t(s)).numpy(), rtol=1e-6)


def test_reexport_of_imported_graph_is_stable():
    @tf.function
    def f(x):
        return tf.while_loop(lambda i: i < 10.0, lambda i: tf.cond(i > 3.0, lambda: i * 2.0,
                                                                     lambda: i + 1.0), [x])

    gd = f.get_concrete_function(_t(1.0)).graph.as_graph_def()
    gd2 = _reimport(gd).as_graph_def()
    assert {fd.signature.name for fd in gd2.library.function} == \
        {fd.signature.name for fd in gd.library.function}
    by_name = {fd.signature.name: fd for fd in gd.library.function}
    for fd in gd2.library.function:
        old = by_name[fd.signature.name]
        assert [a.name for a in fd.signature.input_arg] == \
            [a.name for a in old.signature.input_arg]
        assert dict(fd.ret) == dict(old.ret)
    sess = Session(graph=_reimport(gd2))
    out = f.get_concrete_function(_t(1.0)).graph.outputs[0].name
    inp = f.get_concrete_function(_t(1.0)).graph.inputs[0].name
    assert sess.run(out, {inp: np.float32(1.0)}) == f(_t(1.0))[0].numpy() == 16.0


def test_gradient_through_cond_exported_and_taken_after_import():
    g = Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [3], name="x")
        y = tf.cond(tf.reduce_sum(x) > 0.0, lambda: x * x * 3.0, lambda: tf.tanh(x), name="c")
        dx = v1.gradients(tf.reduce_sum(y), x)[0]
    xs = [np.array([1.0, 2.0, -0.5], np.float32), np.array([-1.0, -2.0, 0.5], np.float32)]
    with Session(graph=g) as s:
        want = [s.run([y, dx], {x: v}) for v in xs]
    np.testing.assert_allclose(want[0][1], 6 * xs[0], rtol=1e-6)
    np.testing.assert_allclose(want[1][1], 1 - np.tanh(xs[1]) ** 2, rtol=1e-6)
    # The gradient If (over gradient branch functions) survives the round trip.
    g2 = _reimport(g.as_graph_def())
    with Session(graph=g2) as s:
        for v, (wy, wdx) in zip(xs, want):
            gy, gdx = s.run([y.name, dx.name], {"x:0": v})
            np.testing.assert_allclose(gy, wy, rtol=1e-6)
            np.testing.assert_allclose(gdx, wdx, rtol=1e-6)
    # Gradients of an imported forward cond / while.
    fwd = Graph()
    with fwd.as_default():
        x = v1.placeholder(tf.float32, [3], name="x")
        y = tf.cond(tf.reduce_sum(x) > 0.0, lambda: x * x * 3.0, lambda: tf.tanh(x), name="c")
        w = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x), [0, x])[1]
    g3 = Graph()
    with g3.as_default():
        import_graph_def(fwd.as_graph_def(), name="")
        xi = g3.get_tensor_by_name("x:0")
        d_cond = v1.gradients(tf.reduce_sum(g3.get_tensor_by_name(y.name)), xi)[0]
        d_while = v1.gradients(tf.reduce_sum(g3.get_tensor_by_name(w.name)), xi)[0]
    with Session(graph=g3) as s:
        for v in xs:
            dc, dw = s.run([d_cond, d_while], {xi: v})
            np.testing.assert_allclose(dc, 6 * v if v.sum() > 0 else 1 - np.tanh(v) ** 2, rtol=1e-6)
            np.testing.assert_allclose(dw, 4 * v ** 3, rtol=1e-5)


def test_tensorflow_graph_def_with_stateless_if_and_while():
    # tests/data/tf_cond_while.pb: written by TensorFlow 2.21 from
    #   @tf.function
    #   def f(x, n):   # x: float32[3], n: int32[]
    #       y = tf.cond(x[0] > 0., lambda: x * 2., lambda: x - 1.)
    #       def body(i, acc):
    #           acc = tf.cond(i % 2 == 0, lambda: acc + tf.cast(i, tf.float32),
    #                         lambda: acc * 1.5)
    #           return i + 1, acc
    #       _, z = tf.while_loop(lambda i, acc: i < n, body, [tf.constant(0), y])
    #       return tf.identity(z, name="result")
    #   f.get_concrete_function(...).graph.as_graph_def()
    # and the values below are TensorFlow's.
    gd = graph_pb2.GraphDef()
    gd.ParseFromString((DATA / "tf_cond_while.pb").read_bytes())
    assert {"StatelessIf", "StatelessWhile"} <= {n.op for n in gd.node}
    g = Graph()
    with g.as_default():
        import_graph_def(gd, name="")
    cases = [(([1.0, 2.0, 3.0], 5), [11.5, 16.0, 20.5]),
             (([-1.0, 2.0, 3.0], 4), [-1.5, 5.25, 7.5]),
             (([2.0, 0.0, 1.0], 0), [4.0, 0.0, 2.0])]
    with Session(graph=g) as s:
        for (x, n), want in cases:
            got = s.run("result:0", {"x:0": np.float32(x), "n:0": np.int32(n)})
            np.testing.assert_allclose(got, want, rtol=1e-6)
    body = g.get_operation_by_name("while").attrs["body"]
    inner = [op for op in body.get_operations() if op.type == "StatelessIf"]
    assert len(inner) == 1 and isinstance(inner[0].attrs["then_branch"], FunctionGraph)
    assert body.outputs[4] is body.inputs[4]  # the captured `n` passes through unchanged


# A hand-written library: output args with number_attr (Unpack), two named outputs (TopKV2),
# type_list_attr (IdentityN), and a ret naming an input arg.
LIST_OUTPUTS = """
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 4 } } } } }
node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } }
  attr { key: "shape" value { shape { } } } }
node { name: "c" op: "StatelessIf" input: "p" input: "x"
  attr { key: "Tcond" value { type: DT_BOOL } }
  attr { key: "Tin" value { list { type: DT_FLOAT } } }
  attr { key: "Tout" value { list { type: DT_FLOAT type: DT_INT32 type: DT_INT32
                                    type: DT_FLOAT } } }
  attr { key: "then_branch" value { func { name: "fn" } } }
  attr { key: "else_branch" value { func { name: "fn" } } } }
library { function {
  signature { name: "fn" input_arg { name: "a" type: DT_FLOAT }
    output_arg { name: "o0" type: DT_FLOAT } output_arg { name: "o1" type: DT_INT32 }
    output_arg { name: "o2" type: DT_INT32 } output_arg { name: "o3" type: DT_FLOAT } }
  node_def { name: "u" op: "Unpack" input: "a"
    attr { key: "T" value { type: DT_FLOAT } } attr { key: "num" value { i: 4 } } }
  node_def { name: "k" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
    attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 2 } } } }
  node_def { name: "tk" op: "TopKV2" input: "a" input: "k:output:0"
    attr { key: "T" value { type: DT_FLOAT } } }
  node_def { name: "idn" op: "IdentityN" input: "u:output:3" input: "k:output:0"
    attr { key: "T" value { list { type: DT_FLOAT type: DT_INT32 } } } }
  ret { key: "o0" value: "u:output:2" } ret { key: "o1" value: "tk:indices:0" }
  ret { key: "o2" value: "idn:output:1" } ret { key: "o3" value: "a" } } }
"""


def test_function_body_references_map_to_flat_outputs():
    gd = text_format.Parse(LIST_OUTPUTS, graph_pb2.GraphDef())
    g = _reimport(gd)
    fn = g.get_operation_by_name("c").attrs["then_branch"]
    assert fn.outputs[3] is fn.inputs[0]
    with Session(graph=g) as s:
        out = s.run([f"c:{i}" for i in range(4)],
                    {"x:0": np.float32([5.0, 1.0, 7.0, 3.0]), "p:0": True})
    assert out[0] == 7.0 and out[2] == 2
    np.testing.assert_array_equal(out[1], [2, 0])
    np.testing.assert_array_equal(out[3], [5.0, 1.0, 7.0, 3.0])


def test_missing_function_is_not_found_and_imports_nothing():
    gd = text_format.Parse(LIST_OUTPUTS, graph_pb2.GraphDef())
    del gd.library.function[:]
    g = Graph()
    with g.as_default():
        v1.placeholder(tf.float32, [], name="before")
        n = len(g.get_operations())
        with pytest.raises(NotFoundError, match=r"Function 'fn'.*node 'c'"):
            import_graph_def(gd)
    assert len(g.get_operations()) == n


@pytest.mark.parametrize("bad, message", [
    ('value: "tk:indices:0"', None),  # control: valid
    ('value: "tk:nope:0"', r"In function 'fn'.*has no output arg 'nope'"),
    ('value: "u:output:4"', r"In function 'fn'.*Output index 4 .* out of range"),
    ('value: "zz:output:0"', r"In function 'fn'.*Unknown input node 'zz:output:0'"),
    ('value: "b"', r"In function 'fn'.*Unknown input 'b'"),
])
def test_bad_function_references_name_the_function(bad, message):
    gd = text_format.Parse(LIST_OUTPUTS.replace('value: "tk:indices:0"', bad),
                           graph_pb2.GraphDef())
    g = Graph()
    with g.as_default():
        if message is None:
            import_graph_def(gd)
            return
        with pytest.raises(ValueError, match=message):
            import_graph_def(gd)
    assert g.get_operations() == []
