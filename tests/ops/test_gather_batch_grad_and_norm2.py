"""The gradient of tf.gather with batch_dims (dense, TF's _GatherV2Grad with batch dims)
against finite differences in float64 for several axes, batch_dims and index ranks; the
matrix 2-norm (tf.norm(ord=2) over two axes: the largest singular value) against NumPy in
float64, with keepdims, and its gradient (u1 v1^T)."""

import numpy as np
import pytest

import ndflow as tf

RNG = np.random.default_rng(0)


def _finite_differences(f, x, eps=1e-6):
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        out[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return out


@pytest.mark.parametrize("pshape, ishape, axis, batch_dims", [
    ([2, 5, 3], [2, 4], 1, 1),
    ([2, 3, 5], [2, 4], 2, 1),
    ([2, 3, 5, 2], [2, 3, 4], 2, 2),
    ([2, 3, 5, 2], [2, 3, 2, 2], 2, 1),
    ([2, 5], [2, 3, 2], 1, 1),
    ([2, 5, 3], [2, 4], 1, -1),
])
def test_gather_with_batch_dims_gradient(pshape, ishape, axis, batch_dims):
    params = RNG.standard_normal(pshape)
    idx = tf.constant(RNG.integers(0, pshape[axis], ishape))

    def f(p):
        return tf.reduce_sum(tf.sin(tf.gather(p, idx, axis=axis, batch_dims=batch_dims)))
    p = tf.constant(params)
    with tf.GradientTape() as tape:
        tape.watch(p)
        y = f(p)
    got = tape.gradient(y, p).numpy()
    want = _finite_differences(lambda v: f(tf.constant(v)).numpy(), params)
    np.testing.assert_allclose(got, want, atol=1e-8)


@pytest.mark.parametrize("axis", [[1, 2], [2, 1], [0, 2], [-2, -1]])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_two_norm(axis, keepdims):
    x = RNG.standard_normal((2, 3, 4))
    got = tf.norm(tf.constant(x), ord=2, axis=axis, keepdims=keepdims).numpy()
    a0, a1 = (a % 3 for a in axis)
    want = np.linalg.norm(np.moveaxis(x, (a0, a1), (-2, -1)), ord=2, axis=(-2, -1))
    if keepdims:
        want = np.moveaxis(want[..., None, None], (-2, -1), (a0, a1))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_matrix_two_norm_gradient_is_the_top_singular_pair():
    x = RNG.standard_normal((3, 3))
    v = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(v)
        y = tf.norm(v, ord=2, axis=[0, 1])
    u, _, vt = np.linalg.svd(x)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), np.outer(u[:, 0], vt[0]),
                               rtol=1e-9, atol=1e-12)
