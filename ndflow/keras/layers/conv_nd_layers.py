"""Keras 3's remaining convolution layers: Conv3D, Conv1DTranspose, Conv3DTranspose,
DepthwiseConv1D and SeparableConv1D, built on the 2-D layers' code (conv_layers.py) with the
1-D and 3-D TF data formats; the 1-D depthwise/separable ones run the 2-D ops over an added
unit spatial axis, as Keras' TensorFlow backend does."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.keras.layers import conv_docs
from ndflow.keras.layers import conv_utils as cu
from ndflow.keras.layers.conv_layers import (
    Conv2DTranspose,
    DepthwiseConv2D,
    SeparableConv2D,
    _Conv,
)
from ndflow.ops import nn_conv, nn_conv_nd
from ndflow.ops.array_core import expand_dims, squeeze


def tf_format(data_format: str, rank: int) -> str:
    """NWC / NHWC / NDHWC for channels_last, NCW / NCHW / NCDHW else."""
    spatial = {1: "W", 2: "HW", 3: "DHW"}[rank]
    return f"N{spatial}C" if data_format == "channels_last" else f"NC{spatial}"


@keras_export("keras.layers.Conv3D", "keras.layers.Convolution3D")
class Conv3D(_Conv):
    rank = 3

    def _tf_format(self) -> str:
        return tf_format(self.data_format, self.rank)


class _ConvTransposeND(Conv2DTranspose):
    """Conv2DTranspose's arguments and weights at another rank (tf.nn.conv_transpose)."""

    def _tf_format(self) -> str:
        return tf_format(self.data_format, self.rank)

    def call(self, inputs):
        dims = cu.dynamic_dims(inputs)
        out_shape = cu.conv_transpose_output_shape(
            dims, self.kernel_size, self.filters, self.strides, self.padding,
            self.output_padding, self.data_format, self.dilation_rate)
        outputs = nn_conv_nd.conv_transpose(
            inputs, self.kernel, cu.shape_argument(list(out_shape)), list(self.strides),
            padding=self.padding.upper(), data_format=self._tf_format(),
            dilations=list(self.dilation_rate))
        if hasattr(outputs, "set_shape"):
            outputs.set_shape(self.compute_output_shape(inputs.shape.as_list()))
        return self._finish(outputs)


@keras_export("keras.layers.Conv1DTranspose", "keras.layers.Convolution1DTranspose")
class Conv1DTranspose(_ConvTransposeND):
    rank = 1


@keras_export("keras.layers.Conv3DTranspose", "keras.layers.Convolution3DTranspose")
class Conv3DTranspose(_ConvTransposeND):
    rank = 3


def _as_2d(layer, inputs, kernels):
    """The inputs with a unit rows axis before the steps, the kernels with a unit first
    axis, the 4-long strides and the 2-D dilations."""
    steps = 1 if layer.data_format == "channels_last" else 2
    x = expand_dims(inputs, steps)
    ks = [expand_dims(k, 0) for k in kernels]
    s = layer.strides[0]
    strides = [1, 1, s, 1] if layer.data_format == "channels_last" else [1, 1, 1, s]
    fmt = "NHWC" if layer.data_format == "channels_last" else "NCHW"
    return x, ks, strides, fmt, [1, layer.dilation_rate[0]], steps


@keras_export("keras.layers.DepthwiseConv1D")
class DepthwiseConv1D(DepthwiseConv2D):
    rank = 1

    def _tf_format(self) -> str:
        return tf_format(self.data_format, 1)

    def call(self, inputs):
        x, (k,), strides, fmt, dilations, steps = _as_2d(self, inputs, [self.kernel])
        y = nn_conv.depthwise_conv2d(x, k, strides, self.padding.upper(), data_format=fmt,
                                     dilations=dilations)
        return self._finish(squeeze(y, [steps]))


@keras_export("keras.layers.SeparableConv1D", "keras.layers.SeparableConvolution1D")
class SeparableConv1D(SeparableConv2D):
    rank = 1

    def _tf_format(self) -> str:
        return tf_format(self.data_format, 1)

    def call(self, inputs):
        x, (dk, pk), strides, fmt, dilations, steps = _as_2d(
            self, inputs, [self.depthwise_kernel, self.pointwise_kernel])
        y = nn_conv_nd.separable_conv2d(x, dk, pk, strides, self.padding.upper(),
                                        data_format=fmt, dilations=dilations)
        return self._finish(squeeze(y, [steps]))


attach(globals(), conv_docs.ND_DOCS)
