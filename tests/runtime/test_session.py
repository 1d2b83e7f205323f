"""tf.compat.v1.Session: fetch structures, feeds, errors, defaults, plan cache, config."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core import context, dtypes
from ndflow.core.errors import InvalidArgumentError, UnimplementedError
from ndflow.core.graph import Graph
from ndflow.core.shapes import TensorShape
from ndflow.kernels.registry import kernel
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import REGISTRY, op_def
from ndflow.runtime import compile as compile_mod
from ndflow.runtime.config_proto import ConfigProto, GPUOptions, RewriterConfig, RunOptions
from ndflow.runtime.session import InteractiveSession, Session, get_default_session
from tests.passes.graph_helpers import fails

# A stateful test op counting its runs in the session's resources: `x + runs so far`.
if "NdflowTestSessionCounter" not in REGISTRY:
    SessionCounter = op_def("NdflowTestSessionCounter", inputs=["x: float"],
                            outputs=["y: float"], shape=lambda ctx: [ctx.shapes[0]],
                            stateful=True)

    @kernel(SessionCounter)
    def _session_counter(node):
        res = node.ctx.resource("", "ndflow_test_runs", dtypes.int32, TensorShape([]),
                                node.device)

        def run(x):
            res.value = (0 if res.value is None else res.value) + 1
            return x + res.value
        return run
else:
    SessionCounter = REGISTRY["NdflowTestSessionCounter"]


def _graph():
    g = Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(dtypes.float32, [3], name="Placeholder")
        c = tf.constant([1.0, 2.0, 3.0], name="c")
        a = tf.add(p, c, name="add")
        s = tf.reduce_sum(a, [0], name="sum")
    return g, p, c, a, s


FEED = [1.0, 2.0, 3.0]


# -- fetches -----------------------------------------------------------------------------------

def test_fetch_structures():
    g, p, c, a, s = _graph()
    NT = collections.namedtuple("NT", "x y")
    with Session(graph=g) as sess:
        out = sess.run({"a": a, "b": [s, a.op], "t": (s,), "n": NT(a, s)}, {p: FEED})
        assert set(out) == {"a", "b", "t", "n"}
        np.testing.assert_array_equal(out["a"], [2.0, 4.0, 6.0])
        assert out["a"].dtype == np.float32
        assert out["b"][0] == 12.0 and out["b"][1] is None
        assert isinstance(out["t"], tuple) and isinstance(out["n"], NT)
        assert out["n"].y == 12.0
        dd = sess.run(collections.defaultdict(list, {"s": s}), {p: FEED})
        assert isinstance(dd, collections.defaultdict) and dd.default_factory is list
        assert sess.run([], {p: FEED}) == []
        assert sess.run(a.op, {p: FEED}) is None
        both = sess.run([s, s, "sum:0"], {"Placeholder:0": FEED})
        assert both == [12.0, 12.0, 12.0]


def test_scalars_are_numpy_scalars_and_arrays_are_fresh():
    g, p, c, a, s = _graph()
    with Session(graph=g) as sess:
        v = sess.run(s, {p: FEED})
        assert type(v) is np.float32 and v == 12.0
        cv = sess.run(c)
        cv[:] = 100.0  # must not write into the graph's constant
        np.testing.assert_array_equal(sess.run(c), [1.0, 2.0, 3.0])
        np.testing.assert_array_equal(c.op.attrs["value"], [1.0, 2.0, 3.0])


def test_fetch_errors():
    g, p, c, a, s = _graph()
    g2, *_ = _graph()
    other = g2.get_tensor_by_name("add:0")
    with Session(graph=g) as sess:
        with pytest.raises(TypeError, match=r'Argument `fetch` = None has invalid type '
                                            r'"NoneType". Cannot be None'):
            sess.run(None)
        with pytest.raises(TypeError, match='Argument `fetch` = 3 has invalid type "int" must '
                                            r'be a string or Tensor. \(Can not convert a int '
                                            r'into a Tensor or Operation.\)'):
            sess.run(3)
        with pytest.raises(ValueError, match="is not an element of this graph"):
            sess.run(other)
        with pytest.raises(ValueError, match="The operation, 'nope', does not exist"):
            sess.run("nope:0")
        with pytest.raises(ValueError, match="refers to an Operation not in the graph"):
            sess.run(["nope"])


def test_fetching_a_fed_tensor_returns_the_fed_value():
    g, p, c, a, s = _graph()
    with Session(graph=g) as sess:
        np.testing.assert_array_equal(sess.run(p, {p: FEED}), FEED)
        # feeding an intermediate short-circuits what computes it
        assert sess.run(s, {a: [1.0, 1.0, 1.0]}) == 3.0
        np.testing.assert_array_equal(sess.run(a, {p: FEED, c: [10, 10, 10]}), [11, 12, 13])


# -- feeds -------------------------------------------------------------------------------------

def test_feed_conversion_and_shape_check():
    g = Graph()
    with g.as_default():
        f = tf.compat.v1.placeholder(dtypes.float32, [3], name="Placeholder")
        q = tf.compat.v1.placeholder(dtypes.float32, [None, 2], name="q")
        i = tf.compat.v1.placeholder(dtypes.int32, [], name="i")
        u = tf.compat.v1.placeholder(dtypes.float32, None, name="u")
        fi, qi, ii, ui = (tf.identity(t) for t in (f, q, i, u))
    with Session(graph=g) as sess:
        assert sess.run(fi, {f: np.array([1, 2, 3])}).dtype == np.float32
        assert sess.run(ii, {i: 1.9}) == 1 and type(sess.run(ii, {i: 7})) is np.int32
        assert sess.run(qi, {q: np.zeros((5, 2))}).shape == (5, 2)
        assert sess.run(ui, {u: np.zeros((2, 3, 4))}).shape == (2, 3, 4)
        with pytest.raises(ValueError, match=r"^Cannot feed value of shape \(2,\) for Tensor "
                                             r"Placeholder:0, which has shape \(3,\)$"):
            sess.run(fi, {f: np.zeros(2)})
        with pytest.raises(ValueError, match=r"^Cannot feed value of shape \(2, 3\) for Tensor "
                                             r"q:0, which has shape \(None, 2\)$"):
            sess.run(qi, {q: np.zeros((2, 3))})
        with pytest.raises(TypeError, match=r"Type of feed value 1099511627776 with type "
                                            r"<class 'int'> is not compatible with Tensor type "
                                            r"<class 'numpy.int32'>"):
            sess.run(ii, {i: 2**40})
        with pytest.raises(ValueError, match="could not convert string to float"):
            sess.run(fi, {f: ["a", "b", "c"]})


def test_feed_key_and_value_errors():
    g, p, c, a, s = _graph()
    g2 = Graph()
    with g2.as_default():
        x2 = tf.compat.v1.placeholder(dtypes.float32, name="x2")
    with Session(graph=g) as sess:
        with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor: Tensor "
                                            ".*x2:0.* is not an element of this graph."):
            sess.run(a, {x2: 1.0, p: FEED})
        with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor: The name "
                                            "'Placeholder' refers to an Operation, not a "
                                            "Tensor."):
            sess.run(a, {"Placeholder": FEED})
        with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor: Can not "
                                            "convert a int into a Tensor."):
            sess.run(a, {3: FEED})
        with pytest.raises(TypeError, match="The value of a feed cannot be a tf.Tensor object"):
            sess.run(a, {p: c})
        with pytest.raises(TypeError, match="`feed_dict` must be a dictionary"):
            sess.run(a, [(p, FEED)])


def test_fed_arrays_are_copied():
    g = Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtypes.float32, [2], name="x")
        y = tf.identity(x)
    with Session(graph=g) as sess:
        feed = np.array([1.0, 2.0], np.float32)
        out = sess.run(y, {x: feed})
        feed[0] = 50.0
        assert out[0] == 1.0


# -- errors at run time ------------------------------------------------------------------------

def test_unfed_placeholder_names_the_users_op():
    g, p, c, a, s = _graph()
    with Session(graph=g) as sess:
        with pytest.raises(InvalidArgumentError) as info:
            sess.run(a)
        # TF 2.21's TF1 wording: the node and where it was made, then the kernel's message
        assert str(info.value).startswith("Graph execution error:\n\nDetected at node "
                                          "'Placeholder' defined at (most recent call last)")
        assert str(info.value).endswith("\nNode: 'Placeholder'\nYou must feed a value for "
                                        "placeholder tensor 'Placeholder' with dtype float and "
                                        "shape [3]\n\t [[{{node Placeholder}}]]")
        assert info.value.op is p.op


def test_kernel_errors_name_the_node_and_the_session_stays_usable():
    g = Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtypes.float32, [None, None], name="x")
        y = tf.compat.v1.placeholder(dtypes.float32, [None, None], name="y")
        m = tf.matmul(x, y, name="product")
        bad = fails(x, name="broken")
    with Session(graph=g) as sess:
        with pytest.raises(InvalidArgumentError, match="product") as info:
            sess.run(m, {x: np.ones((2, 3)), y: np.ones((2, 3))})
        assert info.value.op is m.op
        with pytest.raises(InvalidArgumentError, match="broken"):
            sess.run(bad, {x: np.ones((1, 1))})
        np.testing.assert_allclose(sess.run(m, {x: np.ones((2, 3)), y: np.ones((3, 1))}),
                                   np.full((2, 1), 3.0))


def test_closed_session_and_empty_graph():
    g, p, c, a, s = _graph()
    sess = Session(graph=g)
    sess.close()
    sess.close()
    with pytest.raises(RuntimeError, match="^Attempted to use a closed Session.$"):
        sess.run(a, {p: FEED})
    with pytest.raises(RuntimeError, match="The Session graph is empty"):
        Session(graph=Graph()).run([])


def test_constructor_errors():
    with pytest.raises(TypeError, match='Argument `graph` must be a tf.Graph, but got "int"'):
        Session(graph=3)
    with pytest.raises(TypeError, match="Did you do"):
        Session(ConfigProto())
    with pytest.raises(TypeError, match="must be a tf.ConfigProto"):
        Session(config={"allow_soft_placement": True})
    with pytest.raises(UnimplementedError, match="grpc://x"):
        Session("grpc://x")


# -- defaults, eval, run -----------------------------------------------------------------------

def test_context_manager_sets_default_session_and_graph():
    g, p, c, a, s = _graph()
    assert get_default_session() is None
    with Session(graph=g) as sess:
        assert get_default_session() is sess
        assert context.get_default_graph() is g
        assert sess.graph is g
        assert s.eval(feed_dict={p: FEED}) == 12.0
        assert a.op.run(feed_dict={p: FEED}) is None
    assert get_default_session() is None
    assert context.get_default_graph() is not g
    with pytest.raises(RuntimeError, match="closed"):
        sess.run(s, {p: FEED})


def test_as_default_and_eval_errors():
    g, p, c, a, s = _graph()
    g2, *_ = _graph()
    with pytest.raises(ValueError, match=r"Cannot evaluate tensor using `eval\(\)`: No default "
                                         "session is registered"):
        s.eval(feed_dict={p: FEED})
    with pytest.raises(ValueError, match=r"Cannot execute operation using `run\(\)`: No "
                                         "default session is registered"):
        a.op.run(feed_dict={p: FEED})
    sess, other = Session(graph=g), Session(graph=g2)
    with sess.as_default():
        assert s.eval(feed_dict={p: FEED}) == 12.0
        with other.as_default():
            with pytest.raises(ValueError, match="Cannot use the default session to evaluate "
                                                 "tensor: the tensor's graph is different"):
                s.eval(feed_dict={p: FEED})
            assert s.eval(feed_dict={p: FEED}, session=sess) == 12.0
    with pytest.raises(ValueError, match="Cannot use the given session to execute operation"):
        a.op.run(feed_dict={p: FEED}, session=other)
    sess.close()
    other.close()


def test_interactive_session():
    g, p, c, a, s = _graph()
    sess = InteractiveSession(graph=g)
    try:
        assert get_default_session() is sess
        assert s.eval(feed_dict={p: FEED}) == 12.0
    finally:
        sess.close()
    assert get_default_session() is None


# -- plans, state, config ----------------------------------------------------------------------

class _CountingPlan(compile_mod.Plan):
    built: list = []

    def __init__(self, graph, *args, **kwargs):
        _CountingPlan.built.append(graph)
        super().__init__(graph, *args, **kwargs)


def test_plan_cache(monkeypatch):
    monkeypatch.setattr(compile_mod, "Plan", _CountingPlan)
    _CountingPlan.built = []
    g, p, c, a, s = _graph()
    with Session(graph=g) as sess:
        for _ in range(3):
            assert sess.run(s, {p: FEED}) == 12.0
        assert len(_CountingPlan.built) == 1 and sess.plans_built == 1
        sess.run(s, {p: np.array(FEED, np.float64)})  # converted: same signature
        assert len(_CountingPlan.built) == 1
        sess.run([s, a], {p: FEED})  # other fetches: a new plan
        sess.run(s, {a: FEED})      # other feeds: a new plan
        assert len(_CountingPlan.built) == 3
        with g.as_default():
            tf.add(s, 1.0)        # the graph grew: plans are rebuilt
        sess.run(s, {p: FEED})
        assert len(_CountingPlan.built) == 4
        plan_graph = _CountingPlan.built[0]
        assert plan_graph is not g and {op.type for op in plan_graph.get_operations()} == {
            "Placeholder", "Const", "AddV2", "Sum"}


def test_config_switches_passes(monkeypatch):
    monkeypatch.setattr(compile_mod, "Plan", _CountingPlan)
    g = Graph()
    with g.as_default():
        c = tf.constant(np.float32(2.0), name="c")
        y = tf.add(c, c, name="y")
    for toggle, expected in ((None, {"Const"}), (RewriterConfig.OFF, {"Const", "AddV2"})):
        _CountingPlan.built = []
        config = ConfigProto()
        if toggle is not None:
            config.graph_options.rewrite_options.constant_folding = toggle
        with Session(graph=g, config=config) as sess:
            assert sess.run(y) == 4.0
        assert {op.type for op in _CountingPlan.built[0].get_operations()} == expected


def test_resources_are_per_session():
    g = Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtypes.float32, [], name="x")
        y = apply_op(SessionCounter, [x]).outputs[0]
    s1, s2 = Session(graph=g), Session(graph=g)
    assert [s1.run(y, {x: 0.0}) for _ in range(3)] == [1.0, 2.0, 3.0]
    assert s2.run(y, {x: 0.0}) == 1.0
    assert s1.runtime_context is not s2.runtime_context
    s1.close()
    assert s1.runtime_context.resources == {}
    assert s2.run(y, {x: 0.0}) == 2.0
    s2.close()


def test_soft_placement():
    g = Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(dtypes.float32, [2], name="x")
        with g.device("/GPU:0"):
            y = tf.nn.relu(x, name="on_gpu")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    # TF 2: Session() takes the context config (soft placement on); an explicit
    # ConfigProto() has allow_soft_placement=False and fails placement.
    with Session(graph=g) as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, -1.0]}), [1.0, 0.0])
    with Session(graph=g, config=ConfigProto()) as sess:
        with pytest.raises(InvalidArgumentError, match="Cannot assign a device for operation "
                                                       "on_gpu") as info:
            sess.run(y, {x: [1.0, -1.0]})
        assert info.value.op is y.op
    config = ConfigProto(allow_soft_placement=True, gpu_options=GPUOptions(allow_growth=True))
    with Session(graph=g, config=config) as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, -1.0]}), [1.0, 0.0])


def test_config_proto_fields():
    config = ConfigProto(allow_soft_placement=True, log_device_placement=False,
                         intra_op_parallelism_threads=0, inter_op_parallelism_threads=2)
    config.gpu_options.allow_growth = True
    config.graph_options.rewrite_options.arithmetic_optimization = RewriterConfig.OFF
    assert config.gpu_options.allow_growth
    with pytest.raises(ValueError, match='Protocol message ConfigProto has no "foo" field.'):
        ConfigProto(foo=1)
    with pytest.raises(AttributeError):
        config.foo = 1


def test_log_device_placement(capsys):
    g, p, c, a, s = _graph()
    with Session(graph=g, config=ConfigProto(log_device_placement=True)) as sess:
        sess.run(s, {p: FEED}, options=RunOptions())
    out = capsys.readouterr().out  # TF's placer prints on stdout (and logs the line)
    assert "sum: (Sum): /job:localhost/replica:0/task:0/device:CPU:0\n" in out


def test_string_and_bfloat16_fetches():
    g = Graph()
    with g.as_default():
        st = tf.constant("hi", name="st")
        sv = tf.constant(["a", "bc"], name="sv")
        bf = tf.constant(np.array([1.5, 2.25]), dtype=dtypes.bfloat16, name="bf")
    with Session(graph=g) as sess:
        assert sess.run(st) == b"hi"
        assert list(sess.run(sv)) == [b"a", b"bc"]
        out = sess.run(bf)
        assert out.dtype.name in ("bfloat16", "float32")
        np.testing.assert_array_equal(out.astype(np.float32), [1.5, 2.25])


def test_make_callable():
    g, p, c, a, s = _graph()
    with Session(graph=g) as sess:
        f = sess.make_callable([s, a], feed_list=[p])
        out = f(FEED)
        assert out[0] == 12.0
        with pytest.raises(TypeError, match="Expected 1 feed values"):
            f()


def test_a_control_dependency_on_a_fed_placeholder_is_met_by_the_feed():
    # TF's FeedInputs moves a fed Placeholder's control edges to the fed value, so the
    # Placeholder never runs (tf.compat.v1.metrics.mean waits for its float32 `values` this
    # way); unfed, the Placeholder asks for its feed.
    v1 = tf.compat.v1
    with tf.Graph().as_default():
        p = v1.placeholder(tf.float32, [])
        q = v1.placeholder(tf.float32, [])
        with v1.control_dependencies([p]):
            r = tf.identity(q) + 1.0
        with v1.Session() as sess:
            assert sess.run(r, {p: 1.0, q: 2.0}) == 3.0
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="You must feed a value for placeholder tensor 'Placeholder'"):
                sess.run(r, {q: 2.0})
