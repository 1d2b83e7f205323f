"""Conv1D, Conv2D, Conv2DTranspose, DepthwiseConv2D, SeparableConv2D: outputs against NumPy
float64 references for every padding / stride / dilation / data_format combination below
(with compute_output_shape), finite-difference gradients, Keras 3's configs, outputs and error
messages (tests/fixtures/keras_conv_layers), default initializers, tf.function with an unknown
batch dimension."""

import itertools

import numpy as np
import pytest

import ndflow as tf
from tests.keras import conv_references as ref

layers = tf.keras.layers
RNG = np.random.default_rng(5)
CONV_CLASSES = ("Conv1D", "Conv2D", "Conv2DTranspose", "DepthwiseConv2D", "SeparableConv2D")


@pytest.mark.parametrize("case", [c for c, s in ref.FIXTURE["cases"].items()
                                  if s["class"] in CONV_CLASSES])
def test_matches_keras_fixture(case):
    ref.check_fixture_case(case)


# -- NumPy references over the argument combinations ---------------------------------------


def _input(shape):
    return RNG.normal(size=shape)


def _run(layer, x):
    """float64 output and the static shape compute_output_shape predicts for it."""
    y = layer(x)
    assert tuple(y.shape.as_list()) == tuple(layer.compute_output_shape(x.shape))
    return y.numpy()


def _cf(shape, data_format):
    return (shape[0], shape[-1], *shape[1:-1]) if data_format == "channels_first" else shape


CONV2D_COMBOS = [(p, s, d, f) for p, s, d, f in itertools.product(
    ("valid", "same"), (1, (2, 1), 3), (1, 2), ("channels_last", "channels_first"))
    if s == 1 or d == 1]


