"""`tf.keras.applications.ResNet50` / `101` / `152` (He et al. 2015): bottleneck residual
stacks (1x1, 3x3, 1x1 convolutions with batch normalization, a projection shortcut in each
stack's first block), and their pre-activation `ResNet50V2` / `101V2` / `152V2`; Keras
3.15's layer names and ImageNet weight files. Preprocessing: "caffe" mode (V2: "tf")."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras import backend_functions, layers
from ndflow.keras.applications import _imagenet_utils as utils

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/resnet/"
WEIGHTS_HASHES = {
    "resnet50": ("2cb95161c43110f7111970584f804107", "4d473c1dd8becc155b73f8504c6f6626"),
    "resnet101": ("f1aeb4b969a6efcfb50fad2f0c20cfc5", "88cf7a10940856eca736dc7b7e228a21"),
    "resnet152": ("100835be76be38e30d865e96f2aaae62", "ee4c566cf9a93f14d82f913c2dc6dd0c"),
    "resnet50v2": ("3ef43a0b657b3be2300d5770ece849e0", "fac2f116257151a9d068a22e544a4917"),
    "resnet101v2": ("6343647c601c52e1368623803854d971", "c0ed64b8031c3730f411d2eb4eea35b5"),
    "resnet152v2": ("a49b44d1979771252814e80f8ec446f9", "ed17cf2e0169df9d443503ef94b23b33"),
}
# blocks in the stacks conv2..conv5 (filters 64, 128, 256, 512)
_BLOCKS = {"resnet50": (3, 4, 6, 3), "resnet101": (3, 4, 23, 3), "resnet152": (3, 8, 36, 3)}
_BLOCKS.update({f"{k}v2": v for k, v in list(_BLOCKS.items())})
_EPS = 1.001e-5


def _bn(name):
    axis = 3 if backend_functions.image_data_format() == "channels_last" else 1
    return layers.BatchNormalization(axis=axis, epsilon=_EPS, name=name)


def _block(x, filters, stride=1, conv_shortcut=True, name=None):
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(x)
        shortcut = _bn(f"{name}_0_bn")(shortcut)
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=f"{name}_1_conv")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(_bn(f"{name}_1_bn")(x))
    x = layers.Conv2D(filters, 3, padding="SAME", name=f"{name}_2_conv")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(_bn(f"{name}_2_bn")(x))
    x = _bn(f"{name}_3_bn")(layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x))
    x = layers.Add(name=f"{name}_add")([shortcut, x])
    return layers.Activation("relu", name=f"{name}_out")(x)


def _stack(x, filters, blocks, stride1=2, name=None):
    x = _block(x, filters, stride=stride1, name=f"{name}_block1")
    for i in range(2, blocks + 1):
        x = _block(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def _block_v2(x, filters, stride=1, conv_shortcut=False, name=None):
    """ResNetV2's pre-activation bottleneck (He et al. 2016b)."""
    preact = layers.Activation("relu", name=f"{name}_preact_relu")(_bn(f"{name}_preact_bn")(x))
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(preact)
    else:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = layers.Conv2D(filters, 1, strides=1, use_bias=False, name=f"{name}_1_conv")(preact)
    x = layers.Activation("relu", name=f"{name}_1_relu")(_bn(f"{name}_1_bn")(x))
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=f"{name}_2_pad")(x)
    x = layers.Conv2D(filters, 3, strides=stride, use_bias=False, name=f"{name}_2_conv")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(_bn(f"{name}_2_bn")(x))
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    return layers.Add(name=f"{name}_out")([shortcut, x])


def _stack_v2(x, filters, blocks, stride1=2, name=None):
    """The stride sits in the stack's last block (ResNetV2)."""
    x = _block_v2(x, filters, conv_shortcut=True, name=f"{name}_block1")
    for i in range(2, blocks):
        x = _block_v2(x, filters, name=f"{name}_block{i}")
    return _block_v2(x, filters, stride=stride1, name=f"{name}_block{blocks}")


def _resnet(kind, include_top, weights, input_tensor, input_shape, pooling, classes,
            classifier_activation, name):
    utils.check_weights(weights, include_top, classes)
    _, img_input = utils.model_input(input_tensor, input_shape, 224, 32, include_top, weights)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=True, name="conv1_conv")(x)
    v2 = kind.endswith("v2")
    if not v2:
        x = layers.Activation("relu", name="conv1_relu")(_bn("conv1_bn")(x))
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    for i, (blocks, filters) in enumerate(zip(_BLOCKS[kind], (64, 128, 256, 512))):
        if v2:
            x = _stack_v2(x, filters, blocks, stride1=1 if i == 3 else 2, name=f"conv{i + 2}")
        else:
            x = _stack(x, filters, blocks, stride1=1 if i == 0 else 2, name=f"conv{i + 2}")
    if v2:
        x = layers.Activation("relu", name="post_relu")(_bn("post_bn")(x))
    x = utils.classifier(x, include_top, pooling, classes, classifier_activation, weights,
                         pooling_names=("avg_pool", "max_pool"))
    return utils.kernels_model(input_tensor, img_input, x, name, weights, include_top, kind,
                               BASE_WEIGHTS_PATH, WEIGHTS_HASHES[kind])


def _public(kind: str, namespaces):
    public = kind.replace("resnet", "ResNet").replace("v2", "V2")
    blocks = ", ".join(map(str, _BLOCKS[kind]))
    if kind.endswith("v2"):
        doc = f"{public}: the pre-activation ResNet (stacks of {blocks} blocks)."
    else:
        doc = f"{public}: {sum(_BLOCKS[kind])} bottleneck blocks in stacks of {blocks}."
    return keras_export(*[f"keras.applications.{ns}.{public}" for ns in namespaces],
                        f"keras.applications.{public}")(
        utils.standard_builder(_resnet, kind, public, doc))


ResNet50 = _public("resnet50", ["resnet50", "resnet"])
ResNet101 = _public("resnet101", ["resnet"])
ResNet152 = _public("resnet152", ["resnet"])


preprocess_input, decode_predictions = utils.family_functions("caffe", ["resnet50", "resnet"])


ResNet50V2 = _public("resnet50v2", ["resnet_v2"])
ResNet101V2 = _public("resnet101v2", ["resnet_v2"])
ResNet152V2 = _public("resnet152v2", ["resnet_v2"])


resnet_v2_preprocess_input, resnet_v2_decode_predictions = utils.family_functions(
    "tf", ["resnet_v2"], prefix="resnet_v2_")
