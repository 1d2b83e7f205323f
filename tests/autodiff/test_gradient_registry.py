"""tf.gradients (TF2), tf.hessians, tf.custom_gradient, tf.RegisterGradient with
gradient_override_map, and tf.no_gradient — against float64 NumPy references."""

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1


def test_hessians_match_the_analytic_hessian():
    x0 = np.array([1.0, 2.0, 3.0])
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float64, [3])
        y = tf.reduce_sum(x ** 3) + x[0] * x[1] + tf.sin(x[2]) * x[0]
        (h,) = tf.hessians(y, x)
        (h1,) = v1.hessians(y, [x])
        with v1.Session() as sess:
            got, got1 = sess.run([h, h1], {x: x0})
    want = np.diag(6 * x0)
    want[0, 1] = want[1, 0] = 1.0
    want[0, 2] = want[2, 0] = np.cos(x0[2])
    want[2, 2] -= np.sin(x0[2]) * x0[0]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got1, want, rtol=1e-12)


def test_tf2_gradients_inside_tf_function():
    @tf.function
    def f(x):
        return tf.gradients(tf.reduce_sum(x * x * x), x)[0]
    np.testing.assert_allclose(f(tf.constant([1.0, 2.0])).numpy(), [3.0, 12.0])
    with pytest.raises(RuntimeError, match="tf.gradients is not supported when eager"):
        tf.gradients(tf.constant(1.0), tf.constant(2.0))


def test_custom_gradient_replaces_the_gradient():
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return tf.math.log(1 + e), grad

    x = tf.constant([0.0, 100.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 1 / (1 + np.exp(-x.numpy())))


def test_register_gradient_with_override_map_and_no_gradient():
    @tf.RegisterGradient("ClipToTenth")
    def _clip(op, grad):
        return tf.clip_by_value(grad, -0.1, 0.1)

    with pytest.raises(KeyError, match="Registering two gradient with name 'ClipToTenth'"):
        tf.RegisterGradient("ClipToTenth")(_clip)
    with pytest.raises(KeyError, match="Registering two gradient with name 'Relu'"):
        tf.no_gradient("Relu")  # ndflow's Relu has its gradient

    with tf.Graph().as_default() as g:
        x = v1.placeholder(tf.float32, [3])
        with g.gradient_override_map({"Identity": "ClipToTenth"}):
            clipped = tf.identity(x * 10.0)
        plain = tf.identity(x * 10.0)
        g_clipped = tf.gradients(tf.reduce_sum(clipped), x)[0]
        g_plain = tf.gradients(tf.reduce_sum(plain), x)[0]
        with v1.Session() as sess:
            a, b = sess.run([g_clipped, g_plain], {x: [1.0, 2.0, 3.0]})
    np.testing.assert_allclose(a, [1.0, 1.0, 1.0])   # 0.1 (clipped) * 10
    np.testing.assert_allclose(b, [10.0, 10.0, 10.0])
    with pytest.raises(TypeError, match="mapping strings to strings"):
        with tf.Graph().as_default() as g, g.gradient_override_map({"Identity": 1}):
            pass
