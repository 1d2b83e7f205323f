"""Auto-clustering end to end: tf.function / Session graphs with auto-jit on give the values
(and gradients) they give with it off; each cluster is one `_XlaClusterCall` whose function is
never clustered again; tf.function(jit_compile=True) and tf.xla.experimental.jit_scope.

Each test runs twice: with the JIT's DeviceCompiler (ndflow/jit/device_compiler.py) and with
the cluster kernel's plain fallback only, so the graph side is checked on its own too (most
compiler runs are in CI's slow pass: generating code takes seconds).
"""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import optimizer_options
from ndflow.jit import flags as flags_module
from ndflow.passes import clustering_report
from ndflow.runtime import xla_cluster_kernel

RNG = np.random.default_rng(0)


# The compiler's first compiles cost seconds (code generation): two tests run it by default,
# the rest in CI's slow pass.
BOTH = pytest.mark.parametrize("runner", ["compiler", "fallback"], indirect=True)


@pytest.fixture(params=[pytest.param("compiler", marks=pytest.mark.slow), "fallback"])
def runner(request, monkeypatch):
    if request.param == "fallback":
        monkeypatch.setattr(xla_cluster_kernel, "DeviceCompiler", None)
    return request.param


@pytest.fixture
def auto_jit(runner):
    optimizer_options.set_jit(True)
    yield
    optimizer_options.set_jit(False)


def _clusters(graph) -> list:
    return [op for op in graph.get_operations() if op.type == "_XlaClusterCall"]


def _mlp_step(x, w1, w2):
    h = tf.matmul(x, w1)
    mean = tf.reduce_mean(h, axis=-1, keepdims=True)
    var = tf.reduce_mean(tf.square(h - mean), axis=-1, keepdims=True)
    h = (h - mean) * tf.math.rsqrt(var + 1e-5)
    h = 0.5 * h * (1.0 + tf.tanh(0.79788456 * (h + 0.044715 * h * h * h)))
    y = tf.matmul(h, w2)
    return tf.reduce_sum(y * y) / 8.0


def _inputs():
    return (tf.constant(RNG.standard_normal((8, 16)).astype(np.float32)),
            tf.constant(RNG.standard_normal((16, 32)).astype(np.float32) * 0.2),
            tf.constant(RNG.standard_normal((32, 4)).astype(np.float32) * 0.2))


def _loss_and_grads(x, w1, w2):
    with tf.GradientTape() as tape:
        tape.watch([w1, w2])
        loss = _mlp_step(x, w1, w2)
    return (loss,) + tuple(tape.gradient(loss, [w1, w2]))


def test_auto_jit_gives_the_same_values_and_gradients(auto_jit):
    args = _inputs()
    f = tf.function(_loss_and_grads)
    got = [t.numpy() for t in f(*args)]
    optimized = f.get_concrete_function(*args).optimized_graph()
    calls = _clusters(optimized)
    assert calls, "auto-jit clustered nothing"
    optimizer_options.set_jit(False)
    g = tf.function(_loss_and_grads)
    want = [t.numpy() for t in g(*args)]
    assert not _clusters(g.get_concrete_function(*args).optimized_graph())
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-5)


@BOTH
def test_each_cluster_is_one_call_whose_function_is_not_clustered_again(auto_jit):
    @tf.function
    def f(x, w):
        y = tf.nn.relu(tf.matmul(x, w)) * 2.0 + tf.exp(-x[:, :1])
        return tf.reduce_sum(y, axis=1), y

    x = tf.constant(RNG.standard_normal((3, 4)).astype(np.float32))
    w = tf.constant(RNG.standard_normal((4, 5)).astype(np.float32))
    optimized = f.get_concrete_function(x, w).optimized_graph()
    (call,) = _clusters(optimized)
    assert {op.type for op in optimized.get_operations()} == {"Placeholder", "_XlaClusterCall"}
    fg = call.attrs["function"]
    assert call.attrs["cluster_name"] == call.name and call.attrs["must_compile"] is False
    assert [t.op.type for t in fg.inputs] == ["Placeholder", "Placeholder"]
    assert len(fg.outputs) == 2 and len(call.outputs) == 2
    inner = [op for op in fg.get_operations() if op.type != "Placeholder"]
    assert all(op.attrs.get("_XlaAlreadyClustered") is True and "_XlaCluster" not in op.attrs
               for op in inner)
    s, y = f(x, w)
    want = np.maximum(x.numpy() @ w.numpy(), 0) * 2 + np.exp(-x.numpy()[:, :1])
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5)
    np.testing.assert_allclose(s.numpy(), want.sum(1), rtol=1e-5)


