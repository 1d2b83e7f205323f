"""`tf.keras.applications.ConvNeXtTiny`..`XLarge` (Liu et al. 2022): a patchify stem and three
downsampling steps (small Sequential models, as Keras nests them), then ConvNeXt blocks:
7x7 depthwise convolution, LayerNormalization, an inverted MLP with GELU, a learned per-channel
scale (`LayerScale`) and stochastic depth on the residual. The ImageNet normalization is inside
the model. Keras 3.15's layer names, order and weight files."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.keras import layers
from ndflow.keras.applications import _imagenet_utils as utils
from ndflow.keras.functional import Functional
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.sequential import Sequential
from ndflow.ops import init_ops, random
from ndflow.ops.array_core import shape
from ndflow.ops.math import floor

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/convnext/"
# SHA-256 of Keras' weight files: variant -> (top, no top)
WEIGHTS_HASHES = {
    "convnext_tiny": ("8ae6e78ce2933352b1ef4008e6dd2f17bc40771563877d156bc6426c7cf503ff",
                      "d547c096cabd03329d7be5562c5e14798aa39ed24b474157cef5e85ab9e49ef1"),
    "convnext_small": ("ce1277d8f1ee5a0ef0e171469089c18f5233860ceaf9b168049cb9263fd7483c",
                       "6fc8009faa2f00c1c1dfce59feea9b0745eb260a7dd11bee65c8e20843da6eab"),
    "convnext_base": ("52cbb006d3dadd03f6e095a8ca1aca47aecdd75acb4bc74bce1f5c695d0086e6",
                      "40a20c5548a5e9202f69735ecc06c990e6b7c9d2de39f0361e27baeb24cb7c45"),
    "convnext_large": ("070c5ed9ed289581e477741d3b34beffa920db8cf590899d6d2c67fba2a198a6",
                       "96f02b6f0753d4f543261bc9d09bed650f24dd6bc02ddde3066135b63d23a1cd"),
    "convnext_xlarge": ("c1f5ccab661354fc3a79a10fa99af82f0fbf10ec65cb894a3ae0815f17a889ee",
                        "de3f8a54174130e0cecdc71583354753d557fcf1f4487331558e2a16ba0cfe05"),
}
# variant -> (blocks per stage, channels per stage)
MODEL_CONFIGS = {
    "tiny": ([3, 3, 9, 3], [96, 192, 384, 768]),
    "small": ([3, 3, 27, 3], [96, 192, 384, 768]),
    "base": ([3, 3, 27, 3], [128, 256, 512, 1024]),
    "large": ([3, 3, 27, 3], [192, 384, 768, 1536]),
    "xlarge": ([3, 3, 27, 3], [256, 512, 1024, 2048]),
}
_MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
_VARIANCE = [(0.229 * 255) ** 2, (0.224 * 255) ** 2, (0.225 * 255) ** 2]


class StochasticDepth(Layer):
    """Drops the whole residual branch of a sample with probability `drop_path_rate` in
    training (the kept ones scaled by 1 / keep), the identity otherwise."""

    def __init__(self, drop_path_rate, **kwargs):
        super().__init__(**kwargs)
        self.drop_path_rate = drop_path_rate

    def call(self, x, training=None):
        if not training:
            return x
        keep = 1 - self.drop_path_rate
        mask_shape = [shape(x)[0]] + [1] * (x.shape.rank - 1)
        mask = floor(keep + random.random_uniform(mask_shape, 0, 1, dtype=x.dtype))
        return (x / keep) * mask

    def get_config(self) -> dict:
        return {**super().get_config(), "drop_path_rate": self.drop_path_rate}


class LayerScale(Layer):
    """Multiplies its input by a learned per-channel scale, `init_values` at first."""

    def __init__(self, init_values, projection_dim, **kwargs):
        super().__init__(**kwargs)
        self.init_values, self.projection_dim = init_values, projection_dim

    def build(self, _) -> None:
        self.gamma = self.add_weight(shape=(self.projection_dim,),
                                     initializer=init_ops.Constant(self.init_values),
                                     trainable=True)
        self.built = True

    def call(self, x):
        return x * self.gamma

    def get_config(self) -> dict:
        return {**super().get_config(), "init_values": self.init_values,
                "projection_dim": self.projection_dim}


def _layer_norm(name=None):
    return layers.LayerNormalization(epsilon=1e-6, name=name)


def _block(inputs, dim, drop_path_rate, layer_scale_init_value, name):
    x = layers.Conv2D(dim, kernel_size=7, padding="same", groups=dim,
                      name=f"{name}_depthwise_conv")(inputs)
    x = _layer_norm(f"{name}_layernorm")(x)
    x = layers.Dense(4 * dim, name=f"{name}_pointwise_conv_1")(x)
    x = layers.Activation("gelu", name=f"{name}_gelu")(x)
    x = layers.Dense(dim, name=f"{name}_pointwise_conv_2")(x)
    if layer_scale_init_value is not None:
        x = LayerScale(layer_scale_init_value, dim, name=f"{name}_layer_scale")(x)
    branch = (StochasticDepth(drop_path_rate, name=f"{name}_stochastic_depth")
              if drop_path_rate else layers.Activation("linear", name=f"{name}_identity"))
    return inputs + branch(x)


def _convnext(variant, include_top, include_preprocessing, weights, input_tensor,
              input_shape, pooling, classes, classifier_activation, name,
              drop_path_rate=0.0, layer_scale_init_value=1e-6):
    depths, dims = MODEL_CONFIGS[variant]
    weights_name = f"convnext_{variant}"
    utils.require_channels_last("ConvNeXt")
    utils.check_weights_source(weights)
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError('If using `weights="imagenet"` with `include_top=True`, `classes` '
                         f"should be 1000. Received classes={classes}")
    if weights == "imagenet" and weights_name not in name:
        raise ValueError(f'Model name "{name}" does not match weights variant '
                         f'"{weights_name}". When using imagenet weights, model name must '
                         f'contain the weights variant (e.g., "{weights_name}").')
    input_shape = utils.obtain_input_shape(input_shape, 224, 32, "channels_last", include_top,
                                           weights)
    img_input = utils.image_input(input_tensor, input_shape)
    if input_tensor is not None:
        inputs = utils.source_inputs(input_tensor)
        inputs = inputs[0] if isinstance(inputs, list) else inputs
    else:
        inputs = img_input
    x = img_input
    if include_preprocessing and input_shape[2] == 3:
        x = layers.Normalization(mean=_MEAN, variance=_VARIANCE,
                                 name=f"{name}_prestem_normalization")(x)
    stages = [Sequential([layers.Conv2D(dims[0], kernel_size=4, strides=4,
                                        name=f"{name}_stem_conv"),
                          _layer_norm(f"{name}_stem_layernorm")], name=f"{name}_stem")]
    for i in range(3):
        stages.append(Sequential([_layer_norm(f"{name}_downsampling_layernorm_{i}"),
                                  layers.Conv2D(dims[i + 1], kernel_size=2, strides=2,
                                                name=f"{name}_downsampling_conv_{i}")],
                                 name=f"{name}_downsampling_block_{i}"))
    rates = [float(r) for r in np.linspace(0.0, drop_path_rate, sum(depths))]
    start = 0
    for i, stage in enumerate(stages):
        x = stage(x)
        for j in range(depths[i]):
            x = _block(x, dims[i], rates[start + j], layer_scale_init_value,
                       f"{name}_stage_{i}_block_{j}")
        start += depths[i]
    if include_top:
        utils.validate_activation(classifier_activation, weights)
        x = layers.GlobalAveragePooling2D(name=f"{name}_head_gap")(x)
        x = _layer_norm(f"{name}_head_layernorm")(x)
        x = layers.Dense(classes, activation=classifier_activation,
                         name=f"{name}_head_dense")(x)
    else:
        x = utils.top_pooling(x, pooling, include_top)
        x = _layer_norm()(x)
    model = Functional(inputs, x, name=name)
    file_name = name + (".h5" if include_top else "_notop.h5")
    utils.load_weights(model, weights, file_name, BASE_WEIGHTS_PATH + file_name,
                       WEIGHTS_HASHES[weights_name][0 if include_top else 1])
    return model


def _builder(variant: str, public: str):
    default_name = f"convnext_{variant}"

    def build(include_top=True, include_preprocessing=True, weights="imagenet",
              input_tensor=None, input_shape=None, pooling=None, classes=1000,
              classifier_activation="softmax", name=default_name):
        return _convnext(variant, include_top, include_preprocessing, weights, input_tensor,
                         input_shape, pooling, classes, classifier_activation, name)
    build.__name__ = build.__qualname__ = public
    build.__doc__ = f"{public}: images in [0, 255] (normalized inside the model), 224x224."
    return keras_export(f"keras.applications.convnext.{public}",
                        f"keras.applications.{public}")(utils.with_arguments(build))


ConvNeXtTiny = _builder("tiny", "ConvNeXtTiny")
ConvNeXtSmall = _builder("small", "ConvNeXtSmall")
ConvNeXtBase = _builder("base", "ConvNeXtBase")
ConvNeXtLarge = _builder("large", "ConvNeXtLarge")
ConvNeXtXLarge = _builder("xlarge", "ConvNeXtXLarge")


preprocess_input, decode_predictions = utils.family_functions(
    None, ["convnext"],
    "The identity: ConvNeXt models normalize their [0, 255] inputs themselves.")
