"""`keras.remat` (the function's activations recomputed in the backward pass, TF backend:
tf.recompute_grad) and `keras.FloatDTypePolicy` (Keras 3's earlier name of a float
DTypePolicy: repr, dtypes and equality as Keras 3.15 gives them)."""

import numpy as np

import ndflow as tf

keras = tf.keras


def test_remat_recomputes_the_forward_pass_and_keeps_the_gradient():
    calls = []

    def f(x):
        calls.append(1)
        return tf.sin(x) * x

    x = tf.constant([0.5, 1.0, 2.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(keras.remat(f)(x))
    grad = tape.gradient(y, x).numpy()
    assert len(calls) == 2          # once forward, once again for the gradient
    v = x.numpy()
    np.testing.assert_allclose(grad, np.cos(v) * v + np.sin(v), rtol=1e-12)
    np.testing.assert_allclose(y.numpy(), np.sum(np.sin(v) * v), rtol=1e-12)


def test_remat_inside_a_layer_trains_like_the_plain_layer():
    class Twice(keras.layers.Layer):
        def __init__(self, use_remat, **kwargs):
            super().__init__(**kwargs)
            self.fn = keras.remat(self.body) if use_remat else self.body

        def body(self, x):
            return tf.nn.relu(x) * 2.0

        def call(self, x):
            return self.fn(x)

    grads = []
    for use_remat in (False, True):
        keras.utils.set_random_seed(3)
        dense = keras.layers.Dense(4)
        x = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(Twice(use_remat)(dense(x)) ** 2)
        grads.append([g.numpy() for g in tape.gradient(loss, dense.trainable_weights)])
    for plain, recomputed in zip(*grads):
        np.testing.assert_allclose(recomputed, plain, rtol=1e-6)


def test_float_dtype_policy_is_keras_earlier_name_of_a_dtype_policy():
    policy = keras.FloatDTypePolicy("mixed_float16")
    assert repr(policy) == '<DTypePolicy "mixed_float16">'
    assert (policy.compute_dtype, policy.variable_dtype) == ("float16", "float32")
    assert policy == keras.DTypePolicy("mixed_float16") and policy != keras.DTypePolicy()
    assert isinstance(policy, keras.DTypePolicy)
    layer = keras.layers.Dense(2, dtype=keras.FloatDTypePolicy("mixed_bfloat16"))
    assert layer.compute_dtype == "bfloat16" and layer.variable_dtype == "float32"
