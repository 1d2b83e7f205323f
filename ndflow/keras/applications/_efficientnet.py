"""`tf.keras.applications.EfficientNetB0`..`B7` (Tan & Le 2019): MBConv blocks (expansion,
depthwise convolution, squeeze-and-excitation, projection, drop-connect on the residual),
widths and depths scaled per variant; the input is rescaled and normalized inside the model
(`preprocess_input` passes through). Keras 3.15's layer names and ImageNet weight files."""

from __future__ import annotations

import math

from ndflow.core.api_export import keras_export
from ndflow.keras import backend_functions, layers
from ndflow.keras.applications import _imagenet_utils as utils

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/keras-applications/"
WEIGHTS_HASHES = {
    "b0": ("902e53a9f72be733fc0bcb005b3ebbac", "50bc09e76180e00e4465e1a485ddc09d"),
    "b1": ("1d254153d4ab51201f1646940f018540", "74c4e6b3e1f6a1eea24c589628592432"),
    "b2": ("b15cce36ff4dcbd00b6dd88e7857a6ad", "111f8e2ac8aa800a7a99e3239f7bfb39"),
    "b3": ("ffd1fdc53d0ce67064dc6a9c7960ede0", "af6d107764bb5b1abb91932881670226"),
    "b4": ("18c95ad55216b8f92d7e70b3a046e2fc", "ebc24e6d6c33eaebbd558eafbeedf1ba"),
    "b5": ("ace28f2a6363774853a83a0b21b9421a", "38879255a25d3c92d5e44e04ae6cec6f"),
    "b6": ("165f6e37dce68623721b423839de8be5", "9ecce42647a20130c1f39a5d4cb75743"),
    "b7": ("8c03f828fec3ef71311cd463b6759d99", "cbcfe4450ddf6f3ad90b1b398090fe4a"),
}
# (kernel, repeats, filters in, filters out, expansion, stride) of the 7 stages; SE ratio 0.25
_STAGES = [(3, 1, 32, 16, 1, 1), (3, 2, 16, 24, 6, 2), (5, 2, 24, 40, 6, 2),
           (3, 3, 40, 80, 6, 2), (5, 3, 80, 112, 6, 1), (5, 4, 112, 192, 6, 2),
           (3, 1, 192, 320, 6, 1)]
# variant -> (width, depth, default size, dropout)
_VARIANTS = {"b0": (1.0, 1.0, 224, 0.2), "b1": (1.0, 1.1, 240, 0.2), "b2": (1.1, 1.2, 260, 0.3),
             "b3": (1.2, 1.4, 300, 0.3), "b4": (1.4, 1.8, 380, 0.4), "b5": (1.6, 2.2, 456, 0.4),
             "b6": (1.8, 2.6, 528, 0.5), "b7": (2.0, 3.1, 600, 0.5)}
CONV_KERNEL_INITIALIZER = {"class_name": "VarianceScaling", "config": {
    "scale": 2.0, "mode": "fan_out", "distribution": "truncated_normal"}}
DENSE_KERNEL_INITIALIZER = {"class_name": "VarianceScaling", "config": {
    "scale": 1.0 / 3.0, "mode": "fan_out", "distribution": "uniform"}}
IMAGENET_STDDEV_RGB = [0.229, 0.224, 0.225]


def _axis():
    return 3 if backend_functions.image_data_format() == "channels_last" else 1


def _conv_bn_act(x, filters, name, activation):
    x = layers.Conv2D(filters, 1, padding="same", use_bias=False,
                      kernel_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}_conv")(x)
    x = layers.BatchNormalization(axis=_axis(), name=f"{name}_bn")(x)
    return layers.Activation(activation, name=f"{name}_activation")(x) if activation else x


