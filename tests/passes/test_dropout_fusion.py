"""Remapper: a dropout (`SelectV2(GreaterEqual(u, rate), Mul(x, scale), 0)`) and its
gradient (`Mul(SelectV2(GreaterEqual(u, rate), dy, 0), scale)`) become one `_DropoutSelect`
each (passes/dropout_fusion.py, kernels/dropout_select.py): the same values, bit for bit,
as the unfused graph; a float64 NumPy reference for the kernel; left alone where a part is
read elsewhere or a rate is not a constant."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import dropout_select
from tests.passes.remapping_toggle import Remapping

RATE = 0.5


def _dropout_step(rate=RATE, share_product=False):
    """A tf.function computing tf.nn.dropout(x @ w) (seeded) and its gradient w.r.t. w."""
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(64, 96)).astype(np.float32))
    w = tf.Variable(rng.normal(size=(96, 128)).astype(np.float32))

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            h = tf.matmul(x, w)
            y = tf.nn.dropout(h, rate, seed=7)
            loss = tf.reduce_sum(y * y)
            if share_product:   # the scaled product read by another op too
                loss += tf.reduce_sum(tf.stop_gradient(h) * 0.0)
        return y, tape.gradient(loss, w)
    return step


def _run(step):
    """Values and the op counts of the optimized graph (ops nothing reads left out: the
    plan does not run them)."""
    tf.random.set_seed(3)
    y, g = step()
    graph = step.get_concrete_function().optimized_graph()
    live = [op for op in graph.get_operations()
            if op.type != "GreaterEqual" or any(t.consumers() for t in op.outputs)]
    return y.numpy(), g.numpy(), Counter(op.type for op in live)


def test_dropout_and_its_gradient_become_one_op_each():
    y, g, counts = _run(_dropout_step())
    with Remapping(False):
        y_ref, g_ref, counts_ref = _run(_dropout_step())
    assert counts["_DropoutSelect"] == 2
    assert "GreaterEqual" not in counts and "SelectV2" not in counts
    assert counts_ref["SelectV2"] == 2 and counts_ref["GreaterEqual"] == 1
    np.testing.assert_array_equal(y, y_ref)
    np.testing.assert_array_equal(g, g_ref)
    kept = y != 0
    assert 0.3 < kept.mean() < 0.7   # about half dropped


@pytest.mark.parametrize("rate", [RATE, 0.3])   # 1 / 0.7 is not a bfloat16 value
def test_fused_under_the_bfloat16_rewrite(rate):
    """The rewrite paints the product bfloat16 and casts the scale and the zero to it, while
    the random draw and the rate stay float32: one op each still, the same bits."""
    option = "auto_mixed_precision_onednn_bfloat16"
    tf.config.optimizer.set_experimental_options({option: True})
    try:
        y, g, counts = _run(_dropout_step(rate))
        with Remapping(False):
            y_ref, g_ref, counts_ref = _run(_dropout_step(rate))
    finally:
        tf.config.optimizer.set_experimental_options({option: False})
    assert counts["_DropoutSelect"] == 2 and counts_ref["SelectV2"] == 2
    assert counts["Cast"] >= 1                  # the rewrite ran
    np.testing.assert_array_equal(y, y_ref)
    np.testing.assert_array_equal(g, g_ref)


def test_not_fused_with_a_fed_or_variable_rate():
    step = _dropout_step(rate=tf.Variable(RATE))
    _, _, counts = _run(step)
    assert "_DropoutSelect" not in counts and counts["SelectV2"] == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_kernel_matches_numpy(dtype):
    rng = np.random.default_rng(1)
    u = rng.uniform(size=(300, 70)).astype(dtype)
    x = rng.normal(size=(300, 70)).astype(dtype)
    x[0, :4] = [np.nan, np.inf, -np.inf, np.nan]
    u[0, :4] = [0.9, 0.1, 0.9, 0.1]          # NaN and inf kept and dropped
    scale = 1 / (1 - 0.3)
    want = np.where(u >= dtype(0.3), x * dtype(scale), 0)
    got = dropout_select.dropout_select(torch.tensor(u), torch.tensor(x), 0.3, scale)
    np.testing.assert_array_equal(got.numpy(), want)
    # a strided input takes ATen's path, with the same values
    strided = dropout_select.dropout_select(torch.tensor(u).t(), torch.tensor(x).t(), 0.3,
                                            scale)
    np.testing.assert_array_equal(strided.numpy(), want.T)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_the_kernel_rounds_rate_and_scale_to_a_16_bit_dtype(dtype):
    # 16-bit floats take ATen's path with Python numbers for rate and scale: the same bits as
    # with rate and scale as 0-d tensors of the dtype (rounded first, then widened)
    rng = np.random.default_rng(2)
    u = torch.tensor(rng.uniform(size=(50, 30)), dtype=dtype)
    x = torch.tensor(rng.normal(size=(50, 30)), dtype=dtype)
    rate, scale = 0.3, 1 / (1 - 0.3)
    r, s = torch.tensor(rate, dtype=dtype), torch.tensor(scale, dtype=dtype)
    assert float(s) != scale                    # the rounding matters at this scale
    want = np.where((u.double() >= r.double()).numpy(),
                    (x.double() * s.double()).to(dtype).double().numpy(), 0)
    got = dropout_select.dropout_select(u, x, rate, scale)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.double().numpy(), want)


@pytest.mark.parametrize("u_dtype", [torch.float32, torch.float64])
def test_the_kernel_on_a_bfloat16_activation_with_a_wider_draw(u_dtype):
    """The mixed-precision rewrite's dropout (numba's bfloat16 pass): rate rounded to u's
    type, scale to bfloat16, the product rounded once; NaN and inf dropped or kept."""
    rng = np.random.default_rng(4)
    u = torch.tensor(rng.uniform(size=(70, 33)), dtype=u_dtype)
    x = torch.tensor(rng.normal(size=(70, 33)) * 1e3, dtype=torch.bfloat16)
    x[0, :4] = torch.tensor([np.nan, np.inf, -np.inf, np.nan])
    u[0, :4] = torch.tensor([0.9, 0.1, 0.9, 0.1], dtype=u_dtype)
    rate, scale = 0.3, 1 / (1 - 0.3)
    u[1, :3] = torch.tensor(rate, dtype=u_dtype)          # u == rate keeps
    r = torch.tensor(rate, dtype=u_dtype).double()
    s = torch.tensor(scale, dtype=torch.bfloat16).double()
    want = np.where((u.double() >= r).numpy(),
                    (x.double() * s).to(torch.bfloat16).double().numpy(), 0)
    got = dropout_select.dropout_select(u, x, rate, scale)
    assert got.dtype == torch.bfloat16
    np.testing.assert_array_equal(got.double().numpy(), want)
    assert np.isnan(got[0, 0].item()) and got[0, 1] == 0 and got[0, 2] == -np.inf
    assert (got[1, :3] != 0).all()


@pytest.mark.parametrize("shape", [(257, 131), (128, 256), (64, 14, 14, 64)])
def test_the_parallel_kernel_matches_numpy(shape):
    """float32 tensors from PARALLEL_ELEMENTS on run in chunks of 16-lane vectors on ATen's
    OpenMP team: the same values, a partial last chunk and vector included; a dropped
    negative, inf or NaN is +0, as TF's SelectV2 gives."""
    assert int(np.prod(shape)) >= dropout_select.PARALLEL_ELEMENTS
    rng = np.random.default_rng(5)
    u = rng.uniform(size=shape).astype(np.float32)
    x = rng.normal(size=shape).astype(np.float32)
    flat_u, flat_x = u.reshape(-1), x.reshape(-1)
    flat_x[:4] = [np.nan, np.inf, -np.inf, -2.0]
    flat_u[:4] = [0.9, 0.1, 0.9, 0.1]
    flat_x[-3:] = [np.nan, -np.inf, -7.0]     # in the scalar tail
    flat_u[-3:] = [0.1, 0.1, 0.1]
    scale = 1 / (1 - 0.3)
    want = np.where(u >= np.float32(0.3), x * np.float32(scale), np.float32(0))
    got = dropout_select.dropout_select(torch.tensor(u), torch.tensor(x), 0.3, scale).numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert np.signbit(want.reshape(-1)[-1]) == 0 and want.reshape(-1)[-1] == 0


def test_a_keras_dropout_layer_and_its_gradient_are_fused():
    """Keras 3's Dropout is tf.nn.experimental.stateless_dropout, TF's SelectV2 form: in a
    training step the remapper fuses it and its gradient as it fuses tf.nn.dropout's, with
    the unfused graph's values."""
    def make_step():
        tf.keras.utils.set_random_seed(5)
        dense = tf.keras.layers.Dense(64)
        dropout = tf.keras.layers.Dropout(0.3, seed=11)
        x = tf.constant(np.random.default_rng(0).normal(size=(32, 48)).astype(np.float32))
        dense.build((None, 48))

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                y = dropout(dense(x), training=True)
                loss = tf.reduce_sum(y * y)
            return y, tape.gradient(loss, dense.kernel)
        return step

    y, g, counts = _run(make_step())
    with Remapping(False):
        y_ref, g_ref, counts_ref = _run(make_step())
    assert counts["_DropoutSelect"] == 2 and "SelectV2" not in counts
    assert counts_ref["SelectV2"] == 2
    np.testing.assert_array_equal(y, y_ref)
    np.testing.assert_array_equal(g, g_ref)
    assert 0 < (y == 0).mean() < 0.6
