"""_LayerNorm / _LayerNormGrad (ops/layer_norm_fused.py) and Keras' LayerNormalization on
them: values against NumPy in float64, gradients and gradients of gradients against finite
differences, the layer against Keras' own ops (which SavedModels keep), malformed
parameters."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import save_context
from ndflow.ops import layer_norm_fused
from ndflow.ops.apply import apply_op
from tests.keras.layer_checks import numeric_grad, op_types, saved_op_types


def np_layer_norm(x, gamma, beta, eps, begin):
    axes = tuple(range(begin % x.ndim, x.ndim))
    mean = x.mean(axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    return y * (gamma if gamma is not None else 1.0) + (beta if beta is not None else 0.0)


def run(x, gamma, beta, eps=1e-3, begin=-1):
    empty = tf.zeros([0], x.dtype)
    return apply_op(layer_norm_fused.LayerNorm,
                    [x, empty if gamma is None else gamma, empty if beta is None else beta],
                    {"epsilon": eps, "begin_norm_axis": begin, "scale": gamma is not None,
                     "center": beta is not None}).outputs[0]


def _arrays(shape, begin, seed=0):
    rng = np.random.default_rng(seed)
    params = shape[begin % len(shape):]
    return (rng.standard_normal(shape) * 2 + 0.5, rng.standard_normal(params),
            rng.standard_normal(params))


CASES = [((4, 7), -1), ((3, 5, 6), -1), ((2, 3, 4, 5), 2), ((6, 1), -1)]


@pytest.mark.parametrize("shape,begin", CASES)
@pytest.mark.parametrize("scale,center", [(True, True), (False, True), (True, False),
                                          (False, False)])
def test_values_match_numpy(shape, begin, scale, center):
    x, g, b = _arrays(shape, begin)
    g, b = (g if scale else None), (b if center else None)
    got = run(tf.constant(x), None if g is None else tf.constant(g),
              None if b is None else tf.constant(b), 1e-3, begin)
    np.testing.assert_allclose(got.numpy(), np_layer_norm(x, g, b, 1e-3, begin), rtol=1e-12,
                               atol=1e-12)
    got32 = run(tf.constant(x, tf.float32), None if g is None else tf.constant(g, tf.float32),
                None if b is None else tf.constant(b, tf.float32), 1e-3, begin)
    np.testing.assert_allclose(got32.numpy(), np_layer_norm(x, g, b, 1e-3, begin), rtol=2e-5,
                               atol=2e-5)


def _loss(y, w):
    return tf.reduce_sum(y * w) + 0.3 * tf.reduce_sum(y * y)


@pytest.mark.parametrize("shape,begin", CASES[:3])
@pytest.mark.parametrize("scale,center", [(True, True), (False, False)])
def test_gradients_match_finite_differences(shape, begin, scale, center):
    x, g, b = _arrays(shape, begin, seed=1)
    w = np.random.default_rng(2).standard_normal(shape)
    args = [x] + ([g] if scale else []) + ([b] if center else [])

    def call(vals):
        xs = list(vals)
        return run(xs[0], xs[1] if scale else None, xs[-1] if center else None, 1e-3, begin)
    variables = [tf.Variable(a) for a in args]
    with tf.GradientTape() as tape:
        value = _loss(call(variables), w)
    grads = tape.gradient(value, variables)
    for k, grad in enumerate(grads):
        def f(v, k=k):
            vals = [tf.constant(a) for a in args]
            vals[k] = tf.constant(v)
            return float(_loss(call(vals), w).numpy())
        np.testing.assert_allclose(grad.numpy(), numeric_grad(f, args[k]), rtol=1e-6,
                                   atol=1e-7)


@pytest.mark.parametrize("scale,center", [(True, True), (True, False), (False, True)])
def test_gradients_of_gradients_match_finite_differences(scale, center):
    """A gradient penalty's path: d/dx and d/dgamma of |dL/dx|^2 (through _LayerNormGrad's
    own gradient) against central differences of the first gradient's norm."""
    x, g, b = _arrays((3, 5), -1, seed=3)
    w = np.random.default_rng(4).standard_normal((3, 5))
    b_ = b if center else None

    def penalty(xv, gv):
        with tf.GradientTape() as inner:
            inner.watch(xv)
            y = run(xv, gv, None if b_ is None else tf.constant(b_))
            loss = _loss(y, w)
        dx = inner.gradient(loss, xv)
        return tf.reduce_sum(dx * dx)
    xv = tf.Variable(x)
    gv = tf.Variable(g) if scale else None
    with tf.GradientTape() as outer:
        value = penalty(xv, gv)
    sources = [xv] + ([gv] if scale else [])
    grads = outer.gradient(value, sources)
    bases = [x] + ([g] if scale else [])
    for k, grad in enumerate(grads):
        def f(v, k=k):
            vals = [tf.constant(a) for a in bases]
            vals[k] = tf.constant(v)
            return float(penalty(vals[0], vals[1] if scale else None).numpy())
        np.testing.assert_allclose(grad.numpy(), numeric_grad(f, bases[k]), rtol=1e-5,
                                   atol=1e-6)


def _layer_values(layer, x, fused: bool):
    """Outputs and gradients of the layer; `fused` False runs Keras' ops (as while a
    SavedModel is written)."""
    xv = tf.Variable(x)
    with save_context.save_context() if not fused else contextlib.nullcontext():
        with tf.GradientTape() as tape:
            y = layer(xv)
            loss = tf.reduce_sum(y * y) + tf.reduce_sum(y)
        grads = tape.gradient(loss, [xv] + layer.trainable_weights)
    return [y.numpy()] + [g.numpy() for g in grads]


@pytest.mark.parametrize("kwargs,shape", [({}, (4, 6, 8)), ({"axis": [-2, -1]}, (4, 6, 8)),
                                          ({"center": False}, (5, 8)),
                                          ({"scale": False, "epsilon": 1e-6}, (5, 8))])
def test_keras_layer_fused_equals_keras_ops(kwargs, shape):
    layer = tf.keras.layers.LayerNormalization(**kwargs)
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32) * 3 + 1
    layer(x)
    if layer.gamma is not None:
        layer.gamma.assign(np.random.default_rng(6).standard_normal(layer.gamma.shape))
    for a, b in zip(_layer_values(layer, x, True), _layer_values(layer, x, False)):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)
    assert "_LayerNorm" in op_types(layer, x)


def test_keras_layer_over_leading_axes_keeps_keras_ops():
    layer = tf.keras.layers.LayerNormalization(axis=1)
    x = np.ones((3, 4, 5), np.float32)
    layer(x)
    types = op_types(layer, x)
    assert "_LayerNorm" not in types and "Mean" in types


def test_saved_model_keeps_keras_ops(tmp_path):
    layer = tf.keras.layers.LayerNormalization()
    layer(np.ones((2, 4), np.float32))
    module = tf.Module()
    module.layer = layer
    module.f = tf.function(lambda v: layer(v), input_signature=[tf.TensorSpec([2, 4])])
    assert "_LayerNorm" not in saved_op_types(module, tmp_path)


@pytest.mark.parametrize("gamma_shape,message", [([5], r"gamma must have shape \[4\], got \[5\]"),
                                                 ([2, 4], r"gamma must have shape \[4\]")])
def test_malformed_parameters_are_named(gamma_shape, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match="_LayerNorm: " + message):
        run(tf.ones([3, 4]), tf.ones(gamma_shape), tf.ones([4]))
