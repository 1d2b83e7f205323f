"""`tf.keras.applications.VGG16` / `VGG19` (Simonyan & Zisserman 2014): five blocks of 3x3
convolutions and max pooling, then two 4096-unit layers; Keras 3.15's layer names, so its
ImageNet weight files load. Preprocessing: "caffe" mode."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras import layers
from ndflow.keras.applications import _imagenet_utils as utils

_BASE = "https://storage.googleapis.com/tensorflow/keras-applications/"
# convolutions per block (filters: 64, 128, 256, 512, 512); file hashes (top, no top)
_DEPTHS = {"vgg16": (2, 2, 3, 3, 3), "vgg19": (2, 2, 4, 4, 4)}
_HASHES = {"vgg16": ("64373286793e3c8b2b4e3219cbf3544b", "6d6bbae143d832006294945121d1f1fc"),
           "vgg19": ("cbe5617147190e668d6c5d5026f83318", "253f8cb515780f3b799900260a226db6")}


def _vgg(kind, include_top, weights, input_tensor, input_shape, pooling, classes,
         classifier_activation, name):
    utils.check_weights(weights, include_top, classes)
    _, img_input = utils.model_input(input_tensor, input_shape, 224, 32, include_top, weights)
    x = img_input
    for block, (convs, filters) in enumerate(zip(_DEPTHS[kind], (64, 128, 256, 512, 512)), 1):
        for i in range(1, convs + 1):
            x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same",
                              name=f"block{block}_conv{i}")(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = utils.top_pooling(x, pooling, include_top)
    return utils.kernels_model(input_tensor, img_input, x, name, weights, include_top, kind,
                               f"{_BASE}{kind}/", _HASHES[kind])


VGG16 = keras_export("keras.applications.vgg16.VGG16", "keras.applications.VGG16")(
    utils.standard_builder(_vgg, "vgg16", "VGG16",
                           "VGG16: 13 convolutions in 5 blocks, then 3 dense layers."))
VGG19 = keras_export("keras.applications.vgg19.VGG19", "keras.applications.VGG19")(
    utils.standard_builder(_vgg, "vgg19", "VGG19",
                           "VGG19: 16 convolutions in 5 blocks, then 3 dense layers."))


preprocess_input = keras_export("keras.applications.vgg16.preprocess_input")(
    utils.family_preprocess_input("caffe"))


@keras_export("keras.applications.vgg19.preprocess_input")
def vgg19_preprocess_input(x, data_format=None):
    """RGB to BGR, minus the ImageNet channel means ("caffe" mode), as VGG19 expects.

    Args:
      x: images with values in [0, 255], (..., height, width, 3) or channels first; a
        tensor or NumPy array.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).

    Returns:
      The preprocessed images (floatx for a tensor; a NumPy float array otherwise).
    """
    return utils.preprocess_input(x, data_format=data_format, mode="caffe")


decode_predictions = keras_export("keras.applications.vgg16.decode_predictions",
                                  "keras.applications.vgg19.decode_predictions")(
    utils.family_decode_predictions())
