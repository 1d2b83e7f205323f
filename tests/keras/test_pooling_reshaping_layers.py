"""Pooling (Max/AveragePooling1D/2D, Global*Pooling1D/2D) and reshaping layers (Reshape,
Permute, UpSampling2D, ZeroPadding2D, Cropping2D, RepeatVector): NumPy float64 references for
each padding / stride / data_format combination below (with compute_output_shape),
finite-difference gradients, Keras 3's configs, outputs and errors
(tests/fixtures/keras_conv_layers), tf.function with an unknown batch dimension."""

import itertools

import numpy as np
import pytest

import ndflow as tf
from tests.keras import conv_references as ref

layers = tf.keras.layers
RNG = np.random.default_rng(9)
CLASSES = ("MaxPooling1D", "MaxPooling2D", "AveragePooling1D", "AveragePooling2D",
           "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D",
           "GlobalMaxPooling2D", "Reshape", "Permute", "UpSampling2D", "ZeroPadding2D",
           "Cropping2D", "RepeatVector")


@pytest.mark.parametrize("case", [c for c, s in ref.FIXTURE["cases"].items()
                                  if s["class"] in CLASSES])
def test_matches_keras_fixture(case):
    ref.check_fixture_case(case)


def _run(layer, x):
    y = layer(x)
    assert tuple(y.shape.as_list()) == tuple(layer.compute_output_shape(x.shape))
    return y.numpy()


def _cf(shape, data_format):
    return (shape[0], shape[-1], *shape[1:-1]) if data_format == "channels_first" else shape


FORMATS = ("channels_last", "channels_first")


def _product(*args):
    return list(itertools.product(*args))


@pytest.mark.parametrize("mode,pool_size,strides,padding,data_format", _product(
    ("max", "average"), ((2, 2), (3, 2)), (None, 1, (2, 3)), ("valid", "same"), FORMATS))
def test_pooling2d_matches_numpy(mode, pool_size, strides, padding, data_format):
    cls = layers.MaxPooling2D if mode == "max" else layers.AveragePooling2D
    layer = cls(pool_size, strides, padding, data_format, dtype="float64")
    assert layer.strides == (pool_size if strides is None else
                             strides if isinstance(strides, tuple) else (strides, strides))
    x = RNG.normal(size=_cf((2, 7, 8, 3), data_format))
    np.testing.assert_allclose(_run(layer, x), ref.pool(x, pool_size, layer.strides, padding,
                                                        mode, data_format), rtol=1e-12)


@pytest.mark.parametrize("mode,pool_size,strides,padding,data_format", _product(
    ("max", "average"), (2, 3), (None, 2), ("valid", "same"), FORMATS))
def test_pooling1d_matches_numpy(mode, pool_size, strides, padding, data_format):
    cls = layers.MaxPooling1D if mode == "max" else layers.AveragePooling1D
    layer = cls(pool_size, strides, padding, data_format, dtype="float64")
    x = RNG.normal(size=_cf((2, 9, 3), data_format))
    np.testing.assert_allclose(_run(layer, x), ref.pool(x, (pool_size,), layer.strides,
                                                        padding, mode, data_format),
                               rtol=1e-12)


def test_pooling_defaults_and_padding_case():
    assert layers.MaxPooling2D().pool_size == (2, 2) == layers.MaxPooling2D().strides
    with pytest.raises(TypeError, match="pool_size"):   # Keras 3: only max pools default it
        layers.AveragePooling1D()
    assert layers.MaxPooling1D().pool_size == (2,)
    assert layers.MaxPooling2D(3, strides=1).strides == (1, 1)
    upper = layers.MaxPooling2D(3, 1, padding="SAME")  # Keras keeps the case it was given
    assert upper.get_config()["padding"] == "SAME"
    assert upper(np.ones((1, 4, 4, 1), np.float32)).shape.as_list() == [1, 4, 4, 1]
    assert upper.compute_output_shape((None, 4, 4, 1)) == (None, 4, 4, 1)
    assert layers.MaxPooling2D().built and layers.GlobalMaxPooling1D().built


