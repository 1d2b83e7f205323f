"""`tf.keras.applications`: Keras' ImageNet models (MobileNet, MobileNetV2, MobileNetV3
Small/Large, ConvNeXtTiny-XLarge, VGG16/19, ResNet50/101/152 and V2, DenseNet121/169/201,
InceptionV3, InceptionResNetV2, NASNetMobile/Large, Xception, EfficientNetB0-B7,
EfficientNetV2B0-B3/S/M/L) with their preprocessing and decoding, layer for layer as Keras 3.15
builds them so Keras' published weight files load (one module per family; this package is the
namespace, so it imports modules only)."""

from ndflow.keras.applications import (  # noqa: F401 - their exports
    _convnext,
    _densenet,
    _efficientnet,
    _efficientnet_v2,
    _imagenet_utils,
    _inception_resnet_v2,
    _inception_v3,
    _mobilenet,
    _mobilenet_v2,
    _mobilenet_v3,
    _nasnet,
    _resnet,
    _vgg,
    _xception,
)