def test_uncompilable_ops_split_clusters_and_keep_program_order(auto_jit):
    v = tf.Variable(np.ones((4,), np.float32))

    @tf.function
    def f(x):
        a = tf.nn.relu(x * 3.0 - 1.0) + tf.sqrt(tf.abs(x))
        v.assign_add(a)                       # a variable write: outside any cluster
        r = v.read_value()
        return tf.reduce_max(tf.tanh(r) * r + r * 2.0 - 1.0), a

    x = tf.constant([1.0, -2.0, 3.0, 0.5])
    m, a = f(x)
    a_want = np.maximum(x.numpy() * 3 - 1, 0) + np.sqrt(np.abs(x.numpy()))
    r = 1.0 + a_want
    np.testing.assert_allclose(a.numpy(), a_want, rtol=1e-6)
    np.testing.assert_allclose(m.numpy(), np.max(np.tanh(r) * r + r * 2 - 1), rtol=1e-5)
    np.testing.assert_allclose(v.numpy(), r, rtol=1e-6)
    calls = _clusters(f.get_concrete_function(x).optimized_graph())
    assert len(calls) == 2


def test_session_graphs_cluster_with_the_config_protos_jit_level(runner):
    from tensorboard.compat.proto import config_pb2

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
        w = tf.constant(RNG.standard_normal((3, 2)).astype(np.float32))
        y = tf.reduce_sum(tf.nn.sigmoid(tf.matmul(x, w)) * 3.0 + 1.0, name="y")
        (dx,) = tf.gradients(y, [x])
    feed = {x: RNG.standard_normal((5, 3)).astype(np.float32)}
    with tf.compat.v1.Session(graph=g) as plain:
        want = plain.run([y, dx], feed)
    config = config_pb2.ConfigProto()
    config.graph_options.optimizer_options.global_jit_level = config_pb2.OptimizerOptions.ON_1
    with tf.compat.v1.Session(graph=g, config=config) as jit:
        got = jit.run([y, dx], feed)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_auto_jit_from_tf_xla_flags(runner, monkeypatch, capfd):
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=2 --tf_xla_min_cluster_size=2")
    monkeypatch.setenv("TF_CPP_VMODULE", "mark_for_compilation_pass=2")
    flags_module.reset_xla_flags_for_test()
    try:
        f = tf.function(lambda x: tf.nn.relu(x) * 2.0)
        x = tf.constant([-1.0, 2.0])
        np.testing.assert_allclose(f(x).numpy(), [0.0, 4.0])
        assert len(_clusters(f.get_concrete_function(x).optimized_graph())) == 1
        assert "*** Clustering info for graph of size" in capfd.readouterr().err
    finally:
        monkeypatch.delenv("TF_XLA_FLAGS")
        flags_module.reset_xla_flags_for_test()


@BOTH
def test_jit_compile_makes_one_must_compile_cluster(runner):
    @tf.function(jit_compile=True)
    def f(x):
        return tf.reduce_sum(tf.nn.relu(x) + 1.0)

    x = tf.constant([-1.0, 2.0, 3.0])
    assert f(x).numpy() == pytest.approx(8.0)
    cf = f.get_concrete_function(x)
    assert all(op.attrs.get("_XlaMustCompile") is True for op in cf.graph.get_operations())
    (call,) = _clusters(cf.optimized_graph())  # even with auto-jit off
    assert call.attrs["must_compile"] is True


def test_jit_compile_clusters_stay_apart_from_auto_clusters(auto_jit):
    @tf.function(jit_compile=True)
    def inner(x):
        return tf.nn.relu(x) * 2.0 + 1.0

    @tf.function
    def outer(x):
        y = inner(tf.exp(x) * 3.0 - 1.0 + tf.sin(x))
        return tf.tanh(y) * y + 2.0 - tf.cos(y)

    x = tf.constant([0.5, -1.0])
    xe = np.exp(x.numpy()) * 3 - 1 + np.sin(x.numpy())
    y = np.maximum(xe, 0) * 2 + 1
    np.testing.assert_allclose(outer(x).numpy(), np.tanh(y) * y + 2 - np.cos(y), rtol=1e-5)
    calls = _clusters(outer.get_concrete_function(x).optimized_graph())
    assert sorted(c.attrs["must_compile"] for c in calls) == [False, False, True]


def test_jit_scope_compiles_only_marked_ops_with_auto_jit_off(runner):
    @tf.function
    def f(x):
        with tf.xla.experimental.jit_scope():
            a = tf.nn.relu(x) * 2.0                     # 3 ops: below min size, still compiled
        with tf.xla.experimental.jit_scope(compile_ops=False):
            b = tf.exp(a) + tf.sqrt(a) * 4.0
        return b - a

    x = tf.constant([1.0, -1.0])
    a = np.maximum(x.numpy(), 0) * 2
    np.testing.assert_allclose(f(x).numpy(), np.exp(a) + np.sqrt(a) * 4 - a, rtol=1e-6)
    (call,) = _clusters(f.get_concrete_function(x).optimized_graph())
    types = {op.type for op in call.attrs["function"].get_operations()}
    assert {"Relu", "Mul"} <= types and "Exp" not in types and "Sqrt" not in types


