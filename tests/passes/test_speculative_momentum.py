"""Remapper: a loss-scale optimizer's momentum updates computed before its If, with the
finite checks of their gradients (ndflow/passes/speculative_momentum.py).

`If(All(Pack(checks of g_i)), ..., g_i, ...)` whose then-branch applies each g_i with a
momentum update becomes one `_SpeculativeApplyMomentum` before the Pack (new values into new
buffers, the flag in the checks' place) and assignments of those values in the branch.
Checked: the op's values against NumPy float64 formulas (TF's and Keras' forms, Nesterov,
the L2 term) with the variables untouched, its flag on inf/NaN and on an overflowing sum, on
both kernel paths (the streaming-store numba pass and ATen); a Keras LossScaleOptimizer
training with overflowing steps bit for bit equal with remapping on and off, every variable
and slot unchanged by a skipped step; and no rewrite where it would be unsafe.
"""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.kernels import finite_numba, gemm_epilogue, momentum_numba, speculative_numba
from ndflow.ops import comparison, nn_fused
from ndflow.ops.apply import apply_op
from ndflow.passes import speculative_momentum
from tests.passes.remapping_toggle import RemapperStep, Remapping

LR, MU, DECAY = 0.1, 0.9, 0.05
INF, NAN = float("inf"), float("nan")


def _ops(graph, op_type: str) -> list:
    return [op for op in graph.get_operations() if op.type == op_type]


@pytest.fixture(params=["numba", "aten"])
def kernel_path(request, monkeypatch):
    if request.param == "aten":
        monkeypatch.setattr(momentum_numba, "applies", lambda var: False)
        monkeypatch.setattr(finite_numba, "applies", lambda x, y: False)
        monkeypatch.setattr(speculative_numba, "applies", lambda var: False)
    elif speculative_numba._callback() is None:
        pytest.skip("numba or ATen's OpenMP launcher is missing")
    return request.param


# -- the op: NumPy float64 formulas, variables untouched ----------------------------------------

def _want(g, w, a, s, keras, nesterov, decay):
    g, w, a = (x.astype(np.float64) for x in (g, w, a))
    grad = g + s * w if decay else g
    if keras:
        acc = a * MU - LR * grad
        return w + (acc * MU - LR * grad if nesterov else acc), acc
    acc = a * MU + grad
    return w - LR * (grad + MU * acc if nesterov else acc), acc


def _speculate(grads, ws, accums, scales, keras, nesterov, decay, products=None):
    """The op on given gradients, or where `products[i]` is (a, b, ta, tb) on the gradient
    op(a) @ op(b) it computes itself."""
    n = len(grads)
    products = products or [None] * n
    f = tf.constant
    op = apply_op(nn_fused.SpeculativeApplyMomentum,
                  [[w.handle for w in ws], [a.handle for a in accums], [f(LR)] * n,
                   [f(p[0]) if p else f(g) for g, p in zip(grads, products)],
                   [f(np.float32(s)) for s in scales], [f(MU)] * n,
                   [f(p[1]) for p in products if p]],
                  {"N": n, "T": tf.float32, "use_nesterov": [int(nesterov)] * n,
                   "keras": [int(keras)] * n, "decay": [int(d) for d in decay],
                   "M": sum(bool(p) for p in products),
                   "matmul": [int(bool(p)) for p in products],
                   "transpose_a": [int(bool(p and p[2])) for p in products],
                   "transpose_b": [int(bool(p and p[3])) for p in products]})
    return bool(op.outputs[0]), [t.numpy() for t in op.outputs[1:]]


