"""`tf.keras.applications.Xception` (Chollet 2017): depthwise-separable convolutions with
residual connections, entry/middle/exit flows, Keras 3.15's layer names (its projection
shortcuts and additions are unnamed, as in Keras) and ImageNet weight files. Preprocessing:
"tf" mode; images of at least 71x71 (299x299 by default)."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras import backend_functions, layers
from ndflow.keras.applications import _imagenet_utils as utils

_BASE = "https://storage.googleapis.com/tensorflow/keras-applications/xception/"
_HASHES = ("0a58e3b7378bc2990ea3b43d5981f1f6", "b0042744bf5b25fce3cb969f33bebb97")


def _axis():
    return 1 if backend_functions.image_data_format() == "channels_first" else -1


def _sepconv_bn(x, filters, name, relu_first=True, act_name=None):
    if relu_first:
        x = layers.Activation("relu", name=act_name or f"{name}_act")(x)
    x = layers.SeparableConv2D(filters, (3, 3), padding="same", use_bias=False, name=name)(x)
    return layers.BatchNormalization(axis=_axis(), name=f"{name}_bn")(x)


def _projection(x, filters):
    shortcut = layers.Conv2D(filters, (1, 1), strides=(2, 2), padding="same", use_bias=False)(x)
    return layers.BatchNormalization(axis=_axis())(shortcut)


def _entry_block(x, block, filters, first=False):
    """Two separable convolutions and a strided max pool, plus a projected shortcut."""
    shortcut = _projection(x, filters[-1])
    name = f"block{block}"
    if first:   # block 2 starts without a ReLU; its second ReLU is named after sepconv2
        x = layers.SeparableConv2D(filters[0], (3, 3), padding="same", use_bias=False,
                                   name=f"{name}_sepconv1")(x)
        x = layers.BatchNormalization(axis=_axis(), name=f"{name}_sepconv1_bn")(x)
    else:
        x = _sepconv_bn(x, filters[0], f"{name}_sepconv1")
    x = _sepconv_bn(x, filters[1], f"{name}_sepconv2")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name=f"{name}_pool")(x)
    return layers.add([x, shortcut])


def _xception(_, include_top, weights, input_tensor, input_shape, pooling, classes,
              classifier_activation, name):
    utils.check_weights(weights, include_top, classes)
    _, img_input = utils.model_input(input_tensor, input_shape, 299, 71, include_top, weights)
    x = img_input
    for i, (filters, strides) in enumerate(((32, (2, 2)), (64, (1, 1))), 1):
        x = layers.Conv2D(filters, (3, 3), strides=strides, use_bias=False,
                          name=f"block1_conv{i}")(x)
        x = layers.BatchNormalization(axis=_axis(), name=f"block1_conv{i}_bn")(x)
        x = layers.Activation("relu", name=f"block1_conv{i}_act")(x)
    x = _entry_block(x, 2, (128, 128), first=True)
    x = _entry_block(x, 3, (256, 256))
    x = _entry_block(x, 4, (728, 728))
    for i in range(8):                                     # the middle flow
        shortcut, prefix = x, f"block{i + 5}"
        for j in (1, 2, 3):
            x = _sepconv_bn(x, 728, f"{prefix}_sepconv{j}")
        x = layers.add([x, shortcut])
    x = _entry_block(x, 13, (728, 1024))
    for j, filters in ((1, 1536), (2, 2048)):             # the exit flow
        x = layers.SeparableConv2D(filters, (3, 3), padding="same", use_bias=False,
                                   name=f"block14_sepconv{j}")(x)
        x = layers.BatchNormalization(axis=_axis(), name=f"block14_sepconv{j}_bn")(x)
        x = layers.Activation("relu", name=f"block14_sepconv{j}_act")(x)
    x = utils.classifier(x, include_top, pooling, classes, classifier_activation, weights)
    return utils.kernels_model(input_tensor, img_input, x, name, weights, include_top,
                               "xception", _BASE, _HASHES)


Xception = keras_export("keras.applications.xception.Xception",
                        "keras.applications.Xception")(utils.standard_builder(
    _xception, "xception", "Xception", "Xception: 36 convolutions in 14 residual blocks."))


preprocess_input, decode_predictions = utils.family_functions("tf", ["xception"])
