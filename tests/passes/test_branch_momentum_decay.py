"""Remapper: an L2-regularized weight's gradient applied inside an `If` (the loss-scale
optimizer's skip-on-overflow step) is passed into the If as its parts, its update fused.

`If(..., var, AddN(g, Mul(ReadVariableOp(var), s)), ...)` whose branch applies the sum with a
momentum update becomes `If(..., var, g, ..., s)` with `_ResourceApplyMomentumWithDecay` in the
branch, and `_AllFinite` of the sum becomes `_AllFiniteAddScaled(g, ReadVariableOp(var), s)`.
Checked: the rewrite (and not when the sum is read elsewhere, when the branch or the outer
graph writes the variable otherwise, or with remapping off), and a Keras LossScaleOptimizer
training with an overflowing step equal bit for bit with remapping on and off, on both
kernel paths.
"""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.kernels import finite_numba, momentum_numba, speculative_numba
from ndflow.ops import comparison
from tests.passes.remapping_toggle import Remapping

DECAY = 0.05
INF, NAN = float("inf"), float("nan")


def _ops(graph, op_type: str) -> list:
    return [op for op in graph.get_operations() if op.type == op_type]


def _optimized(fn, *args):
    return fn.get_concrete_function(*args).optimized_graph()


# -- a hand-written cond: what blocks the rewrite ---------------------------------------------

def _cond_step(sum_read_outside=False, branch_writes=False, outer_writes=False,
               else_reads=False, decay_by_hand=False, other_weights_term=False):
    """A momentum update of w's L2-regularized gradient inside tf.cond(all_finite(g)) (the
    decay from l2_loss, or added to the gradient by hand; or the gradient itself another
    weight's scaled value, added after w's term)."""
    rng = np.random.default_rng(3)
    x = tf.constant(rng.normal(size=(16, 40)).astype(np.float32))
    w = tf.Variable(rng.normal(size=(40, 30)).astype(np.float32))
    accum = tf.Variable(np.zeros((40, 30), np.float32))
    v = tf.Variable(rng.normal(size=(40, 30)).astype(np.float32))

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w))) * 0.01
            if not decay_by_hand:
                loss += DECAY * tf.nn.l2_loss(w)
        g = tape.gradient(loss, w)
        if decay_by_hand:
            g = g + w * DECAY
        if other_weights_term:
            g = w * DECAY + v * 0.3

        def apply():
            tf.raw_ops.ResourceApplyKerasMomentum(var=w.handle, accum=accum.handle, lr=0.1,
                                                  grad=g, momentum=0.9)
            if branch_writes:
                w.assign_add(tf.zeros_like(w))
            return tf.constant(1)

        def skip():
            return tf.cast(tf.reduce_sum(g) > 0, tf.int32) if else_reads else tf.constant(0)

        out = tf.cond(comparison.all_finite(g), apply, skip)
        if outer_writes:
            with tf.control_dependencies([out]):
                w.assign_add(tf.zeros_like(w))
        return (out, tf.reduce_sum(g)) if sum_read_outside else out
    return step


def _is_rewritten(graph) -> bool:
    (cond,) = _ops(graph, "If")
    then_types = [op.type for op in cond.attrs["then_branch"].get_operations()]
    fused = "_ResourceApplyMomentumWithDecay" in then_types
    assert fused == bool(_ops(graph, "_AllFiniteAddScaled"))
    assert fused != ("ResourceApplyKerasMomentum" in then_types)
    return fused


def test_cond_update_is_fused_and_the_check_reads_the_parts():
    graph = _optimized(_cond_step())
    (cond,) = _ops(graph, "If")
    (check,) = _ops(graph, "_AllFiniteAddScaled")
    g, w_read, s = check.inputs
    assert g.op.type == "MatMul" and w_read.op.type == "ReadVariableOp" and s.shape.rank == 0
    assert not _ops(graph, "_AllFinite") and not _ops(graph, "AddN")
    assert not _ops(graph, "_MatMulAddScaled")
    data = list(cond.inputs[1:])
    assert any(t is g for t in data) and data[-1] is s
    assert cond.attrs["Tin"] == [t.dtype for t in data]
    for key in ("then_branch", "else_branch"):
        fg = cond.attrs[key]
        assert len(fg.inputs) == len(data) and fg.inputs[-1].dtype is s.dtype
    (apply,) = _ops(cond.attrs["then_branch"], "_ResourceApplyMomentumWithDecay")
    then_inputs = cond.attrs["then_branch"].inputs
    assert apply.inputs[3] is then_inputs[[k for k, t in enumerate(data) if t is g][0]]
    assert apply.inputs[4] is then_inputs[-1]
    assert apply.attrs["keras"] is True and apply.attrs["use_nesterov"] is False


def test_a_decay_added_by_hand_is_fused_too():
    graph = _optimized(_cond_step(decay_by_hand=True))
    assert _is_rewritten(graph)
    (check,) = _ops(graph, "_AllFiniteAddScaled")
    assert check.inputs[0].op.type == "MatMul" and check.inputs[2].op.type == "Const"