@pytest.mark.parametrize("ta,tb", [(True, False), (False, True)])
def test_a_gradient_product_computed_by_the_op(ta, tb, kernel_path):
    """A MatMul's product as the gradient (two blocks of rows and a short one on the
    blocked path): the values of the op given the product, within float32 rounding; a
    non-finite operand element gives a false flag."""
    rng = np.random.default_rng(5)
    m, k, n = 700, 24, 300
    a = rng.normal(size=(k, m) if ta else (m, k)).astype(np.float32)
    b = rng.normal(size=(n, k) if tb else (k, n)).astype(np.float32)
    g = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b)
    small = np.arange(5, dtype=np.float32)
    w0 = rng.normal(size=(m, n)).astype(np.float32)
    variables = [tf.Variable(w0), tf.Variable(small), tf.Variable(w0 * 0.1),
                 tf.Variable(small * 0)]
    args = ([variables[0], variables[1]], [variables[2], variables[3]], [0.5, 0.0], True,
            False, [True, False])
    ok, got = _speculate([None, small], *args, products=[(a, b, ta, tb), None])
    ok_ref, want = _speculate([g.astype(np.float32), small], *args)
    assert ok and ok_ref
    for x, y in zip(got, want):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)
    a[3, 1] = np.inf
    ok, _ = _speculate([None, small], *args, products=[(a, b, ta, tb), None])
    assert not ok
    np.testing.assert_array_equal(variables[0].numpy(), w0)   # nothing assigned


@pytest.mark.parametrize("keras", [True, False])
@pytest.mark.parametrize("nesterov", [False, True])
def test_values_match_numpy_and_the_variables_stay(keras, nesterov, kernel_path):
    rng = np.random.default_rng(5)
    shapes = [(320, 256), (7, 5), (81,)]    # 81920 elements: the streaming-store path
    grads = [rng.normal(size=s).astype(np.float32) for s in shapes]
    w0 = [rng.normal(size=s).astype(np.float32) for s in shapes]
    a0 = [rng.normal(size=s).astype(np.float32) for s in shapes]
    ws, accums = [tf.Variable(x) for x in w0], [tf.Variable(x) for x in a0]
    scales, decay = [DECAY, 0.0, DECAY], [True, False, True]
    ok, out = _speculate(grads, ws, accums, scales, keras, nesterov, decay)
    assert ok
    for i in range(3):
        want_w, want_a = _want(grads[i], w0[i], a0[i], scales[i], keras, nesterov, decay[i])
        np.testing.assert_allclose(out[i], want_w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out[3 + i], want_a, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(ws[i].numpy(), w0[i])
        np.testing.assert_array_equal(accums[i].numpy(), a0[i])


@pytest.mark.parametrize("big", [False, True])
def test_flag_is_the_checks_decision(big, kernel_path):
    """inf / NaN anywhere in any gradient, and a decayed sum that overflows (both terms
    finite), clear the flag; FLT_MAX plus a small term rounds back and does not."""
    rng = np.random.default_rng(6)
    shape = (320, 256) if big else (9, 7)
    w = tf.Variable(rng.normal(size=shape).astype(np.float32))
    a = tf.Variable(np.zeros(shape, np.float32))
    other_w, other_a = tf.Variable(np.ones(5, np.float32)), tf.Variable(np.zeros(5, np.float32))
    f32_max = float(np.finfo(np.float32).max)
    cases = [(INF, 1.0, False), (NAN, 1.0, False), (-INF, 1.0, False), (3e38, 3e38, False),
             (f32_max, 1e20, True), (1.0, 1.0, True)]
    for g0, w0, want in cases:
        for at in (0, -1):
            g = rng.normal(size=shape).astype(np.float32)
            wv = w.numpy()
            g.flat[at], wv.flat[at] = g0, w0
            w.assign(wv)
            ok, _ = _speculate([g, np.ones(5, np.float32)], [w, other_w], [a, other_a],
                               [1.0, 0.0], True, False, [True, False])
            assert ok == want, (g0, w0, at)
    # a bad gradient in the other (small, undecayed) variable
    ok, _ = _speculate([np.ones(shape, np.float32), np.array([1, 2, NAN, 4, 5], np.float32)],
                       [w, other_w], [a, other_a], [1.0, 0.0], True, False, [True, False])
    assert not ok


# -- a Keras LossScaleOptimizer training: bit for bit the graph without speculation ---------------

FACTORS = [1.0, 1.0, INF, 1.0, NAN, 1.0]


def _lso_training(speculate: bool, nesterov: bool, read_gradient: bool = False,
                  factors=FACTORS):
    """Steps of `loss * f` (f = inf / nan: skipped, the scale halves) with a large
    L2-regularized weight (81920 elements: the streaming path), a small one and an
    unregularized bias; the values after each step and the optimized graph. The reference
    (`speculate=False`) is the same remapped graph without the speculative step, not the
    unremapped one: the remapper's MatMul + Add fusion (addmm) rounds differently from the
    two ops where MKL adds the bias before the products (AVX2)."""
    rng = np.random.default_rng(11)
    x = tf.constant(rng.normal(size=(16, 320)).astype(np.float32))
    w = tf.Variable(rng.normal(size=(320, 256)).astype(np.float32) * 0.05)
    v = tf.Variable(rng.normal(size=(256, 3)).astype(np.float32) * 0.1)
    b = tf.Variable(np.zeros(3, np.float32))
    params = [w, v, b]
    opt = tf.keras.mixed_precision.LossScaleOptimizer(
        tf.keras.optimizers.SGD(0.01, momentum=0.9, nesterov=nesterov), initial_scale=2 ** 10,
        dynamic_growth_steps=2)

    @tf.function
    def step(f):
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(x, w))
            out = tf.matmul(h, v) + b
            loss = tf.reduce_sum(tf.square(out)) * 0.01 * f + \
                DECAY * (tf.nn.l2_loss(w) + tf.nn.l2_loss(v))
            scaled = opt.get_scaled_loss(loss)
        grads = tape.gradient(scaled, params)
        opt.apply_gradients(zip(opt.get_unscaled_gradients(grads), params))
        return tf.reduce_sum(grads[2]) if read_gradient else loss

    out = []
    with RemapperStep("speculate_momentum", speculate):
        for f in factors:
            step(tf.constant(f))
            out.append([t.numpy().copy() for t in params + opt.inner_optimizer.variables]
                       + [opt.loss_scale.numpy(), opt.iterations.numpy()])
        graph = step.get_concrete_function(tf.constant(1.0)).optimized_graph()
    return out, graph


