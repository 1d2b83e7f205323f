"""`tf.keras.applications.InceptionV3` (Szegedy et al. 2015): the stem, then Inception
modules mixed0..mixed10 (parallel 1x1, factorized 5x5/7x7/3x3 and pooling branches,
concatenated), each convolution followed by an unscaled batch normalization and a ReLU.
Layers are created in Keras 3.15's order (its convolutions are unnamed, so their automatic
names follow that order) and the ImageNet weight files load. Preprocessing: "tf" mode;
images of at least 75x75 (299x299 by default)."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras import backend_functions, layers
from ndflow.keras.applications import _imagenet_utils as utils

_BASE = "https://storage.googleapis.com/tensorflow/keras-applications/inception_v3/"
_HASHES = ("9a0d58056eeedaa3f26cb7ebd46da564", "bcbd6486424b2319ff4ef7d526e38f63")


def _axis():
    return 1 if backend_functions.image_data_format() == "channels_first" else 3


def _conv(x, filters, rows, cols, padding="same", strides=(1, 1)):
    """Conv2D (no bias) -> BatchNormalization (no scale) -> ReLU, all automatically named."""
    x = layers.Conv2D(filters, (rows, cols), strides=strides, padding=padding,
                      use_bias=False)(x)
    x = layers.BatchNormalization(axis=_axis(), scale=False)(x)
    return layers.Activation("relu")(x)


def _chain(x, *specs):
    for spec in specs:
        x = _conv(x, *spec)
    return x


def _avg_branch(x, filters):
    return _conv(layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same")(x),
                 filters, 1, 1)


def _module_a(x, pool_filters, name):
    """mixed0-2: 1x1, 1x1 -> 5x5, 1x1 -> 3x3 -> 3x3, avg pool -> 1x1."""
    branches = [_conv(x, 64, 1, 1), _chain(x, (48, 1, 1), (64, 5, 5)),
                _chain(x, (64, 1, 1), (96, 3, 3), (96, 3, 3)), _avg_branch(x, pool_filters)]
    return layers.concatenate(branches, axis=_axis(), name=name)


def _module_c(x, width, name):
    """mixed4-7: 1x1, 1x1 -> 1x7 -> 7x1, 1x1 -> (7x1 -> 1x7) x 2, avg pool -> 1x1."""
    branches = [_conv(x, 192, 1, 1),
                _chain(x, (width, 1, 1), (width, 1, 7), (192, 7, 1)),
                _chain(x, (width, 1, 1), (width, 7, 1), (width, 1, 7), (width, 7, 1),
                       (192, 1, 7)),
                _avg_branch(x, 192)]
    return layers.concatenate(branches, axis=_axis(), name=name)


def _module_e(x, index):
    """mixed9-10: 1x1, 1x1 -> (1x3 | 3x1), 1x1 -> 3x3 -> (1x3 | 3x1), avg pool -> 1x1."""
    single = _conv(x, 320, 1, 1)
    narrow = _conv(x, 384, 1, 1)
    narrow = layers.concatenate([_conv(narrow, 384, 1, 3), _conv(narrow, 384, 3, 1)],
                                axis=_axis(), name=f"mixed9_{index}")
    wide = _chain(x, (448, 1, 1), (384, 3, 3))
    wide = layers.concatenate([_conv(wide, 384, 1, 3), _conv(wide, 384, 3, 1)], axis=_axis())
    return layers.concatenate([single, narrow, wide, _avg_branch(x, 192)], axis=_axis(),
                              name=f"mixed{9 + index}")


def _inception_v3(_, include_top, weights, input_tensor, input_shape, pooling, classes,
                  classifier_activation, name):
    utils.check_weights(weights, include_top, classes)
    _, img_input = utils.model_input(input_tensor, input_shape, 299, 75, include_top, weights)
    x = _chain(img_input, (32, 3, 3, "valid", (2, 2)), (32, 3, 3, "valid"), (64, 3, 3))
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = _chain(x, (80, 1, 1, "valid"), (192, 3, 3, "valid"))
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    for i, pool_filters in enumerate((32, 64, 64)):
        x = _module_a(x, pool_filters, f"mixed{i}")
    x = layers.concatenate(                                           # mixed3: grid reduction
        [_conv(x, 384, 3, 3, "valid", (2, 2)),
         _chain(x, (64, 1, 1), (96, 3, 3), (96, 3, 3, "valid", (2, 2))),
         layers.MaxPooling2D((3, 3), strides=(2, 2))(x)], axis=_axis(), name="mixed3")
    for i, width in enumerate((128, 160, 160, 192)):
        x = _module_c(x, width, f"mixed{4 + i}")
    x = layers.concatenate(                                           # mixed8: grid reduction
        [_chain(x, (192, 1, 1), (320, 3, 3, "valid", (2, 2))),
         _chain(x, (192, 1, 1), (192, 1, 7), (192, 7, 1), (192, 3, 3, "valid", (2, 2))),
         layers.MaxPooling2D((3, 3), strides=(2, 2))(x)], axis=_axis(), name="mixed8")
    for i in range(2):
        x = _module_e(x, i)
    x = utils.classifier(x, include_top, pooling, classes, classifier_activation, weights)
    return utils.kernels_model(input_tensor, img_input, x, name, weights, include_top,
                               "inception_v3", _BASE, _HASHES)


InceptionV3 = keras_export("keras.applications.inception_v3.InceptionV3",
                           "keras.applications.InceptionV3")(utils.standard_builder(
    _inception_v3, "inception_v3", "InceptionV3",
    "InceptionV3: 94 convolutions in the stem and 11 Inception modules."))


preprocess_input, decode_predictions = utils.family_functions("tf", ["inception_v3"])
