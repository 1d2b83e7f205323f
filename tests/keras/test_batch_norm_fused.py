"""Keras BatchNormalization in training mode as one FusedBatchNormV3 (and its gradient one
FusedBatchNormGradV3) where its configuration allows (normalization_layers._fused_training):
outputs, gradients of the input, gamma and beta, and the moving statistics after a step equal
Keras' moments-and-normalize formula in float64 NumPy, for 2-D, 3-D and 4-D channels-last
inputs, channels-first 4-D inputs and layers without gamma or beta; masks and batch renorm
keep the composite form."""

import numpy as np
import pytest

import ndflow as tf

L = tf.keras.layers


def reference(x, gamma, beta, axis, eps, upstream):
    """Keras' training-mode batch norm and its gradients, float64."""
    axes = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    shape = [1] * x.ndim
    shape[axis] = -1
    mean = x.mean(axes)
    var = x.var(axes)
    inv = 1.0 / np.sqrt(var + eps)
    xhat = (x - mean.reshape(shape)) * inv.reshape(shape)
    y = xhat * gamma.reshape(shape) + beta.reshape(shape)
    n = x.size / x.shape[axis]
    dxhat = upstream * gamma.reshape(shape)
    dx = inv.reshape(shape) / n * (n * dxhat - dxhat.sum(axes).reshape(shape)
                                   - xhat * (dxhat * xhat).sum(axes).reshape(shape))
    return y, dx, (upstream * xhat).sum(axes), upstream.sum(axes), mean, var


@pytest.mark.parametrize("shape,axis", [((64, 6), -1), ((8, 5, 6), -1), ((4, 5, 3, 6), -1),
                                        ((4, 6, 5, 3), 1)])
@pytest.mark.parametrize("center,scale", [(True, True), (False, False)])
def test_training_step_matches_keras_formula(shape, axis, center, scale):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    upstream = rng.standard_normal(shape).astype(np.float32)
    layer = L.BatchNormalization(axis=axis, center=center, scale=scale, momentum=0.9)
    layer.build(shape)
    channels = shape[axis]
    if scale:
        layer.gamma.assign(rng.uniform(0.5, 1.5, channels).astype(np.float32))
    if center:
        layer.beta.assign(rng.standard_normal(channels).astype(np.float32))
    xv = tf.Variable(x)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            y = layer(xv, training=True)
            loss = tf.reduce_sum(y * upstream)
        return y, tape.gradient(loss, [xv, *layer.trainable_weights])

    types = {op.type for op in step.get_concrete_function().graph.get_operations()}
    assert "FusedBatchNormV3" in types and "FusedBatchNormGradV3" in types
    y, grads = step()
    gamma = layer.gamma.numpy() if scale else np.ones(channels)
    beta = layer.beta.numpy() if center else np.zeros(channels)
    want_y, want_dx, want_dgamma, want_dbeta, mean, var = reference(
        x.astype(np.float64), gamma.astype(np.float64), beta.astype(np.float64), axis, 1e-3,
        upstream.astype(np.float64))
    np.testing.assert_allclose(y.numpy(), want_y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grads[0].numpy(), want_dx, rtol=1e-4, atol=1e-5)
    want = ([want_dgamma] if scale else []) + ([want_dbeta] if center else [])
    for got, w in zip(grads[1:], want):
        np.testing.assert_allclose(got.numpy(), w, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(layer.moving_mean.numpy(), 0.1 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.moving_variance.numpy(), 0.9 + 0.1 * var, rtol=1e-5)


def test_masks_and_renorm_keep_the_composite_form():
    x = np.random.default_rng(1).standard_normal((4, 5, 6)).astype(np.float32)
    mask = np.ones((4, 5), bool)
    for layer, kwargs in ((L.BatchNormalization(), {"mask": mask}),
                          (L.BatchNormalization(renorm=True), {})):
        f = tf.function(lambda v, layer=layer, kwargs=kwargs: layer(v, training=True, **kwargs))
        types = {op.type for op in f.get_concrete_function(x).graph.get_operations()}
        assert "FusedBatchNormV3" not in types
