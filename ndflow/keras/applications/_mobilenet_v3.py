"""`tf.keras.applications.MobileNetV3Small` / `MobileNetV3Large` (Howard et al. 2019):
inverted residual blocks with squeeze-and-excitation and hard-swish, layer for layer as Keras
3.15 builds them (names, order, the Rescaling of [0, 255] inputs inside the model), so
Keras' ImageNet weight files load by order and name. `alpha` scales every block's width,
`minimalistic` drops the 5x5 kernels, squeeze-and-excitation and hard-swish."""

from __future__ import annotations

import warnings

from ndflow.core.api_export import keras_export
from ndflow.keras import backend_functions, layers
from ndflow.keras.applications import _imagenet_utils as utils
from ndflow.keras.keras_tensor import KerasTensor

BASE_WEIGHT_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet_v3/"
# the MD5 sums of Keras' weight files (with top, without): model name -> (top, no top)
WEIGHTS_HASHES = {
    "large_224_0.75_float": ("765b44a33ad4005b3ac83185abf1d0eb",
                             "40af19a13ebea4e2ee0c676887f69a2e"),
    "large_224_1.0_float": ("59e551e166be033d707958cf9e29a6a7",
                            "07fb09a5933dd0c8eaafa16978110389"),
    "large_minimalistic_224_1.0_float": ("675e7b876c45c57e9e63e6d90a36599c",
                                         "ec5221f64a2f6d1ef965a614bdae7973"),
    "small_224_0.75_float": ("cb65d4e5be93758266aa0a7f2c6708b7",
                             "ebdb5cc8e0b497cd13a7c275d475c819"),
    "small_224_1.0_float": ("8768d4c2e7dee89b9d02b2d03d65d862",
                            "d3e8ec802a04aa4fc771ee12a9a9b836"),
    "small_minimalistic_224_1.0_float": ("99cd97fb2fcdad2bf028eb838de69e37",
                                         "cde8136e733e811080d9fcd8a252f7e4"),
}

# The blocks: (expansion, output channels, kernel (None: the model's), stride,
# squeeze-and-excite, hard-swish (else ReLU)). A None kernel is 5 (3 when minimalistic); SE
# and hard-swish apply only when the model is not minimalistic.
_SMALL = [(1, 16, 3, 2, True, False), (72 / 16, 24, 3, 2, False, False),
          (88 / 24, 24, 3, 1, False, False), (4, 40, None, 2, True, True),
          (6, 40, None, 1, True, True), (6, 40, None, 1, True, True),
          (3, 48, None, 1, True, True), (3, 48, None, 1, True, True),
          (6, 96, None, 2, True, True), (6, 96, None, 1, True, True),
          (6, 96, None, 1, True, True)]
_LARGE = [(1, 16, 3, 1, False, False), (4, 24, 3, 2, False, False),
          (3, 24, 3, 1, False, False), (3, 40, None, 2, True, False),
          (3, 40, None, 1, True, False), (3, 40, None, 1, True, False),
          (6, 80, 3, 2, False, True), (2.5, 80, 3, 1, False, True),
          (2.3, 80, 3, 1, False, True), (2.3, 80, 3, 1, False, True),
          (6, 112, 3, 1, True, True), (6, 112, 3, 1, True, True),
          (6, 160, None, 2, True, True), (6, 160, None, 1, True, True),
          (6, 160, None, 1, True, True)]


def _depth(v, divisor=8, min_value=None):
    """`v` rounded to a multiple of `divisor`, never more than 10% down."""
    min_value = divisor if min_value is None else min_value
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _channel_axis() -> int:
    return 1 if backend_functions.image_data_format() == "channels_first" else -1


def _bn(name):
    return layers.BatchNormalization(axis=_channel_axis(), epsilon=1e-3, momentum=0.999,
                                     name=name)


def _relu(x):
    return layers.ReLU()(x)


def _hard_swish(x):
    return layers.Activation("hard_swish")(x)


