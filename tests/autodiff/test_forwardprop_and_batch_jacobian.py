"""`tf.autodiff.ForwardAccumulator` (JVPs), `GradientTape.batch_jacobian`, and unconnected
gradients of variables: against float64 finite differences and NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf

RNG = np.random.default_rng(4)


def _fd_jvp(f, xs, vs, eps=1e-6):
    """Central difference of f along the tangents, in float64."""
    plus = f(*[x + eps * v for x, v in zip(xs, vs)])
    minus = f(*[x - eps * v for x, v in zip(xs, vs)])
    return (plus - minus) / (2 * eps)


def test_jvp_equals_finite_differences():
    x0 = RNG.standard_normal((3, 4))
    w0 = RNG.standard_normal((4, 2))
    vx, vw = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2))

    def f_np(x, w):
        return np.tanh(x @ w) * np.exp(0.1 * x[:, :2])

    x, w = tf.constant(x0), tf.Variable(w0)
    with tf.autodiff.ForwardAccumulator([x, w], [tf.constant(vx), tf.constant(vw)]) as acc:
        y = tf.tanh(tf.matmul(x, w)) * tf.exp(0.1 * x[:, :2])
        z = tf.reduce_sum(y ** 2)
    np.testing.assert_allclose(acc.jvp(y).numpy(), _fd_jvp(f_np, [x0, w0], [vx, vw]),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(
        acc.jvp(z).numpy(), _fd_jvp(lambda a, b: np.sum(f_np(a, b) ** 2), [x0, w0], [vx, vw]),
        rtol=1e-6)
    jy, jz = acc.jvp((y, z))   # structures map
    assert jy.shape == (3, 2) and jz.shape == ()


def test_unconnected_targets_and_bad_tangents():
    x = tf.constant([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0])) as acc:
        c = tf.constant([3.0, 4.0]) * 2.0
    assert acc.jvp(c) is None
    np.testing.assert_array_equal(acc.jvp(c, unconnected_gradients="zero").numpy(), [0.0, 0.0])
    with pytest.raises(ValueError, match="different number of primals and tangents"):
        tf.autodiff.ForwardAccumulator([x, x], [x])
    with pytest.raises(ValueError, match="not compatible with the shape"):
        tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="does not match the primal"):
        tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 2.0], tf.float64))
    assert tf.autodiff.GradientTape is tf.GradientTape


def test_batch_jacobian_is_the_per_example_block_of_the_jacobian():
    x = tf.constant(RNG.standard_normal((4, 3)))
    w = tf.constant(RNG.standard_normal((3, 5)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.nn.elu(tf.matmul(x, w))
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (4, 5, 3)
    # d y[b, i] / d x[b, j] = elu'(x w)[b, i] * w[j, i]
    pre = x.numpy() @ w.numpy()
    deriv = np.where(pre > 0, 1.0, np.exp(pre))
    np.testing.assert_allclose(jb.numpy(), deriv[:, :, None] * w.numpy().T[None], rtol=1e-10)
    np.testing.assert_allclose(jb.numpy(), np.einsum("bxby->bxy", tape.jacobian(y, x).numpy()))
    other = tf.constant(np.ones((4, 2)))
    assert tape.batch_jacobian(other * 2.0, x) is None
    assert tape.batch_jacobian(other * 2.0, x, unconnected_gradients="zero").shape == (4, 2, 3)
    with pytest.raises(ValueError, match="first dimension"):
        tape.batch_jacobian(y, tf.constant(np.ones((3, 3))))


def test_unconnected_variable_gradients_are_zeros_of_the_value():
    x, y = tf.Variable([2.0, 2.0]), tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        z = y ** 2
    g = tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert g.dtype == tf.float32 and g.numpy().tolist() == [0.0, 0.0]
    assert tape.jacobian(z, x, unconnected_gradients="zero").numpy().tolist() == [0.0, 0.0]