def _block(inputs, activation, drop_rate, name, filters_in, filters_out, kernel_size, strides,
           expand_ratio, se_ratio=0.25):
    """One MBConv block."""
    filters = filters_in * expand_ratio
    x = _conv_bn_act(inputs, filters, f"{name}expand", activation) if expand_ratio != 1 \
        else inputs
    if strides == 2:
        x = layers.ZeroPadding2D(padding=utils.correct_pad(x, kernel_size),
                                 name=f"{name}dwconv_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=strides,
                               padding="valid" if strides == 2 else "same", use_bias=False,
                               depthwise_initializer=CONV_KERNEL_INITIALIZER,
                               name=f"{name}dwconv")(x)
    x = layers.BatchNormalization(axis=_axis(), name=f"{name}bn")(x)
    x = layers.Activation(activation, name=f"{name}activation")(x)
    se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
    se = layers.Reshape((1, 1, filters) if _axis() == 3 else (filters, 1, 1),
                        name=f"{name}se_reshape")(se)
    se = layers.Conv2D(max(1, int(filters_in * se_ratio)), 1, padding="same",
                       activation=activation, kernel_initializer=CONV_KERNEL_INITIALIZER,
                       name=f"{name}se_reduce")(se)
    se = layers.Conv2D(filters, 1, padding="same", activation="sigmoid",
                       kernel_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}se_expand")(se)
    x = layers.multiply([x, se], name=f"{name}se_excite")
    x = layers.Conv2D(filters_out, 1, padding="same", use_bias=False,
                      kernel_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}project_conv")(x)
    x = layers.BatchNormalization(axis=_axis(), name=f"{name}project_bn")(x)
    if strides == 1 and filters_in == filters_out:
        if drop_rate > 0:   # drop-connect: whole samples
            x = layers.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def _efficientnet(variant, include_top, weights, input_tensor, input_shape, pooling, classes,
                  classifier_activation, name, drop_connect_rate=0.2, divisor=8,
                  activation="swish"):
    width, depth, default_size, dropout_rate = _VARIANTS[variant]
    utils.check_weights(weights, include_top, classes)
    _, img_input = utils.model_input(input_tensor, input_shape, default_size, 32, include_top,
                                     weights)

    def round_filters(filters):
        filters *= width
        new = max(divisor, int(filters + divisor / 2) // divisor * divisor)
        return int(new + divisor if new < 0.9 * filters else new)

    def round_repeats(repeats):
        return int(math.ceil(depth * repeats))

    x = layers.Rescaling(1.0 / 255.0)(img_input)
    x = layers.Normalization(axis=_axis())(x)
    if weights == "imagenet":   # the published weights' normalization divides by the std twice
        x = layers.Rescaling([1.0 / math.sqrt(s) for s in IMAGENET_STDDEV_RGB])(x)
    x = layers.ZeroPadding2D(padding=utils.correct_pad(x, 3), name="stem_conv_pad")(x)
    x = layers.Conv2D(round_filters(32), 3, strides=2, padding="valid", use_bias=False,
                      kernel_initializer=CONV_KERNEL_INITIALIZER, name="stem_conv")(x)
    x = layers.BatchNormalization(axis=_axis(), name="stem_bn")(x)
    x = layers.Activation(activation, name="stem_activation")(x)
    total = float(sum(round_repeats(stage[1]) for stage in _STAGES))
    b = 0
    for i, (kernel, repeats, f_in, f_out, expand, stride) in enumerate(_STAGES):
        f_in, f_out = round_filters(f_in), round_filters(f_out)
        for j in range(round_repeats(repeats)):
            x = _block(x, activation, drop_connect_rate * b / total, f"block{i + 1}{chr(j + 97)}_",
                       f_in if j == 0 else f_out, f_out, kernel, stride if j == 0 else 1, expand)
            b += 1
    x = _conv_bn_act(x, round_filters(1280), "top", activation)
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate, name="top_dropout")(x)
        utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation,
                         kernel_initializer=DENSE_KERNEL_INITIALIZER, name="predictions")(x)
    else:
        x = utils.top_pooling(x, pooling, include_top, names=("avg_pool", "max_pool"))
    file_name = name + (".h5" if include_top else "_notop.h5")
    return utils.imagenet_model(input_tensor, img_input, x, name, weights, file_name,
                                BASE_WEIGHTS_PATH + file_name,
                                WEIGHTS_HASHES[variant][0 if include_top else 1])


def _builder(variant):
    public = f"EfficientNet{variant.upper()}"
    width, depth, size, _ = _VARIANTS[variant]
    builder = utils.standard_builder(
        _efficientnet, variant, public,
        f"{public}: width x{width}, depth x{depth}, {size}x{size} images.",
        default_name=f"efficientnet{variant}")
    return keras_export(f"keras.applications.efficientnet.{public}",
                        f"keras.applications.{public}")(builder)


EfficientNetB0, EfficientNetB1, EfficientNetB2, EfficientNetB3 = (
    _builder(v) for v in ("b0", "b1", "b2", "b3"))
EfficientNetB4, EfficientNetB5, EfficientNetB6, EfficientNetB7 = (
    _builder(v) for v in ("b4", "b5", "b6", "b7"))


preprocess_input, decode_predictions = utils.family_functions(
    None, ["efficientnet"],
    "A pass-through: EfficientNet models rescale and normalize their [0, 255] inputs.")