def _hard_sigmoid(x):
    # Keras writes it with operators: they are operations of the model, not layers
    return layers.ReLU(6.0)(x + 3.0) * (1.0 / 6.0)


def _squeeze_excite(inputs, filters, ratio, prefix):
    x = layers.GlobalAveragePooling2D(keepdims=True, name=f"{prefix}squeeze_excite_avg_pool")(
        inputs)
    x = layers.Conv2D(_depth(filters * ratio), kernel_size=1, padding="same",
                      name=f"{prefix}squeeze_excite_conv")(x)
    x = layers.ReLU(name=f"{prefix}squeeze_excite_relu")(x)
    x = layers.Conv2D(filters, kernel_size=1, padding="same",
                      name=f"{prefix}squeeze_excite_conv_1")(x)
    return layers.Multiply(name=f"{prefix}squeeze_excite_mul")([inputs, _hard_sigmoid(x)])


def _inverted_res_block(x, expansion, filters, kernel_size, stride, se_ratio, activation,
                        block_id):
    shortcut, in_filters = x, x.shape[_channel_axis()]
    prefix = f"expanded_conv_{block_id}_" if block_id else "expanded_conv_"
    if block_id:   # the first block works at its input's width
        x = layers.Conv2D(_depth(in_filters * expansion), kernel_size=1, padding="same",
                          use_bias=False, name=f"{prefix}expand")(x)
        x = activation(_bn(f"{prefix}expand_bn")(x))
    if stride == 2:
        x = layers.ZeroPadding2D(padding=utils.correct_pad(x, kernel_size),
                                 name=f"{prefix}depthwise_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=stride,
                               padding="same" if stride == 1 else "valid", use_bias=False,
                               name=f"{prefix}depthwise")(x)
    x = activation(_bn(f"{prefix}depthwise_bn")(x))
    if se_ratio:
        x = _squeeze_excite(x, _depth(in_filters * expansion), se_ratio, prefix)
    x = layers.Conv2D(filters, kernel_size=1, padding="same", use_bias=False,
                      name=f"{prefix}project")(x)
    x = _bn(f"{prefix}project_bn")(x)
    if stride == 1 and in_filters == filters:
        x = layers.Add(name=f"{prefix}add")([shortcut, x])
    return x


def _input_shape(input_shape, input_tensor):
    """Keras' rules: the shape from `input_tensor` when none is given (its rows and columns
    swapped, as Keras takes them), else (None, None, 3)."""
    first = backend_functions.image_data_format() == "channels_first"
    if input_shape is not None and isinstance(input_tensor, KerasTensor):
        axis = 1 if first else 2
        if input_tensor.shape[axis] != input_shape[1]:
            what = "When backend.image_data_format()=channels_first, input_shape[1] must " \
                   "equal input_tensor.shape[1]" if first else \
                   "input_shape[1] must equal input_tensor.shape[2]"
            raise ValueError(f"{what}.  Received input_shape={input_shape}, "
                             f"input_tensor.shape={input_tensor.shape}")
    if input_shape is None and isinstance(input_tensor, KerasTensor):
        shape = tuple(input_tensor.shape)
        rows, cols = (shape[2], shape[3]) if first else (shape[1], shape[2])
        input_shape = (3, cols, rows) if first else (cols, rows, 3)
    if input_shape is None:
        input_shape = (3, None, None) if first else (None, None, 3)
    return tuple(input_shape)


