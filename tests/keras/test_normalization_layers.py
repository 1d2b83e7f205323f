"""BatchNormalization, LayerNormalization, GroupNormalization: Keras 3's outputs, moving
statistics and configs (fixture), float64 NumPy references, finite-difference gradients,
frozen/mixed-precision/tf.function behaviour, initializers and Keras' errors."""

import warnings

import numpy as np
import pytest

import ndflow as tf
from tests.keras.layer_checks import META, check_gradients, normal_config, replay

layers = tf.keras.layers
RNG = np.random.default_rng(11)


@pytest.mark.parametrize("name", sorted(n for n in META if n[:3] in ("bn_", "ln_", "gn_")))
def test_matches_keras_fixture(name):
    tol = 2e-3 if "float16" in name else 1e-5
    replay(name, rtol=tol, atol=tol)


def _bn_reference(x, gamma, beta, mean, var, eps):
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def test_batch_norm_training_and_moving_statistics_match_numpy():
    bn = layers.BatchNormalization(momentum=0.8, epsilon=1e-2, dtype="float64")
    xs = [RNG.normal(size=(7, 3, 4)) * (i + 1) + i for i in range(3)]
    bn.build(xs[0].shape)
    gamma, beta = RNG.normal(size=4), RNG.normal(size=4)
    mm, mv = RNG.normal(size=4), RNG.uniform(0.5, 2, size=4)
    bn.set_weights([gamma, beta, mm, mv])
    np.testing.assert_allclose(bn(xs[0]).numpy(),  # inference by default
                               _bn_reference(xs[0], gamma, beta, mm, mv, 1e-2), rtol=1e-12)
    for x in xs:
        mean, var = x.mean(axis=(0, 1)), x.var(axis=(0, 1))
        np.testing.assert_allclose(bn(x, training=True).numpy(),
                                   _bn_reference(x, gamma, beta, mean, var, 1e-2), rtol=1e-10,
                                   atol=1e-12)
        mm, mv = mm * 0.8 + mean * 0.2, mv * 0.8 + var * 0.2
        np.testing.assert_allclose(bn.moving_mean.numpy(), mm, rtol=1e-12)
        np.testing.assert_allclose(bn.moving_variance.numpy(), mv, rtol=1e-12)
    np.testing.assert_allclose(bn(xs[1], training=False).numpy(),
                               _bn_reference(xs[1], gamma, beta, mm, mv, 1e-2), rtol=1e-12)
    assert [w.name for w in bn.trainable_weights] == ["gamma", "beta"]
    assert [w.name for w in bn.non_trainable_weights] == ["moving_mean", "moving_variance"]


def test_batch_norm_channels_first_axis_and_no_affine():
    bn = layers.BatchNormalization(axis=1, center=False, scale=False, dtype="float64")
    x = RNG.normal(size=(5, 3, 2, 2)) * 3
    out = bn(x, training=True).numpy()
    mean, var = x.mean(axis=(0, 2, 3), keepdims=True), x.var(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-10, atol=1e-12)
    assert [w.name for w in bn.weights] == ["moving_mean", "moving_variance"]


def test_batch_norm_masked_moments():
    bn = layers.BatchNormalization(momentum=0.5, dtype="float64")
    x, mask = RNG.normal(size=(3, 5, 2)), RNG.uniform(size=(3, 5)) < 0.6
    out = bn(x, training=True, mask=tf.constant(mask)).numpy()
    w = mask[..., None].astype(np.float64)
    mean = (x * w).sum((0, 1)) / (w.sum((0, 1)) + 1e-7)
    var = (((x - mean) * w) ** 2).sum((0, 1)) / (w.sum((0, 1)) + 1e-7)
    np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.5 * mean, rtol=1e-12)