def test_jit_compile_ops_the_jit_cannot_compile_run_outside_with_a_warning(runner, capfd,
                                                                         monkeypatch):
    # the warning is logged once per process and op list: as if this were the first time
    monkeypatch.setattr(clustering_report, "_warned_must_compile", set())

    @tf.function(jit_compile=True)
    def f(x):
        y, _ = tf.unique(x)          # a shape known only from the values: XLA cannot either
        return tf.reduce_sum(tf.nn.relu(tf.cast(y, tf.float32)) * 2.0)

    assert f(tf.constant([-1, 2, 2, 3])).numpy() == pytest.approx(10.0)
    err = capfd.readouterr().err
    assert "tf.function(jit_compile=True): ndflow's JIT cannot compile Unique" in err


def test_jit_compile_compiles_random_ops_and_the_remappers_fusions(runner, capfd,
                                                                   monkeypatch):
    """As TensorFlow's jit_compile compiles stateful RNG and every op of the function: random
    ops, the remapper's fused ops (a Dense's `_FusedMatMul`, dropout's `_DropoutSelect`) are
    inside the compiled clusters, drawing what the uncompiled function draws (each random op
    keeps its own Philox state); ops the rewrites left dead form no cluster and are not
    named in the warning."""
    monkeypatch.setattr(clustering_report, "_warned_must_compile", set())

    def body(x, w, b):
        noise = tf.random.uniform([4, 2], seed=1)
        h = tf.nn.relu(tf.matmul(x, w) + b) + noise
        return tf.reduce_sum(tf.nn.dropout(h, 0.5, seed=2), axis=0), noise

    compiled = tf.function(body, jit_compile=True)
    plain = tf.function(body)
    args = [tf.constant(RNG.normal(size=s).astype(np.float32)) for s in ([4, 3], [3, 2], [2])]
    tf.random.set_seed(7)
    got = [[t.numpy() for t in compiled(*args)] for _ in range(3)]
    tf.random.set_seed(7)
    want = [[t.numpy() for t in plain(*args)] for _ in range(3)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g[0], w[0])
        np.testing.assert_array_equal(g[1], w[1])
    assert not np.array_equal(got[0][1], got[1][1])          # a fresh draw each call
    graph = compiled.get_concrete_function(*args).optimized_graph()
    calls = _clusters(graph)
    inside = {op.type for c in calls for op in c.attrs["function"].get_operations()}
    assert {"RandomUniform", "_FusedMatMul", "_DropoutSelect"} <= inside
    outside = {op.type for op in graph.get_operations()} - {"Placeholder", "_XlaClusterCall"}
    assert not outside, outside          # (the rewrites' dead constants are gone, not kept)
    assert "cannot compile" not in capfd.readouterr().err


def test_jit_scope_marks_gradients_as_tensorflow_does():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [2])
        with tf.xla.experimental.jit_scope():
            y = tf.reduce_sum(tf.nn.relu(x) * 2.0)
        with tf.xla.experimental.jit_scope(separate_compiled_gradients=True):
            z = tf.reduce_sum(tf.exp(x))
        tf.gradients(y, [x])
        tf.gradients(z, [x], name="second")
    attrs = {op.name: (op.attrs.get("_XlaCompile"), op.attrs.get("_XlaScope"))
             for op in g.get_operations()}
    assert attrs["gradients/mul_grad/Mul"] == (True, "jit_scope_0")  # the forward's scope
    assert attrs["second/Exp_grad/Mul"] == (True, "jit_scope_1_grad_second")
    assert attrs["gradients/grad_ys_0"] == (None, None)  # the seed is not the op's gradient


def test_branch_and_loop_bodies_are_clustered_too(auto_jit, capfd, monkeypatch):
    monkeypatch.setenv("TF_CPP_VMODULE", "mark_for_compilation_pass=2")

    @tf.function
    def f(x, n):
        y = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.nn.relu(x) * 2.0 + tf.exp(-x) - 1.0,
                    lambda: tf.tanh(x) * 3.0 - x * x + 1.0)

        def body(i, y):
            return i + 1, tf.sigmoid(y) * 1.5 + y * 0.5 - 0.25
        return tf.while_loop(lambda i, y: i < n, body, [tf.constant(0), y])[1]

    x = np.array([0.5, -1.0, 2.0], np.float32)
    for sign, n in ((1.0, 3), (-1.0, 2)):
        xs = sign * x
        y = np.maximum(xs, 0) * 2 + np.exp(-xs) - 1 if xs.sum() > 0 else \
            np.tanh(xs) * 3 - xs * xs + 1
        for _ in range(n):
            y = 1 / (1 + np.exp(-y)) * 1.5 + y * 0.5 - 0.25
        np.testing.assert_allclose(f(tf.constant(xs), tf.constant(n)).numpy(), y, rtol=1e-5)
    assert capfd.readouterr().err.count(" Built 1 clusters") >= 3  # both branches, the body


