"""Keras 3's 3-D pooling layers: MaxPooling3D, AveragePooling3D (on ndflow's MaxPool3D /
AvgPool3D ops), GlobalMaxPooling3D and GlobalAveragePooling3D, with their Keras aliases."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras.layers.pooling_layers import _GlobalPooling, _Pooling
from ndflow.ops import nn_pool, reduction


class _Pooling3D(_Pooling):
    rank = 3

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name, **kwargs)

    def call(self, inputs):
        pool = nn_pool.max_pool if self._MODE == "max" else nn_pool.avg_pool
        fmt = "NDHWC" if self.data_format == "channels_last" else "NCDHW"
        return pool(inputs, list(self.pool_size), list(self.strides), self.padding.upper(),
                    data_format=fmt)


@keras_export("keras.layers.MaxPooling3D", "keras.layers.MaxPool3D")
class MaxPooling3D(_Pooling3D):
    """3-D max pooling over windows of `pool_size` (depth, rows, cols) of 5-D volumes.

    Args:
      pool_size: the window size, an int or a tuple of 3 (default (2, 2, 2)).
      strides: the step between windows (default `pool_size`).
      padding: "valid" (windows inside the input only) or "same" (output size
        ceil(input / stride)).
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      name: the layer's name.
      **kwargs: other Layer arguments.
    """


@keras_export("keras.layers.AveragePooling3D", "keras.layers.AvgPool3D")
class AveragePooling3D(_Pooling3D):
    """3-D average pooling over windows of `pool_size` (depth, rows, cols) of 5-D volumes.
    Padded positions ('same') are not counted in the means.

    Args:
      pool_size: the window size, an int or a tuple of 3 (default (2, 2, 2)).
      strides: the step between windows (default `pool_size`).
      padding: "valid" (windows inside the input only) or "same" (output size
        ceil(input / stride)).
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      name: the layer's name.
      **kwargs: other Layer arguments.
    """

    _MODE = "average"


@keras_export("keras.layers.GlobalMaxPooling3D", "keras.layers.GlobalMaxPool3D")
class GlobalMaxPooling3D(_GlobalPooling):
    """Global max pooling of 5-D volumes: the max over depth, rows and columns.

    Args:
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      keepdims: whether the pooled axes stay, with size 1.
      **kwargs: Layer arguments (name, dtype, ...).

    Output shape:
      (batch, channels), or with size-1 pooled axes for `keepdims`.
    """

    rank = 3


@keras_export("keras.layers.GlobalAveragePooling3D", "keras.layers.GlobalAvgPool3D")
class GlobalAveragePooling3D(_GlobalPooling):
    """Global mean pooling of 5-D volumes: the mean over depth, rows and columns.

    Args:
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      keepdims: whether the pooled axes stay, with size 1.
      **kwargs: Layer arguments (name, dtype, ...).

    Output shape:
      (batch, channels), or with size-1 pooled axes for `keepdims`.
    """

    rank = 3
    _REDUCE = staticmethod(reduction.reduce_mean)
