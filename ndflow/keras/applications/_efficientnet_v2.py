"""`tf.keras.applications.EfficientNetV2B0`..`B3`, `S`, `M`, `L` (Tan & Le 2021): fused MBConv
blocks (one full convolution in place of expansion and depthwise) in the early stages, MBConv
blocks with squeeze-and-excitation after, widths and depths scaled per variant; the input is
rescaled inside the model (`preprocess_input` passes through). Keras 3.15's layer names,
order and ImageNet weight files."""

from __future__ import annotations

import math
import os

from ndflow.core.api_export import keras_export
from ndflow.keras import backend_functions, layers
from ndflow.keras.applications import _imagenet_utils as utils
from ndflow.keras.applications._efficientnet import (
    CONV_KERNEL_INITIALIZER,
    DENSE_KERNEL_INITIALIZER,
)
from ndflow.ops import init_ops

BASE_WEIGHTS_PATH = ("https://storage.googleapis.com/tensorflow/keras-applications/"
                     "efficientnet_v2/")
WEIGHTS_HASHES = {
    "b0": ("21ecbf6da12460d5c40bb2f29ceb2188", "893217f2bb855e2983157299931e43ff"),
    "b1": ("069f0534ff22adf035c89e2d9547a9dc", "0e80663031ca32d657f9caa404b6ec37"),
    "b2": ("424e49f28180edbde1e94797771950a7", "1dfe2e7a5d45b6632553a8961ea609eb"),
    "b3": ("1f1fc43bd98a6e4fd8fdfd551e02c7a0", "f6abf7b5849ac99a89b50dd3fd532856"),
    "-s": ("e1d88a8495beba45748fedd0cecbe016", "af0682fb74e8c54910f2d4393339c070"),
    "-m": ("a3bf6aa3276309f4fc6a34aa114c95cd", "1b8dc055df72dde80d614482840fe342"),
    "-l": ("27e6d408b53c7ebc868fefa357689935", "b0b66b5c863aef5b46e8608fe1711615"),
}
# The stages: (repeats, filters in, filters out, expansion, SE ratio, stride, fused); every
# kernel is 3x3.
_B = [(1, 32, 16, 1, 0, 1, True), (2, 16, 32, 4, 0, 2, True), (2, 32, 48, 4, 0, 2, True),
      (3, 48, 96, 4, 0.25, 2, False), (5, 96, 112, 6, 0.25, 1, False),
      (8, 112, 192, 6, 0.25, 2, False)]
_STAGES = {
    "b": _B,
    "s": [(2, 24, 24, 1, 0, 1, True), (4, 24, 48, 4, 0, 2, True), (4, 48, 64, 4, 0, 2, True),
          (6, 64, 128, 4, 0.25, 2, False), (9, 128, 160, 6, 0.25, 1, False),
          (15, 160, 256, 6, 0.25, 2, False)],
    "m": [(3, 24, 24, 1, 0, 1, True), (5, 24, 48, 4, 0, 2, True), (5, 48, 80, 4, 0, 2, True),
          (7, 80, 160, 4, 0.25, 2, False), (14, 160, 176, 6, 0.25, 1, False),
          (18, 176, 304, 6, 0.25, 2, False), (5, 304, 512, 6, 0.25, 1, False)],
    "l": [(4, 32, 32, 1, 0, 1, True), (7, 32, 64, 4, 0, 2, True), (7, 64, 96, 4, 0, 2, True),
          (10, 96, 192, 4, 0.25, 2, False), (19, 192, 224, 6, 0.25, 1, False),
          (25, 224, 384, 6, 0.25, 2, False), (7, 384, 640, 6, 0.25, 1, False)],
}
# variant -> (width, depth, default size, stages)
_VARIANTS = {"b0": (1.0, 1.0, 224, "b"), "b1": (1.0, 1.1, 240, "b"), "b2": (1.1, 1.2, 260, "b"),
             "b3": (1.2, 1.4, 300, "b"), "-s": (1.0, 1.0, 384, "s"),
             "-m": (1.0, 1.0, 480, "m"), "-l": (1.0, 1.0, 480, "l")}
_IMAGENET_MEAN = [0.485, 0.456, 0.406]
_IMAGENET_VARIANCE = [0.229 ** 2, 0.224 ** 2, 0.225 ** 2]