@pytest.mark.parametrize("nesterov", [False, True])
def test_loss_scale_training_equals_the_graph_without_speculation(nesterov, kernel_path):
    on, graph = _lso_training(True, nesterov)
    off, graph_off = _lso_training(False, nesterov)
    (spec,) = _ops(graph, "_SpeculativeApplyMomentum")
    assert spec.attrs["N"] == 3 and sorted(spec.attrs["decay"]) == [0, 1, 1]
    assert spec.attrs["use_nesterov"] == [int(nesterov)] * 3 and spec.attrs["keras"] == [1] * 3
    assert not _ops(graph, "_AllFinite") and not _ops(graph, "_AllFiniteAddScaled")
    assert not _ops(graph, "All")   # All(Pack(flag, ...)) is the flag
    # nothing else uses the variables: the op assigns the new values itself, and the If,
    # left with Keras' `iterations += 1` in both branches, becomes that assignment
    assert spec.attrs["commit"] and not _ops(graph, "If")
    (cond_off,) = _ops(graph_off, "If")
    (count,) = [op for op in _ops(graph, "AssignAddVariableOp") if op.name == cond_off.name]
    assert np.asarray(count.inputs[1].op.attrs["value"]) == 1
    assert [int(s[-1]) for s in on] == list(range(1, len(FACTORS) + 1))   # skipped ones too
    # the weights' gradient MatMuls (x^T @ dh, h^T @ dout) are computed by the op
    assert spec.attrs["matmul"] == [1, 1, 0] and spec.attrs["M"] == 2
    assert spec.attrs["transpose_a"] == [1, 1, 0] and spec.attrs["transpose_b"] == [0] * 3
    assert len(_ops(graph, "MatMul")) == len(_ops(graph_off, "MatMul")) - 2
    assert not _ops(graph_off, "_SpeculativeApplyMomentum")
    assert [float(s[-2]) for s in on] == [2.0 ** 10, 2.0 ** 11, 2.0 ** 10, 2.0 ** 10,
                                          2.0 ** 9, 2.0 ** 9]
    for k, f in enumerate(FACTORS):
        if not np.isfinite(f):     # skipped: every variable and slot as before
            tensors = [(a, b) for a, b in zip(on[k], on[k - 1]) if np.ndim(a)]
            assert len(tensors) == 6   # w, v, b and their momentums
            for a, b in tensors:
                np.testing.assert_array_equal(a, b)
        else:
            assert not np.array_equal(on[k][0], on[k - 1][0])
    for got, want in zip(on, off):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_product_gradients_are_computed_by_blocks(monkeypatch):
    """A large weight's product gradient is computed a block at a time into new buffers
    (kernels/gemm_epilogue.py), finite or huge; a non-finite step writes nothing. Every step
    bit for bit the graph without speculation."""
    if speculative_numba._callback() is None or not gemm_epilogue.available():
        pytest.skip("numba, ATen's OpenMP launcher or MKL's sgemm is missing")
    calls = []
    speculate = gemm_epilogue.matmul_speculate

    def spy(a, b, ta, tb, var, accum, var_out, accum_out, *rest, **kw):
        calls.append("in place" if var_out is var and accum_out is accum else "new")
        return speculate(a, b, ta, tb, var, accum, var_out, accum_out, *rest, **kw)

    monkeypatch.setattr(gemm_epilogue, "matmul_speculate", spy)
    factors = [1.0, 1.0, 1e32, INF]
    on, _ = _lso_training(True, False, factors=factors)
    steps, calls[:] = list(calls), []
    off, _ = _lso_training(False, False, factors=factors)
    assert not calls
    # the product x^T @ dh (w, 81920 elements; h^T @ dout, v's, is too small to gain from
    # blocks and is ATen's); the 1e32 step's gradients are finite; the last is not (the
    # bias' check fails first: nothing computed)
    assert steps == ["new"] * 3
    assert [float(s[-2]) for s in on] == [2.0 ** 10, 2.0 ** 11, 2.0 ** 11, 2.0 ** 10]
    assert not np.array_equal(on[2][0], on[1][0])         # the 1e32 step was applied
    skipped = [(a, b) for a, b in zip(on[3], on[2]) if np.ndim(a)]
    assert len(skipped) == 6                               # the last one was not: the
    for a, b in skipped:                                   # variables and their momentums
        np.testing.assert_array_equal(a, b)
    for got, want in zip(on, off):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_a_gradient_read_elsewhere_keeps_its_check(kernel_path):
    on, graph = _lso_training(True, False, read_gradient=True)
    off, _ = _lso_training(False, False, read_gradient=True)
    (spec,) = _ops(graph, "_SpeculativeApplyMomentum")
    assert spec.attrs["N"] == 2 and len(_ops(graph, "_AllFinite")) == 1
    (pack,) = _ops(graph, "Pack")   # the flag stands for two checks, the third stays
    assert sorted(t.op.type for t in pack.inputs) == ["_AllFinite"] + [spec.type] * 2
    (cond,) = _ops(graph, "If")
    then_types = [op.type for op in cond.attrs["then_branch"].get_operations()]
    assert then_types.count("ResourceApplyKerasMomentum") == 1
    # the If's predicate is not the flag alone: the If commits the new values
    assert not spec.attrs["commit"] and then_types.count("AssignVariableOp") == 4
    for got, want in zip(on, off):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


