"""kernels/attention_numba.py, the vector kernels the autotuner may pick for float32
attention: with the choice forced, values and gradients of `_ScaledDotProductAttention`
against float64 NumPy (lengths that are not multiples of its 4-row blocks or 16-lane tiles,
depths 16-64, Keras' masks including rows whose keys are all masked), its log-sum-exp
against ATen's (the other kernel's gradient takes it), NaNs where the reference has them,
and other dtypes or depths left to ATen."""

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core import core_monitor
from ndflow.kernels import attention as attention_kernels
from ndflow.kernels import attention_numba, autotune
from ndflow.ops import attention
from tests.ops.test_attention_op import _masks, reference

pytestmark = pytest.mark.skipif(attention_numba._kernels() is None,
                                reason="numba or ATen's OpenMP runtime is missing")


@pytest.fixture
def force(monkeypatch):
    """Tunes every attention and makes `force.algorithm` the fastest."""
    class Force:
        algorithm = attention_kernels.VECTOR
    monkeypatch.setattr(core_monitor, "ready_to_time", lambda threads: True)
    monkeypatch.setattr(autotune, "MIN_FLOPS", 0)
    monkeypatch.setattr(autotune, "_timed", lambda run, a, credit=None: (
        0.001 if a == Force.algorithm else 0.002, run(a)))
    monkeypatch.delenv("TF_CUDNN_USE_AUTOTUNE", raising=False)
    autotune.clear()
    yield Force
    autotune.clear()


def _gradients(q, k, v, w, scale, mask=None):
    """d sum(attention * w) / d (q, k, v), in float64; a masked score is a constant."""
    s = np.einsum("btnh,bsnh->bnts", q, k) * scale
    keep = True if mask is None else np.broadcast_to(
        mask.reshape((1,) * (4 - mask.ndim) + mask.shape), s.shape)
    s = np.where(keep, s, -0.7 * np.finfo(np.float64).max)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    dv = np.einsum("bnts,btnh->bsnh", p, w)
    dp = np.einsum("btnh,bsnh->bnts", w, v)
    ds = np.where(keep, p * (dp - (dp * p).sum(-1, keepdims=True)), 0.0)
    return (scale * np.einsum("bnts,bsnh->btnh", ds, k),
            scale * np.einsum("bnts,btnh->bsnh", ds, q), dv)


def _run(q, k, v, w, scale, mask=None):
    args = [tf.constant(a, tf.float32) for a in (q, k, v)]
    with tf.GradientTape() as tape:
        tape.watch(args)
        out = attention.scaled_dot_product_attention(
            *args, scale, None if mask is None else tf.constant(mask))
        loss = tf.reduce_sum(out * tf.constant(w, tf.float32))
    return out.numpy(), [g.numpy() for g in tape.gradient(loss, args)]


@pytest.mark.parametrize("b,t,s,n,d", [(2, 5, 7, 3, 16), (1, 9, 33, 2, 32), (3, 4, 64, 1, 48),
                                       (2, 13, 1, 2, 64)])
def test_values_and_gradients_match_numpy(force, b, t, s, n, d):
    rng = np.random.default_rng(b * t + s)
    q, w = rng.standard_normal((b, t, n, d)), rng.standard_normal((b, t, n, d))
    k, v = rng.standard_normal((b, s, n, d)), rng.standard_normal((b, s, n, d))
    scale = d ** -0.5
    out, grads = _run(q, k, v, w, scale)
    np.testing.assert_allclose(out, reference(q, k, v, None, scale), rtol=1e-5, atol=1e-5)
    for got, want in zip(grads, _gradients(q, k, v, w, scale)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert sorted(autotune.choices().items()) == [
        (("attention", (b, t, n, d), (b, s, n, d), None), attention_kernels.VECTOR),
        (("attention_grad", (b, t, n, d), (b, s, n, d), None), attention_kernels.VECTOR)]


@pytest.mark.parametrize("mask", ["padded", "keys", "causal", "heads"])
def test_masks_as_keras_writes_them(force, mask):
    """Masked keys score -0.7 x float32's max: a partly masked row ignores them, a row whose
    keys are all masked (in "padded") averages the values and passes no gradient to q."""
    rng = np.random.default_rng(10)
    q, w = rng.standard_normal((2, 5, 3, 16)), rng.standard_normal((2, 5, 3, 16))
    k, v = rng.standard_normal((2, 7, 3, 16)), rng.standard_normal((2, 7, 3, 16))
    m = _masks(11)[mask]
    out, grads = _run(q, k, v, w, 0.25, m)
    np.testing.assert_allclose(out, reference(q, k, v, m, 0.25), rtol=1e-5, atol=1e-5)
    for got, want in zip(grads, _gradients(q, k, v, w, 0.25, m)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert set(autotune.choices().values()) == {attention_kernels.VECTOR}


def test_log_sum_exp_is_atens():
    """Either kernel's gradient reads the forward's log-sum-exp: both write ATen's."""
    rng = np.random.default_rng(7)
    q, k, v = (torch.tensor(rng.standard_normal(sh), dtype=torch.float32)
               for sh in ((2, 11, 2, 32), (2, 19, 2, 32), (2, 19, 2, 32)))
    out, lse = attention_numba.forward(q, k, v, 0.3)
    want = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), 0.0, False, scale=0.3)
    np.testing.assert_allclose(out.numpy(), want[0].transpose(1, 2).numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(lse.numpy(), want[1].numpy(), rtol=1e-5, atol=1e-5)


def test_nans_land_where_the_reference_puts_them(force):
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((2, 6, 2, 16)) for _ in range(3))
    q[0, 2, 1, 5] = np.nan    # one query row of one head
    k[1, 4, 0, 0] = np.nan    # one key: every row of that head
    got, _ = _run(q, k, v, np.ones_like(q), 0.25)
    want = reference(q, k, v, None, 0.25)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(want).any() and not np.isnan(want).all()
    np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("case", ["depth 8", "float64"])
def test_other_inputs_stay_on_aten(force, case):
    rng = np.random.default_rng(9)
    d = 8 if case == "depth 8" else 16
    dtype = tf.float64 if case == "float64" else tf.float32
    q, k, v = (rng.standard_normal((2, 5, 2, d)) for _ in range(3))
    out = attention.scaled_dot_product_attention(*(tf.constant(a, dtype) for a in (q, k, v)),
                                                 0.5)
    np.testing.assert_allclose(out.numpy(), reference(q, k, v, None, 0.5), rtol=1e-5,
                               atol=1e-5)
    assert autotune.choices() == {}
