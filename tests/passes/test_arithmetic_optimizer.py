"""Arithmetic optimizer: each simplification before/after (op counts, equal values and
gradients), and the cases where it must not fire (broadcasts, fetched/controlled ops)."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import dtypes
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import lookup
from ndflow.passes.arithmetic_optimizer import arithmetic_optimizer
from ndflow.passes.pass_config import PassConfig, resolve_pass_config
from ndflow.passes.pass_context import PassContext
from ndflow.passes.pipeline import run_pipeline
from ndflow.passes.prune import needed_ops
from ndflow.runtime.config_proto import ConfigProto, RewriterConfig
from tests.passes.graph_helpers import op_counts, run_graph, snapshot

v1 = tf.compat.v1
RNG = np.random.default_rng(0)
XV = RNG.normal(size=[2, 3]).astype(np.float32) + 2.0
OFF = PassConfig(disabled_passes=frozenset({"arithmetic_optimizer"}))


def _cast(x, dtype):
    return apply_op(lookup("Cast"), [x], {"SrcT": x.dtype, "DstT": dtype,
                                              "Truncate": False}).outputs[0]


def _graph(body, shape=(2, 3)):
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtypes.float32, list(shape), name="x")
        y = tf.identity(body(x), name="y")
        (gx,) = v1.gradients(tf.reduce_sum(y * y), [x])
        tf.identity(gx, name="gx")
    return g


def _both(g, fetches=("y:0", "gx:0"), xv=XV):
    """(optimized graph, values with the pass, values without it)."""
    out = {}
    for cfg in (PassConfig(), OFF):
        g2, names = run_pipeline(g, PassContext(fetches=list(fetches), feeds=["x:0"],
                                                config=cfg))
        out[cfg is OFF] = (g2, run_graph(g2, [names[f] for f in fetches], {"x:0": xv}))
    return out[False][0], out[False][1], out[True][1]


CASES = {
    # name: (body, op types gone from the forward chain)
    "mul_one": (lambda x: x * 1.0 + 0.0, {"Mul": 0}),
    "one_mul": (lambda x: tf.multiply(tf.ones([3]), x) - tf.zeros([1, 1]), {"Sub": 0}),
    "div_one": (lambda x: tf.math.divide(x, tf.ones([1, 3])) + tf.zeros([2, 3]), {}),
    "double_transpose": (lambda x: tf.transpose(tf.transpose(x)), {"Transpose": 0}),
    "identity_perm": (lambda x: tf.transpose(x, [0, 1]), {"Transpose": 0}),
    "reshape_reshape": (lambda x: tf.reshape(tf.reshape(x, [3, 2]), [6]), {}),
    "reshape_same": (lambda x: tf.reshape(tf.reshape(x, [6]), [2, 3]), {"Reshape": 0}),
    "cast_same": (lambda x: _cast(x, dtypes.float32), {"Cast": 0}),
    "neg_neg": (lambda x: -tf.identity(-x), {"Neg": 0}),
    "identity_chain": (lambda x: tf.identity(tf.identity(x)) * 2.0, {}),
    "reciprocal_twice": (lambda x: tf.math.reciprocal(tf.math.reciprocal(x)), {}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_simplification_preserves_values_and_gradients(case):
    body, gone = CASES[case]
    g = _graph(body)
    before = snapshot(g)
    g2, opt, plain = _both(g)
    assert snapshot(g) == before  # pure
    for a, b in zip(opt, plain):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    assert len(g2.get_operations()) < len(run_pipeline(g, PassContext(
        fetches=["y:0", "gx:0"], feeds=["x:0"], config=OFF))[0].get_operations())
    forward = run_pipeline(g, PassContext(fetches=["y:0"], feeds=["x:0"]))[0]
    counts = op_counts(forward)
    for op_type, n in gone.items():
        assert counts.get(op_type, 0) == n, (case, counts)


def test_forward_chains_collapse_to_the_input():
    g = _graph(lambda x: tf.negative(-(tf.transpose(tf.transpose(x * 1.0)) + 0.0)))
    g2 = arithmetic_optimizer(g, PassContext(fetches=["y:0"], feeds=["x:0"]))
    assert g2.get_operation_by_name("y").inputs[0].name == "x:0"
    assert op_counts(g2) == {"Placeholder": 1, "Identity": 1}


def test_reshape_of_reshape_reads_the_first_input():
    g = _graph(lambda x: tf.reshape(tf.reshape(x, [3, 2]), [6]))
    g2 = arithmetic_optimizer(g, PassContext(fetches=["y:0"], feeds=["x:0"]))
    (r,) = [op for op in g2.get_operations() if op.type == "Reshape"]
    assert r.inputs[0].name == "x:0" and r.outputs[0].shape.as_list() == [6]


def test_mul_by_itself_becomes_square():
    g = _graph(lambda x: x * x)
    g2, opt, plain = _both(g, ("y:0",))
    np.testing.assert_allclose(opt[0], XV * XV, rtol=1e-6)
    assert op_counts(g2)["Square"] == 1


@pytest.mark.parametrize("body", [
    lambda x: x * tf.ones([1, 1, 1]),           # broadcast adds a dim
    lambda x: x + tf.zeros([4, 2, 3]),          # broadcast grows the result
    lambda x: tf.ones([3]) * x[:, :1],          # x [2,1] broadcast to [2,3]
    lambda x: x * tf.constant([1.0, 2.0, 1.0]),  # not all ones
    lambda x: tf.math.subtract(tf.zeros([1]), x),  # 0 - x is not x
    lambda x: tf.math.divide(tf.ones([1]), x),     # 1 / x is not x
    lambda x: tf.transpose(tf.transpose(tf.reshape(x, [2, 3, 1]), [1, 2, 0]), [1, 2, 0]),
])
def test_shape_changing_or_non_neutral_ops_stay(body):
    g = _graph(body)
    base = run_pipeline(g, PassContext(fetches=["y:0"], feeds=["x:0"], config=OFF))[0]
    g2, opt, plain = _both(g, ("y:0",))
    np.testing.assert_allclose(opt[0], plain[0], rtol=1e-6)
    assert op_counts(g2) == op_counts(base)


def test_unknown_shape_needs_a_scalar_or_ones_constant():
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtypes.float32, None, name="x")
        tf.identity(x * 1.0, name="a")                 # scalar: shape kept whatever x is
        tf.identity(x + tf.zeros([2, 3]), name="b")   # could broadcast x: kept
    g2 = arithmetic_optimizer(g, PassContext(fetches=["a:0", "b:0"], feeds=["x:0"]))
    assert g2.get_operation_by_name("a").inputs[0].name == "x:0"
    assert g2.get_operation_by_name("b").inputs[0].op.type == "AddV2"
    out = run_graph(g2, ["a:0", "b:0"], {"x:0": np.float32(2.0)})
    np.testing.assert_allclose(out[1], np.full([2, 3], 2.0))


def test_fetched_fed_and_controlled_ops_are_kept():
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtypes.float32, [2, 3], name="x")
        a = tf.identity(x, name="a")                  # fetched: kept
        with g.control_dependencies([a]):
            b = tf.multiply(x, 1.0, name="b")         # has a control input: kept
        c = tf.identity(b, name="c")                  # forwarded
        one = tf.constant(1.0, name="one")
        d = tf.multiply(c, one, name="d")             # `one` is fed: not a constant
        tf.identity(d, name="out")
    ctx = PassContext(fetches=["a:0", "out:0"], feeds=["x:0", "one:0"])
    g2 = arithmetic_optimizer(run_pipeline(g, PassContext(
        fetches=["a:0", "out:0"], feeds=["x:0", "one:0"], config=PassConfig(
            disabled_passes=frozenset({"arithmetic_optimizer", "remapper"}))))[0], ctx)
    counts = op_counts(g2)
    assert counts["Identity"] == 2 and counts["Mul"] == 2
    assert g2.get_operation_by_name("d").inputs[0].name == "b:0"
    out = run_graph(g2, ["a:0", "out:0"], {"x:0": XV, "one:0": np.float32(3.0)})
    np.testing.assert_allclose(out[1], 3 * XV, rtol=1e-6)


def test_control_dependents_keep_their_order_on_the_producer():
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtypes.float32, [2, 3], name="x")
        y = tf.nn.relu(x, name="r")
        i = tf.identity(y, name="i")
        with g.control_dependencies([i]):
            tf.constant(1.0, name="k")
        tf.identity(i * 2.0, name="out")
    g2 = arithmetic_optimizer(g, PassContext(fetches=["out:0", "k:0"], feeds=["x:0"]))
    assert [c.name for c in g2.get_operation_by_name("k").control_inputs] == ["r"]


def test_switched_by_the_rewriter_toggle():
    assert resolve_pass_config(None).pass_enabled("arithmetic_optimizer",
                                                  "arithmetic_optimization")
    cfg = ConfigProto()
    cfg.graph_options.rewrite_options.arithmetic_optimization = RewriterConfig.OFF
    assert not resolve_pass_config(cfg).pass_enabled("arithmetic_optimizer",
                                                     "arithmetic_optimization")
    tf.config.optimizer.set_experimental_options({"arithmetic_optimization": False})
    try:
        assert not resolve_pass_config(None).pass_enabled("arithmetic_optimizer",
                                                          "arithmetic_optimization")
    finally:
        tf.config.optimizer.set_experimental_options({"arithmetic_optimization": True})


def test_nothing_to_do_returns_the_input():
    g = _graph(lambda x: tf.nn.relu(x))
    ctx = PassContext(fetches=["y:0"], feeds=["x:0"])
    pruned = run_pipeline(g, PassContext(fetches=["y:0"], feeds=["x:0"], config=PassConfig(
        disabled_passes=frozenset({"arithmetic_optimizer"}))))[0]
    assert arithmetic_optimizer(pruned, ctx) is pruned


def test_tf_function_graph_is_simplified():
    @tf.function
    def f(x):
        return tf.reshape(tf.reshape(tf.transpose(tf.transpose(x)) * 1.0, [6]), [2, 3])

    cf = f.get_concrete_function(tf.TensorSpec([2, 3], tf.float32))
    types = {op.type for op in cf.optimized_graph().get_operations()}
    assert not types & {"Transpose", "Reshape", "Mul"}
    np.testing.assert_allclose(f(tf.constant(XV)).numpy(), XV)


def test_pipeline_leaves_no_dead_ops():
    """Folding, CSE and the simplifications leave nothing the fetches do not need."""
    g = _graph(lambda x: tf.reshape(tf.transpose(tf.transpose(x + tf.zeros([2, 3]) * 3.0)),
                                    [6]) * (tf.ones([6]) + tf.zeros([6])))
    g2, names = run_pipeline(g, PassContext(fetches=["y:0", "gx:0"], feeds=["x:0"]))
    fetches = [g2.get_tensor_by_name(names[n]) for n in ("y:0", "gx:0")]
    need = needed_ops(fetches, [], {g2.get_tensor_by_name(names["x:0"])})
    assert set(g2.get_operations()) - need <= {g2.get_operation_by_name(names["x:0"][:-2])}
    assert "Transpose" not in op_counts(g2)


@pytest.mark.parametrize("reduce,ref", [(tf.reduce_sum, np.sum), (tf.reduce_mean, np.mean),
                                        (tf.reduce_max, np.max), (tf.reduce_prod, np.prod)])
def test_reduction_then_reshape_becomes_one_reduction(reduce, ref):
    """`Reshape(Sum(x, axes, keep_dims=True))` to the shape without the kept dims: one Sum
    with keep_dims=False, the same values and gradients."""
    g = _graph(lambda x: tf.reshape(reduce(x, [0], keepdims=True), [3]) * 2.0)
    g2, opt, plain = _both(g)
    np.testing.assert_allclose(opt[0], 2.0 * ref(XV.astype(np.float64), axis=0), rtol=1e-6)
    for a, b in zip(opt, plain):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    forward = tf.Graph()   # no gradient ops (Max's reads the reduction's output)
    with forward.as_default():
        x = v1.placeholder(dtypes.float32, [2, 3], name="x")
        tf.identity(tf.reshape(reduce(x, [0], keepdims=True), [3]), name="y")
    forward = arithmetic_optimizer(forward, PassContext(fetches=["y:0"], feeds=["x:0"]))
    (red,) = [op for op in forward.get_operations() if op.inputs and op.inputs[0].name == "x:0"]
    assert red.get_attr("keep_dims") is False and red.outputs[0].shape.as_list() == [3]
    assert "Reshape" not in op_counts(forward)


def test_bias_gradient_of_a_broadcast_add_is_one_sum():
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtypes.float32, [4, 3], name="x")
        b = tf.constant(np.ones(3, np.float32))
        y = x + b
        (gb,) = v1.gradients(tf.reduce_sum(y * y), [b])
        tf.identity(gb, name="gb")
    g2, names = run_pipeline(g, PassContext(fetches=["gb:0"], feeds=["x:0"]))
    bias_grad = g2.get_operation_by_name("gb").inputs[0].op
    assert bias_grad.type == "Sum" and bias_grad.get_attr("keep_dims") is False
    xv = RNG.normal(size=[4, 3]).astype(np.float32)
    (got,) = run_graph(g2, [names["gb:0"]], {"x:0": xv})
    np.testing.assert_allclose(got, (2 * (xv.astype(np.float64) + 1)).sum(0), rtol=1e-5)


@pytest.mark.parametrize("body", [
    lambda x: tf.reshape(tf.reduce_sum(x, [0], keepdims=True), [3, 1]),   # another shape
    lambda x: (lambda s: tf.reshape(s, [3]) + tf.reduce_sum(s))(           # another consumer
        tf.reduce_sum(x, [0], keepdims=True)),
])
def test_reduction_then_reshape_stays_where_it_must(body):
    g = _graph(body)
    base = run_pipeline(g, PassContext(fetches=["y:0"], feeds=["x:0"], config=OFF))[0]
    g2, opt, plain = _both(g, ("y:0",))
    np.testing.assert_allclose(opt[0], plain[0], rtol=1e-6)
    assert op_counts(g2).get("Reshape", 0) == op_counts(base).get("Reshape", 0)


def test_a_fetched_reduction_keeps_its_reshape():
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtypes.float32, [2, 3], name="x")
        s = tf.reduce_sum(x, [0], keepdims=True, name="s")
        tf.reshape(s, [3], name="r")
    g2 = arithmetic_optimizer(g, PassContext(fetches=["s:0", "r:0"], feeds=["x:0"]))
    assert g2.get_operation_by_name("r").type == "Reshape"
    assert g2.get_operation_by_name("s").get_attr("keep_dims") is True


def _tiled_mean_gradient(x):
    """A Mean's gradient scaled by a non-constant: (Tile(Reshape(s, [1]), [2]) / 2)
    expanded and multiplied into a [2, 3] tensor."""
    s = tf.reduce_sum(x)
    return tf.expand_dims(tf.tile(tf.reshape(s, [1]), [2]) / 2.0, -1) * x


def _forward_graph(body):
    """`y = body(x)` without gradient ops (which would read the chain's tensors too, as a
    Mean's gradient's chain is not: nothing differentiates the gradient)."""
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtypes.float32, [2, 3], name="x")
        tf.identity(body(x), name="y")
    return g


def test_a_tiled_operand_is_broadcast_instead():
    g = _forward_graph(_tiled_mean_gradient)
    g2, opt, plain = _both(g, ("y:0",))
    x = XV.astype(np.float64)
    np.testing.assert_allclose(opt[0], x.sum() / 2.0 * x, rtol=1e-6)
    np.testing.assert_array_equal(opt[0], plain[0])   # the same elements, copied or broadcast
    assert "Tile" not in op_counts(g2)
    forward = arithmetic_optimizer(g, PassContext(fetches=["y:0"], feeds=["x:0"]))
    assert "Tile" not in op_counts(forward)
    (expand,) = [op for op in forward.get_operations() if op.type == "ExpandDims"]
    assert expand.outputs[0].shape.as_list() == [1, 1]


@pytest.mark.parametrize("body", [
    # the broadcast would not give the tile's shape: [1] * [] is [1], not [3]
    lambda x: tf.tile(tf.reshape(tf.reduce_sum(x), [1]), [3]) * tf.reduce_sum(x),
    # the tile is read elsewhere too
    lambda x: (lambda t: tf.expand_dims(t, -1) * x + tf.reduce_sum(t))(
        tf.tile(tf.reshape(tf.reduce_sum(x), [1]), [2])),
    # a Reshape in the chain (it needs the tile's element count)
    lambda x: tf.reshape(tf.tile(tf.reshape(tf.reduce_sum(x), [1]), [2]), [2, 1]) * x,
])
def test_a_tile_stays_where_the_broadcast_differs(body):
    g = _forward_graph(body)
    g2, opt, plain = _both(g, ("y:0",))
    np.testing.assert_array_equal(opt[0], plain[0])
    forward = arithmetic_optimizer(g, PassContext(fetches=["y:0"], feeds=["x:0"]))
    assert op_counts(forward).get("Tile") == 1