@pytest.mark.parametrize("cls,rank,data_format,keepdims", _product(
    ("GlobalAveragePooling", "GlobalMaxPooling"), (1, 2), FORMATS, (False, True)))
def test_global_pooling_matches_numpy(cls, rank, data_format, keepdims):
    layer = getattr(layers, f"{cls}{rank}D")(data_format=data_format, keepdims=keepdims,
                                             dtype="float64")
    x = RNG.normal(size=_cf((2, 5, 4, 3)[:rank + 1] + (3,), data_format))
    axes = tuple(range(1, rank + 1)) if data_format == "channels_last" else \
        tuple(range(2, rank + 2))
    reduce = np.mean if "Average" in cls else np.max
    np.testing.assert_allclose(_run(layer, x), reduce(x, axis=axes, keepdims=keepdims),
                               rtol=1e-12)


@pytest.mark.parametrize("data_format", FORMATS)
def test_global_average_pooling1d_mask(data_format):
    x = RNG.normal(size=_cf((3, 5, 2), data_format))
    mask = np.array([[1, 1, 0, 0, 0], [1, 1, 1, 1, 1], [1, 0, 1, 0, 1]], bool)
    layer = layers.GlobalAveragePooling1D(data_format=data_format, dtype="float64")
    steps = ref.to_last(x, data_format)
    want = (steps * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    np.testing.assert_allclose(layer(x, mask=mask).numpy(), want, rtol=1e-12)
    masked = tf.constant(x)
    masked._keras_mask = tf.constant(mask)  # a mask carried by the input is used too
    out = layer(masked)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)
    assert getattr(out, "_keras_mask", None) is None  # and not passed on


@pytest.mark.parametrize("target,input_shape", [
    ((-1, 2), (2, 3, 4)), ((4, -1), (2, 12)), ((3, 2, 2), (2, 12)), ((12,), (2, 3, 4))])
def test_reshape_matches_numpy(target, input_shape):
    x = RNG.normal(size=input_shape)
    y = _run(layers.Reshape(target, dtype="float64"), x)
    np.testing.assert_array_equal(y, x.reshape((input_shape[0], *target)))


@pytest.mark.parametrize("dims", [(1,), (2, 1), (3, 1, 2), (2, 3, 1)])
def test_permute_matches_numpy(dims):
    x = RNG.normal(size=(2, 3, 4, 5)[:len(dims) + 1])
    np.testing.assert_array_equal(_run(layers.Permute(dims, dtype="float64"), x),
                                  np.transpose(x, (0, *dims)))


@pytest.mark.parametrize("size,interpolation,data_format", _product(
    ((2, 2), (1, 3), (3, 2)), ("nearest", "bilinear"), FORMATS))