@pytest.mark.parametrize("padding,strides,dilation,data_format", CONV2D_COMBOS)
def test_conv2d_matches_numpy(padding, strides, dilation, data_format):
    layer = layers.Conv2D(4, (3, 2), strides=strides, padding=padding, dilation_rate=dilation,
                          data_format=data_format, dtype="float64",
                          bias_initializer="random_normal")
    x = _input(_cf((2, 8, 7, 3), data_format))
    y = _run(layer, x)
    kernel, bias = layer.get_weights()
    want = ref.conv(x, kernel, strides, padding, dilation, data_format)
    want += bias.reshape((-1, 1, 1) if data_format == "channels_first" else -1)
    np.testing.assert_allclose(y, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("padding,strides,dilation,data_format,groups", [
    (p, s, d, f, g) for p, s, d, f, g in itertools.product(
        ("valid", "same", "causal"), (1, 2), (1, 3), ("channels_last", "channels_first"),
        (1, 2)) if s == 1 or d == 1])
def test_conv1d_matches_numpy(padding, strides, dilation, data_format, groups):
    layer = layers.Conv1D(4, 3, strides=strides, padding=padding, dilation_rate=dilation,
                          data_format=data_format, groups=groups, use_bias=False,
                          activation="relu", dtype="float64")
    x = _input(_cf((2, 11, 4), data_format))
    y = _run(layer, x)
    (kernel,) = layer.get_weights()
    want = ref.conv(x, kernel, strides, padding, dilation, data_format, groups)
    np.testing.assert_allclose(y, np.maximum(want, 0), rtol=1e-10, atol=1e-10)


def test_conv2d_groups_match_numpy():
    layer = layers.Conv2D(6, 3, groups=3, padding="same", dtype="float64", use_bias=False)
    x = _input((2, 5, 5, 3 * 2))
    y = _run(layer, x)
    assert layer.kernel.shape.as_list() == [3, 3, 2, 6]
    np.testing.assert_allclose(y, ref.conv(x, layer.get_weights()[0], 1, "same", groups=3),
                               rtol=1e-10, atol=1e-10)


TRANSPOSE_COMBOS = [
    ("valid", 1, None, 1), ("valid", 2, None, 1), ("valid", (2, 3), (1, 2), 1),
    ("valid", 3, None, 1), ("same", 1, None, 1), ("same", 2, None, 1),
    ("same", (2, 3), (1, 1), 1), ("same", 2, 1, 1), ("valid", 1, None, 2),
    ("same", 1, None, 2)]


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
@pytest.mark.parametrize("padding,strides,output_padding,dilation", TRANSPOSE_COMBOS)
def test_conv2d_transpose_matches_numpy(padding, strides, output_padding, dilation,
                                        data_format):
    layer = layers.Conv2DTranspose(3, (3, 2), strides=strides, padding=padding,
                                   output_padding=output_padding, dilation_rate=dilation,
                                   data_format=data_format, dtype="float64",
                                   bias_initializer="random_normal")
    x = _input(_cf((2, 4, 5, 2), data_format))
    y = _run(layer, x)
    kernel, bias = layer.get_weights()
    assert kernel.shape == (3, 2, 3, 2)
    want = ref.conv_transpose(x, kernel, strides, padding, output_padding, dilation,
                              data_format)
    want += bias.reshape((-1, 1, 1) if data_format == "channels_first" else -1)
    np.testing.assert_allclose(y, want, rtol=1e-10, atol=1e-10)


WINDOW_COMBOS = [(p, s, d, f) for p, s, d, f in itertools.product(
    ("valid", "same"), (1, 2), (1, 2), ("channels_last", "channels_first")) if s == 1 or d == 1]


@pytest.mark.parametrize("padding,strides,dilation,data_format", WINDOW_COMBOS)
def test_depthwise_matches_numpy(padding, strides, dilation, data_format):
    layer = layers.DepthwiseConv2D((3, 2), strides=strides, padding=padding,
                                   depth_multiplier=2, dilation_rate=dilation,
                                   data_format=data_format, dtype="float64",
                                   bias_initializer="random_normal")
    x = _input(_cf((2, 7, 6, 3), data_format))
    y = _run(layer, x)
    kernel, bias = layer.get_weights()
    assert kernel.shape == (3, 2, 3, 2) and bias.shape == (6,)
    want = ref.depthwise(x, kernel, strides, padding, dilation, data_format)
    want += bias.reshape((-1, 1, 1) if data_format == "channels_first" else -1)
    np.testing.assert_allclose(y, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("padding,strides,dilation,data_format", WINDOW_COMBOS)
def test_separable_matches_numpy(padding, strides, dilation, data_format):
    layer = layers.SeparableConv2D(4, 3, strides=strides, padding=padding, depth_multiplier=2,
                                   dilation_rate=dilation, data_format=data_format,
                                   dtype="float64", bias_initializer="random_normal",
                                   activation="tanh")
    x = _input(_cf((2, 7, 6, 3), data_format))
    y = _run(layer, x)
    dw, pw, bias = layer.get_weights()
    assert dw.shape == (3, 3, 3, 2) and pw.shape == (1, 1, 6, 4)
    want = ref.separable(x, dw, pw, strides, padding, dilation, data_format)
    want += bias.reshape((-1, 1, 1) if data_format == "channels_first" else -1)
    np.testing.assert_allclose(y, np.tanh(want), rtol=1e-10, atol=1e-10)


# -- gradients ---------------------------------------------------------------------------------


@pytest.mark.parametrize("cls,kwargs,shape", [
    ("Conv1D", {"filters": 2, "kernel_size": 3, "padding": "causal", "dilation_rate": 2},
     (1, 6, 2)),
    ("Conv1D", {"filters": 2, "kernel_size": 2, "strides": 2, "groups": 2,
                "data_format": "channels_first"}, (1, 2, 5)),
    ("Conv2D", {"filters": 2, "kernel_size": 2, "strides": 2, "padding": "same"},
     (1, 5, 4, 2)),
    ("Conv2D", {"filters": 2, "kernel_size": 2, "dilation_rate": 2,
                "data_format": "channels_first"}, (1, 1, 4, 3)),
    ("Conv2DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same"},
     (1, 3, 2, 2)),
    ("Conv2DTranspose", {"filters": 2, "kernel_size": 2, "strides": (1, 2),
                         "output_padding": (0, 1), "data_format": "channels_first"},
     (1, 2, 3, 2)),
    ("DepthwiseConv2D", {"kernel_size": 2, "depth_multiplier": 2, "padding": "same"},
     (1, 3, 3, 2)),
    ("SeparableConv2D", {"filters": 2, "kernel_size": 2, "strides": 2,
                         "data_format": "channels_first"}, (1, 2, 3, 3)),
], ids=["conv1d_causal", "conv1d_groups_cf", "conv2d_same", "conv2d_dilated_cf",
        "transpose_same", "transpose_output_padding_cf", "depthwise", "separable_cf"])
def test_gradients_match_finite_differences(cls, kwargs, shape):
    layer = getattr(layers, cls)(dtype="float64", **kwargs)
    layer.build(shape)
    layer.set_weights([RNG.normal(size=w.shape.as_list()) for w in layer.weights])
    ref.check_gradients(layer, RNG.normal(size=shape), RNG)


# -- defaults, tf.function, errors -------------------------------------------------------------


def _assert_glorot_uniform(values, fan_in, fan_out):
    """Six-sigma bounds for n draws of U(-limit, limit): the sample mean has standard
    deviation limit/sqrt(3n), the sample std about limit/sqrt(15n). A fixed 3% bound
    failed about one run in a hundred on small kernels (n = 2304)."""
    limit = np.sqrt(6 / (fan_in + fan_out))
    n = values.size
    assert np.abs(values).max() <= np.float32(limit)   # the bound as float32 (it rounds up)
    assert abs(values.std() - limit / np.sqrt(3)) < 6 * limit / np.sqrt(15 * n)
    assert abs(values.mean()) < 6 * limit / np.sqrt(3 * n)


def test_default_initializers():
    conv = layers.Conv2D(64, 3)
    conv.build((None, 9, 9, 32))
    _assert_glorot_uniform(conv.kernel.numpy(), 9 * 32, 9 * 64)
    assert not conv.bias.numpy().any()
    conv1 = layers.Conv1D(48, 5, groups=2)
    conv1.build((None, 9, 64))
    assert conv1.kernel.shape.as_list() == [5, 32, 48]
    _assert_glorot_uniform(conv1.kernel.numpy(), 5 * 32, 5 * 48)
    tr = layers.Conv2DTranspose(40, 3)
    tr.build((None, 9, 9, 24))  # kernel (3, 3, filters, in): Keras' fans use that order
    _assert_glorot_uniform(tr.kernel.numpy(), 9 * 40, 9 * 24)
    dw = layers.DepthwiseConv2D(5, depth_multiplier=4)
    dw.build((None, 9, 9, 96))
    _assert_glorot_uniform(dw.kernel.numpy(), 25 * 96, 25 * 4)
    assert not dw.bias.numpy().any() and dw.bias.shape.as_list() == [384]
    sep = layers.SeparableConv2D(128, 3, depth_multiplier=2)
    sep.build((None, 9, 9, 128))
    _assert_glorot_uniform(sep.depthwise_kernel.numpy(), 9 * 128, 9 * 2)
    _assert_glorot_uniform(sep.pointwise_kernel.numpy(), 256, 128)
    assert [v.name.split("/")[-1].split(":")[0] for v in sep.weights] == [
        "depthwise_kernel", "pointwise_kernel", "bias"]


@pytest.mark.parametrize("make,shape", [
    (lambda: layers.Conv1D(3, 3, padding="causal"), (5, 2)),
    (lambda: layers.Conv2D(3, 3, strides=2, padding="same", data_format="channels_first"),
     (2, 7, 6)),
    (lambda: layers.Conv2DTranspose(2, 3, strides=2, padding="same"), (4, 3, 2)),
    (lambda: layers.Conv2DTranspose(2, 3, strides=2, output_padding=1,
                                    data_format="channels_first"), (2, 4, 3)),
    (lambda: layers.DepthwiseConv2D(3, depth_multiplier=2), (5, 5, 2)),
    (lambda: layers.SeparableConv2D(3, 2, padding="same"), (5, 4, 2)),
])
def test_tf_function_with_unknown_batch(make, shape):
    ref.check_unknown_batch(make(), shape, RNG)


def _call_twice(layer, first, second):
    layer(first)
    layer(second)


ONES4 = np.ones((2, 5, 5, 3), np.float32)
ERRORS = {
    "conv2d_rank3": lambda: layers.Conv2D(2, 3)(np.ones((2, 5, 5), np.float32)),
    "conv2d_rank5": lambda: layers.Conv2D(2, 3)(np.ones((2, 5, 5, 3, 1), np.float32)),
    "conv2d_bad_padding": lambda: layers.Conv2D(2, 3, padding="full"),
    "conv2d_causal": lambda: layers.Conv2D(2, 3, padding="causal"),
    "conv1d_bad_padding": lambda: layers.Conv1D(2, 3, padding="full"),
    "conv2d_bad_data_format": lambda: layers.Conv2D(2, 3, data_format="nhwc"),
    "conv2d_kernel_too_big": lambda: layers.Conv2D(4, 3)(np.ones((2, 2, 2, 3), np.float32)),
    "conv1d_kernel_too_big": lambda: layers.Conv1D(4, 3, dilation_rate=2)(
        np.ones((2, 4, 3), np.float32)),
    "conv2d_kernel_size_length": lambda: layers.Conv2D(4, (3, 3, 3)),
    "conv2d_kernel_size_zero": lambda: layers.Conv2D(4, 0),
    "conv2d_filters_zero": lambda: layers.Conv2D(0, 3),
    "conv2d_groups_filters": lambda: layers.Conv2D(4, 3, groups=3),
    "conv2d_groups_channels": lambda: layers.Conv2D(4, 3, groups=2)(ONES4),
    "conv2d_strides_and_dilation": lambda: layers.Conv2D(4, 3, strides=2, dilation_rate=2),
    "conv2d_channel_mismatch": lambda: _call_twice(layers.Conv2D(2, 3, name="mismatch"),
                                                   ONES4, np.ones((1, 5, 5, 4), np.float32)),
    "depthwise_rank3": lambda: layers.DepthwiseConv2D(3)(np.ones((2, 5, 5), np.float32)),
    "depthwise_kernel_too_big": lambda: layers.DepthwiseConv2D(3)(
        np.ones((2, 2, 2, 3), np.float32)),
    "depthwise_multiplier_zero": lambda: layers.DepthwiseConv2D(3, depth_multiplier=0),
    "separable_kernel_too_big": lambda: layers.SeparableConv2D(2, 3)(
        np.ones((2, 2, 2, 3), np.float32)),
    "transpose_output_padding": lambda: layers.Conv2DTranspose(2, 3, strides=2,
                                                               output_padding=2),
    "transpose_causal": lambda: layers.Conv2DTranspose(2, 3, padding="causal"),
}


@pytest.mark.parametrize("label", sorted(ERRORS))
def test_errors_match_keras(label):
    ref.check_error(label, ERRORS[label])


def test_unknown_channels_and_unsupported_arguments():
    with pytest.raises(ValueError, match="channel dimension of the inputs to Conv2D should "
                                         "be defined"):
        layers.Conv2D(2, 3).build((None, 5, 5, None))
    with pytest.raises(NotImplementedError, match="lora_rank"):
        layers.Conv2D(2, 3, lora_rank=2)


def test_channels_first_bias_on_the_channel_axis():
    """(1, 3, 3, 3) outputs: every axis but the batch is 3 wide. Keras' TF backend adds the
    bias on the last axis there (its ops.add turns the add into BiasAdd by the last dim);
    the bias belongs to the channels."""
    layer = layers.Conv2D(3, 2, strides=2, padding="same", data_format="channels_first",
                          bias_initializer="random_normal", dtype="float64")
    x = _input((1, 2, 5, 5))
    kernel, bias = (layer(x), layer.get_weights())[1]
    want = ref.conv(x, kernel, 2, "same", data_format="channels_first") + bias[:, None, None]
    np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-10, atol=1e-10)


