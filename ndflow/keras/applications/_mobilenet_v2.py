"""`tf.keras.applications.MobileNetV2` (Sandler et al. 2018): inverted residual blocks with
linear bottlenecks, layer for layer as Keras 3.15 builds it (its names, so Keras' ImageNet
weight files load by order and name), `alpha` widening every block's channels."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras import backend_functions, layers
from ndflow.keras.applications import _imagenet_utils as utils

BASE_WEIGHT_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet_v2/"
# (expansion, output filters, stride) of blocks 0..16
_BLOCKS = [(1, 16, 1), (6, 24, 2), (6, 24, 1), (6, 32, 2), (6, 32, 1), (6, 32, 1),
           (6, 64, 2), (6, 64, 1), (6, 64, 1), (6, 64, 1), (6, 96, 1), (6, 96, 1), (6, 96, 1),
           (6, 160, 2), (6, 160, 1), (6, 160, 1), (6, 320, 1)]
_SIZES = (96, 128, 160, 192, 224)


def _make_divisible(v, divisor=8, min_value=None):
    """`v` rounded to a multiple of `divisor`, never more than 10% down."""
    min_value = divisor if min_value is None else min_value
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _bn(name):
    axis = 1 if backend_functions.image_data_format() == "channels_first" else -1
    return layers.BatchNormalization(axis=axis, epsilon=1e-3, momentum=0.999, name=name)


def _inverted_res_block(inputs, expansion, stride, alpha, filters, block_id):
    axis = 1 if backend_functions.image_data_format() == "channels_first" else -1
    in_channels = inputs.shape[axis]
    out_channels = _make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = f"block_{block_id}_" if block_id else "expanded_conv_"
    if block_id:   # expand with a pointwise convolution
        x = layers.Conv2D(expansion * in_channels, kernel_size=1, padding="same",
                          use_bias=False, activation=None, name=f"{prefix}expand")(x)
        x = _bn(f"{prefix}expand_BN")(x)
        x = layers.ReLU(6.0, name=f"{prefix}expand_relu")(x)
    if stride == 2:
        x = layers.ZeroPadding2D(padding=utils.correct_pad(x, 3), name=f"{prefix}pad")(x)
    x = layers.DepthwiseConv2D(kernel_size=3, strides=stride, activation=None, use_bias=False,
                               padding="same" if stride == 1 else "valid",
                               name=f"{prefix}depthwise")(x)
    x = _bn(f"{prefix}depthwise_BN")(x)
    x = layers.ReLU(6.0, name=f"{prefix}depthwise_relu")(x)
    x = layers.Conv2D(out_channels, kernel_size=1, padding="same", use_bias=False,
                      activation=None, name=f"{prefix}project")(x)
    x = _bn(f"{prefix}project_BN")(x)
    if in_channels == out_channels and stride == 1:
        return layers.Add(name=f"{prefix}add")([inputs, x])
    return x


def _default_size(input_shape, input_tensor) -> int:
    first = backend_functions.image_data_format() == "channels_first"
    if input_shape is None and input_tensor is None:
        return 224
    shape = tuple(input_shape) if input_shape is not None else tuple(input_tensor.shape)[1:]
    rows, cols = (shape[1], shape[2]) if first else (shape[0], shape[1])
    return rows if rows == cols and rows in _SIZES else 224


@keras_export("keras.applications.mobilenet_v2.MobileNetV2",
              "keras.applications.MobileNetV2")
@utils.with_arguments
def MobileNetV2(input_shape=None, alpha=1.0, include_top=True, weights="imagenet",  # noqa: N802
                input_tensor=None, pooling=None, classes=1000,
                classifier_activation="softmax", name=None):
    """MobileNetV2 for ImageNet-sized images (min 32x32); `alpha` scales the widths."""
    utils.check_mobilenet_weights(weights, include_top, classes, v2_words=True)
    data_format = backend_functions.image_data_format()
    input_shape = utils.obtain_input_shape(input_shape, _default_size(input_shape, input_tensor),
                                           32, data_format, include_top, weights)
    rows, cols = (input_shape[1], input_shape[2]) if data_format == "channels_first" else \
        (input_shape[0], input_shape[1])
    if weights == "imagenet":
        if alpha not in [0.35, 0.50, 0.75, 1.0, 1.3, 1.4]:
            raise ValueError("If imagenet weights are being loaded, alpha must be one of "
                             f"`0.35`, `0.50`, `0.75`, `1.0`, `1.3` or `1.4` only; Received "
                             f"`alpha={alpha}`")
        rows = utils.weights_rows(rows, cols, _SIZES)
    img_input = utils.image_input(input_tensor, input_shape)
    x = layers.Conv2D(_make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2),
                      padding="same", use_bias=False, name="Conv1")(img_input)
    x = _bn("bn_Conv1")(x)
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    for block_id, (expansion, filters, stride) in enumerate(_BLOCKS):
        x = _inverted_res_block(x, expansion=expansion, stride=stride, alpha=alpha,
                                filters=filters, block_id=block_id)
    last = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = _bn("Conv_1_bn")(x)
    x = layers.ReLU(6.0, name="out_relu")(x)
    x = utils.classifier(x, include_top, pooling, classes, classifier_activation, weights,
                         pool_name=None)
    top = "" if include_top else "_no_top"
    file_name = f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_{rows}{top}.h5"
    return utils.imagenet_model(
        input_tensor, img_input, x,
        name if name is not None else f"mobilenetv2_{alpha:0.2f}_{rows}", weights, file_name,
        BASE_WEIGHT_PATH + file_name, None)


preprocess_input, decode_predictions = utils.family_functions("tf", ["mobilenet_v2"])