# -- a hand-written cond: what blocks the rewrite ---------------------------------------------

def _cond_step(branch_writes=False, outer_writes=False, else_reads=False, lr_written=False,
               bare_predicate=False, branch_reads=False, outer_reads=False):
    rng = np.random.default_rng(3)
    x = tf.constant(rng.normal(size=(16, 40)).astype(np.float32))
    w = tf.Variable(rng.normal(size=(40, 30)).astype(np.float32))
    accum = tf.Variable(np.zeros((40, 30), np.float32))
    lr = tf.Variable(0.1)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w))) * 0.01
        g = tape.gradient(loss, w)
        check = comparison.all_finite(g)
        pred = check if bare_predicate else tf.reduce_all(tf.stack([check]))

        def apply():
            tf.raw_ops.ResourceApplyKerasMomentum(var=w.handle, accum=accum.handle,
                                                  lr=lr.read_value() * 0.5, grad=g,
                                                  momentum=0.9)
            if branch_writes:
                w.assign_add(tf.zeros_like(w))
            if lr_written:
                lr.assign(0.2)
            if branch_reads:   # after the update (automatic control dependencies)
                return tf.cast(tf.reduce_sum(w.read_value()) * 0.0, tf.int32) + 1
            return tf.constant(1)

        def skip():
            return tf.cast(tf.reduce_sum(g) > 0, tf.int32) if else_reads else tf.constant(0)

        if outer_reads:   # made after the checks, before the If: the old weight
            before = tf.reduce_sum(w.read_value())
        out = tf.cond(pred, apply, skip)
        if outer_writes:
            with tf.control_dependencies([out]):
                accum.assign_add(tf.zeros_like(accum))
        if outer_reads:
            return out, before
        return out
    return step, w


