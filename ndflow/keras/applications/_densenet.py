"""`tf.keras.applications.DenseNet121` / `169` / `201` (Huang et al. 2016): dense blocks
(each layer's output concatenated to its input, growth rate 32) between transition layers,
Keras 3.15's layer names and ImageNet weight files. Preprocessing: "torch" mode."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras import backend_functions, layers
from ndflow.keras.applications import _imagenet_utils as utils

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/densenet/"
_BLOCKS = {"densenet121": (6, 12, 24, 16), "densenet169": (6, 12, 32, 32),
           "densenet201": (6, 12, 48, 32)}
_HASHES = {"densenet121": ("9d60b8095a5708f2dcce2bca79d332c7",
                           "30ee3e1110167f948a6b9946edeeb738"),
           "densenet169": ("d699b8f76981ab1b30698df4c175e90b",
                           "b8c4d4c20dd625c148057b9ff1c1176b"),
           "densenet201": ("1ceb130c1ea1b78c3bf6114dbdfd8807",
                           "c13680b51ded0fb44dff2d8f86ac8bb1")}


def _axis():
    return 3 if backend_functions.image_data_format() == "channels_last" else 1


def _bn_relu(x, name):
    x = layers.BatchNormalization(axis=_axis(), epsilon=1.001e-5, name=f"{name}_bn")(x)
    return layers.Activation("relu", name=f"{name}_relu")(x)


def _conv_block(x, growth_rate, name):
    y = _bn_relu(x, f"{name}_0")
    y = layers.Conv2D(4 * growth_rate, 1, use_bias=False, name=f"{name}_1_conv")(y)
    y = _bn_relu(y, f"{name}_1")
    y = layers.Conv2D(growth_rate, 3, padding="same", use_bias=False, name=f"{name}_2_conv")(y)
    return layers.Concatenate(axis=_axis(), name=f"{name}_concat")([x, y])


def _transition(x, reduction, name):
    x = _bn_relu(x, name)
    x = layers.Conv2D(int(x.shape[_axis()] * reduction), 1, use_bias=False,
                      name=f"{name}_conv")(x)
    return layers.AveragePooling2D(2, strides=2, name=f"{name}_pool")(x)


def _densenet(kind, include_top, weights, input_tensor, input_shape, pooling, classes,
              classifier_activation, name):
    utils.check_weights(weights, include_top, classes)
    _, img_input = utils.model_input(input_tensor, input_shape, 224, 32, include_top, weights)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)))(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=False, name="conv1_conv")(x)
    x = _bn_relu(x, "conv1")
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1")(x)
    blocks = _BLOCKS[kind]
    for stage, count in enumerate(blocks, 2):
        for i in range(count):
            x = _conv_block(x, 32, name=f"conv{stage}_block{i + 1}")
        if stage < 5:
            x = _transition(x, 0.5, name=f"pool{stage}")
    x = layers.BatchNormalization(axis=_axis(), epsilon=1.001e-5, name="bn")(x)
    x = layers.Activation("relu", name="relu")(x)
    x = utils.classifier(x, include_top, pooling, classes, classifier_activation, weights,
                         pooling_names=("avg_pool", "max_pool"))
    return utils.kernels_model(input_tensor, img_input, x, name, weights, include_top, kind,
                               BASE_WEIGHTS_PATH, _HASHES[kind])


def _public(kind: str, public: str):
    blocks = ", ".join(map(str, _BLOCKS[kind]))
    builder = utils.standard_builder(_densenet, kind, public,
                                     f"{public}: dense blocks of {blocks} layers.")
    return keras_export(f"keras.applications.densenet.{public}",
                        f"keras.applications.{public}")(builder)


DenseNet121 = _public("densenet121", "DenseNet121")
DenseNet169 = _public("densenet169", "DenseNet169")
DenseNet201 = _public("densenet201", "DenseNet201")


preprocess_input, decode_predictions = utils.family_functions("torch", ["densenet"])
