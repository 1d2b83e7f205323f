"""`tf.keras.applications.InceptionResNetV2` (Szegedy et al. 2016): an Inception stem, then
Inception blocks whose concatenated branches are projected and added to the block's input,
scaled (Keras' CustomScaleLayer), in three sizes (35x35, 17x17, 8x8 grids at 299x299) with
reduction blocks between. Keras 3.15's layer names, order and ImageNet weight files."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras import backend_functions, layers
from ndflow.keras.applications import _imagenet_utils as utils
from ndflow.keras.layers.base_layer import Layer

BASE_WEIGHT_URL = ("https://storage.googleapis.com/tensorflow/keras-applications/"
                   "inception_resnet_v2/")
# (file, MD5) with the top and without
_WEIGHTS = (("inception_resnet_v2_weights_tf_dim_ordering_tf_kernels.h5",
             "e693bd0210a403b3192acc6073ad2e96"),
            ("inception_resnet_v2_weights_tf_dim_ordering_tf_kernels_notop.h5",
             "d19885ff4a710c122648d3b5c3b684e4"))
# block type -> branches, each a list of (filters, kernel size) convolutions
_BRANCHES = {
    "block35": [[(32, 1)], [(32, 1), (32, 3)], [(32, 1), (48, 3), (64, 3)]],
    "block17": [[(192, 1)], [(128, 1), (160, (1, 7)), (192, (7, 1))]],
    "block8": [[(192, 1)], [(192, 1), (224, (1, 3)), (256, (3, 1))]],
}


def _axis() -> int:
    return 1 if backend_functions.image_data_format() == "channels_first" else 3


class CustomScaleLayer(Layer):
    """`inputs[0] + inputs[1] * scale`: a residual block's scaled addition."""

    def __init__(self, scale, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale

    def call(self, inputs):
        return inputs[0] + inputs[1] * self.scale

    def get_config(self) -> dict:
        return {**super().get_config(), "scale": self.scale}


def conv2d_bn(x, filters, kernel_size, strides=1, padding="same", activation="relu",
              use_bias=False, name=None):
    """Convolution, then (without a bias) BatchNormalization without a scale, then the
    activation; the layers named after `name` when it is given."""
    x = layers.Conv2D(filters, kernel_size, strides=strides, padding=padding,
                      use_bias=use_bias, name=name)(x)
    if not use_bias:
        x = layers.BatchNormalization(axis=_axis(), scale=False,
                                      name=None if name is None else f"{name}_bn")(x)
    if activation is not None:
        x = layers.Activation(activation, name=None if name is None else f"{name}_ac")(x)
    return x


def _branches(x, spec):
    out = []
    for convs in spec:
        b = x
        for filters, size in convs:
            b = conv2d_bn(b, filters, size)
        out.append(b)
    return out


def inception_resnet_block(x, scale, block_type, block_idx, activation="relu"):
    if block_type not in _BRANCHES:
        raise ValueError('Unknown Inception-ResNet block type. Expects "block35", "block17" or '
                         f'"block8", but got: {block_type}')
    name = f"{block_type}_{block_idx}"
    mixed = layers.Concatenate(axis=_axis(), name=f"{name}_mixed")(
        _branches(x, _BRANCHES[block_type]))
    up = conv2d_bn(mixed, x.shape[_axis()], 1, activation=None, use_bias=True,
                   name=f"{name}_conv")
    x = CustomScaleLayer(scale)([x, up])
    return x if activation is None else layers.Activation(activation, name=f"{name}_ac")(x)


def _reduction(x, branch_specs, name):
    """Strided 'valid' branches beside a max pooling, concatenated."""
    branches = []
    for convs in branch_specs:
        b = x
        for k, (filters, size) in enumerate(convs):
            last = k == len(convs) - 1
            b = conv2d_bn(b, filters, size, strides=2 if last else 1,
                          padding="valid" if last else "same")
        branches.append(b)
    branches.append(layers.MaxPooling2D(3, strides=2, padding="valid")(x))
    return layers.Concatenate(axis=_axis(), name=name)(branches)


def _inception_resnet_v2(_, include_top, weights, input_tensor, input_shape, pooling, classes,
                         classifier_activation, name):
    utils.check_weights_source(weights)
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError('If using `weights="imagenet"` with `include_top=True`, `classes` '
                         f"should be 1000. Received classes={classes}")
    _, img_input = utils.model_input(input_tensor, input_shape, 299, 75, include_top, weights)
    x = conv2d_bn(img_input, 32, 3, strides=2, padding="valid")
    x = conv2d_bn(x, 32, 3, padding="valid")
    x = conv2d_bn(x, 64, 3)
    x = layers.MaxPooling2D(3, strides=2)(x)
    x = conv2d_bn(x, 80, 1, padding="valid")
    x = conv2d_bn(x, 192, 3, padding="valid")
    x = layers.MaxPooling2D(3, strides=2)(x)
    branches = _branches(x, [[(96, 1)], [(48, 1), (64, 5)], [(64, 1), (96, 3), (96, 3)]])
    pool = layers.AveragePooling2D(3, strides=1, padding="same")(x)
    x = layers.Concatenate(axis=_axis(), name="mixed_5b")(branches + [conv2d_bn(pool, 64, 1)])
    for block_idx in range(1, 11):
        x = inception_resnet_block(x, scale=0.17, block_type="block35", block_idx=block_idx)
    x = _reduction(x, [[(384, 3)], [(256, 1), (256, 3), (384, 3)]], "mixed_6a")
    for block_idx in range(1, 21):
        x = inception_resnet_block(x, scale=0.1, block_type="block17", block_idx=block_idx)
    x = _reduction(x, [[(256, 1), (384, 3)], [(256, 1), (288, 3)],
                       [(256, 1), (288, 3), (320, 3)]], "mixed_7a")
    for block_idx in range(1, 10):
        x = inception_resnet_block(x, scale=0.2, block_type="block8", block_idx=block_idx)
    x = inception_resnet_block(x, scale=1.0, activation=None, block_type="block8",
                               block_idx=10)
    x = conv2d_bn(x, 1536, 1, name="conv_7b")
    x = utils.classifier(x, include_top, pooling, classes, classifier_activation, weights)
    file_name, file_hash = _WEIGHTS[0 if include_top else 1]
    return utils.imagenet_model(input_tensor, img_input, x, name, weights, file_name,
                                BASE_WEIGHT_URL + file_name, file_hash)


InceptionResNetV2 = keras_export("keras.applications.inception_resnet_v2.InceptionResNetV2",
                                 "keras.applications.InceptionResNetV2")(utils.standard_builder(
    _inception_resnet_v2, "inception_resnet_v2", "InceptionResNetV2",
    "Inception-ResNet v2 for images of at least 75x75 (299x299 by default)."))


preprocess_input, decode_predictions = utils.family_functions("tf", ["inception_resnet_v2"])
