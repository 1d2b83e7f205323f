"""Remapper: under the bfloat16 mixed-precision rewrite, a momentum update of an L2-regularized
weight becomes one pass over memory.

The rewrite leaves `Cast(AddN(g, Cast(Mul(ReadVariableOp(var), s))))`, g and the sum in
bfloat16, as the update's gradient; the remapper makes it `_ResourceApplyMomentumWithCastDecay`
(numba for float32 CPU variables, ATen otherwise). Checked: the rewrite happens (and not when
something else writes the variable), several steps equal the graph without this rule bit for
bit for TF's and Keras' forms, plain and Nesterov, on both kernel paths, and the kernel rounds
as NumPy's emulation of bfloat16 does, ties, NaN and overflow included.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import momentum_numba
from ndflow.passes import remapper

LR, MU, DECAY = 0.1, 0.9, 0.05
AMP = "auto_mixed_precision_onednn_bfloat16"
FUSED = "_ResourceApplyMomentumWithCastDecay"


def _train(x, init, nesterov: bool, keras: bool, rule: bool, other_writer: bool = False,
           loss_scale: bool = False, fused_type: str = FUSED):
    """Three steps of an L2-regularized least-squares layer under the bfloat16 rewrite
    (`loss_scale`: with Keras' LossScaleOptimizer); `rule`: with the remapper's cast-decay
    rules. Returns (w, the ops of `fused_type` in the optimized graph)."""
    rules = remapper.RULES
    if not rule:
        remapper.RULES = [r for r in rules if "cast_decay" not in r.name]
    tf.config.optimizer.set_experimental_options({AMP: True})
    try:
        w = tf.Variable(init)
        accum = tf.Variable(np.zeros_like(init))
        opt = tf.keras.optimizers.SGD(LR, momentum=MU, nesterov=nesterov)
        if loss_scale:
            opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.square(tf.matmul(x, w))) * 0.01 + \
                    DECAY * tf.nn.l2_loss(w)
                if loss_scale:
                    loss = opt.get_scaled_loss(loss)
            grad = tape.gradient(loss, w)
            if loss_scale:
                grad = opt.get_unscaled_gradients([grad])[0]
            if keras:
                opt.apply_gradients([(grad, w)])
            else:
                tf.raw_ops.ResourceApplyMomentum(
                    var=w.handle, accum=accum.handle, lr=tf.constant(LR), grad=grad,
                    momentum=tf.constant(MU), use_nesterov=nesterov)
            if other_writer:
                w.assign_add(tf.zeros_like(w))

        for _ in range(3):
            step()
        graph = step.get_concrete_function().optimized_graph()
        return w.numpy(), [op for op in graph.get_operations() if op.type == fused_type]
    finally:
        remapper.RULES = rules
        tf.config.optimizer.set_experimental_options({AMP: False})


def _data():
    rng = np.random.default_rng(5)
    x = tf.constant(rng.normal(size=(16, 40)).astype(np.float32))
    return x, rng.normal(size=(40, 30)).astype(np.float32)


@pytest.mark.parametrize("keras", [True, False])
@pytest.mark.parametrize("nesterov", [False, True])
def test_fused_under_the_bfloat16_rewrite_and_equal_to_the_unfused_ops(nesterov, keras,
                                                                       kernel_path):
    x, init = _data()
    on, fused = _train(x, init, nesterov, keras, rule=True)
    off, unfused = _train(x, init, nesterov, keras, rule=False)
    assert len(fused) == 1 and unfused == []
    op = fused[0]
    assert op.attrs["Tgrad"] == tf.bfloat16 and op.attrs["T"] == tf.float32
    assert op.attrs["keras"] is keras and op.attrs["use_nesterov"] is nesterov
    assert op.inputs[3].dtype == tf.bfloat16          # the 16-bit gradient, not its cast
    assert not np.allclose(on, init)
    np.testing.assert_array_equal(on, off)


@pytest.mark.parametrize("nesterov", [False, True])
def test_a_loss_scale_step_sums_the_gradient_in_one_pass(nesterov, kernel_path):
    """Under a LossScaleOptimizer the update sits in the step's If: the sum alone becomes
    `_CastDecayedGradient`, with the unfused ops' bits."""
    x, init = _data()
    kind = "_CastDecayedGradient"
    on, fused = _train(x, init, nesterov, True, rule=True, loss_scale=True, fused_type=kind)
    off, unfused = _train(x, init, nesterov, True, rule=False, loss_scale=True,
                          fused_type=kind)
    assert len(fused) == 1 and unfused == []
    assert fused[0].attrs["Tgrad"] == tf.bfloat16 and fused[0].inputs[0].dtype == tf.bfloat16
    assert not np.allclose(on, init)
    np.testing.assert_array_equal(on, off)


def test_the_decayed_gradient_kernel_rounds_as_bfloat16_does():
    if momentum_numba._callback() is None:
        pytest.skip("numba or ATen's OpenMP launcher is missing")
    rng = np.random.default_rng(2)
    x = rng.normal(size=70_000).astype(np.float32)
    x[:4] = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, -(1 + 2 ** -8), 3e38], np.float32)
    g = torch.from_numpy(rng.normal(size=70_000).astype(np.float32)).bfloat16()
    g[4], g[5] = float("nan"), float("inf")
    got = momentum_numba.bf16_decayed_gradient(g, torch.from_numpy(x), 2.0)
    with np.errstate(over="ignore", invalid="ignore"):
        want = _bf16(_bf16(x * np.float32(2.0)) + g.float().numpy())
    np.testing.assert_array_equal(got.numpy(), want)
    expect = torch.mul(torch.from_numpy(x), 2.0).bfloat16().add_(g).float()   # ATen's path
    np.testing.assert_array_equal(got.numpy(), expect.numpy())


