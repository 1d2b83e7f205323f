"""`tf.keras.applications.NASNetMobile` / `NASNetLarge` (Zoph et al. 2018): stacks of the
searched NASNet-A normal and reduction cells (separable-convolution and pooling branches
added pairwise, concatenated), each cell fed by the two previous cells' outputs, the earlier
one adjusted to the later one's grid and width. Keras 3.15's layer names, name scopes (so
weight paths are "normal_A_block_0/block_1/separable_conv_block_.../..."), order and ImageNet
weight files."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras import layers
from ndflow.keras.applications import _imagenet_utils as utils
from ndflow.keras.functional import Functional
from ndflow.keras.layers.name_scope import KerasNameScope as name_scope

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/nasnet/"
# default size -> ((file, weight path, MD5) with the top, without)
_WEIGHTS = {
    224: (("nasnet_mobile.h5", "NASNet-mobile.h5", "020fb642bf7360b370c678b08e0adf61"),
          ("nasnet_mobile_no_top.h5", "NASNet-mobile-no-top.h5",
           "1ed92395b5b598bdda52abe5c0dbfd63")),
    331: (("nasnet_large.h5", "NASNet-large.h5", "11577c9a518f0070763c2b964a382f17"),
          ("nasnet_large_no_top.h5", "NASNet-large-no-top.h5",
           "d81d89dc07e6e56530c4e77faddd61b5")),
}
_AXIS = -1   # NASNet is channels_last only


def _bn(name):
    return layers.BatchNormalization(axis=_AXIS, momentum=0.9997, epsilon=1e-3, name=name)


def _conv1x1(filters, name):
    return layers.Conv2D(filters, (1, 1), strides=(1, 1), padding="same", use_bias=False,
                         name=name, kernel_initializer="he_normal")


def _separable_conv_block(ip, filters, kernel_size=(3, 3), strides=(1, 1), block_id=None):
    """relu, separable conv (strided 'valid' after TF-SAME padding), BN, relu, separable
    conv, BN."""
    with name_scope(f"separable_conv_block_{block_id}"):
        x = layers.Activation("relu")(ip)
        if strides == (2, 2):
            x = layers.ZeroPadding2D(padding=utils.correct_pad(x, kernel_size),
                                     name=f"separable_conv_1_pad_{block_id}")(x)
        x = layers.SeparableConv2D(filters, kernel_size, strides=strides,
                                   name=f"separable_conv_1_{block_id}",
                                   padding="valid" if strides == (2, 2) else "same",
                                   use_bias=False)(x)
        x = _bn(f"separable_conv_1_bn_{block_id}")(x)
        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(filters, kernel_size, name=f"separable_conv_2_{block_id}",
                                   padding="same", use_bias=False)(x)
        return _bn(f"separable_conv_2_bn_{block_id}")(x)


def _adjust_block(p, ip, filters, block_id=None):
    """The previous cell's output brought to this cell's grid (two half-offset strided 1x1
    paths) or width (a 1x1 projection)."""
    with name_scope("adjust_block"):
        if p is None:
            return ip
        if p.shape[-2] != ip.shape[-2]:
            with name_scope(f"adjust_reduction_block_{block_id}"):
                p = layers.Activation("relu", name=f"adjust_relu_1_{block_id}")(p)
                p1 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid",
                                             name=f"adjust_avg_pool_1_{block_id}")(p)
                p1 = layers.Conv2D(filters // 2, (1, 1), padding="same", use_bias=False,
                                   name=f"adjust_conv_1_{block_id}",
                                   kernel_initializer="he_normal")(p1)
                p2 = layers.ZeroPadding2D(padding=((0, 1), (0, 1)))(p)
                p2 = layers.Cropping2D(cropping=((1, 0), (1, 0)))(p2)
                p2 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid",
                                             name=f"adjust_avg_pool_2_{block_id}")(p2)
                p2 = layers.Conv2D(filters // 2, (1, 1), padding="same", use_bias=False,
                                   name=f"adjust_conv_2_{block_id}",
                                   kernel_initializer="he_normal")(p2)
                p = layers.concatenate([p1, p2], axis=_AXIS)
                return _bn(f"adjust_bn_{block_id}")(p)
        if p.shape[_AXIS] != filters:
            with name_scope(f"adjust_projection_block_{block_id}"):
                p = layers.Activation("relu")(p)
                p = _conv1x1(filters, f"adjust_conv_projection_{block_id}")(p)
                return _bn(f"adjust_bn_{block_id}")(p)
        return p


def _avg3(strides, padding, name):
    return layers.AveragePooling2D((3, 3), strides=strides, padding=padding, name=name)


def _normal_a_cell(ip, p, filters, block_id=None):
    with name_scope(f"normal_A_block_{block_id}"):
        p = _adjust_block(p, ip, filters, block_id)
        h = layers.Activation("relu")(ip)
        h = _bn(f"normal_bn_1_{block_id}")(_conv1x1(filters, f"normal_conv_1_{block_id}")(h))
        with name_scope("block_1"):
            x1_1 = _separable_conv_block(h, filters, kernel_size=(5, 5),
                                         block_id=f"normal_left1_{block_id}")
            x1_2 = _separable_conv_block(p, filters, block_id=f"normal_right1_{block_id}")
            x1 = layers.add([x1_1, x1_2], name=f"normal_add_1_{block_id}")
        with name_scope("block_2"):
            x2_1 = _separable_conv_block(p, filters, (5, 5), block_id=f"normal_left2_{block_id}")
            x2_2 = _separable_conv_block(p, filters, (3, 3),
                                         block_id=f"normal_right2_{block_id}")
            x2 = layers.add([x2_1, x2_2], name=f"normal_add_2_{block_id}")
        with name_scope("block_3"):
            x3 = _avg3((1, 1), "same", f"normal_left3_{block_id}")(h)
            x3 = layers.add([x3, p], name=f"normal_add_3_{block_id}")
        with name_scope("block_4"):
            x4_1 = _avg3((1, 1), "same", f"normal_left4_{block_id}")(p)
            x4_2 = _avg3((1, 1), "same", f"normal_right4_{block_id}")(p)
            x4 = layers.add([x4_1, x4_2], name=f"normal_add_4_{block_id}")
        with name_scope("block_5"):
            x5 = _separable_conv_block(h, filters, block_id=f"normal_left5_{block_id}")
            x5 = layers.add([x5, h], name=f"normal_add_5_{block_id}")
        x = layers.concatenate([p, x1, x2, x3, x4, x5], axis=_AXIS,
                               name=f"normal_concat_{block_id}")
    return x, ip


def _reduction_a_cell(ip, p, filters, block_id=None):
    with name_scope(f"reduction_A_block_{block_id}"):
        p = _adjust_block(p, ip, filters, block_id)
        h = layers.Activation("relu")(ip)
        h = _bn(f"reduction_bn_1_{block_id}")(
            _conv1x1(filters, f"reduction_conv_1_{block_id}")(h))
        h3 = layers.ZeroPadding2D(padding=utils.correct_pad(h, 3),
                                  name=f"reduction_pad_1_{block_id}")(h)
        with name_scope("block_1"):
            x1_1 = _separable_conv_block(h, filters, (5, 5), strides=(2, 2),
                                         block_id=f"reduction_left1_{block_id}")
            x1_2 = _separable_conv_block(p, filters, (7, 7), strides=(2, 2),
                                         block_id=f"reduction_right1_{block_id}")
            x1 = layers.add([x1_1, x1_2], name=f"reduction_add_1_{block_id}")
        with name_scope("block_2"):
            x2_1 = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="valid",
                                       name=f"reduction_left2_{block_id}")(h3)
            x2_2 = _separable_conv_block(p, filters, (7, 7), strides=(2, 2),
                                         block_id=f"reduction_right2_{block_id}")
            x2 = layers.add([x2_1, x2_2], name=f"reduction_add_2_{block_id}")
        with name_scope("block_3"):
            x3_1 = _avg3((2, 2), "valid", f"reduction_left3_{block_id}")(h3)
            x3_2 = _separable_conv_block(p, filters, (5, 5), strides=(2, 2),
                                         block_id=f"reduction_right3_{block_id}")
            x3 = layers.add([x3_1, x3_2], name=f"reduction_add3_{block_id}")
        with name_scope("block_4"):
            x4 = _avg3((1, 1), "same", f"reduction_left4_{block_id}")(x1)
            x4 = layers.add([x2, x4])
        with name_scope("block_5"):
            x5_1 = _separable_conv_block(x1, filters, (3, 3),
                                         block_id=f"reduction_left4_{block_id}")
            x5_2 = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="valid",
                                       name=f"reduction_right5_{block_id}")(h3)
            x5 = layers.add([x5_1, x5_2], name=f"reduction_add4_{block_id}")
        x = layers.concatenate([x2, x3, x4, x5], axis=_AXIS,
                               name=f"reduction_concat_{block_id}")
        return x, ip


def _nasnet(input_shape, penultimate_filters, num_blocks, stem_block_filters,
            skip_reduction, filter_multiplier, include_top, weights, input_tensor, pooling,
            classes, default_size, classifier_activation, name):
    utils.require_channels_last("NASNet")
    utils.check_weights_source(weights)
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError('If using `weights` as `"imagenet"` with `include_top` as true, '
                         "`classes` should be 1000")
    if isinstance(input_shape, tuple) and None in input_shape and weights == "imagenet":
        raise ValueError("When specifying the input shape of a NASNet and loading `ImageNet` "
                         "weights, the input_shape argument must be static (no None entries)."
                         f" Got: `input_shape={input_shape}`.")
    input_shape = utils.obtain_input_shape(input_shape, default_size, 32, "channels_last",
                                           include_top, weights)
    img_input = utils.image_input(input_tensor, input_shape)
    if penultimate_filters % (24 * (filter_multiplier ** 2)) != 0:
        raise ValueError("For NASNet-A models, the `penultimate_filters` must be a multiple of "
                         f"24 * (`filter_multiplier` ** 2). Current value: "
                         f"{penultimate_filters}")
    filters = penultimate_filters // 24
    x = layers.Conv2D(stem_block_filters, (3, 3), strides=(2, 2), padding="valid",
                      use_bias=False, name="stem_conv1", kernel_initializer="he_normal")(
        img_input)
    x = _bn("stem_bn1")(x)
    x, p = _reduction_a_cell(x, None, filters // (filter_multiplier ** 2), block_id="stem_1")
    x, p = _reduction_a_cell(x, p, filters // filter_multiplier, block_id="stem_2")
    for stage in range(3):   # normal cells, a reduction cell between stages
        width = filters * filter_multiplier ** stage
        if stage:
            x, p0 = _reduction_a_cell(x, p, width, block_id=f"reduce_{stage * num_blocks}")
            p = p if skip_reduction else p0
        for i in range(num_blocks):
            block = f"{i}" if stage == 0 else f"{stage * num_blocks + i + 1}"
            x, p = _normal_a_cell(x, p, width, block_id=block)
    x = layers.Activation("relu")(x)
    x = utils.classifier(x, include_top, pooling, classes, classifier_activation, weights,
                         pool_name=None)
    model = Functional(utils.model_inputs(input_tensor, img_input), x, name=name)
    if weights == "imagenet":
        if default_size not in _WEIGHTS:
            raise ValueError("ImageNet weights can only be loaded with NASNetLarge or "
                             "NASNetMobile")
        file_name, path, file_hash = _WEIGHTS[default_size][0 if include_top else 1]
        utils.load_weights(model, weights, file_name, BASE_WEIGHTS_PATH + path, file_hash)
    elif weights is not None:
        model.load_weights(weights)
    return model


@keras_export("keras.applications.nasnet.NASNetMobile", "keras.applications.NASNetMobile")
@utils.with_arguments
def NASNetMobile(input_shape=None, include_top=True, weights="imagenet",  # noqa: N802
                 input_tensor=None, pooling=None, classes=1000,
                 classifier_activation="softmax", name="nasnet_mobile"):
    """NASNet-A (4 @ 1056), 224x224 by default."""
    if not include_top and input_shape is None:
        input_shape = (224, 224, 3)
    return _nasnet(input_shape, 1056, 4, 32, False, 2, include_top, weights, input_tensor,
                   pooling, classes, 224, classifier_activation, name)


@keras_export("keras.applications.nasnet.NASNetLarge", "keras.applications.NASNetLarge")
@utils.with_arguments
def NASNetLarge(input_shape=None, include_top=True, weights="imagenet",  # noqa: N802
                input_tensor=None, pooling=None, classes=1000,
                classifier_activation="softmax", name="nasnet_large"):
    """NASNet-A (6 @ 4032), 331x331 by default."""
    return _nasnet(input_shape, 4032, 6, 96, True, 2, include_top, weights, input_tensor,
                   pooling, classes, 331, classifier_activation, name)


preprocess_input, decode_predictions = utils.family_functions("tf", ["nasnet"])