def test_hand_written_cond_is_rewritten_and_hoists_the_learning_rate():
    step, w = _cond_step()
    graph = step.get_concrete_function().optimized_graph()
    (spec,) = _ops(graph, "_SpeculativeApplyMomentum")
    lr = spec.inputs[2]   # lr.read_value() * 0.5, computed before the op
    assert lr.op.type == "Mul"
    read = lr.op.inputs[0].op
    while read.type == "Identity":
        read = read.inputs[0].op
    assert read.type == "ReadVariableOp"
    assert spec.attrs["commit"]
    w0 = w.numpy()
    step()
    assert not np.array_equal(w.numpy(), w0)


@pytest.mark.parametrize("case", ["branch_reads", "outer_reads"])
def test_the_if_commits_where_a_read_could_tell(case):
    """A read of the weight in the then-branch, or one made after the checks but before the
    If, would see the new value too early if the op assigned it: the If keeps the
    assignment, and the read outside sees the old weight."""
    step, w = _cond_step(**{case: True})
    graph = step.get_concrete_function().optimized_graph()
    (spec,) = _ops(graph, "_SpeculativeApplyMomentum")
    assert not spec.attrs["commit"]
    (cond,) = _ops(graph, "If")
    then_types = [op.type for op in cond.attrs["then_branch"].get_operations()]
    assert then_types.count("AssignVariableOp") == 2
    w0 = w.numpy()
    out = step()
    assert not np.array_equal(w.numpy(), w0)
    if case == "outer_reads":
        np.testing.assert_allclose(out[1].numpy(), w0.sum(), rtol=1e-5)


@pytest.mark.parametrize("case", ["branch_writes", "outer_writes", "else_reads", "lr_written",
                                  "bare_predicate"])
def test_not_rewritten_when_unsafe(case):
    step, _ = _cond_step(**{case: True})
    graph = step.get_concrete_function().optimized_graph()
    assert not _ops(graph, "_SpeculativeApplyMomentum") and _ops(graph, "_AllFinite")


def test_not_rewritten_with_remapping_off():
    step, _ = _cond_step()
    with Remapping(False):
        graph = step.get_concrete_function().optimized_graph()
    assert not _ops(graph, "_SpeculativeApplyMomentum")


def test_the_new_weight_takes_its_dying_gradients_buffer(monkeypatch):
    """The plan proves the large weight's gradient (here a MatMul's output the op does not
    absorb, as any other op's) dies at the op, so its new value is written into that buffer
    (runtime/inplace.py `donating_kernel`), and the training still equals the unfused one."""
    if speculative_numba._callback() is None:
        pytest.skip("numba or ATen's OpenMP launcher is missing")
    monkeypatch.setattr(speculative_momentum, "_absorbed_product", lambda view, g: None)
    donated = []
    update_all = speculative_numba.update_all

    def spy(entries, checks=()):
        donated.extend(e[0] is e[3] for e in entries)
        return update_all(entries, checks)
    monkeypatch.setattr(speculative_numba, "update_all", spy)
    on, _ = _lso_training(True, False)
    assert any(donated)
    monkeypatch.setenv("NDFLOW_INPLACE", "0")   # no donation: new buffers only
    donated.clear()
    on_fresh, _ = _lso_training(True, False)
    assert donated and not any(donated)
    for got, want in zip(on, on_fresh):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