def test_small_constants_are_copied_into_each_cluster(auto_jit):
    @tf.function
    def f(x):
        a = tf.nn.relu(x) * 2.0 + tf.exp(x) * 2.0 - 1.0   # 2.0 and 1.0: one Const each (CSE)
        b = tf.math.asinh(a)                              # not compiled: two clusters
        return tf.tanh(b) * 2.0 + b * 2.0 - 1.0

    x = tf.constant([0.5, -1.0])
    a = np.maximum(x.numpy(), 0) * 2 + np.exp(x.numpy()) * 2 - 1
    b = np.arcsinh(a)
    np.testing.assert_allclose(f(x).numpy(), np.tanh(b) * 2 + b * 2 - 1, rtol=1e-5)
    calls = _clusters(f.get_concrete_function(x).optimized_graph())
    assert len(calls) == 2
    for call in calls:  # each reads only its tensor input; the constants live inside
        assert len(call.inputs) == 1
        assert {"Const"} <= {op.type for op in call.attrs["function"].get_operations()}


def test_jit_compile_compiles_segment_sums_and_scatters(runner, capfd, monkeypatch):
    """An embedding's gradient (a gather's, summed by segments) and tensor scatters are
    compiled in a jit_compile=True function, as XLA compiles them, with the uncompiled values."""
    monkeypatch.setattr(clustering_report, "_warned_must_compile", set())
    table = tf.constant(RNG.normal(size=(6, 3)).astype(np.float32))
    ids = tf.constant([4, 1, 4, 0])

    def step(table, ids):
        with tf.GradientTape() as tape:
            tape.watch(table)
            loss = tf.reduce_sum(tf.gather(table, ids) ** 2)
        grad = tf.convert_to_tensor(tape.gradient(loss, table))
        return tf.tensor_scatter_nd_add(grad, [[2]], [[1.0, 2.0, 3.0]]), \
            tf.math.unsorted_segment_max(table, [0, 1, 0, 1, 2, 2], 3)

    got = tf.function(step, jit_compile=True)(table, ids)
    want = tf.function(step)(table, ids)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
    assert "cannot compile" not in capfd.readouterr().err


def test_jit_compile_compiles_conditionals_and_loops(runner, capfd, monkeypatch):
    """tf.cond and tf.while_loop in a jit_compile=True function are compiled with the rest, as
    XLA compiles them (in ndflow the op runs its branches' and bodies' plans in the cluster),
    both branches and the loop giving the uncompiled values."""
    monkeypatch.setattr(clustering_report, "_warned_must_compile", set())

    def body(x, limit):
        y = tf.cond(tf.reduce_sum(x) > limit, lambda: x * 2.0, lambda: x - 1.0)
        _, z = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s * 1.5 + y), [0, y])
        return z

    compiled, plain = tf.function(body, jit_compile=True), tf.function(body)
    x = tf.constant([1.0, -2.0, 3.0, 0.5])
    for limit in (0.0, 100.0):                       # each branch
        np.testing.assert_array_equal(compiled(x, tf.constant(limit)).numpy(),
                                      plain(x, tf.constant(limit)).numpy())
    graph = compiled.get_concrete_function(x, tf.constant(0.0)).optimized_graph()
    inside = {op.type for c in _clusters(graph) for op in c.attrs["function"].get_operations()}
    assert {"StatelessIf", "StatelessWhile"} & inside == {"StatelessIf", "StatelessWhile"}
    assert "cannot compile" not in capfd.readouterr().err


def test_jit_compile_compiles_a_loops_gradient_with_its_tensor_lists(runner, capfd,
                                                                      monkeypatch):
    """A loop's gradient keeps the forward values in TensorLists (variants): jit_compile=True
    compiles them too, as XLA does, with the uncompiled gradient."""
    monkeypatch.setattr(clustering_report, "_warned_must_compile", set())

    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            _, y = tf.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * tf.sin(s)), [0, x])
            loss = tf.reduce_sum(y)
        return loss, tape.gradient(loss, x)

    x = tf.constant([1.0, -2.0, 3.0, 0.5])
    compiled = tf.function(step, jit_compile=True)
    for g, w in zip(compiled(x), tf.function(step)(x)):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    graph = compiled.get_concrete_function(x).optimized_graph()
    inside = {op.type for c in _clusters(graph) for op in c.attrs["function"].get_operations()}
    assert "StatelessWhile" in inside and any(t.startswith("TensorList") or t == "EmptyTensorList"
                                               for t in inside)
    assert "cannot compile" not in capfd.readouterr().err
