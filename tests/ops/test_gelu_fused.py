"""_Gelu / _GeluGrad (ops/gelu_fused.py), Keras' exact "gelu" activation: values against
NumPy in float64, gradients and gradients of gradients against finite differences, the
activation against `tf.nn.gelu`'s composite (which SavedModels and approximate=True keep)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ndflow as tf
from ndflow.ops import gelu_fused
from tests.keras.layer_checks import numeric_grad, op_types, saved_op_types

_erfc = np.vectorize(math.erfc)


def np_gelu(x):
    return x * 0.5 * _erfc(-x / math.sqrt(2.0))


def test_values_match_numpy():
    x = np.linspace(-5, 5, 101)
    np.testing.assert_allclose(gelu_fused.gelu(tf.constant(x)).numpy(), np_gelu(x),
                               rtol=1e-10, atol=1e-14)
    # float32: within float32 rounding of TF's composite (whose own error is ~4e-7 here)
    got = gelu_fused.gelu(tf.constant(np.linspace(-10, 10, 201), tf.float32)).numpy()
    np.testing.assert_allclose(got, np_gelu(np.linspace(-10, 10, 201)), rtol=1e-6, atol=1e-6)


def test_gradients_match_finite_differences():
    x = np.random.default_rng(0).standard_normal((3, 7)) * 2
    w = np.random.default_rng(1).standard_normal((3, 7))
    xv = tf.Variable(x)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(gelu_fused.gelu(xv) * w)
    grad = tape.gradient(loss, xv)

    def f(v):
        return float(np.sum(np_gelu(v) * w))
    np.testing.assert_allclose(grad.numpy(), numeric_grad(f, x), rtol=1e-7, atol=1e-9)


def test_gradients_of_gradients_match_finite_differences():
    x = np.random.default_rng(2).standard_normal(9) * 2
    w = np.random.default_rng(3).standard_normal(9)

    def penalty(v):
        with tf.GradientTape() as inner:
            inner.watch(v)
            loss = tf.reduce_sum(gelu_fused.gelu(v) * w)
        g = inner.gradient(loss, v)
        return tf.reduce_sum(g * g)
    xv = tf.Variable(x)
    with tf.GradientTape() as outer:
        value = penalty(xv)
    grad = outer.gradient(value, xv)
    np.testing.assert_allclose(grad.numpy(),
                               numeric_grad(lambda v: float(penalty(tf.constant(v)).numpy()), x),
                               rtol=1e-6, atol=1e-8)


def _dense_values(layer, x):
    xv = tf.Variable(x)
    with tf.GradientTape() as tape:
        y = layer(xv)
        loss = tf.reduce_sum(y * y)
    return [y.numpy()] + [g.numpy() for g in tape.gradient(loss, [xv] + layer.trainable_weights)]


def test_keras_gelu_runs_fused_and_equals_the_composite():
    x = np.random.default_rng(4).standard_normal((8, 5)).astype(np.float32)
    fused = tf.keras.layers.Dense(6, activation="gelu")
    composite = tf.keras.layers.Dense(6, activation=lambda v: tf.nn.gelu(v))
    fused(x)
    composite(x)
    composite.set_weights(fused.get_weights())
    for a, b in zip(_dense_values(fused, x), _dense_values(composite, x)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    types = op_types(fused, x)
    assert "_Gelu" in types and "Erfc" not in types


@pytest.mark.parametrize("approximate", [True, False])
def test_approximate_and_saved_models_keep_tensorflows_ops(approximate, tmp_path):
    x = tf.TensorSpec([2, 3], tf.float32)
    module = tf.Module()
    module.f = tf.function(lambda v: tf.keras.activations.gelu(v, approximate=approximate),
                           input_signature=[x])
    if approximate:
        types = {op.type for op in module.f.get_concrete_function().graph.get_operations()}
        assert "_Gelu" not in types and "Tanh" in types
        return
    types = saved_op_types(module, tmp_path)
    assert "_Gelu" not in types and "Erfc" in types