def test_regularization_losses():
    layer = layers.Conv2D(2, 2, kernel_regularizer=tf.keras.regularizers.L2(0.1),
                          activity_regularizer="l1", dtype="float64")
    x = _input((3, 4, 4, 2))
    y = layer(x).numpy()
    activity_loss, kernel_loss = (loss.numpy() for loss in layer.losses)  # Keras' order
    np.testing.assert_allclose(kernel_loss, 0.1 * np.sum(layer.kernel.numpy() ** 2),
                               rtol=1e-10)
    np.testing.assert_allclose(activity_loss, 0.01 * np.abs(y).sum() / 3, rtol=1e-10)


def test_mixed_precision():
    x = _input((2, 6, 5, 3)).astype(np.float32)
    for make in (lambda **kw: layers.Conv2D(4, 3, padding="same", **kw),
                 lambda **kw: layers.Conv2DTranspose(2, 3, strides=2, **kw),
                 lambda **kw: layers.SeparableConv2D(3, 2, **kw)):
        mixed, full = make(dtype="mixed_float16"), make()
        y = mixed(x)
        full(x)
        full.set_weights(mixed.get_weights())
        assert y.dtype == tf.float16 and all(w.dtype == tf.float32 for w in mixed.weights)
        np.testing.assert_allclose(y.numpy(), full(x).numpy(), rtol=2e-2, atol=2e-2)
