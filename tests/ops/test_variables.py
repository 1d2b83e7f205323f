"""`tf.Variable` in eager mode, TF1 graphs and tf.function; gradients; v1 collections and
initializers; `get_variable` / `variable_scope` sharing rules."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

import ndflow  # noqa: F401 - registers ops and kernels
import ndflow as tf
from ndflow.autodiff.gradients import gradients
from ndflow.autodiff.tape import GradientTape
from ndflow.core import dtypes
from ndflow.core.errors import FailedPreconditionError
from ndflow.core.graph import Graph, GraphKeys, SymbolicTensor
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import EagerTensor
from ndflow.ops import init_ops_v1
from ndflow.ops import variable_scope as vs
from ndflow.ops import variables as V
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import constant, placeholder
from ndflow.ops.linalg import matmul
from ndflow.ops.reduction import reduce_sum
from ndflow.runtime.function import function
from ndflow.runtime.plan import Plan
from ndflow.runtime.state import EAGER_CONTEXT, RuntimeContext


def run(graph, fetches, ctx, targets=(), feeds=None):
    feeds = feeds or {}
    plan = Plan(graph, list(feeds), list(fetches), list(targets), ctx)
    return [o.numpy() for o in plan.run([torch.as_tensor(np.asarray(v))
                                         for v in feeds.values()])]


# -- eager -----------------------------------------------------------------------------------------

def test_eager_basics_and_repr():
    v = V.Variable([1.0, 2.0], name="v")
    assert v.name == "v:0" and v.dtype is dtypes.float32 and v.shape == TensorShape([2])
    assert v.trainable and v.get_shape() == TensorShape([2])
    assert isinstance(v.handle, EagerTensor) and v.handle.dtype is dtypes.resource
    assert repr(v) == ("<tf.Variable 'v:0' shape=(2,) dtype=float32, numpy=array([1., 2.], "
                       "dtype=float32)>")
    assert repr(V.Variable(3, name="s")) == "<tf.Variable 's:0' shape=() dtype=int32, numpy=3>"
    assert repr(V.Variable([[1, 2], [3, 4]])).endswith(
        "numpy=\narray([[1, 2],\n       [3, 4]], dtype=int32)>")
    # inside a tf.function (an error message formatting it, say): TF shows no value
    seen = []
    ndflow.function(lambda: seen.append(repr(v)) or 0)()
    assert seen == ["<tf.Variable 'v:0' shape=(2,) dtype=float32>"]
    assert v.initializer is None
    with pytest.raises(RuntimeError, match="not supported when eager"):
        v.initial_value  # noqa: B018
    with pytest.raises(AttributeError, match="Tensor.op is undefined"):
        v.op  # noqa: B018


def test_eager_constructor_options():
    v = V.Variable(lambda: constant([1.0, 2.0, 3.0]), trainable=False, dtype=dtypes.float32)
    assert not v.trainable and v.name == "Variable:0"
    np.testing.assert_array_equal(v.numpy(), [1, 2, 3])
    assert V.Variable([1, 2], dtype=dtypes.float64).dtype is dtypes.float64
    u = V.Variable([1.0, 2.0], shape=TensorShape([None]))
    assert u.shape.as_list() == [None]
    u.assign([1.0, 2.0, 3.0])                      # unknown declared shape may change
    np.testing.assert_array_equal(u.numpy(), [1, 2, 3])
    with pytest.raises(ValueError, match="must be specified"):
        V.Variable(None)
    with pytest.raises(ValueError, match="not compatible"):
        V.Variable([1.0, 2.0], shape=[3])


def test_eager_assign_family():
    v = V.Variable([1.0, 2.0])
    assert v.assign([3.0, 4.0]) is v
    assert v.assign_add([1.0, 1.0]) is v
    assert v.assign_sub([0.5, 0.5], read_value=False) is None
    np.testing.assert_array_equal(v.read_value().numpy(), [3.5, 4.5])
    np.testing.assert_array_equal(v.value().numpy(), [3.5, 4.5])
    v.load([0.0, 1.0])
    np.testing.assert_array_equal(np.asarray(v), [0.0, 1.0])


def test_eager_assign_errors():
    v = V.Variable([1.0, 2.0], name="v")
    with pytest.raises(ValueError, match=r"Cannot assign value to variable ' v:0': Shape "
                                         r"mismatch\.The variable shape \(2,\), and the assigned "
                                         r"value shape \(3,\) are incompatible\."):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="Tensor conversion requested dtype float32 for Tensor "
                                         "with dtype int32"):
        v.assign(constant([1, 2]))
    with pytest.raises(ValueError, match="Incompatible type conversion requested to type int32"):
        convert_to_tensor(v, dtype=dtypes.int32)
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])    # unchanged after failures


def test_eager_conversion_and_operators():
    v = V.Variable([[1.0, 2.0], [3.0, 4.0]])
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    np.testing.assert_array_equal((v + 1).numpy(), a + 1)
    np.testing.assert_array_equal((1 - v).numpy(), 1 - a)
    np.testing.assert_array_equal((v * v).numpy(), a * a)
    np.testing.assert_array_equal((v / 2).numpy(), a / 2)
    np.testing.assert_array_equal((v @ v).numpy(), a @ a)
    np.testing.assert_array_equal((-v).numpy(), -a)
    np.testing.assert_array_equal(v[1].numpy(), a[1])
    np.testing.assert_array_equal((v > 2).numpy(), a > 2)
    np.testing.assert_array_equal(matmul(v, constant(a)).numpy(), a @ a)
    np.testing.assert_array_equal(convert_to_tensor(v).numpy(), a)
    r = a + v                                      # NumPy defers to the variable
    assert isinstance(r, EagerTensor)
    np.testing.assert_array_equal(r.numpy(), 2 * a)
    assert float(V.Variable(2.5)) == 2.5 and int(V.Variable(3)) == 3


def test_variable_ref_and_hash():
    v, w = V.Variable(1.0), V.Variable(1.0)
    assert {v.ref(), w.ref(), v.ref()} == {v.ref(), w.ref()}
    assert v.ref().deref() is v
    assert len({v: 1, w: 2}) == 2


def test_eager_variable_storage_freed_on_gc():
    before = set(EAGER_CONTEXT.resources)
    vs_ = [V.Variable(np.zeros(3, np.float32)) for _ in range(5)]
    mine = set(EAGER_CONTEXT.resources) - before
    assert len(mine) == 5
    del vs_
    gc.collect()
    # Only these variables' storage is checked: other tests' garbage may be freed meanwhile.
    assert not mine & set(EAGER_CONTEXT.resources)


# -- gradients -------------------------------------------------------------------------------------

def test_tape_watches_trainable_variables_only():
    w = V.Variable([1.0, 2.0, 3.0])
    c = V.Variable([1.0, 1.0, 1.0], trainable=False)
    with GradientTape() as tape:
        loss = reduce_sum(w * w * c)
    gw, gc_ = tape.gradient(loss, [w, c])
    np.testing.assert_allclose(gw.numpy(), [2.0, 4.0, 6.0])
    assert gc_ is None
    assert tape.watched_variables() == (w,)


def test_tape_explicit_watch_and_no_auto_watch():
    w = V.Variable([1.0, 2.0])
    c = V.Variable([3.0, 4.0], trainable=False)
    with GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(c)
        loss = reduce_sum(w * c)
    gw, gc_ = tape.gradient(loss, [w, c])
    assert gw is None
    np.testing.assert_allclose(gc_.numpy(), [1.0, 2.0])


def test_tape_gradient_matches_finite_differences():
    x = np.array([[0.5, -1.0], [2.0, 0.25]])
    w = V.Variable(x)
    with GradientTape() as tape:
        y = w @ w
        loss = reduce_sum(y * y)
    g = tape.gradient(loss, w).numpy()

    def f(m):
        return float(np.sum((m @ m) ** 2))

    num = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1e-6
        num[i] = (f(x + e) - f(x - e)) / 2e-6
    np.testing.assert_allclose(g, num, rtol=1e-6)


# -- graph mode ---------------------------------------------------------------------------------

def test_graph_ops_named_like_tf():
    g = Graph()
    with g.as_default():
        V.Variable([[1.0, 2.0]])
        w = V.Variable(3.0, name="w")
    names = [(o.name, o.type) for o in g.get_operations()]
    assert names == [
        ("Variable/Initializer/initial_value", "Const"), ("Variable", "VarHandleOp"),
        ("Variable/IsInitialized/VarIsInitializedOp", "VarIsInitializedOp"),
        ("Variable/Assign", "AssignVariableOp"),
        ("Variable/Read/ReadVariableOp", "ReadVariableOp"),
        ("w/Initializer/initial_value", "Const"), ("w", "VarHandleOp"),
        ("w/IsInitialized/VarIsInitializedOp", "VarIsInitializedOp"),
        ("w/Assign", "AssignVariableOp"), ("w/Read/ReadVariableOp", "ReadVariableOp")]
    assert w.name == "w:0" and w.op.name == "w" and w.graph is g
    assert w.initializer.name == "w/Assign"
    assert w.initial_value.name == "w/Initializer/initial_value:0"
    assert w._as_graph_element().name == "w/Read/ReadVariableOp:0"
    assert repr(w) == "<tf.Variable 'w:0' shape=() dtype=float32>"
    assert g.get_operation_by_name("w").attrs["shared_name"] == "w"


def test_graph_collections_and_initializers():
    g = Graph()
    with g.as_default():
        a = V.Variable(1.0, name="a")
        b = V.Variable(2.0, name="b", trainable=False)
        c = V.Variable(3.0, name="c", collections=[GraphKeys.LOCAL_VARIABLES], trainable=False)
        assert V.global_variables() == [a, b] and V.trainable_variables() == [a]
        assert V.local_variables() == [c]
        init = V.global_variables_initializer()
        local_init = V.local_variables_initializer()
        read = a.value() + b.value()
    assert init.type == "NoOp" and init.name == "init"
    assert set(init.control_inputs) == {a.initializer, b.initializer}
    ctx = RuntimeContext()
    with pytest.raises(FailedPreconditionError, match="Could not find variable a"):
        run(g, [read], ctx)
    run(g, [], ctx, [init, local_init])
    assert run(g, [read], ctx)[0] == 3.0
    assert V.global_variables() == []                        # eager: no collections


def test_graph_assign_returns_value_after_update():
    g = Graph()
    with g.as_default():
        v = V.Variable([1.0, 2.0], name="v")
        x = placeholder(dtypes.float32, [2])
        after_assign = v.assign(x)
        after_add = v.assign_add([1.0, 1.0])
        sub_op = v.assign_sub([0.5, 0.5], read_value=False)
        rv = v.read_value()
    assert isinstance(after_assign, SymbolicTensor) and sub_op.type == "AssignSubVariableOp"
    assert rv.op.type == "Identity" and rv.op.inputs[0].op.name == "Read/ReadVariableOp"
    ctx = RuntimeContext()
    run(g, [], ctx, [v.initializer])
    np.testing.assert_array_equal(run(g, [after_assign], ctx, feeds={x: [5.0, 6.0]})[0], [5, 6])
    np.testing.assert_array_equal(run(g, [after_add], ctx)[0], [6, 7])
    run(g, [], ctx, [sub_op])
    np.testing.assert_array_equal(run(g, [rv], ctx)[0], [5.5, 6.5])
    with g.as_default(), pytest.raises(ValueError, match="Shape mismatch"):
        v.assign([1.0, 2.0, 3.0])


def test_graph_initialized_value_and_initial_value_chain():
    g = Graph()
    with g.as_default():
        a = V.Variable([1.0, 2.0], name="a")
        b = V.Variable(a.initialized_value() * 2.0, name="b")
        init = V.global_variables_initializer()
    ctx = RuntimeContext()
    run(g, [], ctx, [init])
    np.testing.assert_array_equal(run(g, [b.value()], ctx)[0], [2.0, 4.0])


def test_tf_gradients_wrt_variable():
    g = Graph()
    with g.as_default():
        w = V.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
        b = V.Variable([0.5, -0.5], name="b")
        x = placeholder(dtypes.float32, [1, 2])
        y = matmul(x, w) + b
        loss = reduce_sum(y * y)
        gw, gb = gradients(loss, [w, b])
    ctx = RuntimeContext()
    run(g, [], ctx, [w.initializer, b.initializer])
    xv = np.array([[1.0, -2.0]], np.float32)
    got_w, got_b = run(g, [gw, gb], ctx, feeds={x: xv})
    wv, bv = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.5, -0.5])
    yv = xv @ wv + bv
    np.testing.assert_allclose(got_w, xv.T @ (2 * yv), rtol=1e-6)
    np.testing.assert_allclose(got_b, (2 * yv).sum(0), rtol=1e-6)


def test_graph_variable_used_from_eager_code_enters_its_graph():
    g = Graph()
    with g.as_default():
        v = V.Variable(2.0, name="v")
    t = v.value()                 # eager code, graph variable: a read in v's graph
    assert isinstance(t, SymbolicTensor) and t.graph is g


# -- tf.function -----------------------------------------------------------------------------------

def test_function_captures_variable_handle():
    v = V.Variable([1.0, 2.0])

    @function
    def step(x):
        v.assign_add(x)
        return v.read_value() * 2.0

    np.testing.assert_array_equal(step(constant([1.0, 1.0])).numpy(), [4.0, 6.0])
    np.testing.assert_array_equal(step(constant([1.0, 1.0])).numpy(), [6.0, 8.0])
    np.testing.assert_array_equal(v.numpy(), [3.0, 4.0])


def test_function_gradient_through_captured_variable():
    w = V.Variable([1.0, 2.0])

    @function
    def loss_fn():
        return reduce_sum(w * w)

    with GradientTape() as tape:
        loss = loss_fn()
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), [2.0, 4.0])


def test_variable_created_in_function_is_lifted():
    created = []

    @function
    def f():
        if not created:
            created.append(V.Variable([1.0, 2.0]))
        return created[0].read_value() + 1.0

    np.testing.assert_array_equal(f().numpy(), [2.0, 3.0])
    assert isinstance(created[0].handle, EagerTensor)


# -- get_variable / variable_scope --------------------------------------------------------------

def test_get_variable_names_and_sharing():
    g = Graph()
    with g.as_default():
        with vs.variable_scope("foo"):
            w = vs.get_variable("w", [2, 3], initializer=init_ops_v1.zeros_initializer())
        assert w.name == "foo/w:0"
        assert [o.name for o in g.get_operations()][:2] == ["foo/w/Initializer/zeros", "foo/w"]
        with vs.variable_scope("foo", reuse=True):
            assert vs.get_variable("w", [2, 3]) is w
        with vs.variable_scope("foo", reuse=vs.AUTO_REUSE):
            assert vs.get_variable("w") is w
            assert vs.get_variable("q", [1]).name == "foo/q:0"
        with vs.variable_scope("foo") as scope:
            assert scope.name == "foo" and scope.original_name_scope == "foo_3/"
            scope.reuse_variables()
            assert vs.get_variable("w") is w
            assert constant(1.0, name="c").name == "foo_3/c:0"
        with vs.variable_scope(None, default_name="blk"):
            assert vs.get_variable("a", [1]).name == "blk/a:0"
        with vs.variable_scope(None, default_name="blk"):
            assert vs.get_variable("a", [1]).name == "blk_1/a:0"
        with vs.variable_scope("outer", reuse=True), vs.variable_scope("inner"):
            assert vs.get_variable_scope().reuse is True
        assert V.global_variables()[0] is w


def test_get_variable_errors_match_tf():
    g = Graph()
    with g.as_default():
        with vs.variable_scope("foo"):
            vs.get_variable("w", [2, 3])
        with pytest.raises(ValueError, match=r"^Variable foo/w already exists, disallowed\. Did "
                                             r"you mean to set reuse=True or "
                                             r"reuse=tf.AUTO_REUSE in VarScope\?$"):
            with vs.variable_scope("foo"):
                vs.get_variable("w", [2, 3])
        with vs.variable_scope("foo", reuse=True):
            with pytest.raises(ValueError, match=r"^Variable foo/z does not exist, or was not "
                                                 r"created with tf.get_variable\(\)"):
                vs.get_variable("z", [2])
            with pytest.raises(ValueError, match=r"Trying to share variable foo/w, but "
                                                 r"specified shape \(2, 4\) and found shape "
                                                 r"\(2, 3\)\."):
                vs.get_variable("w", [2, 4])
        with pytest.raises(ValueError, match="Variable nn did not get an initializer, so its "
                                             "`shape` argument must be specified."):
            vs.get_variable("nn")


def test_get_variable_default_initializers_and_regularizer():
    g = Graph()
    with g.as_default():
        h = vs.get_variable("h", [3, 4])
        i = vs.get_variable("i", [2], dtype=dtypes.int32)
        vs.get_variable("r", [2], initializer=init_ops_v1.ones_initializer(),
                        regularizer=lambda v: reduce_sum(v * v))
        t = vs.get_variable("t", initializer=constant([1.0, 2.0]))
        init = V.global_variables_initializer()
    ops = {o.name: o.type for o in g.get_operations()}
    assert ops["h/Initializer/random_uniform/RandomUniform"] == "RandomUniform"
    assert ops["i/Initializer/zeros"] == "Const"
    (loss,) = g.get_collection(GraphKeys.REGULARIZATION_LOSSES)
    assert loss.name.startswith("r/Regularizer/")
    ctx = RuntimeContext()
    run(g, [], ctx, [init])
    hv, iv, lv, tv = run(g, [h.value(), i.value(), loss, t.value()], ctx)
    limit = np.sqrt(6.0 / 7.0)
    assert hv.shape == (3, 4) and np.all(np.abs(hv) <= limit) and np.std(hv) > 0
    np.testing.assert_array_equal(iv, [0, 0])
    assert lv == 2.0
    np.testing.assert_array_equal(tv, [1.0, 2.0])


def test_get_variable_eager_creates_new_variables():
    with vs.variable_scope("e"):
        a = vs.get_variable("w", [2], initializer=init_ops_v1.ones_initializer())
        b = vs.get_variable("w", [2], initializer=init_ops_v1.ones_initializer())
    assert a is not b and a.name == "e/w:0"
    np.testing.assert_array_equal(a.numpy(), [1.0, 1.0])


def test_session_runs_variables():
    session = pytest.importorskip("ndflow.runtime.session")
    g = Graph()
    with g.as_default():
        v = V.Variable([1.0, 2.0], name="v")
        inc = v.assign_add([1.0, 1.0])
        init = V.global_variables_initializer()
    with session.Session(graph=g) as sess:
        sess.run(init)
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(inc), [2.0, 3.0])
        np.testing.assert_array_equal(v.eval(sess), [2.0, 3.0])
        v.load([7.0, 8.0], sess)
        np.testing.assert_array_equal(sess.run(v), [7.0, 8.0])


def test_tf_variable_makes_a_resource_variable():
    """As TF: type(tf.Variable(2.0)).__name__ is 'ResourceVariable' (the gradients guide
    prints it), isinstance against tf.Variable holds, subclasses keep their own class."""
    v = ndflow.Variable(2.0)
    assert type(v).__name__ == "ResourceVariable" and isinstance(v, ndflow.Variable)
    assert ndflow.Variable.__name__ == "Variable"

    class Mine(ndflow.Variable):
        pass
    assert type(Mine(1.0)) is Mine


def test_a_lifted_variable_keeps_the_name_scope_it_was_made_in():
    """TF's init_scope carries the name scope in: under `name_scope("foo")` in a tf.function
    a variable is `foo/v`; `get_variable` in a while loop's body, where get_variable resets
    the name scope, is named by its variable scope alone (`outer/w`, not
    `outer/inner/outer/w`). Both names are TF 2.21's (checked side by side)."""
    made = []

    @tf.function
    def f():
        with tf.name_scope("foo"):
            if not made:
                made.append(tf.Variable(1.0, name="v"))
        return made[0] + 1

    f()
    assert made[0].name == "foo/v:0"
    v1 = tf.compat.v1
    g = tf.Graph()
    with g.as_default():
        with v1.variable_scope("outer"), tf.name_scope("inner"):
            def body(i):
                with tf.name_scope("b"):
                    w = v1.get_variable("w", [], initializer=v1.ones_initializer())
                return i + w
            out = tf.while_loop(lambda i: i < 3.0, body, [0.0])
        assert [v.name for v in v1.global_variables()] == ["outer/w:0"]
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            assert sess.run(out[0]) == 3.0
