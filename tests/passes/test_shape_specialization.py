"""Shape specialization (passes/shape_specialization.py, runtime/shape_plans.py): a graph
compiled for the shapes it is fed folds its gradient's shape arithmetic, gives the same values
as the generic graph and NumPy's float64 reference, and a function uses such a plan only for
calls of those shapes, after they have come often enough, for at most a few shapes."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.passes.pass_config import resolve_pass_config
from ndflow.runtime import shape_plans
from ndflow.runtime.compile import optimize
from tests.passes.graph_helpers import op_counts

RNG = np.random.default_rng(7)
W = RNG.normal(size=(5, 3))
SHAPE_OPS = ("Shape", "BroadcastGradientArgs", "Prod", "FloorDiv", "VariableShape")


def _step():
    """A gradient through broadcasting and a mean over a dimension of unknown size's
    neighbour: its graph carries the shape arithmetic of the unknown batch."""
    w = tf.Variable(W.astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 5, 3], tf.float32)])
    def step(x):
        with tf.GradientTape() as tape:
            p = tf.reduce_mean(x * w + 1.0, axis=1)
            loss = tf.reduce_sum(p * p)
        return tape.gradient(loss, w)
    return step


def _reference(x: np.ndarray) -> np.ndarray:
    """d/dw sum_b,j (mean_i (x w + 1))^2 in float64."""
    p = (x * W + 1.0).mean(axis=1)                 # [b, 3]
    return (2.0 * p[:, None, :] * x / x.shape[1]).sum(axis=0)


def test_the_specialized_graph_has_no_shape_arithmetic():
    cf = _step().get_concrete_function()
    g = cf.graph
    specs = {g.inputs[0].name: (tf.float32, (4, 5, 3))}
    generic = optimize(g, g.inputs, list(g.outputs), [], resolve_pass_config())[0]
    plain = optimize(g, g.inputs, list(g.outputs), [], resolve_pass_config(),
                     feed_specs=specs)[0]
    special = optimize(g, g.inputs, list(g.outputs), [], resolve_pass_config(),
                       feed_specs=specs, specialize=True)[0]
    assert any(op_counts(generic)[t] for t in SHAPE_OPS)
    assert op_counts(plain) == op_counts(generic)     # shapes alone specialize nothing
    assert not any(op_counts(special)[t] for t in SHAPE_OPS)
    for op in special.get_operations():
        for t in op.outputs:
            assert t.dtype == tf.resource or t.shape.is_fully_defined(), (op.name, t.shape)


def test_a_function_specializes_after_repeated_shapes_with_the_same_values():
    step = _step()
    x4 = RNG.normal(size=(4, 5, 3)).astype(np.float32)
    x6 = RNG.normal(size=(6, 5, 3)).astype(np.float32)
    first = step(tf.constant(x4)).numpy()
    plans = step.get_concrete_function()._shape_plans
    assert plans.dynamic == [0] and not plans._plans
    for _ in range(shape_plans.CALLS_BEFORE_SPECIALIZING):
        got = step(tf.constant(x4)).numpy()
        np.testing.assert_allclose(got, _reference(x4.astype(np.float64)), rtol=1e-5,
                                   atol=1e-5)
        np.testing.assert_array_equal(got, first)   # the specialized plan's bits too
    assert list(plans._plans) == [((4, 5, 3),)]
    # another batch size runs the generic plan until it has come as often
    np.testing.assert_allclose(step(tf.constant(x6)).numpy(),
                               _reference(x6.astype(np.float64)), rtol=1e-5, atol=1e-5)
    assert len(plans._plans) == 1


def test_at_most_max_shapes_plans_and_a_megamorphic_function_stops_counting(monkeypatch):
    monkeypatch.setattr(shape_plans, "CALLS_BEFORE_SPECIALIZING", 1)
    step = _step()
    for n in range(1, shape_plans.MAX_SHAPES + 3):
        x = RNG.normal(size=(n, 5, 3)).astype(np.float32)
        np.testing.assert_allclose(step(tf.constant(x)).numpy(),
                                   _reference(x.astype(np.float64)), rtol=1e-5, atol=1e-5)
    plans = step.get_concrete_function()._shape_plans
    assert len(plans._plans) == shape_plans.MAX_SHAPES
    # more distinct shapes than MEGAMORPHIC before one repeats: it stops counting
    monkeypatch.setattr(shape_plans, "CALLS_BEFORE_SPECIALIZING", 2)
    monkeypatch.setattr(shape_plans, "MEGAMORPHIC", 1)
    fresh = _step()
    for n in (2, 3, 2, 2):
        fresh(tf.constant(RNG.normal(size=(n, 5, 3)).astype(np.float32)))
    assert not fresh.get_concrete_function()._shape_plans._plans


def test_a_fully_static_function_has_nothing_to_specialize():
    @tf.function(input_signature=[tf.TensorSpec([2, 3], tf.float32)])
    def f(x):
        return tf.reduce_sum(x * 2.0)
    f(tf.ones([2, 3]))
    assert f.get_concrete_function()._shape_plans.dynamic == []


def test_bad_input_still_fails_as_the_generic_plan_fails(monkeypatch):
    monkeypatch.setattr(shape_plans, "CALLS_BEFORE_SPECIALIZING", 1)

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def f(x):
        return tf.matmul(x, tf.ones([3, 2]))
    np.testing.assert_array_equal(f(tf.ones([4, 3])).numpy(), np.full((4, 2), 3.0))
    with pytest.raises(tf.errors.InvalidArgumentError):
        f(tf.ones([0, 3]))[0, 0].numpy()


def test_a_reduction_over_no_axes_is_its_input():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [2, 3], name="x")
        tf.identity(tf.reduce_sum(x * 2.0, axis=[]), name="y")
    out = optimize(g, [g.get_tensor_by_name("x:0")], [g.get_tensor_by_name("y:0")], [],
                   resolve_pass_config())[0]
    assert "Sum" not in op_counts(out)
    with tf.compat.v1.Session(graph=g) as sess:
        xv = RNG.normal(size=(2, 3)).astype(np.float32)
        np.testing.assert_array_equal(sess.run("y:0", {"x:0": xv}), xv * 2.0)


def test_a_specialization_that_fails_to_compile_leaves_the_generic_plan(monkeypatch):
    monkeypatch.setattr(shape_plans, "CALLS_BEFORE_SPECIALIZING", 1)
    step = _step()
    cf = step.get_concrete_function()

    def broken(feed_specs):
        raise RuntimeError("a pass failed")
    monkeypatch.setattr(cf, "_specialized_plan", broken)
    x = RNG.normal(size=(3, 5, 3)).astype(np.float32)
    for _ in range(2):
        np.testing.assert_allclose(step(tf.constant(x)).numpy(),
                                   _reference(x.astype(np.float64)), rtol=1e-5, atol=1e-5)
    assert list(cf._shape_plans._plans.values()) == [shape_plans._FAILED]
