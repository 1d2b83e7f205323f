"""`tf.keras.applications.MobileNet` (Howard et al. 2017): depthwise-separable convolution
blocks, `alpha` scaling widths and `depth_multiplier` the depthwise outputs, Keras 3.15's layer
names and ImageNet weight files. Preprocessing: "tf" mode."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras import backend_functions, layers
from ndflow.keras.applications import _imagenet_utils as utils

BASE_WEIGHT_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet/"
# (pointwise filters, stride) of blocks 1..13
_BLOCKS = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
           (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)]
_SIZES = (128, 160, 192, 224)
_ALPHA_TEXT = {1.0: "1_0", 0.75: "7_5", 0.5: "5_0", 0.25: "2_5"}


def _channel_axis():
    return 1 if backend_functions.image_data_format() == "channels_first" else -1


def _separable_block(x, filters, alpha, depth_multiplier, stride, block_id):
    if stride != 1:
        x = layers.ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block_id}")(x)
    x = layers.DepthwiseConv2D((3, 3), padding="same" if stride == 1 else "valid",
                               depth_multiplier=depth_multiplier, strides=(stride, stride),
                               use_bias=False, name=f"conv_dw_{block_id}")(x)
    x = layers.BatchNormalization(axis=_channel_axis(), name=f"conv_dw_{block_id}_bn")(x)
    x = layers.ReLU(6.0, name=f"conv_dw_{block_id}_relu")(x)
    x = layers.Conv2D(int(filters * alpha), (1, 1), padding="same", use_bias=False,
                      strides=(1, 1), name=f"conv_pw_{block_id}")(x)
    x = layers.BatchNormalization(axis=_channel_axis(), name=f"conv_pw_{block_id}_bn")(x)
    return layers.ReLU(6.0, name=f"conv_pw_{block_id}_relu")(x)


@keras_export("keras.applications.mobilenet.MobileNet", "keras.applications.MobileNet")
@utils.with_arguments
def MobileNet(input_shape=None, alpha=1.0, depth_multiplier=1, dropout=1e-3,  # noqa: N802
              include_top=True, weights="imagenet", input_tensor=None, pooling=None,
              classes=1000, classifier_activation="softmax", name=None):
    """MobileNet (v1) for images of at least 32x32."""
    utils.check_mobilenet_weights(weights, include_top, classes)
    first = backend_functions.image_data_format() == "channels_first"
    default_size = 224
    if input_shape is not None:
        rows, cols = (input_shape[1], input_shape[2]) if first else input_shape[:2]
        default_size = rows if rows == cols and rows in _SIZES else 224
    input_shape = utils.obtain_input_shape(input_shape, default_size, 32,
                                           backend_functions.image_data_format(), include_top,
                                           weights)
    rows, cols = (input_shape[1], input_shape[2]) if first else input_shape[:2]
    if weights == "imagenet":
        if depth_multiplier != 1:
            raise ValueError("If imagenet weights are being loaded, depth multiplier must be "
                             f"1.  Received depth_multiplier={depth_multiplier}")
        if alpha not in _ALPHA_TEXT:
            raise ValueError("If imagenet weights are being loaded, alpha can be one of`0.25`, "
                             f"`0.50`, `0.75` or `1.0` only.  Received alpha={alpha}")
        rows = utils.weights_rows(rows, cols, _SIZES)
    img_input = utils.image_input(input_tensor, input_shape)
    x = layers.Conv2D(int(32 * alpha), (3, 3), padding="same", use_bias=False, strides=(2, 2),
                      name="conv1")(img_input)
    x = layers.BatchNormalization(axis=_channel_axis(), name="conv1_bn")(x)
    x = layers.ReLU(6.0, name="conv1_relu")(x)
    for block_id, (filters, stride) in enumerate(_BLOCKS, 1):
        x = _separable_block(x, filters, alpha, depth_multiplier, stride, block_id)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Dropout(dropout, name="dropout")(x)
        x = layers.Conv2D(classes, (1, 1), padding="same", name="conv_preds")(x)
        x = layers.Reshape((classes,), name="reshape_2")(x)
        utils.validate_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    else:
        x = utils.top_pooling(x, pooling, include_top)
    top = "" if include_top else "_no_top"
    file_name = f"mobilenet_{_ALPHA_TEXT.get(alpha, '1_0')}_{rows}_tf{top}.h5"
    return utils.imagenet_model(
        input_tensor, img_input, x,
        name if name is not None else f"mobilenet_{alpha:0.2f}_{rows}", weights, file_name,
        BASE_WEIGHT_PATH + file_name, None)


preprocess_input, decode_predictions = utils.family_functions("tf", ["mobilenet"])
