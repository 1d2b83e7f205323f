"""Training-mode FusedBatchNormV3 / FusedBatchNormGradV3 on channels-last float32 CPU tensors
of 16k channels (kernels/batch_norm_numba.py): outputs, running and reserved statistics
(exponential_avg_factor 1 and below) against float64 NumPy, a mean far from zero (the
shifted sums), row counts that do not fill the last chunk, the input gradient against
central differences of the float64 forward, dscale and doffset, and the ReLU of
`_FusedBatchNormEx` applied on the way."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.kernels import batch_norm_numba

pytestmark = pytest.mark.skipif(batch_norm_numba._callbacks() is None,
                                reason="numba or ATen's OpenMP launcher is missing")
EPS = 1e-3
SHAPES = [(7, 5, 3, 32), (2, 1, 1, 16), (3, 20, 10, 16), (1, 4, 5, 48), (3, 4, 5, 80),
          (2, 3, 4, 128)]


@pytest.fixture
def calls(monkeypatch):
    """Counts the numba kernels' calls (so a test fails if the op took ATen's path)."""
    seen = []
    for name in ("forward", "backward"):
        real = getattr(batch_norm_numba, name)

        def spy(*args, _real=real, _name=name, **kw):
            seen.append(_name)
            return _real(*args, **kw)
        monkeypatch.setattr(batch_norm_numba, name, spy)
    return seen


def _forward64(x, scale, offset):
    flat = x.reshape(-1, x.shape[-1]).astype(np.float64)
    mean, var = flat.mean(0), flat.var(0)
    y = (flat - mean) / np.sqrt(var + EPS) * scale + offset
    return y.reshape(x.shape), mean, var


def _data(shape, seed=0, center=0.0):
    rng = np.random.default_rng(seed)
    c = shape[-1]
    x = (rng.standard_normal(shape) * 2 + center).astype(np.float32)
    return x, rng.uniform(0.5, 1.5, c).astype(np.float32), rng.standard_normal(c).astype(
        np.float32)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("factor", [1.0, 0.25])
def test_forward_matches_float64(shape, factor, calls):
    x, scale, offset = _data(shape)
    c = shape[-1]
    old_mean = np.linspace(-1, 1, c).astype(np.float32)
    old_var = np.linspace(0.5, 2, c).astype(np.float32)
    y, run_mean, run_var, r1, r2, _ = tf.raw_ops.FusedBatchNormV3(
        x=x, scale=scale, offset=offset, mean=old_mean if factor != 1 else [],
        variance=old_var if factor != 1 else [], epsilon=EPS, exponential_avg_factor=factor,
        is_training=True, data_format="NHWC")
    assert calls == ["forward"]
    want, mean, var = _forward64(x, scale, offset)
    n = x.size // c
    unbiased = var * n / (n - 1)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(r1.numpy(), mean, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(r2.numpy(), var, rtol=2e-5, atol=1e-6)
    if factor == 1:
        np.testing.assert_allclose(run_mean.numpy(), mean, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(run_var.numpy(), unbiased, rtol=2e-5, atol=1e-6)
    else:
        np.testing.assert_allclose(run_mean.numpy(), (1 - factor) * old_mean + factor * mean,
                                   rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(run_var.numpy(), (1 - factor) * old_var + factor * unbiased,
                                   rtol=2e-5, atol=1e-6)


def test_a_mean_far_from_zero_keeps_the_variance(calls):
    x, scale, offset = _data((64, 9, 9, 16), seed=1, center=3000.0)
    y, _, _, r1, r2, _ = tf.raw_ops.FusedBatchNormV3(
        x=x, scale=scale, offset=offset, mean=[], variance=[], epsilon=EPS, is_training=True,
        data_format="NHWC")
    want, mean, var = _forward64(x, scale, offset)
    assert calls == ["forward"]
    np.testing.assert_allclose(r2.numpy(), var, rtol=1e-3)   # float32 x itself rounds ~2e-4
    np.testing.assert_allclose(r1.numpy(), mean, rtol=1e-6)
    np.testing.assert_allclose(y.numpy(), want, atol=2e-3)


@pytest.mark.parametrize("shape", SHAPES[:3] + SHAPES[4:5])
def test_gradients_match_central_differences(shape, calls):
    x, scale, offset = _data(shape, seed=2)
    upstream = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    _, _, _, r1, r2, r3 = tf.raw_ops.FusedBatchNormV3(
        x=x, scale=scale, offset=offset, mean=[], variance=[], epsilon=EPS, is_training=True,
        data_format="NHWC")
    dx, dscale, doffset, _, _ = tf.raw_ops.FusedBatchNormGradV3(
        y_backprop=upstream, x=x, scale=scale, reserve_space_1=r1, reserve_space_2=r2,
        reserve_space_3=r3, epsilon=EPS, is_training=True, data_format="NHWC")
    assert calls == ["forward", "backward"]

    def loss(xv, sv, ov):
        return float(np.sum(_forward64(xv, sv, ov)[0] * upstream))

    x64, s64, o64 = x.astype(np.float64), scale.astype(np.float64), offset.astype(np.float64)
    rng = np.random.default_rng(4)
    h = 1e-4
    for idx in (tuple(rng.integers(0, d) for d in shape) for _ in range(6)):
        up, down = x64.copy(), x64.copy()
        up[idx] += h
        down[idx] -= h
        numeric = (loss(up, s64, o64) - loss(down, s64, o64)) / (2 * h)
        assert dx.numpy()[idx] == pytest.approx(numeric, rel=2e-3, abs=2e-4)
    for ch in (0, shape[-1] - 1):
        e = np.zeros_like(s64)
        e[ch] = h
        assert dscale.numpy()[ch] == pytest.approx(
            (loss(x64, s64 + e, o64) - loss(x64, s64 - e, o64)) / (2 * h), rel=1e-3, abs=1e-3)
        assert doffset.numpy()[ch] == pytest.approx(
            (loss(x64, s64, o64 + e) - loss(x64, s64, o64 - e)) / (2 * h), rel=1e-3, abs=1e-3)


def test_the_relu_of_fused_batch_norm_ex(calls):
    x, scale, offset = _data((5, 6, 7, 32), seed=5)

    @tf.function
    def f(v):
        y, _, _ = tf.compat.v1.nn.fused_batch_norm(v, scale, offset, epsilon=EPS,
                                                   is_training=True)
        return tf.nn.relu(y)

    got = f(tf.constant(x)).numpy()
    types = [op.type for op in f.get_concrete_function(tf.constant(x)).optimized_graph()
             .get_operations()]
    assert "_FusedBatchNormEx" in types and "Relu" not in types
    assert calls == ["forward"]
    np.testing.assert_allclose(got, np.maximum(_forward64(x, scale, offset)[0], 0),
                               rtol=1e-5, atol=2e-5)


def test_other_layouts_keep_atens_path(calls):
    x, scale, offset = _data((4, 3, 3, 12))   # 12 channels: not whole vectors
    tf.raw_ops.FusedBatchNormV3(x=x, scale=scale, offset=offset, mean=[], variance=[],
                                epsilon=EPS, is_training=True, data_format="NHWC")
    x16, scale, offset = _data((4, 3, 3, 16))   # NCHW
    tf.raw_ops.FusedBatchNormV3(x=np.ascontiguousarray(x16.transpose(0, 3, 1, 2)),
                                scale=scale, offset=offset, mean=[],
                                variance=[], epsilon=EPS, is_training=True,
                                data_format="NCHW")
    assert calls == []