def test_the_gradient_may_itself_be_a_scaled_weight():
    """g + w * s written `w * s + v * 0.3`: the reading with w's handle (an If input) is the
    one taken, not the first (v's handle, which the If does not take)."""
    graph = _optimized(_cond_step(other_weights_term=True))
    assert _is_rewritten(graph)
    (check,) = _ops(graph, "_AllFiniteAddScaled")
    assert check.inputs[0].op.type == "Mul"
    assert check.inputs[2].op.attrs["value"] == np.float32(DECAY)


@pytest.mark.parametrize("case", ["sum_read_outside", "branch_writes", "outer_writes",
                                  "else_reads"])
def test_not_rewritten_when_unsafe(case):
    assert not _is_rewritten(_optimized(_cond_step(**{case: True})))


def test_not_rewritten_with_remapping_off():
    step = _cond_step()
    with Remapping(False):
        graph = _optimized(step)
    assert not _is_rewritten(graph) and _ops(graph, "_AllFinite")


# -- a Keras LossScaleOptimizer step: the same values, bit for bit ----------------------------

FACTORS = [1.0, 1.0, INF, 1.0, NAN, 1.0]


@pytest.fixture(params=["numba", "aten"])
def kernel_path(request, monkeypatch):
    if request.param == "aten":
        monkeypatch.setattr(momentum_numba, "applies", lambda var: False)
        monkeypatch.setattr(finite_numba, "applies", lambda x, y: False)
        monkeypatch.setattr(speculative_numba, "applies", lambda var: False)
    elif momentum_numba._callback() is None or finite_numba._callback() is None:
        pytest.skip("numba or ATen's OpenMP launcher is missing")
    return request.param


def _lso_training(remapping: bool, nesterov: bool):
    """Steps of `loss * f` (f = inf / nan overflow: skipped, the scale halves) with an
    L2-regularized weight (20480 elements: the one-pass kernels' size) and vector; returns the
    values after each step and the optimized graph."""
    rng = np.random.default_rng(11)
    x = tf.constant(rng.normal(size=(16, 160)).astype(np.float32))
    w = tf.Variable(rng.normal(size=(160, 128)).astype(np.float32) * 0.1)
    v = tf.Variable(rng.normal(size=(128,)).astype(np.float32))
    opt = tf.keras.mixed_precision.LossScaleOptimizer(
        tf.keras.optimizers.SGD(0.01, momentum=0.9, nesterov=nesterov), initial_scale=2 ** 10,
        dynamic_growth_steps=2)

    @tf.function
    def step(f):
        with tf.GradientTape() as tape:
            h = tf.matmul(x, w)
            loss = (tf.reduce_sum(tf.square(h)) * 0.01 + tf.reduce_sum(h * v)) * f + \
                DECAY * (tf.nn.l2_loss(w) + tf.nn.l2_loss(v))
            scaled = opt.get_scaled_loss(loss)
        grads = opt.get_unscaled_gradients(tape.gradient(scaled, [w, v]))
        opt.apply_gradients(zip(grads, [w, v]))

    out = []
    with Remapping(remapping):
        for f in FACTORS:
            step(tf.constant(f))
            out.append([t.numpy().copy() for t in [w, v] + opt.inner_optimizer.variables]
                       + [opt.loss_scale.numpy(), opt.iterations.numpy()])
        graph = _optimized(step, tf.constant(1.0))
    return out, graph


@pytest.mark.parametrize("nesterov", [False, True])
def test_loss_scale_optimizer_training_equals_the_unfused_one(nesterov, kernel_path):
    on, graph = _lso_training(True, nesterov)
    off, graph_off = _lso_training(False, nesterov)
    # the decayed gradients' parts reach the speculative updates (passes/speculative_momentum)
    (spec,) = _ops(graph, "_SpeculativeApplyMomentum")
    assert spec.attrs["decay"] == [1, 1] and spec.attrs["use_nesterov"] == [nesterov] * 2
    # the weight's gradient MatMul computed by the op itself (its operand in the MatMul's
    # place), the bias's Sum as it was
    assert spec.attrs["matmul"] == [1, 0] and spec.inputs[7].op.type == "Sum"
    assert not _ops(graph, "MatMul") or all(
        op.outputs[0].consumers() for op in _ops(graph, "MatMul"))
    assert not _ops(graph, "_AllFinite") and not _ops(graph, "_AllFiniteAddScaled")
    # no If is left (the op commits the updates; the branches' common `iterations += 1`
    # runs in its place), so no decayed sum is passed to one
    assert not _ops(graph, "If") and _ops(graph_off, "If")
    assert not _ops(graph, "_MatMulAddScaled")
    assert not _ops(graph_off, "_AllFiniteAddScaled")
    scales = [float(step[-2]) for step in on]
    assert scales == [2.0 ** 10, 2.0 ** 11, 2.0 ** 10, 2.0 ** 10, 2.0 ** 9, 2.0 ** 9]
    assert [int(step[-1]) for step in on] == [1, 2, 3, 4, 5, 6]
    np.testing.assert_array_equal(on[2][0], on[1][0])   # the overflowing step is skipped
    assert not np.array_equal(on[3][0], on[2][0])
    for got, want in zip(on, off):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
