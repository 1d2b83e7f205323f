"""Keras 3's convolution layers: Conv1D, Conv2D, Conv2DTranspose, DepthwiseConv2D,
SeparableConv2D (Keras 3's arguments, defaults, weights, configs and errors), built on
ndflow's nn ops as Keras' TensorFlow backend builds them (tf.nn.convolution,
conv_transpose, depthwise_conv2d, separable_conv2d, then the bias and the activation)."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.keras import activation_functions as activations
from ndflow.keras import constraint_functions as constraints
from ndflow.keras import regularizer_functions as regularizers
from ndflow.keras.layers import conv_docs
from ndflow.keras.layers import conv_utils as cu
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.input_spec import InputSpec
from ndflow.ops import init_ops, nn_conv, nn_conv_nd
from ndflow.ops.array_fill import pad


class _WindowedConv(Layer):
    """What every convolution layer shares: the window arguments (kernel_size, strides,
    padding, data_format, dilation_rate), the activation, the bias, and the weight arguments
    named `<role>_initializer` / `_regularizer` / `_constraint` for each role in `_ROLES`."""

    rank = 2
    _ROLES: tuple = ("kernel", "bias")
    _ALLOW_CAUSAL = False

    def _init_window(self, kernel_size, strides, padding, data_format, dilation_rate,
                     activation, use_bias, weight_args: dict) -> None:
        self.kernel_size = cu.standardize_tuple(kernel_size, self.rank, "kernel_size")
        self.strides = cu.standardize_tuple(strides, self.rank, "strides")
        self.dilation_rate = cu.standardize_tuple(dilation_rate, self.rank, "dilation_rate")
        self.padding = cu.standardize_padding(padding, allow_causal=self._ALLOW_CAUSAL)
        self.data_format = cu.standardize_data_format(data_format)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        for role in self._ROLES:
            setattr(self, f"{role}_initializer",
                    init_ops.get(weight_args[f"{role}_initializer"]))
            setattr(self, f"{role}_regularizer",
                    regularizers.get(weight_args.get(f"{role}_regularizer")))
            setattr(self, f"{role}_constraint",
                    constraints.get(weight_args.get(f"{role}_constraint")))
        self.input_spec = InputSpec(min_ndim=self.rank + 2)

    def _check_window(self) -> None:
        if not all(self.kernel_size):
            raise ValueError("The argument `kernel_size` cannot contain 0. Received "
                             f"kernel_size={self.kernel_size}.")
        if not all(self.strides):
            raise ValueError("The argument `strides` cannot contains 0. Received "
                             f"strides={self.strides}")

    def _input_channels(self, input_shape) -> int:
        axis = cu.channel_axis(self.data_format)
        channels = input_shape[axis]
        if channels is None:
            raise ValueError(f"The channel dimension of the inputs to {type(self).__name__} "
                             f"should be defined. Found None. Full input shape received: "
                             f"{tuple(input_shape)}")
        self.input_spec = InputSpec(min_ndim=self.rank + 2, axes={axis: channels})
        return channels

    def _weight(self, role: str, shape, name: str | None = None):
        return self.add_weight(name=name or role, shape=shape,
                               initializer=getattr(self, f"{role}_initializer"),
                               regularizer=getattr(self, f"{role}_regularizer"),
                               constraint=getattr(self, f"{role}_constraint"),
                               trainable=True, dtype=self.dtype)

    def _tf_format(self) -> str:
        return cu.tf_format(self.data_format, self.rank)

    def _finish(self, outputs):
        if self.use_bias:
            outputs = cu.add_bias(outputs, self.bias, self.data_format)
        return outputs if self.activation is None else self.activation(outputs)

    def _window_config(self) -> dict:
        return {"kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate}

    def _weights_config(self) -> dict:
        config = {"activation": activations.config_name(self.activation), "use_bias": self.use_bias}
        for role in self._ROLES:
            config[f"{role}_initializer"] = init_ops.serialize(
                getattr(self, f"{role}_initializer"))
        for role in self._ROLES:
            config[f"{role}_regularizer"] = regularizers.serialize(
                getattr(self, f"{role}_regularizer"))
            if role == "bias":
                config["activity_regularizer"] = regularizers.serialize(
                    self.activity_regularizer)
        for role in self._ROLES:
            config[f"{role}_constraint"] = constraints.serialize(
                getattr(self, f"{role}_constraint"))
        return config


class _Conv(_WindowedConv):
    """N-D convolution (cross-correlation) with `filters` outputs, optionally grouped."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None,
                 lora_alpha=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if lora_rank:
            raise NotImplementedError(f"{type(self).__name__}(lora_rank=...) is not built in "
                                      "ndflow yet")
        self.filters, self.groups = filters, groups
        self._init_window(kernel_size, strides, padding, data_format, dilation_rate,
                          activation, use_bias, locals())
        cu.check_positive(filters, "filters")
        if groups <= 0:
            raise ValueError("The number of groups must be a positive integer. Received: "
                             f"groups={groups}.")
        if filters is not None and filters % groups:
            raise ValueError("The number of filters must be evenly divisible by the number of "
                             f"groups. Received: groups={groups}, filters={filters}.")
        self._check_window()
        cu.check_strides_dilation(self.strides, self.dilation_rate)
        self.kernel = self.bias = None

    def build(self, input_shape) -> None:
        channels = self._input_channels(input_shape)
        if channels % self.groups:
            raise ValueError("The number of input channels must be evenly divisible by the "
                             f"number of groups. Received groups={self.groups}, but the input "
                             f"has {channels} channels (full input shape is "
                             f"{tuple(input_shape)}).")
        self.compute_output_shape(input_shape)  # Keras' checks of the window against the input
        self.kernel = self._weight("kernel",
                                   self.kernel_size + (channels // self.groups, self.filters))
        self.bias = self._weight("bias", (self.filters,)) if self.use_bias else None
        self.built = True

    def call(self, inputs):
        padding = self.padding
        if padding == "causal":  # pad the start of the steps: output t sees inputs <= t
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            steps = 1 if self.data_format == "channels_last" else 2
            paddings = [[0, 0], [0, 0], [0, 0]]
            paddings[steps] = [left, 0]
            inputs, padding = pad(inputs, paddings), "valid"
        outputs = nn_conv_nd.convolution(inputs, self.kernel, strides=list(self.strides),
                                         padding=padding.upper(), data_format=self._tf_format(),
                                         dilations=list(self.dilation_rate))
        return self._finish(outputs)

    def compute_output_shape(self, input_shape):
        return cu.conv_output_shape(input_shape, self.filters, self.kernel_size, self.strides,
                                    self.padding, self.data_format, self.dilation_rate)

    def get_config(self) -> dict:
        return {**super().get_config(), "filters": self.filters, **self._window_config(),
                "groups": self.groups, **self._weights_config()}


@keras_export("keras.layers.Conv1D", "keras.layers.Convolution1D")
class Conv1D(_Conv):
    rank = 1
    _ALLOW_CAUSAL = True


@keras_export("keras.layers.Conv2D", "keras.layers.Convolution2D")
class Conv2D(_Conv):
    rank = 2


@keras_export("keras.layers.Conv2DTranspose", "keras.layers.Convolution2DTranspose")
class Conv2DTranspose(_WindowedConv):
    rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.filters = filters
        self._init_window(kernel_size, strides, padding, data_format, dilation_rate,
                          activation, use_bias, locals())
        self.output_padding = None if output_padding is None else cu.standardize_tuple(
            output_padding, self.rank, "output_padding", allow_zero=True)
        cu.check_positive(filters, "filters")
        self._check_window()
        for i, (p, s) in enumerate(zip(self.output_padding or (), self.strides)):
            if p >= s:
                raise ValueError("`output_padding` must be strictly less than `strides` for "
                                 f"all dimensions. At dimension {i}, `output_padding` is {p} "
                                 f"but `strides` is {s}. Received: output_padding="
                                 f"{self.output_padding}, strides={self.strides}")
        cu.check_strides_dilation(self.strides, self.dilation_rate)
        self.kernel = self.bias = None

    def build(self, input_shape) -> None:
        channels = self._input_channels(input_shape)
        self.kernel = self._weight("kernel", self.kernel_size + (self.filters, channels))
        self.bias = self._weight("bias", (self.filters,)) if self.use_bias else None
        self.built = True

    def call(self, inputs):
        dims = cu.dynamic_dims(inputs)
        out_shape = cu.conv_transpose_output_shape(
            dims, self.kernel_size, self.filters, self.strides, self.padding,
            self.output_padding, self.data_format, self.dilation_rate)
        outputs = nn_conv.conv2d_transpose(
            inputs, self.kernel, cu.shape_argument(list(out_shape)), list(self.strides),
            padding=self.padding.upper(), data_format=self._tf_format(),
            dilations=list(self.dilation_rate))
        if hasattr(outputs, "set_shape"):  # a graph tensor: keep the statically known dims
            outputs.set_shape(self.compute_output_shape(inputs.shape.as_list()))
        return self._finish(outputs)

    def compute_output_shape(self, input_shape):
        return cu.conv_transpose_output_shape(
            input_shape, self.kernel_size, self.filters, self.strides, self.padding,
            self.output_padding, self.data_format, self.dilation_rate)

    def get_config(self) -> dict:
        window = self._window_config()
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": window["kernel_size"], "strides": window["strides"],
                "padding": window["padding"], "output_padding": self.output_padding,
                "data_format": window["data_format"],
                "dilation_rate": window["dilation_rate"], **self._weights_config()}


def _strides4(strides: tuple, data_format: str) -> list:
    return [1, *strides, 1] if data_format == "channels_last" else [1, 1, *strides]


@keras_export("keras.layers.DepthwiseConv2D")
class DepthwiseConv2D(_WindowedConv):
    rank = 2
    _ROLES = ("depthwise", "bias")

    def __init__(self, kernel_size, strides=1, padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.depth_multiplier = depth_multiplier
        self._init_window(kernel_size, strides, padding, data_format, dilation_rate,
                          activation, use_bias, locals())
        cu.check_positive(depth_multiplier, "depth_multiplier")
        self._check_window()
        self.kernel = self.bias = None

    def build(self, input_shape) -> None:
        channels = self._input_channels(input_shape)
        self.compute_output_shape(input_shape)
        self.kernel = self._weight("depthwise", self.kernel_size +
                                   (channels, self.depth_multiplier), name="kernel")
        self.bias = (self._weight("bias", (channels * self.depth_multiplier,))
                     if self.use_bias else None)
        self.built = True

    def call(self, inputs):
        outputs = nn_conv.depthwise_conv2d(
            inputs, self.kernel, _strides4(self.strides, self.data_format),
            self.padding.upper(), data_format=self._tf_format(),
            dilations=list(self.dilation_rate))
        return self._finish(outputs)

    def compute_output_shape(self, input_shape):
        channels = input_shape[cu.channel_axis(self.data_format)]
        filters = None if channels is None else channels * self.depth_multiplier
        return cu.conv_output_shape(input_shape, filters, self.kernel_size, self.strides,
                                    self.padding, self.data_format, self.dilation_rate)

    def get_config(self) -> dict:
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier,
                **self._window_config(), **self._weights_config()}


@keras_export("keras.layers.SeparableConv2D", "keras.layers.SeparableConvolution2D")
class SeparableConv2D(_WindowedConv):
    rank = 2
    _ROLES = ("depthwise", "pointwise", "bias")

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.filters, self.depth_multiplier = filters, depth_multiplier
        self._init_window(kernel_size, strides, padding, data_format, dilation_rate,
                          activation, use_bias, locals())
        cu.check_positive(depth_multiplier, "depth_multiplier")
        cu.check_positive(filters, "filters")
        self._check_window()
        self.depthwise_kernel = self.pointwise_kernel = self.bias = None

    def build(self, input_shape) -> None:
        channels = self._input_channels(input_shape)
        self.compute_output_shape(input_shape)
        self.depthwise_kernel = self._weight(
            "depthwise", self.kernel_size + (channels, self.depth_multiplier),
            name="depthwise_kernel")
        self.pointwise_kernel = self._weight(
            "pointwise", (1,) * self.rank + (channels * self.depth_multiplier, self.filters),
            name="pointwise_kernel")
        self.bias = self._weight("bias", (self.filters,)) if self.use_bias else None
        self.built = True

    def call(self, inputs):
        outputs = nn_conv_nd.separable_conv2d(
            inputs, self.depthwise_kernel, self.pointwise_kernel,
            _strides4(self.strides, self.data_format), self.padding.upper(),
            data_format=self._tf_format(), dilations=list(self.dilation_rate))
        return self._finish(outputs)

    def compute_output_shape(self, input_shape):
        return cu.conv_output_shape(input_shape, self.filters, self.kernel_size, self.strides,
                                    self.padding, self.data_format, self.dilation_rate)

    def get_config(self) -> dict:
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier,
                "filters": self.filters, **self._window_config(), **self._weights_config()}


attach(globals(), conv_docs.DOCS)