def _round_filters(filters, width, divisor=8, min_depth=8):
    filters *= width
    return int(max(min_depth or divisor, int(filters + divisor / 2) // divisor * divisor))


def _axis() -> int:
    return 3 if backend_functions.image_data_format() == "channels_last" else 1


def _bn(name, momentum):
    return layers.BatchNormalization(axis=_axis(), momentum=momentum, name=name)


def _conv(filters, kernel_size, name, strides=1, activation=None, use_bias=True):
    return layers.Conv2D(filters, kernel_size, strides=strides, padding="same",
                         activation=activation, use_bias=use_bias,
                         kernel_initializer=CONV_KERNEL_INITIALIZER, name=name)


def _squeeze_excite(x, filters, filters_in, ratio, activation, name):
    se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
    shape = (filters, 1, 1) if _axis() == 1 else (1, 1, filters)
    se = layers.Reshape(shape, name=f"{name}se_reshape")(se)
    se = _conv(max(1, int(filters_in * ratio)), 1, f"{name}se_reduce", activation=activation)(se)
    se = _conv(filters, 1, f"{name}se_expand", activation="sigmoid")(se)
    return layers.multiply([x, se], name=f"{name}se_excite")


def _block(inputs, fused, filters_in, filters_out, expand_ratio, se_ratio, strides, momentum,
           activation, survival, name):
    """One (fused) MBConv block; the residual with drop-connect when the shape is kept."""
    filters = filters_in * expand_ratio
    x = inputs
    if expand_ratio != 1:
        # a fused block expands with its one 3x3 convolution, strided; MBConv with a 1x1
        x = _conv(filters, 3 if fused else 1, f"{name}expand_conv",
                  strides=strides if fused else 1, use_bias=False)(x)
        x = layers.Activation(activation, name=f"{name}expand_activation")(
            _bn(f"{name}expand_bn", momentum)(x))
    if not fused:
        x = layers.DepthwiseConv2D(3, strides=strides, padding="same", use_bias=False,
                                   depthwise_initializer=CONV_KERNEL_INITIALIZER,
                                   name=f"{name}dwconv2")(x)
        x = layers.Activation(activation, name=f"{name}activation")(
            _bn(f"{name}bn", momentum)(x))
    if 0 < se_ratio <= 1:
        x = _squeeze_excite(x, filters, filters_in, se_ratio, activation, name)
    # a fused block without expansion does its 3x3 (strided) convolution here
    full = fused and expand_ratio == 1
    x = _conv(filters_out, 3 if full else 1, f"{name}project_conv",
              strides=strides if full else 1, use_bias=False)(x)
    x = _bn(f"{name}project_bn", momentum)(x)
    if full:
        x = layers.Activation(activation, name=f"{name}project_activation")(x)
    if strides == 1 and filters_in == filters_out:
        if survival:
            x = layers.Dropout(survival, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def _efficientnet_v2(variant, include_top, weights, input_tensor, input_shape, pooling,
                     classes, classifier_activation, include_preprocessing, name):
    width, depth, default_size, stages = _VARIANTS[variant]
    momentum, activation, drop_connect = 0.9, "swish", 0.2
    if not (weights in {"imagenet", None} or os.path.exists(str(weights))):
        raise ValueError("The `weights` argument should be either `None` (random "
                         "initialization), `imagenet` (pre-training on ImageNet), or the path "
                         f"to the weights file to be loaded.Received: weights={weights}")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError('If using `weights="imagenet"` with `include_top` as true, `classes` '
                         "should be 1000")
    input_shape, img_input = utils.model_input(input_tensor, input_shape, default_size, 32,
                                               include_top, weights)
    x = img_input
    if include_preprocessing:
        if name.split("-")[-1].startswith("b") and input_shape[_axis() - 1] == 3:
            x = layers.Rescaling(scale=1.0 / 255)(x)
            x = layers.Normalization(mean=_IMAGENET_MEAN, variance=_IMAGENET_VARIANCE,
                                     axis=_axis())(x)
        else:
            x = layers.Rescaling(scale=1.0 / 128.0, offset=-1)(x)
    blocks = _STAGES[stages]
    x = _conv(_round_filters(blocks[0][1], width), 3, "stem_conv", strides=2,
              use_bias=False)(x)
    x = layers.Activation(activation, name="stem_activation")(_bn("stem_bn", momentum)(x))
    total, b = float(sum(stage[0] for stage in blocks)), 0
    for i, (repeats, f_in, f_out, expand, se, stride, fused) in enumerate(blocks):
        f_in, f_out = _round_filters(f_in, width), _round_filters(f_out, width)
        for j in range(int(math.ceil(depth * repeats))):
            x = _block(x, fused, f_in if j == 0 else f_out, f_out, expand, se,
                       stride if j == 0 else 1, momentum, activation, drop_connect * b / total,
                       f"block{i + 1}{chr(j + 97)}_")
            b += 1
    x = _conv(_round_filters(1280, width), 1, "top_conv", use_bias=False)(x)
    x = layers.Activation(activation, name="top_activation")(_bn("top_bn", momentum)(x))
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        x = layers.Dropout(0.2, name="top_dropout")(x)
        utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation,
                         kernel_initializer=DENSE_KERNEL_INITIALIZER,
                         bias_initializer=init_ops.Constant(0.0), name="predictions")(x)
    else:
        x = utils.top_pooling(x, pooling, include_top, names=("avg_pool", "max_pool"))
    file_name = name + (".h5" if include_top else "_notop.h5")
    return utils.imagenet_model(input_tensor, img_input, x, name, weights, file_name,
                                BASE_WEIGHTS_PATH + file_name,
                                WEIGHTS_HASHES[variant][0 if include_top else 1])


def _builder(variant: str, public: str):
    default_name = "efficientnetv2" + (variant if variant.startswith("-") else f"-{variant}")

    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
              pooling=None, classes=1000, classifier_activation="softmax",
              include_preprocessing=True, name=default_name):
        return _efficientnet_v2(variant, include_top, weights, input_tensor, input_shape,
                                pooling, classes, classifier_activation, include_preprocessing,
                                name)
    build.__name__ = build.__qualname__ = public
    build.__doc__ = (f"{public}: images in [0, 255] (rescaled inside the model), "
                     f"{_VARIANTS[variant][2]}x{_VARIANTS[variant][2]} by default.")
    return keras_export(f"keras.applications.efficientnet_v2.{public}",
                        f"keras.applications.{public}")(utils.with_arguments(build))


EfficientNetV2B0 = _builder("b0", "EfficientNetV2B0")
EfficientNetV2B1 = _builder("b1", "EfficientNetV2B1")
EfficientNetV2B2 = _builder("b2", "EfficientNetV2B2")
EfficientNetV2B3 = _builder("b3", "EfficientNetV2B3")
EfficientNetV2S = _builder("-s", "EfficientNetV2S")
EfficientNetV2M = _builder("-m", "EfficientNetV2M")
EfficientNetV2L = _builder("-l", "EfficientNetV2L")


preprocess_input, decode_predictions = utils.family_functions(
    None, ["efficientnet_v2"],
    "The identity: EfficientNetV2 models rescale their [0, 255] inputs themselves.")
