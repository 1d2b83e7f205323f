"""FusedBatchNormV3 / `_FusedBatchNormEx` on channels-last float32 tensors through
kernels/batch_norm_numba.py: outputs against NumPy in float64 (training with and without
running statistics mixed in, inference, a side input and a ReLU), the path taken where it
should be and only there, values independent of the thread count, and gradients through
the fused forward against NumPy's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import batch_norm_numba

EPS = 1e-3
RNG = np.random.default_rng(7)
# 16 channels (one vector) over 2048 rows (two row blocks), 48 (three vectors), an odd
# number of rows over two blocks, 64 (the widest); all at least MIN_ELEMENTS values
SHAPES = [(4, 32, 16, 16), (3, 11, 23, 48), (2, 33, 17, 32), (2, 16, 17, 64)]


@pytest.fixture
def calls(monkeypatch):
    """Counts the numba passes run (the test fails if the numba path was not taken)."""
    seen = {"train": 0, "infer": 0, "side": 0, "relu": 0}
    for name in ("train", "infer"):
        real = getattr(batch_norm_numba, name)

        def spy(*args, _real=real, _name=name):
            seen[_name] += 1
            seen["side"] += args[-2] is not None   # (..., side, relu)
            seen["relu"] += bool(args[-1])
            return _real(*args)
        monkeypatch.setattr(batch_norm_numba, name, spy)
    return seen


def _data(shape, offset=0.0):
    c = shape[-1]
    x = (RNG.normal(size=shape) * 2 + offset).astype(np.float32)
    scale = RNG.uniform(0.5, 1.5, c).astype(np.float32)
    beta = RNG.normal(size=c).astype(np.float32)
    return x, scale, beta


def _reference(x, scale, beta, mean=None, var=None, side=None, relu=False):
    x64 = x.astype(np.float64).reshape(-1, x.shape[-1])
    m = x64.mean(0) if mean is None else mean.astype(np.float64)
    v = x64.var(0) if var is None else var.astype(np.float64)
    y = (x64 - m) / np.sqrt(v + EPS) * scale + beta
    if side is not None:
        y = y + side.astype(np.float64).reshape(y.shape)
    if relu:
        y = np.maximum(y, 0)
    return y.reshape(x.shape), m, v


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("offset", [0.0, 1000.0])   # a mean far from zero: the shift's case
def test_training_outputs_match_numpy(shape, offset, calls):
    x, scale, beta = _data(shape, offset)
    y, mean, var, r1, r2, _ = tf.raw_ops.FusedBatchNormV3(
        x=x, scale=scale, offset=beta, mean=np.zeros(0, np.float32),
        variance=np.zeros(0, np.float32), epsilon=EPS, is_training=True)
    ref, m, v = _reference(x, scale, beta)
    n = x.size // x.shape[-1]
    assert calls["train"] == 1
    tol = 1e-5 * max(1.0, offset)
    np.testing.assert_allclose(y.numpy(), ref, atol=3e-5 + 1e-2 * (offset > 0), rtol=1e-5)
    np.testing.assert_allclose(mean.numpy(), m, rtol=1e-6, atol=tol)
    np.testing.assert_allclose(var.numpy(), v * n / (n - 1), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(r1.numpy(), m, rtol=1e-6, atol=tol)
    np.testing.assert_allclose(r2.numpy(), v, rtol=2e-5, atol=1e-6)


def test_running_statistics_mixed_in_by_the_factor(calls):
    x, scale, beta = _data(SHAPES[0])
    c = x.shape[-1]
    old_m, old_v = RNG.normal(size=c).astype(np.float32), RNG.uniform(1, 2, c).astype(np.float32)
    y, mean, var, _, _, _ = tf.raw_ops.FusedBatchNormV3(
        x=x, scale=scale, offset=beta, mean=old_m, variance=old_v, epsilon=EPS,
        exponential_avg_factor=0.3, is_training=True)
    ref, m, v = _reference(x, scale, beta)
    n = x.size // c
    assert calls["train"] == 1
    np.testing.assert_allclose(y.numpy(), ref, atol=3e-5, rtol=1e-5)
    np.testing.assert_allclose(mean.numpy(), 0.7 * old_m + 0.3 * m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var.numpy(), 0.7 * old_v + 0.3 * v * n / (n - 1), rtol=1e-5)


def test_inference_matches_numpy(calls):
    x, scale, beta = _data(SHAPES[1])
    c = x.shape[-1]
    m, v = RNG.normal(size=c).astype(np.float32), RNG.uniform(0.5, 2, c).astype(np.float32)
    y = tf.raw_ops.FusedBatchNormV3(x=x, scale=scale, offset=beta, mean=m, variance=v,
                                    epsilon=EPS, is_training=False)[0]
    assert calls["infer"] == 1
    np.testing.assert_allclose(y.numpy(), _reference(x, scale, beta, m, v)[0],
                               atol=3e-5, rtol=1e-5)


def _fused_model(training, with_side):
    shape = SHAPES[0]
    x, scale, beta = _data(shape)
    side = RNG.normal(size=shape).astype(np.float32)
    w = RNG.normal(size=shape).astype(np.float32)
    c = shape[-1]
    m, v = RNG.normal(size=c).astype(np.float32), RNG.uniform(0.5, 2, c).astype(np.float32)
    variables = [tf.Variable(a) for a in (x, scale, beta, side)]

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            # read before the batch norm, as a residual is: the fusion takes side inputs
            # that exist before it
            xv, sv, bv, side_v = (tf.identity(v) for v in variables)
            y = tf.compat.v1.nn.fused_batch_norm(
                xv, sv, bv, *(() if training else (m, v)), epsilon=EPS,
                is_training=training)[0]
            if with_side:
                y = y + side_v
            y = tf.nn.relu(y)
            loss = tf.reduce_sum(y * w)
        return y, tape.gradient(loss, variables)
    return step, (x, scale, beta, side, w, m, v)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("with_side", [False, True])
def test_fused_side_input_and_relu_match_numpy(training, with_side, calls):
    step, (x, scale, beta, side, w, m, v) = _fused_model(training, with_side)
    y, grads = step()
    assert calls["train" if training else "infer"] >= 1
    assert calls["side"] == int(with_side) and calls["relu"] == 1
    ref, mean, var = _reference(x, scale, beta, None if training else m,
                                None if training else v, side if with_side else None, True)
    np.testing.assert_allclose(y.numpy(), ref, atol=5e-5, rtol=1e-5)
    # gradients: ReLU's mask from the float32 output, then the batch norm's by NumPy
    c = x.shape[-1]
    g = np.where(y.numpy() > 0, w, 0).astype(np.float64).reshape(-1, c)
    xhat = (x.astype(np.float64).reshape(-1, c) - mean) / np.sqrt(var + EPS)
    dscale, dbeta = (g * xhat).sum(0), g.sum(0)
    if training:
        n = g.shape[0]
        dx = scale / np.sqrt(var + EPS) / n * (n * g - dbeta - xhat * dscale)
    else:
        dx = g * scale / np.sqrt(var + EPS)
    np.testing.assert_allclose(grads[0].numpy().reshape(-1, c), dx, atol=2e-4, rtol=1e-3)
    np.testing.assert_allclose(grads[1].numpy(), dscale, rtol=1e-3, atol=1e-2)
    np.testing.assert_allclose(grads[2].numpy(), dbeta, rtol=1e-4, atol=1e-2)
    if with_side:
        np.testing.assert_allclose(grads[3].numpy().reshape(-1, c), g, atol=1e-6)


def test_values_do_not_depend_on_the_thread_count(calls):
    x, scale, beta = _data(SHAPES[2])
    empty = np.zeros(0, np.float32)

    def run():
        return [t.numpy() for t in tf.raw_ops.FusedBatchNormV3(
            x=x, scale=scale, offset=beta, mean=empty, variance=empty, is_training=True)[:5]]
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = run()
        torch.set_num_threads(max(2, threads))
        many = run()
    finally:
        torch.set_num_threads(threads)
    for a, b in zip(one, many):
        np.testing.assert_array_equal(a, b)
    assert calls["train"] == 2


@pytest.mark.parametrize("case", ["channels_off_the_vectors", "wide", "small", "nchw",
                                  "float64"])
def test_other_tensors_run_aten(case, calls):
    shape = {"channels_off_the_vectors": (4, 32, 16, 10), "wide": (40, 1, 1, 1040),
             "small": (2, 4, 4, 16)}.get(case, SHAPES[0])
    x, scale, beta = _data(shape)
    fmt = "NCHW" if case == "nchw" else "NHWC"
    if case == "nchw":
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    u = np.float64 if case == "float64" else np.float32
    x, scale, beta = x.astype(u), scale.astype(u), beta.astype(u)
    y, mean = tf.raw_ops.FusedBatchNormV3(
        x=x, scale=scale, offset=beta, mean=np.zeros(0, u), variance=np.zeros(0, u),
        epsilon=EPS, data_format=fmt, is_training=True)[:2]
    assert calls["train"] == calls["infer"] == 0
    got = y.numpy().transpose(0, 2, 3, 1) if case == "nchw" else y.numpy()
    xs = x.transpose(0, 2, 3, 1) if case == "nchw" else x
    np.testing.assert_allclose(got, _reference(xs, scale, beta)[0], atol=3e-5, rtol=1e-5)
