"""_ScaledDotProductAttention and its gradient (ops/attention.py, kernels/attention.py):
values against a float64 NumPy reference of Keras' masked softmax attention, gradients by
finite differences, on the flash kernels (CPU, equal depths) and the matmul path (a value
depth unlike the key depth, empty dimensions), with masks that leave rows fully masked."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.ops import attention

B, T, S, N, H = 2, 5, 7, 3, 4


def reference(q, k, v, mask, scale):
    s = np.einsum("btnh,bsnh->bnts", q, k) * scale
    if mask is not None:
        keep = np.broadcast_to(mask.reshape((1,) * (4 - mask.ndim) + mask.shape), s.shape)
        s = np.where(keep, s, -0.7 * np.finfo(np.float64).max)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bnts,bsnh->btnh", p, v)


def _inputs(seed, t=T, s=S, hv=H):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(sh) for sh in ((B, t, N, H), (B, s, N, H), (B, s, N, hv))]


def _masks(seed):
    rng = np.random.default_rng(seed)
    padded = rng.random((B, 1, T, S)) > 0.4
    padded[0, 0, 1] = False                       # a query row whose keys are all masked
    padded[1, 0, 3] = False
    return {"none": None, "padded": padded, "keys": rng.random((B, 1, 1, S)) > 0.3,
            "causal": np.tril(np.ones((T, S), bool)), "heads": rng.random((N, T, S)) > 0.5}


def _attend(q, k, v, mask, scale=0.5, dtype=tf.float64):
    args = [tf.constant(a, dtype) for a in (q, k, v)]
    return attention.scaled_dot_product_attention(
        *args, scale, None if mask is None else tf.constant(mask))


@pytest.mark.parametrize("mask", ["none", "padded", "keys", "causal", "heads"])
@pytest.mark.parametrize("value_depth", [H, H + 2])   # flash kernels / matmul path
def test_values_match_masked_softmax_attention(mask, value_depth):
    q, k, v = _inputs(0, hv=value_depth)
    m = _masks(1)[mask]
    want = reference(q, k, v, m, 0.5)
    np.testing.assert_allclose(_attend(q, k, v, m).numpy(), want, rtol=1e-12, atol=1e-12)
    got32 = _attend(q, k, v, m, dtype=tf.float32).numpy()
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, want, rtol=1e-5, atol=1e-5)
    got16 = _attend(q, k, v, m, dtype=tf.bfloat16)
    np.testing.assert_allclose(tf.cast(got16, tf.float32).numpy(), want, rtol=0.05, atol=0.05)


def _finite_difference(q, k, v, mask, w, i, eps=1e-6):
    arrays = [q, k, v]
    num = np.zeros_like(arrays[i])
    for idx in np.ndindex(num.shape):
        for sign in (1, -1):
            a = [x.copy() for x in arrays]
            a[i][idx] += sign * eps
            num[idx] += sign * (reference(*a, mask, 0.5) * w).sum() / (2 * eps)
    return num


@pytest.mark.parametrize("mask", ["none", "padded", "heads"])
@pytest.mark.parametrize("value_depth", [H, H + 1])
def test_gradients_match_finite_differences(mask, value_depth):
    q, k, v = _inputs(2, hv=value_depth)
    m = _masks(3)[mask]
    w = np.random.default_rng(4).standard_normal((B, T, N, value_depth))

    @tf.function
    def grads(q, k, v):
        with tf.GradientTape() as tape:
            tape.watch([q, k, v])
            out = attention.scaled_dot_product_attention(
                q, k, v, 0.5, None if m is None else tf.constant(m))
            loss = tf.reduce_sum(out * w)
        return tape.gradient(loss, [q, k, v])

    got = grads(*(tf.constant(a) for a in (q, k, v)))
    for i, g in enumerate(got):
        np.testing.assert_allclose(g.numpy(), _finite_difference(q, k, v, m, w, i),
                                   rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("t,s", [(0, S), (T, 0), (0, 0)])
def test_empty_lengths(t, s):
    """ATen's flash kernels divide by these lengths; an empty one takes the matmul path: no
    keys give zeros (an empty softmax), and gradients of the right shapes."""
    q, k, v = _inputs(5, t=t, s=s)
    out = _attend(q, k, v, None)
    assert out.shape == (B, t, N, H)
    np.testing.assert_array_equal(out.numpy(), np.zeros((B, t, N, H)))
    args = [tf.constant(a) for a in (q, k, v)]
    with tf.GradientTape() as tape:
        tape.watch(args)
        loss = tf.reduce_sum(attention.scaled_dot_product_attention(*args, 0.5))
    for g, a in zip(tape.gradient(loss, args), (q, k, v)):
        assert g.shape == a.shape and not np.any(g.numpy())


def test_shape_errors_name_the_op():
    q, k, v = (tf.constant(a) for a in _inputs(6))
    with pytest.raises(tf.errors.InvalidArgumentError, match="heads"):
        attention.scaled_dot_product_attention(q, k[:, :, :2], v, 1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="rank 4"):
        attention.scaled_dot_product_attention(q[0], k, v, 1.0)
    with pytest.raises(tf.errors.InvalidArgumentError):
        attention.scaled_dot_product_attention(q, k, v, 1.0, tf.ones((T, S + 1), tf.bool))

    @tf.function
    def traced(q, k, v):
        return attention.scaled_dot_product_attention(q, k[:, :, :2], v, 1.0)
    with pytest.raises(ValueError, match="_ScaledDotProductAttention"):
        traced.get_concrete_function(q, k, v)

    # shapes only known when run: the kernel checks them
    unknown = tf.TensorSpec([None, None, None, None], tf.float64)
    dynamic = tf.function(lambda q, k, v: attention.scaled_dot_product_attention(q, k, v, 1.0),
                          input_signature=[unknown] * 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible shapes"):
        dynamic(q, k[:, :3], v)