def test_frozen_batch_norm_runs_in_inference_mode():
    bn = layers.BatchNormalization(dtype="float64")
    x = RNG.normal(size=(6, 3)) + 5
    bn(x)
    bn.set_weights([np.full(3, 2.0), np.ones(3), np.full(3, 5.0), np.full(3, 4.0)])
    bn.trainable = False
    assert bn.trainable_weights == [] and len(bn.non_trainable_weights) == 4
    out = bn(x, training=True).numpy()
    np.testing.assert_allclose(out, (x - 5) / np.sqrt(4 + 1e-3) * 2 + 1, rtol=1e-12)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), np.full(3, 5.0))
    bn.trainable = True
    bn(x, training=True)
    assert not np.allclose(bn.moving_mean.numpy(), 5.0)


def test_batch_norm_updates_inside_tf_function_with_unknown_batch():
    bn = layers.BatchNormalization(momentum=0.5)
    eager = layers.BatchNormalization(momentum=0.5)
    step = tf.function(lambda x: bn(x, training=True),
                       input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    for n in (3, 5):
        x = RNG.normal(size=(n, 4)).astype(np.float32) + n
        np.testing.assert_allclose(step(x).numpy(), eager(x, training=True).numpy(),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(bn.moving_mean.numpy(), eager.moving_mean.numpy(),
                                   rtol=1e-6)
        np.testing.assert_allclose(bn.moving_variance.numpy(),
                                   eager.moving_variance.numpy(), rtol=1e-6)
    infer = tf.function(lambda x: bn(x, training=False),
                        input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    x = RNG.normal(size=(2, 4)).astype(np.float32)
    np.testing.assert_allclose(infer(x).numpy(), eager(x).numpy(), rtol=1e-5, atol=1e-6)


def test_batch_norm_mixed_precision_statistics_in_float32():
    bn = layers.BatchNormalization(dtype="mixed_float16", momentum=0.0)
    x = (RNG.normal(size=(8, 3)) * 400 + 2000).astype(np.float32)
    out = bn(x, training=True)
    assert out.dtype == tf.float16 and bn.moving_variance.dtype == tf.float32
    x16 = x.astype(np.float16).astype(np.float64)   # the layer sees float16 inputs
    np.testing.assert_allclose(bn.moving_variance.numpy(), x16.var(0), rtol=1e-4)
    assert np.isfinite(out.numpy()).all()   # float16 squares of ~2000 would overflow
    np.testing.assert_allclose(out.numpy(), (x16 - x16.mean(0)) / np.sqrt(x16.var(0) + 1e-3),
                               atol=5e-3)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_gradients_match_finite_differences(training):
    bn = layers.BatchNormalization(dtype="float64")
    x = RNG.normal(size=(4, 2, 3))
    bn(x)
    bn.set_weights([RNG.normal(size=3), RNG.normal(size=3), RNG.normal(size=3),
                    RNG.uniform(0.5, 2, size=3)])
    bn.momentum = 1.0   # the finite differences' calls must not move the statistics
    check_gradients(bn, x, [bn.gamma, bn.beta], training=training)


def test_batch_norm_renorm_gradient_treats_corrections_as_constants():
    bn = layers.BatchNormalization(renorm=True, renorm_momentum=1.0, momentum=1.0,
                                   renorm_clipping={"rmax": 1.2, "rmin": 0.8, "dmax": 0.3},
                                   dtype="float64")
    x = RNG.normal(size=(6, 3)) * 2 + 1
    bn(x)
    # the corrections r, d are stop_gradient'ed: the tape's input gradient is that of plain
    # batch norm scaled by r, with r from the (constant) renorm statistics
    with tf.GradientTape() as tape:
        t = tf.constant(x)
        tape.watch(t)
        loss = tf.reduce_sum(bn(t, training=True) ** 2)
    got = tape.gradient(loss, t).numpy()
    mean, var = x.mean(0), x.var(0)
    std = np.sqrt(var + 1e-3)
    r = np.clip(std / 1.0, 0.8, 1.2)
    d = np.clip((mean - 0.0) / 1.0, -0.3, 0.3)
    xhat = (x - mean) / std
    y = xhat * r + d
    dy = 2 * y * r
    want = (dy - dy.mean(0) - xhat * (dy * xhat).mean(0)) / std
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_layer_norm_matches_numpy_and_gradients():
    ln = layers.LayerNormalization(axis=[1, 2], epsilon=1e-2, dtype="float64")
    x = RNG.normal(size=(3, 4, 5)) * 2 + 1
    ln(x)
    gamma, beta = RNG.normal(size=(4, 5)), RNG.normal(size=(4, 5))
    ln.set_weights([gamma, beta])
    mean, var = x.mean((1, 2), keepdims=True), x.var((1, 2), keepdims=True)
    np.testing.assert_allclose(ln(x).numpy(), (x - mean) / np.sqrt(var + 1e-2) * gamma + beta,
                               rtol=1e-10, atol=1e-12)
    check_gradients(ln, x, [ln.gamma, ln.beta])
    last = layers.LayerNormalization(dtype="float64")
    np.testing.assert_allclose(
        last(x).numpy(), (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True)
                                                                   + 1e-3), rtol=1e-10)
    assert last.get_config()["axis"] == [-1]   # Keras keeps the built, listed axis


def test_layer_norm_rms_scaling_is_deprecated_and_scales_by_variance():
    with pytest.warns(UserWarning, match="rms_scaling=True`, which is deprecated"):
        ln = layers.LayerNormalization(rms_scaling=True, center=True, dtype="float64")
    x = RNG.normal(size=(3, 6)) + 2
    out = ln(x).numpy()
    assert [w.name for w in ln.weights] == ["gamma"]
    np.testing.assert_allclose(out, x / np.sqrt(x.var(-1, keepdims=True) + 1e-3), rtol=1e-10)


def test_layer_norm_does_not_autocast_and_returns_compute_dtype():
    ln = layers.LayerNormalization()
    x = RNG.normal(size=(2, 3)) * 1e3
    out = ln(x)   # float64 in, statistics in float64, output in float32
    assert out.dtype == tf.float32
    np.testing.assert_allclose(out.numpy(), (x - x.mean(-1, keepdims=True)) /
                               np.sqrt(x.var(-1, keepdims=True) + 1e-3), rtol=1e-6)


def _group_norm_reference(x, groups, gamma, beta, eps):
    n, c = x.shape[0], x.shape[-1]
    g = x.reshape(n, -1, groups, c // groups)
    mean, var = g.mean((1, 3), keepdims=True), g.var((1, 3), keepdims=True)
    return ((g - mean) / np.sqrt(var + eps)).reshape(x.shape) * gamma + beta


def test_group_norm_matches_numpy_and_gradients():
    gn = layers.GroupNormalization(groups=3, dtype="float64")
    x = RNG.normal(size=(2, 4, 6)) * 2
    gn(x)
    gamma, beta = RNG.normal(size=6), RNG.normal(size=6)
    gn.set_weights([gamma, beta])
    np.testing.assert_allclose(gn(x).numpy(), _group_norm_reference(x, 3, gamma, beta, 1e-3),
                               rtol=1e-10, atol=1e-12)
    check_gradients(gn, x, [gn.gamma, gn.beta])
    inst = layers.GroupNormalization(groups=-1, dtype="float64")
    y = RNG.normal(size=(2, 5, 4))
    np.testing.assert_allclose(inst(y).numpy(),
                               _group_norm_reference(y, 4, np.ones(4), np.zeros(4), 1e-3),
                               rtol=1e-10, atol=1e-12)
    assert inst.get_config()["groups"] == 4


@pytest.mark.parametrize("make, shape", [
    (lambda: layers.BatchNormalization(), (None, 3, 4)),
    (lambda: layers.LayerNormalization(axis=[1, 2]), (None, 3, 4)),
    (lambda: layers.GroupNormalization(groups=2), (None, 3, 4)),
])
def test_in_tf_function_with_unknown_batch(make, shape):
    layer = make()
    x = RNG.normal(size=(5,) + shape[1:]).astype(np.float32)
    want = layer(x).numpy()
    fn = tf.function(lambda t: layer(t), input_signature=[tf.TensorSpec(shape, tf.float32)])
    np.testing.assert_allclose(fn(x).numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fn(x[:2]).numpy(), layer(x[:2]).numpy(), rtol=1e-5, atol=1e-6)
    assert fn.get_concrete_function().structured_outputs.shape.as_list() == list(shape)


def test_default_initializers_and_output_shape():
    bn = layers.BatchNormalization()
    bn.build((None, 7))
    np.testing.assert_array_equal(np.stack(bn.get_weights()),
                                  [np.ones(7), np.zeros(7), np.zeros(7), np.ones(7)])
    assert bn.compute_output_shape((None, 7)) == (None, 7)
    with pytest.raises(ValueError, match=r"Axis 3 is out of bounds for input shape \(2, 7\)"):
        layers.BatchNormalization(axis=3).compute_output_shape((2, 7))
    ln = layers.LayerNormalization()
    ln.build((2, 5))
    np.testing.assert_array_equal(np.stack(ln.get_weights()), [np.ones(5), np.zeros(5)])


@pytest.mark.parametrize("layer", [
    layers.BatchNormalization(axis=1, momentum=0.9, center=False, beta_regularizer="l2",
                              gamma_constraint="non_neg", renorm=True,
                              renorm_clipping={"rmax": 3.0}),
    layers.LayerNormalization(axis=(1, 2), epsilon=0.1, gamma_initializer="zeros"),
    layers.GroupNormalization(groups=4, axis=1, scale=False),
], ids=["bn", "ln", "gn"])
def test_config_round_trips(layer):
    config = layer.get_config()
    again = type(layer).from_config(config)
    assert normal_config(again.get_config()) == normal_config(config)
    clone = layers.deserialize(layers.serialize(layer))
    assert type(clone) is type(layer)
    assert normal_config(clone.get_config()) == normal_config(config)


def test_bad_input_errors():
    x2 = np.ones((2, 3), np.float32)
    with pytest.raises(IndexError):
        layers.BatchNormalization(axis=3)(x2)
    with pytest.raises(ValueError, match=r"The mask provided should be one dimension less than "
                       r"the inputs. Received: mask.shape=\(2,\), inputs.shape=\(2, 4, 3\)"):
        layers.BatchNormalization()(np.ones((2, 4, 3), np.float32), training=True,
                                    mask=tf.constant([True, False]))
    with pytest.raises(ValueError, match=r"Shapes used to initialize variables must be "
                       r"fully-defined \(no `None` dimensions\). Received: shape=\(None,\)"):
        layers.BatchNormalization().build((None, None))
    bn = layers.BatchNormalization()
    bn(x2)
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 3, but "
                       r"received input with shape \(2, 5\)"):
        bn(np.ones((2, 5), np.float32))
    with pytest.raises(ValueError, match="expected ndim=2, found ndim=3"):
        bn(np.ones((2, 4, 3), np.float32))
    with pytest.raises(ValueError, match="Received invalid keys for `renorm_clipping`"):
        layers.BatchNormalization(renorm=True, renorm_clipping={"rmx": 1})
    with pytest.raises(ValueError, match="rmax should be greater than rmin"):
        layers.BatchNormalization(renorm=True, renorm_clipping={"rmax": 1, "rmin": 2})
    with pytest.raises(TypeError, match="Expected an int or a list/tuple of ints for the "
                       "argument 'axis', but received: 'a'"):
        layers.LayerNormalization(axis="a")
    with pytest.raises(ValueError, match=r"expected a positive integer \(or `-1` for instance "
                       r"normalization\). Received: groups=0"):
        layers.GroupNormalization(groups=0)
    with pytest.raises(ValueError, match=r"Number of groups \(4\) cannot be more than the "
                       r"number of channels \(3\)."):
        layers.GroupNormalization(groups=4)(x2)
    with pytest.raises(ValueError, match=r"Number of groups \(2\) must be a multiple of the "
                       r"number of channels \(3\)."):
        layers.GroupNormalization(groups=2)(x2)
    with pytest.raises(ValueError, match="Axis -1 of input tensor should have a defined "
                       "dimension"):
        layers.GroupNormalization(groups=2).build((None, None))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        layers.LayerNormalization()   # no warning without rms_scaling