def test_upsampling2d_matches_numpy(size, interpolation, data_format):
    layer = layers.UpSampling2D(size, data_format, interpolation, dtype="float64")
    x = RNG.normal(size=_cf((2, 3, 4, 2), data_format))
    if interpolation == "nearest":
        axes = (1, 2) if data_format == "channels_last" else (2, 3)
        want = np.repeat(np.repeat(x, size[0], axes[0]), size[1], axes[1])
    else:
        want = ref.bilinear_upsample(x, size, data_format)
    np.testing.assert_allclose(_run(layer, x), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("padding,data_format", _product(
    (1, (2, 0), ((1, 2), (0, 3))), FORMATS))
def test_zero_padding2d_matches_numpy(padding, data_format):
    layer = layers.ZeroPadding2D(padding, data_format, dtype="float64")
    pairs = layer.padding
    x = RNG.normal(size=_cf((2, 3, 4, 2), data_format))
    spatial = [(0, 0), *pairs, (0, 0)] if data_format == "channels_last" else \
        [(0, 0), (0, 0), *pairs]
    np.testing.assert_array_equal(_run(layer, x), np.pad(x, spatial))


@pytest.mark.parametrize("cropping,data_format", _product(
    (0, 1, (2, 0), ((1, 0), (0, 2)), ((0, 1), (2, 1))), FORMATS))
def test_cropping2d_matches_numpy(cropping, data_format):
    layer = layers.Cropping2D(cropping, data_format, dtype="float64")
    (top, bottom), (left, right) = layer.cropping
    x = RNG.normal(size=_cf((2, 5, 6, 2), data_format))
    rows, cols = slice(top, x.shape[1 if data_format == "channels_last" else 2] - bottom), \
        slice(left, x.shape[2 if data_format == "channels_last" else 3] - right)
    want = x[:, rows, cols] if data_format == "channels_last" else x[:, :, rows, cols]
    np.testing.assert_array_equal(_run(layer, x), want)


def test_repeat_vector_matches_numpy():
    x = RNG.normal(size=(3, 4))
    np.testing.assert_array_equal(_run(layers.RepeatVector(5, dtype="float64"), x),
                                  np.repeat(x[:, None], 5, axis=1))


@pytest.mark.parametrize("make,shape", [
    (lambda: layers.MaxPooling2D(2, 1, "same", dtype="float64"), (1, 3, 3, 2)),
    (lambda: layers.AveragePooling2D(2, padding="same", data_format="channels_first",
                                     dtype="float64"), (1, 2, 3, 3)),
    (lambda: layers.AveragePooling1D(3, 1, "same", dtype="float64"), (1, 5, 2)),
    (lambda: layers.GlobalMaxPooling2D(dtype="float64"), (1, 3, 2, 2)),
    (lambda: layers.UpSampling2D((2, 3), interpolation="bilinear", dtype="float64"),
     (1, 3, 2, 2)),
    (lambda: layers.Cropping2D(((1, 0), (0, 1)), dtype="float64"), (1, 3, 3, 2)),
], ids=["max_pool", "avg_pool_cf", "avg_pool1d", "global_max", "bilinear", "cropping"])
def test_gradients_match_finite_differences(make, shape):
    ref.check_gradients(make(), RNG.normal(size=shape), RNG)


@pytest.mark.parametrize("make,shape", [
    (lambda: layers.MaxPooling2D(3, 2, "same"), (5, 6, 2)),
    (lambda: layers.AveragePooling1D(2, data_format="channels_first"), (2, 6)),
    (lambda: layers.GlobalAveragePooling2D(keepdims=True), (4, 3, 2)),
    (lambda: layers.GlobalMaxPooling1D(), (4, 3)),
    (lambda: layers.Reshape((-1, 4)), (3, 4, 2)),
    (lambda: layers.Permute((2, 3, 1)), (3, 4, 2)),
    (lambda: layers.UpSampling2D(2, interpolation="bilinear"), (3, 4, 2)),
    (lambda: layers.UpSampling2D((1, 3), data_format="channels_first"), (2, 3, 4)),
    (lambda: layers.ZeroPadding2D(((1, 0), (2, 1))), (3, 4, 2)),
    (lambda: layers.Cropping2D(((1, 0), (0, 2)), data_format="channels_first"), (2, 4, 5)),
    (lambda: layers.RepeatVector(3), (4,)),
    (lambda: layers.MaxPooling1D(3, padding="same"), (7, 2)),
    (lambda: layers.AveragePooling2D((2, 2), data_format="channels_first"), (2, 5, 4)),
    (lambda: layers.GlobalAveragePooling1D(keepdims=True), (4, 3)),
    (lambda: layers.GlobalMaxPooling2D(data_format="channels_first"), (2, 4, 3)),
], ids=["max_pool", "avg_pool1d_cf", "global_avg", "global_max1d", "reshape", "permute",
        "bilinear", "nearest_cf", "zero_padding", "cropping_cf", "repeat_vector",
        "max_pool1d", "avg_pool_cf", "global_avg1d", "global_max_cf"])
def test_tf_function_with_unknown_batch(make, shape):
    ref.check_unknown_batch(make(), shape, RNG)


def test_unknown_spatial_dims_in_tf_function():
    x = RNG.normal(size=(2, 3, 4, 2)).astype(np.float32)
    for layer in (layers.UpSampling2D(2, interpolation="bilinear"), layers.UpSampling2D(3),
                  layers.Cropping2D(1), layers.Reshape((-1,))):
        run = tf.function(layer, input_signature=[tf.TensorSpec([None, None, None, 2],
                                                                tf.float32)])
        np.testing.assert_allclose(run(x).numpy(), layer(x).numpy(), rtol=1e-6)


ERRORS = {
    "max_pool2d_rank3": lambda: layers.MaxPooling2D()(np.ones((2, 5, 5), np.float32)),
    "pool_size_zero": lambda: layers.MaxPooling2D(0),
    "max_pool_output_shape_too_big": lambda: layers.MaxPooling2D(3).compute_output_shape(
        (1, 2, 2, 1)),
    "global_avg_pool1d_rank4": lambda: layers.GlobalAveragePooling1D()(
        np.ones((1, 2, 2, 1), np.float32)),
    "reshape_size": lambda: layers.Reshape((7,))(np.ones((2, 6), np.float32)),
    "reshape_two_unknown": lambda: layers.Reshape((-1, -1)),
    "reshape_not_divisible": lambda: layers.Reshape((-1, 4))(np.ones((2, 6), np.float32)),
    "permute_dims": lambda: layers.Permute((0, 1)),
    "permute_rank": lambda: layers.Permute((2, 1))(np.ones((2, 3, 4, 5), np.float32)),
    "repeat_vector_rank": lambda: layers.RepeatVector(3)(np.ones((2, 5, 5), np.float32)),
    "repeat_vector_zero": lambda: layers.RepeatVector(0),
    "repeat_vector_float": lambda: layers.RepeatVector(2.0),
    "cropping_too_big": lambda: layers.Cropping2D(3)(np.ones((1, 5, 5, 1), np.float32)),
    "cropping_negative": lambda: layers.Cropping2D(-1),
    "cropping_three": lambda: layers.Cropping2D((1, 2, 3)),
    "zero_padding_three": lambda: layers.ZeroPadding2D((1, 2, 3)),
    "upsampling_interpolation": lambda: layers.UpSampling2D(interpolation="cubic")(
        np.ones((1, 2, 2, 1), np.float32)),
}


@pytest.mark.parametrize("label", sorted(ERRORS))
def test_errors_match_keras(label):
    ref.check_error(label, ERRORS[label])


def test_reshaping_compute_output_shape_with_unknown_dims():
    assert layers.Reshape((-1, 2)).compute_output_shape((None, None, 4)) == (None, None, 2)
    assert layers.Reshape((-1, 2)).compute_output_shape((None, 3, 4)) == (None, 6, 2)
    assert layers.Cropping2D(1).compute_output_shape((None, None, 5, 2)) == (None, None, 3, 2)
    assert layers.ZeroPadding2D(1).compute_output_shape((None, None, 5, 2)) == \
        (None, None, 7, 2)
    assert layers.UpSampling2D(2).compute_output_shape((None, None, 5, 2)) == \
        (None, None, 10, 2)
    with pytest.raises(ValueError, match="should be smaller than the corresponding spatial "
                                         r"dimension of the input. Received: input_shape="):
        layers.Cropping2D(((2, 3), (0, 0))).compute_output_shape((None, 5, 5, 1))
    with pytest.raises(NotImplementedError, match="bicubic"):
        layers.UpSampling2D(interpolation="bicubic")(np.ones((1, 2, 2, 1), np.float32))