def _loss_scale_training(factors, rule: bool):
    """Steps of `loss * f` for a weight large enough for the numba update (320 x 256)
    under the bfloat16 rewrite and Keras' LossScaleOptimizer: w after each step, and the
    optimized graph."""
    rules = remapper.RULES
    if not rule:
        remapper.RULES = [r for r in rules if "cast_decay" not in r.name]
    tf.config.optimizer.set_experimental_options({AMP: True})
    try:
        rng = np.random.default_rng(8)
        x = tf.constant(rng.normal(size=(16, 320)).astype(np.float32))
        w = tf.Variable(rng.normal(size=(320, 256)).astype(np.float32) * 0.05)
        b = tf.Variable(np.zeros(256, np.float32))
        opt = tf.keras.mixed_precision.LossScaleOptimizer(
            tf.keras.optimizers.SGD(LR, momentum=MU), initial_scale=2 ** 10)

        @tf.function
        def step(f):
            with tf.GradientTape() as tape:
                loss = (tf.reduce_sum(tf.square(tf.matmul(x, w) + b)) * 0.01 * f
                        + DECAY * tf.nn.l2_loss(w))
                scaled = opt.get_scaled_loss(loss)
            grads = opt.get_unscaled_gradients(tape.gradient(scaled, [w, b]))
            opt.apply_gradients(zip(grads, [w, b]))

        out = []
        for f in factors:
            step(tf.constant(f))
            out.append(w.numpy().copy())
        return out, step.get_concrete_function(tf.constant(1.0)).optimized_graph()
    finally:
        remapper.RULES = rules
        tf.config.optimizer.set_experimental_options({AMP: False})


def test_a_loss_scale_step_takes_the_cast_decayed_gradient():
    """In a loss-scale step the summed gradient is `_CastDecayedGradient`, which the
    finite check reads and the If's branch applies: bit for bit the unfused graph's values; a
    step whose gradient is not finite writes nothing."""
    if momentum_numba._callback() is None:
        pytest.skip("numba or ATen's OpenMP launcher is missing")
    factors = [1.0, 1.0, float("inf"), 1.0]
    on, graph = _loss_scale_training(factors, rule=True)
    (decayed,) = [op for op in graph.get_operations() if op.type == "_CastDecayedGradient"]
    assert {c.type for c in decayed.outputs[0].consumers()} >= {"_AllFinite", "If"}
    off, _ = _loss_scale_training(factors, rule=False)
    np.testing.assert_array_equal(on[2], on[1])        # the overflowing step
    assert not np.array_equal(on[3], on[2])
    for a, b in zip(on, off):
        np.testing.assert_array_equal(a, b)


def test_not_fused_when_another_op_writes_the_variable():
    x, init = _data()
    _, fused = _train(x, init, False, True, rule=True, other_writer=True)
    assert fused == []


def _bf16(a: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 -> float32 in NumPy: round to nearest even on the bits."""
    a = np.asarray(a, np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), np.float32(np.nan), r)


@pytest.mark.parametrize("keras", [True, False])
@pytest.mark.parametrize("nesterov", [False, True])
def test_kernel_rounds_as_bfloat16_does(keras, nesterov):
    if momentum_numba._callback() is None:
        pytest.skip("numba or ATen's OpenMP launcher is missing")
    rng = np.random.default_rng(0)
    n = 70_000                                      # several chunks
    var = rng.normal(size=n).astype(np.float32)
    # ties: var * s exactly halfway between two bfloat16 values, both parities
    var[:4] = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, -(1 + 2 ** -8), 3e38], np.float32)
    accum = rng.normal(size=n).astype(np.float32)
    g = torch.from_numpy(rng.normal(size=n).astype(np.float32)).bfloat16()
    g[4], g[5], g[6] = float("nan"), float("inf"), 3e38
    s = 1.0 if keras else 2.0
    var_t, accum_t = torch.from_numpy(var.copy()), torch.from_numpy(accum.copy())
    momentum_numba.update_bf16_decay(g, var_t, accum_t, var_t, accum_t, s, LR, MU, nesterov,
                                     keras)
    lr, mu = np.float32(LR), np.float32(MU)
    with np.errstate(invalid="ignore", over="ignore"):
        grad = _bf16(_bf16(var * np.float32(s)) + g.float().numpy())
        if keras:
            acc = accum * mu - lr * grad
            new = var + (acc * mu - lr * grad if nesterov else acc)
        else:
            acc = accum * mu + grad
            new = var - (lr * (grad + mu * acc) if nesterov else lr * acc)
    np.testing.assert_array_equal(accum_t.numpy(), acc)
    np.testing.assert_array_equal(var_t.numpy(), new)
    assert np.isnan(var_t.numpy()[4]) and np.isinf(accum_t.numpy()[5])
    # the same through ATen's ops (the kernel's other path)
    expect = torch.mul(torch.from_numpy(var), s).bfloat16().add_(g).float()
    np.testing.assert_array_equal(grad, expect.numpy())
