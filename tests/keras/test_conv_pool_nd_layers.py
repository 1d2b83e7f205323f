"""Conv3D, Conv1DTranspose, Conv3DTranspose, DepthwiseConv1D, SeparableConv1D, the 3-D
poolings, UpSampling/ZeroPadding/Cropping 1D/3D and AlphaDropout against NumPy float64
references (both data formats), finite-difference gradients, unknown batch in tf.function,
AlphaDropout's training statistics, errors. Keras 3's own outputs and configs for these are
checked by tests/keras/test_attention_layers.py's fixture replay."""

import numpy as np
import pytest

import ndflow as tf
from tests.keras.layer_checks import check_gradients

L = tf.keras.layers
RNG = np.random.default_rng(3)


def _conv3d_ref(x, k, stride=(1, 1, 1)):
    """'valid' channels_last cross-correlation, float64."""
    kd, kh, kw, _, f = k.shape
    b, d, h, w, _ = x.shape
    od, oh, ow = ((d - kd) // stride[0] + 1, (h - kh) // stride[1] + 1,
                  (w - kw) // stride[2] + 1)
    out = np.zeros((b, od, oh, ow, f))
    for i in range(od):
        for j in range(oh):
            for m in range(ow):
                patch = x[:, i * stride[0]:i * stride[0] + kd, j * stride[1]:j * stride[1] + kh,
                          m * stride[2]:m * stride[2] + kw]
                out[:, i, j, m] = np.einsum("bdhwc,dhwcf->bf", patch, k)
    return out


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_conv3d_matches_numpy(data_format):
    x = RNG.normal(size=(2, 4, 5, 3, 2))
    layer = L.Conv3D(3, (2, 3, 2), strides=(1, 2, 1), data_format=data_format,
                     dtype="float64")
    xin = x if data_format == "channels_last" else x.transpose(0, 4, 1, 2, 3)
    y = layer(xin).numpy()
    want = _conv3d_ref(x, layer.kernel.numpy(), (1, 2, 1)) + layer.bias.numpy()
    if data_format == "channels_first":
        want = want.transpose(0, 4, 1, 2, 3)
    np.testing.assert_allclose(y, want, rtol=1e-10, atol=1e-12)
    assert layer.compute_output_shape(xin.shape) == y.shape


def test_conv1d_transpose_is_the_convolution_gradient():
    """A transposed convolution equals the input-gradient of the convolution with the same
    kernel: <conv(x), y> = <x, conv_transpose(y)>."""
    x = RNG.normal(size=(2, 7, 3))
    conv = L.Conv1D(4, 3, strides=2, use_bias=False, dtype="float64")
    y = conv(x).numpy()
    tconv = L.Conv1DTranspose(3, 3, strides=2, use_bias=False, dtype="float64")
    g = RNG.normal(size=y.shape)
    tconv.build(g.shape)
    tconv.kernel.assign(conv.kernel.numpy())   # (k, in=3, out=4) read as (k, filters, in)
    back = tconv(g).numpy()
    assert back.shape == x.shape
    np.testing.assert_allclose(np.sum(y * g), np.sum(x * back), rtol=1e-10)


def test_depthwise_and_separable_conv1d_match_numpy():
    x = RNG.normal(size=(2, 8, 3))
    dw = L.DepthwiseConv1D(3, depth_multiplier=2, dilation_rate=2, dtype="float64")
    k = dw.build(x.shape) or dw.kernel.numpy()   # (3, 3 channels, 2)
    y = dw(x).numpy()
    want = np.zeros((2, 4, 3, 2))
    for t in range(4):
        want[:, t] = np.einsum("bkc,kcm->bcm", x[:, t:t + 5:2], k)
    np.testing.assert_allclose(y, want.reshape(2, 4, 6) + dw.bias.numpy(), rtol=1e-10)
    sep = L.SeparableConv1D(4, 3, depth_multiplier=2, dtype="float64")
    y = sep(x).numpy()
    dk, pk = sep.depthwise_kernel.numpy(), sep.pointwise_kernel.numpy()
    depth = np.stack([np.einsum("bkc,kcm->bcm", x[:, t:t + 3], dk) for t in range(6)], 1)
    want = depth.reshape(2, 6, 6) @ pk[0] + sep.bias.numpy()
    np.testing.assert_allclose(y, want, rtol=1e-10)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_pooling3d_and_resampling_match_numpy(data_format):
    x = RNG.normal(size=(2, 4, 4, 2, 3))
    cl = data_format == "channels_last"
    xin = x if cl else x.transpose(0, 4, 1, 2, 3)

    def back(y):
        return y if cl else y.transpose(0, 2, 3, 4, 1)
    kw = {"data_format": data_format, "dtype": "float64"}
    blocks = x.reshape(2, 2, 2, 2, 2, 1, 2, 3)
    np.testing.assert_allclose(back(L.MaxPooling3D((2, 2, 2), **kw)(
        xin).numpy()), blocks.max(axis=(2, 4, 6)), rtol=1e-12)
    np.testing.assert_allclose(back(L.AveragePooling3D((2, 2, 2), **kw)(
        xin).numpy()), blocks.mean(axis=(2, 4, 6)), rtol=1e-12)
    np.testing.assert_allclose(L.GlobalMaxPooling3D(**kw)(xin).numpy(),
                               x.max(axis=(1, 2, 3)), rtol=1e-12)
    up = back(L.UpSampling3D((1, 2, 3), **kw)(xin).numpy())
    np.testing.assert_array_equal(up, x.repeat(2, 2).repeat(3, 3))
    padded = back(L.ZeroPadding3D(((0, 1), (2, 0), (1, 1)), **kw)(
        xin).numpy())
    np.testing.assert_array_equal(padded, np.pad(x, [(0, 0), (0, 1), (2, 0), (1, 1), (0, 0)]))
    cropped = back(L.Cropping3D(((1, 0), (0, 1), (1, 0)), **kw)(
        xin).numpy())
    np.testing.assert_array_equal(cropped, x[:, 1:, :-1, 1:])


def test_1d_resampling_matches_numpy():
    x = RNG.normal(size=(2, 5, 3))
    np.testing.assert_array_equal(L.UpSampling1D(2, dtype="float64")(x).numpy(), x.repeat(2, 1))
    np.testing.assert_array_equal(L.ZeroPadding1D((1, 2), dtype="float64")(x).numpy(),
                                  np.pad(x, [(0, 0), (1, 2), (0, 0)]))
    np.testing.assert_array_equal(L.Cropping1D((2, 1), dtype="float64")(x).numpy(), x[:, 2:-1])
    np.testing.assert_array_equal(L.Cropping1D((1, 0), dtype="float64")(x).numpy(), x[:, 1:])


def test_gradients_by_finite_differences():
    x = RNG.normal(size=(1, 3, 3, 2, 2))
    conv = L.Conv3D(2, 2, dtype="float64")
    conv(x)
    check_gradients(conv, x, weights=conv.weights)
    t = L.Conv3DTranspose(2, 2, strides=2, dtype="float64")
    t(x)
    check_gradients(t, x, weights=[t.kernel])
    x1 = RNG.normal(size=(1, 5, 2))
    for layer in (L.DepthwiseConv1D(2, dtype="float64"),
                  L.SeparableConv1D(2, 2, dtype="float64"),
                  L.Conv1DTranspose(2, 3, strides=2, dtype="float64")):
        layer(x1)
        check_gradients(layer, x1, weights=layer.weights[:1])
    check_gradients(L.AveragePooling3D(2, padding="same", dtype="float64"), x)


def test_unknown_batch_in_tf_function():
    layers = [L.Conv3DTranspose(2, 2, strides=2), L.Cropping3D(1), L.MaxPooling3D(1),
              L.Conv1DTranspose(2, 3, strides=2)]
    x3 = RNG.normal(size=(2, 3, 3, 3, 2)).astype("float32")
    x1 = RNG.normal(size=(2, 4, 2)).astype("float32")
    for layer, x in zip(layers, (x3, x3, x3, x1)):
        eager = layer(x).numpy()
        spec = tf.TensorSpec([None, *x.shape[1:]], tf.float32)
        fn = tf.function(layer.__call__, input_signature=[spec])
        np.testing.assert_allclose(fn(tf.constant(x)).numpy(), eager, rtol=1e-5, atol=1e-6)


def test_alpha_dropout_keeps_mean_and_variance():
    x = RNG.normal(size=(200, 500)).astype("float32")
    layer = L.AlphaDropout(0.2, seed=4)
    np.testing.assert_array_equal(layer(x).numpy(), x)   # inference: identity
    y = layer(x, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1.0) < 0.02
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - 0.2) * (1 + 0.2 * alpha_p ** 2)) ** -0.5
    dropped = np.isclose(y, a * alpha_p - a * alpha_p * 0.2)   # SELU's saturation, rescaled
    np.testing.assert_allclose(y[~dropped], a * x[~dropped] - a * alpha_p * 0.2, rtol=1e-5)
    assert 0.18 < dropped.mean() < 0.22


def test_errors_match_keras():
    with pytest.raises(ValueError, match="Computed output size would be zero or negative"):
        L.Conv3D(1, 3)(np.zeros((1, 2, 4, 4, 1), np.float32))
    with pytest.raises(ValueError, match="`padding` should have 3 elements"):
        L.ZeroPadding3D((1, 2))
    with pytest.raises(ValueError, match="must be smaller than the input length"):
        L.Cropping1D((2, 2))(np.zeros((1, 4, 1), np.float32))
    with pytest.raises(TypeError, match="Expected an integer value for `size`"):
        L.UpSampling1D(2.0)
    with pytest.raises(ValueError, match="Invalid value received for argument `rate`"):
        L.AlphaDropout(1.5)
    with pytest.raises(ValueError, match="`output_padding` must be strictly less"):
        L.Conv1DTranspose(1, 3, strides=2, output_padding=2)
