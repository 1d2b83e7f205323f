"""tf.cond / tf.while_loop: eager, tf.function (If/While ops) and Session graphs."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.passes.cse import cse
from ndflow.passes.pass_config import PassConfig
from ndflow.passes.pass_context import PassContext
from ndflow.runtime.compile import optimize
from tests.passes.amp_helpers import GPU_V100, Mode, run_amp

v1 = tf.compat.v1


def _t(a, dtype=np.float32):
    return tf.constant(np.asarray(a, dtype))


def _types(fn, *args) -> list:
    return [op.type for op in fn.get_concrete_function(*args).graph.get_operations()]


# -- cond ------------------------------------------------------------------------------------

def test_cond_eager_calls_only_the_taken_branch():
    calls = []

    def t():
        calls.append("t")
        return _t(1.0)

    def f():
        calls.append("f")
        return _t(2.0)

    assert tf.cond(_t(True, np.bool_), t, f).numpy() == 1.0
    assert tf.cond(False, t, f).numpy() == 2.0
    assert calls == ["t", "f"]


def test_cond_in_function_builds_stateless_if_and_matches_numpy():
    @tf.function
    def f(x):
        return tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: {"a": x - 1.0}["a"])

    @tf.function
    def one_element_pred(x):
        return tf.cond(tf.reshape(tf.reduce_sum(x) > 0, [1]), lambda: x + 1.0, lambda: x - 1.0)

    assert one_element_pred(_t([-1.0])).numpy().tolist() == [-2.0]
    assert one_element_pred(_t([1.0])).numpy().tolist() == [2.0]
    for a in ([1.0, 2.0], [-3.0, 1.0]):
        x = np.array(a, np.float32)
        want = x * 2 if x.sum() > 0 else x - 1
        np.testing.assert_allclose(f(_t(a)).numpy(), want)
    assert "StatelessIf" in _types(f, _t([1.0, 2.0]))


def test_cond_nested_structures_and_captures():
    outer = _t([10.0, 20.0])

    @tf.function
    def f(x, p):
        return tf.cond(p, lambda: {"s": x + outer, "t": (x, x * 3.0)},
                       lambda: {"s": x - outer, "t": (x * 0.0, x)})

    r = f(_t([1.0, 2.0]), _t(True, np.bool_))
    np.testing.assert_allclose(r["s"].numpy(), [11.0, 22.0])
    np.testing.assert_allclose(r["t"][1].numpy(), [3.0, 6.0])
    r = f(_t([1.0, 2.0]), _t(False, np.bool_))
    np.testing.assert_allclose(r["s"].numpy(), [-9.0, -18.0])
    np.testing.assert_allclose(r["t"][0].numpy(), [0.0, 0.0])


def test_variable_update_in_branch_runs_only_when_taken():
    v = tf.Variable(1.0)

    @tf.function
    def f(p):
        return tf.cond(p, lambda: v.assign_add(5.0), lambda: v.read_value() * 1.0)

    assert f(_t(False, np.bool_)).numpy() == 1.0 and v.numpy() == 1.0
    assert f(_t(True, np.bool_)).numpy() == 6.0 and v.numpy() == 6.0
    assert "If" in _types(f, _t(True, np.bool_))


def test_cond_in_session_graph():
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [])
        v = tf.Variable(0.0)
        y = v1.cond(x > 0, lambda: [x * 3.0], lambda: [v.assign_add(1.0)])
        with v1.Session() as s:
            s.run(v1.global_variables_initializer())
            assert s.run(y, {x: 2.0}) == 6.0
            assert s.run(v) == 0.0
            assert s.run(y, {x: -1.0}) == 1.0
            assert s.run(v) == 1.0


def test_cond_errors():
    with pytest.raises(TypeError, match="'true_fn' must be callable"):
        tf.cond(_t(True, np.bool_), 1.0, lambda: 2.0)

    @tf.function
    def bad_dtype(x):
        return tf.cond(x > 0, lambda: x, lambda: tf.cast(x, tf.int32))

    with pytest.raises(TypeError, match="true_fn and false_fn arguments to tf.cond must have "
                       "the same number, type, and overall structure"):
        bad_dtype(_t(1.0))

    @tf.function
    def bad_structure(x):
        return tf.cond(x > 0, lambda: (x, x), lambda: x)

    with pytest.raises(TypeError, match="same nested structure"):
        bad_structure(_t(1.0))

    @tf.function
    def bad_pred(x):
        return tf.cond(tf.constant(1), lambda: x, lambda: x)

    with pytest.raises(TypeError, match="Input 'pred' passed int32 expected bool"):
        bad_pred(_t(1.0))


def test_error_inside_branch_names_the_inner_node():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.bool)])
    def f(x, p):
        return tf.cond(p, lambda: tf.reshape(x, [5], name="bad_reshape"), lambda: x)

    np.testing.assert_allclose(f(_t([1.0, 2.0]), _t(False, np.bool_)).numpy(), [1.0, 2.0])
    with pytest.raises(InvalidArgumentError, match="bad_reshape"):
        f(_t([1.0, 2.0]), _t(True, np.bool_))


# -- while_loop ------------------------------------------------------------------------------

def _sum_below(n):
    return tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + tf.cast(i, tf.float32)),
                         [tf.constant(0), tf.constant(0.0)])


def test_while_eager_function_and_session_agree_with_numpy():
    i, s = _sum_below(_t(5, np.int32))
    assert i.numpy() == 5 and s.numpy() == 10.0
    f = tf.function(_sum_below)
    i, s = f(_t(7, np.int32))
    assert i.numpy() == 7 and s.numpy() == float(sum(range(7)))
    assert "StatelessWhile" in _types(f, _t(7, np.int32))
    g = tf.Graph()
    with g.as_default():
        n = v1.placeholder(tf.int32, [])
        out = _sum_below(n)
        with v1.Session() as sess:
            assert sess.run(out, {n: 4}) == [4, 6.0]


def test_while_eager_returns_tensors_for_python_loop_variables():
    # TF converts the final loop variables: Python numbers come back as tensors
    i, x, ta = tf.while_loop(lambda i, x, ta: i < 2,
                             lambda i, x, ta: (i + 1, x * 2.0, ta.write(i, 1.0)),
                             (0, 1.5, tf.TensorArray(tf.float32, size=2)))
    assert isinstance(i, tf.Tensor) and i.dtype == tf.int32 and i.numpy() == 2
    assert isinstance(x, tf.Tensor) and x.dtype == tf.float32 and x.numpy() == 6.0
    assert isinstance(ta, tf.TensorArray)
    i, sp = tf.while_loop(lambda i, s: i < 1, lambda i, s: (i + 1, tf.sparse.add(s, s)),
                          [0, tf.sparse.SparseTensor([[0, 1]], [3], [2, 2])])
    assert i.numpy() == 1 and isinstance(sp, tf.sparse.SparseTensor)
    np.testing.assert_array_equal(sp.values.numpy(), [6])


def test_while_single_var_structures_and_maximum_iterations():
    @tf.function
    def f(x):
        a = tf.while_loop(lambda x: x < 100.0, lambda x: x * 2.0, [x], maximum_iterations=3)
        b = tf.while_loop(lambda x: x < 100.0, lambda x: x * 2.0, x)
        c = tf.while_loop(lambda d: d["k"] < 5.0, lambda d: {"k": d["k"] + 1.0}, [{"k": x}])
        return a, b, c

    a, b, c = f(_t(1.0))
    assert isinstance(a, list) and a[0].numpy() == 8.0
    assert b.numpy() == 128.0 and c[0]["k"].numpy() == 5.0
    eager = tf.while_loop(lambda x: x < 100.0, lambda x: x * 2.0, [_t(1.0)],
                          maximum_iterations=2)
    assert eager[0].numpy() == 4.0
    assert v1.while_loop(lambda x: x < 3, lambda x: x + 1, [tf.constant(0)]).numpy() == 3


def test_while_shape_invariants_and_errors():
    @tf.function
    def grow(x):
        return tf.while_loop(lambda x: tf.size(x) < 8, lambda x: tf.concat([x, x], 0), [x],
                             shape_invariants=[tf.TensorShape([None])])

    assert grow(_t([1.0]))[0].numpy().tolist() == [1.0] * 8

    @tf.function
    def no_invariant(x):
        return tf.while_loop(lambda x: tf.size(x) < 8, lambda x: tf.concat([x, x], 0), [x])

    with pytest.raises(ValueError, match="enters the loop with shape .*shape_invariants"):
        no_invariant(_t([1.0]))

    @tf.function
    def bad_dtype(x):
        return tf.while_loop(lambda i: i < 3, lambda i: tf.cast(i, tf.float32), [x])

    with pytest.raises(TypeError, match="enters the loop with type <dtype: 'int32'> but has "
                       "type <dtype: 'float32'> after 1 iteration"):
        bad_dtype(_t(1, np.int32))
    with pytest.raises(TypeError, match="'cond' must be callable"):
        tf.while_loop(1, lambda i: i, [1])


def test_while_with_variable_updates_and_captures():
    v = tf.Variable(0.0)
    scale = _t(2.0)

    @tf.function
    def f(n):
        def body(i):
            v.assign_add(tf.cast(i, tf.float32) * scale)
            return i + 1
        return tf.while_loop(lambda i: i < n, body, [tf.constant(0)])

    assert f(_t(4, np.int32))[0].numpy() == 4
    assert v.numpy() == 12.0
    assert "While" in _types(f, _t(4, np.int32))


def test_nested_cond_in_while_and_while_in_cond():
    @tf.function
    def collatz_steps(n):
        def body(k, steps):
            k = tf.cond(tf.equal(k % 2, 0), lambda: k // 2, lambda: 3 * k + 1)
            return k, steps + 1
        return tf.while_loop(lambda k, s: k > 1, body, [n, tf.constant(0)])[1]

    def collatz(n):
        s = 0
        while n > 1:
            n, s = (n // 2 if n % 2 == 0 else 3 * n + 1), s + 1
        return s

    for n in (6, 7, 27):
        assert collatz_steps(_t(n, np.int32)).numpy() == collatz(n)

    @tf.function
    def g(x, p):
        return tf.cond(p, lambda: tf.while_loop(lambda y: y < 50.0, lambda y: y * 3.0, [x])[0],
                       lambda: x)

    assert g(_t(1.0), _t(True, np.bool_)).numpy() == 81.0
    assert g(_t(1.0), _t(False, np.bool_)).numpy() == 1.0


# -- graph export and passes ---------------------------------------------------------------------

def test_graph_def_exports_branch_functions_to_library():
    @tf.function
    def f(x):
        y = tf.cond(x > 0, lambda: x * 2.0, lambda: x)
        return tf.while_loop(lambda i: i < 10.0, lambda i: i + y, [y])

    gd = f.get_concrete_function(_t(1.0)).graph.as_graph_def()
    ops = {n.op: n for n in gd.node}
    assert {"StatelessIf", "StatelessWhile"} <= set(ops)
    names = {fn.signature.name for fn in gd.library.function}
    branch = ops["StatelessIf"].attr["then_branch"].func.name
    assert branch in names and ops["StatelessWhile"].attr["body"].func.name in names
    fd = next(fn for fn in gd.library.function if fn.signature.name == branch)
    assert [n.op for n in fd.node_def][-1] == "Identity"
    assert fd.ret["output_0"].startswith("Identity:output:0")


def test_cse_keeps_stateful_if_and_amp_leaves_functional_ops_alone():
    v = tf.Variable(1.0)

    @tf.function
    def f(p):
        a = tf.cond(p, lambda: v.assign_add(1.0), lambda: v.read_value())
        b = tf.cond(p, lambda: v.assign_add(1.0), lambda: v.read_value())
        return a, b

    g = f.get_concrete_function(_t(True, np.bool_)).graph
    out = cse(g, PassContext(fetches=[t.name for t in g.outputs]))
    assert [op.type for op in out.get_operations()].count("If") == 2
    amp = run_amp(g, [t.name for t in g.outputs], Mode.CUDA, GPU_V100)
    assert [op.type for op in amp.get_operations()].count("If") == 2
    a, b = f(_t(True, np.bool_))
    assert (a.numpy(), b.numpy()) == (2.0, 3.0)


def test_pipeline_runs_inside_branches():
    @tf.function
    def f(x):
        return tf.cond(x > 0, lambda: x + (tf.constant(2.0) * 3.0), lambda: x)

    cf = f.get_concrete_function(_t(1.0))
    g, *_ = optimize(cf.graph, cf.graph.inputs, cf.graph.outputs, [], PassConfig())
    assert any(op.type == "StatelessIf" for op in g.get_operations())
    assert f(_t(1.0)).numpy() == 7.0


def test_cond_branches_returning_ops_run_them_only_when_taken():
    # cond_v2: an Operation a branch returns becomes identity(pred) control-dependent on it.
    with tf.Graph().as_default() as g:
        v = tf.Variable(1.0)
        p = v1.placeholder(tf.bool, [])
        r = tf.cond(p, lambda: v.assign_add(1.0).op, tf.no_op)
        pair = tf.cond(p, lambda: [tf.group(v.assign_add(10.0)), v.read_value() * 2.0],
                       lambda: [tf.no_op(), v.read_value()])
        assert r.name == "cond/Identity:0" and r.dtype is tf.bool
        assert [op.type for op in g.get_operations()].count("If") == 2
        with v1.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(r, {p: True}) and sess.run(v) == 2.0
            assert not sess.run(r, {p: False}) and sess.run(v) == 2.0
            assert sess.run(pair, {p: False}) == [False, 2.0] and sess.run(v) == 2.0
            assert sess.run(pair[0], {p: True}) and sess.run(v) == 12.0

    w = tf.Variable(1.0)

    @tf.function
    def f(q):
        return tf.cond(q, lambda: tf.group(w.assign_add(1.0)), tf.no_op)

    assert f(_t(True, np.bool_)).numpy() and w.numpy() == 2.0
    assert not f(_t(False, np.bool_)).numpy() and w.numpy() == 2.0
    assert "If" in _types(f, _t(True, np.bool_))


def test_while_gradient_seeded_by_a_gradient_of_unknown_shape():
    """The incoming gradient of a loop output may know less of its shape than the output
    (here the gradient of a Slice of dynamic size, a Pad of unknown paddings): the backward
    loop still builds, and the gradient equals NumPy's (a Keras Bidirectional LSTM over
    masked text in fit hit this)."""
    w = tf.Variable(np.full((4, 4), 0.5, np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32),
                                  tf.TensorSpec([], tf.int32)])
    def grad(x, cols):
        with tf.GradientTape() as tape:
            _, h = tf.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tf.matmul(h, w)),
                                 [tf.constant(0), x])
            y = tf.slice(h, [0, 0], tf.stack([-1, cols]))
            loss = tf.reduce_sum(y)
        return tape.gradient(loss, w)

    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    cols = 2
    w0 = np.full((4, 4), 0.5)
    seed = np.zeros((2, 4))
    seed[:, :cols] = 1.0
    # d/dW sum(x W W W)[:, :cols] = sum over the three positions of W in the product
    h0, h1, h2 = x, x @ w0, x @ w0 @ w0
    want = (h0.T @ seed @ w0.T @ w0.T + h1.T @ seed @ w0.T + h2.T @ seed)
    np.testing.assert_allclose(grad(x, tf.constant(cols)).numpy(), want, rtol=1e-5)
