"""ResNet v1.5 as a Keras functional model: 18 and 34 layers with basic blocks, 50, 101 and
152 with bottlenecks. v1.5 differs from the paper's v1 in where a bottleneck downsamples: the
stride 2 sits in its 3x3 convolution, not in the first 1x1 (so no input pixel is skipped).

Convolutions have no bias (a batch normalization follows each); convolution and dense weights
carry an L2 penalty of 1e-4; batch normalization uses momentum 0.9 and epsilon 1e-5. The
input is always NHWC images; with `channels_first` the model transposes them once and runs
every layer in NCHW. The softmax is float32 under a mixed-precision policy.
"""

from __future__ import annotations

import ndflow as tf

keras = tf.keras
layers = keras.layers

# depth: (block kind, blocks per stage)
DEPTHS = {
    18: ("basic", (2, 2, 2, 2)),
    34: ("basic", (3, 4, 6, 3)),
    50: ("bottleneck", (3, 4, 6, 3)),
    101: ("bottleneck", (3, 4, 23, 3)),
    152: ("bottleneck", (3, 8, 36, 3)),
}
STAGE_FILTERS = (64, 128, 256, 512)
L2_WEIGHT_DECAY = 1e-4
BATCH_NORM_DECAY = 0.9
BATCH_NORM_EPSILON = 1e-5


def _l2():
    return keras.regularizers.l2(L2_WEIGHT_DECAY)


def _conv(x, filters, kernel_size, strides, name, data_format):
    return layers.Conv2D(filters, kernel_size, strides=strides, padding="same", use_bias=False,
                         kernel_initializer="he_normal", kernel_regularizer=_l2(),
                         data_format=data_format, name=name)(x)


def _bn(x, name, axis):
    return layers.BatchNormalization(axis=axis, momentum=BATCH_NORM_DECAY,
                                     epsilon=BATCH_NORM_EPSILON, name=name)(x)


def _block_name(stage: int, block: int) -> str:
    # Keras applications' names: res2a, res2b, ... (blocks past 'z' continue as b1, b2, ...)
    return f"res{stage}{chr(ord('a') + block)}" if block < 26 else f"res{stage}b{block}"


def _basic_block(x, filters, strides, project, name, data_format, axis):
    shortcut = x
    y = _conv(x, filters, 3, strides, f"{name}_branch2a", data_format)
    y = layers.Activation("relu")(_bn(y, f"bn{name[3:]}_branch2a", axis))
    y = _conv(y, filters, 3, 1, f"{name}_branch2b", data_format)
    y = _bn(y, f"bn{name[3:]}_branch2b", axis)
    if project:
        shortcut = _conv(x, filters, 1, strides, f"{name}_branch1", data_format)
        shortcut = _bn(shortcut, f"bn{name[3:]}_branch1", axis)
    return layers.Activation("relu", name=f"{name}_out")(layers.add([y, shortcut]))


def _bottleneck_block(x, filters, strides, project, name, data_format, axis):
    shortcut = x
    y = _conv(x, filters, 1, 1, f"{name}_branch2a", data_format)
    y = layers.Activation("relu")(_bn(y, f"bn{name[3:]}_branch2a", axis))
    y = _conv(y, filters, 3, strides, f"{name}_branch2b", data_format)   # v1.5: stride here
    y = layers.Activation("relu")(_bn(y, f"bn{name[3:]}_branch2b", axis))
    y = _conv(y, 4 * filters, 1, 1, f"{name}_branch2c", data_format)
    y = _bn(y, f"bn{name[3:]}_branch2c", axis)
    if project:
        shortcut = _conv(x, 4 * filters, 1, strides, f"{name}_branch1", data_format)
        shortcut = _bn(shortcut, f"bn{name[3:]}_branch1", axis)
    return layers.Activation("relu", name=f"{name}_out")(layers.add([y, shortcut]))


def resnet(depth: int = 50, num_classes: int = 1000, image_size: int = 224,
           image_format: str = "channels_last", batch_size: int | None = None):
    """ResNet-`depth` v1.5 taking NHWC float images of `image_size` x `image_size`."""
    if depth not in DEPTHS:
        raise ValueError(f"--layers must be one of {sorted(DEPTHS)}, not {depth}")
    if image_format not in ("channels_last", "channels_first"):
        raise ValueError(f"--image_format must be channels_last or channels_first, "
                         f"not {image_format!r}")
    kind, counts = DEPTHS[depth]
    block_fn = _basic_block if kind == "basic" else _bottleneck_block
    expansion = 1 if kind == "basic" else 4
    axis = -1 if image_format == "channels_last" else 1

    inputs = keras.Input((image_size, image_size, 3), batch_size=batch_size, name="images")
    x = inputs
    if image_format == "channels_first":
        x = layers.Permute((3, 1, 2), name="to_channels_first")(x)
    x = layers.ZeroPadding2D(3, data_format=image_format, name="conv1_pad")(x)
    x = layers.Conv2D(64, 7, strides=2, padding="valid", use_bias=False,
                      kernel_initializer="he_normal", kernel_regularizer=_l2(),
                      data_format=image_format, name="conv1")(x)
    x = layers.Activation("relu")(_bn(x, "bn_conv1", axis))
    x = layers.MaxPooling2D(3, strides=2, padding="same", data_format=image_format,
                            name="pool1")(x)

    in_channels = 64
    for stage, (filters, blocks) in enumerate(zip(STAGE_FILTERS, counts)):
        for block in range(blocks):
            strides = 2 if stage > 0 and block == 0 else 1
            project = block == 0 and (strides != 1 or in_channels != filters * expansion)
            x = block_fn(x, filters, strides, project, _block_name(stage + 2, block),
                         image_format, axis)
            in_channels = filters * expansion

    x = layers.GlobalAveragePooling2D(data_format=image_format, name="avg_pool")(x)
    x = layers.Dense(num_classes, kernel_initializer=keras.initializers.RandomNormal(stddev=0.01),
                     kernel_regularizer=_l2(), bias_regularizer=_l2(), name="fc1000")(x)
    # A softmax followed by the loss is not done in float16 / bfloat16 (numerics).
    outputs = layers.Activation("softmax", dtype="float32", name="probs")(x)
    return keras.Model(inputs, outputs, name=f"resnet{depth}_v1_5")