def _mobilenet_v3(blocks, last_point_ch, input_shape, alpha, model_type, minimalistic,
                  include_top, weights, input_tensor, classes, pooling, dropout_rate,
                  classifier_activation, include_preprocessing, name):
    utils.check_mobilenet_weights(weights, include_top, classes)
    input_shape = _input_shape(input_shape, input_tensor)
    first = backend_functions.image_data_format() == "channels_first"
    rows, cols = (input_shape[1], input_shape[2]) if first else (input_shape[0],
                                                                 input_shape[1])
    if rows and cols and (rows < 32 or cols < 32):
        raise ValueError(f"Input size must be at least 32x32; Received `input_shape="
                         f"{input_shape}`")
    if weights == "imagenet":
        if (not minimalistic and alpha not in [0.75, 1.0]) or (minimalistic and alpha != 1.0):
            raise ValueError("If imagenet weights are being loaded, alpha can be one of `0.75`, "
                             "`1.0` for non minimalistic or `1.0` for minimalistic only.")
        if rows != cols or rows != 224:
            warnings.warn("`input_shape` is undefined or non-square, or `rows` is not 224. "
                          "Weights for input shape (224, 224) will be loaded as the default.",
                          stacklevel=3)
    img_input = utils.image_input(input_tensor, input_shape)
    kernel, swish, se_ratio = (3, _relu, None) if minimalistic else (5, _hard_swish, 0.25)
    x = img_input
    if include_preprocessing:
        x = layers.Rescaling(scale=1.0 / 127.5, offset=-1.0)(x)
    x = layers.Conv2D(16, kernel_size=3, strides=(2, 2), padding="same", use_bias=False,
                      name="conv")(x)
    x = swish(_bn("conv_bn")(x))
    for block_id, (expansion, filters, size, stride, se, hard) in enumerate(blocks):
        x = _inverted_res_block(x, expansion, _depth(filters * alpha),
                                kernel if size is None else size, stride,
                                se_ratio if se else None, swish if hard else _relu, block_id)
    last_conv_ch = _depth(x.shape[_channel_axis()] * 6)
    if alpha > 1.0:
        last_point_ch = _depth(last_point_ch * alpha)
    x = layers.Conv2D(last_conv_ch, kernel_size=1, padding="same", use_bias=False,
                      name="conv_1")(x)
    x = swish(_bn("conv_1_bn")(x))
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = swish(layers.Conv2D(last_point_ch, kernel_size=1, padding="same", use_bias=True,
                                name="conv_2")(x))
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate)(x)
        x = layers.Conv2D(classes, kernel_size=1, padding="same", name="logits")(x)
        x = layers.Flatten()(x)
        utils.validate_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    else:
        x = utils.top_pooling(x, pooling, include_top, names=("avg_pool", "max_pool"))
    model_name = f"{model_type}{'_minimalistic' if minimalistic else ''}_224_{alpha}_float"
    hashes = WEIGHTS_HASHES.get(model_name, (None, None))
    file_name = f"weights_mobilenet_v3_{model_name}{'' if include_top else '_no_top_v2'}.h5"
    return utils.imagenet_model(input_tensor, img_input, x, name, weights, file_name,
                                BASE_WEIGHT_PATH + file_name, hashes[0 if include_top else 1])


def _builder(blocks, last_point_ch: int, model_type: str, public: str):
    def build(input_shape=None, alpha=1.0, minimalistic=False, include_top=True,
              weights="imagenet", input_tensor=None, classes=1000, pooling=None,
              dropout_rate=0.2, classifier_activation="softmax", include_preprocessing=True,
              name=public):
        return _mobilenet_v3(blocks, last_point_ch, input_shape, alpha, model_type,
                             minimalistic, include_top, weights, input_tensor, classes, pooling,
                             dropout_rate, classifier_activation, include_preprocessing, name)
    build.__name__ = build.__qualname__ = public
    build.__doc__ = (f"MobileNetV3-{model_type.capitalize()} for images in [0, 255] (rescaled "
                     "inside the model).")
    return keras_export(f"keras.applications.{public}")(utils.with_arguments(build))


MobileNetV3Small = _builder(_SMALL, 1024, "small", "MobileNetV3Small")
MobileNetV3Large = _builder(_LARGE, 1280, "large", "MobileNetV3Large")


preprocess_input, decode_predictions = utils.family_functions(
    None, ["mobilenet_v3"],
    "The identity: MobileNetV3 models rescale their [0, 255] inputs themselves.")
