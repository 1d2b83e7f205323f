"""Keras 3's pooling layers: MaxPooling1D/2D, AveragePooling1D/2D (windowed, on ndflow's
MaxPool/AvgPool ops) and GlobalAverage/GlobalMaxPooling1D/2D (reductions over the spatial
axes, `keepdims`; GlobalAveragePooling1D averages only the unmasked steps)."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.keras.layers import conv_utils as cu
from ndflow.keras.layers import pooling_docs
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.input_spec import InputSpec
from ndflow.ops import array_core, nn_pool, reduction
from ndflow.ops.arithmetic import where
from ndflow.ops.array_fill import zeros_like
from ndflow.ops.cast import cast


class _Pooling(Layer):
    """A `pool_size` window moved by `strides` (default: `pool_size`); 'valid' or 'same'."""

    rank = 2
    _MODE = "max"

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, name=None,
                 **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = cu.standardize_tuple(pool_size, self.rank, "pool_size")
        self.strides = cu.standardize_tuple(pool_size if strides is None else strides,
                                            self.rank, "strides", allow_zero=True)
        self.padding = padding
        self.data_format = cu.standardize_data_format(data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)
        self.built = True  # no weights: built at construction, as Keras'

    def call(self, inputs):
        pool = nn_pool.max_pool if self._MODE == "max" else nn_pool.avg_pool
        return pool(inputs, list(self.pool_size), list(self.strides), self.padding.upper(),
                    data_format=cu.tf_format(self.data_format, self.rank))

    def compute_output_shape(self, input_shape):
        return cu.pooling_output_shape(input_shape, self.pool_size, self.strides,
                                       self.padding, self.data_format)

    def get_config(self) -> dict:
        return {**super().get_config(), "pool_size": self.pool_size, "padding": self.padding,
                "strides": self.strides, "data_format": self.data_format}


@keras_export("keras.layers.MaxPooling1D", "keras.layers.MaxPool1D")
class MaxPooling1D(_Pooling):
    rank = 1


@keras_export("keras.layers.AveragePooling1D", "keras.layers.AvgPool1D")
class AveragePooling1D(_Pooling):
    rank = 1
    _MODE = "average"

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, name=None,
                 **kwargs):   # Keras 3: the average pools' pool_size has no default
        super().__init__(pool_size, strides, padding, data_format, name, **kwargs)


@keras_export("keras.layers.MaxPooling2D", "keras.layers.MaxPool2D")
class MaxPooling2D(_Pooling):
    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name, **kwargs)


@keras_export("keras.layers.AveragePooling2D", "keras.layers.AvgPool2D")
class AveragePooling2D(_Pooling):
    _MODE = "average"

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name, **kwargs)


class _GlobalPooling(Layer):
    """A reduction over every spatial axis (kept as size 1 with `keepdims`)."""

    rank = 2
    _REDUCE = staticmethod(reduction.reduce_max)

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = cu.standardize_data_format(data_format)
        self.keepdims = keepdims
        self.input_spec = InputSpec(ndim=self.rank + 2)
        self.built = True

    def call(self, inputs):
        return self._REDUCE(inputs, axis=cu.spatial_axes(self.data_format, self.rank + 2),
                            keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        batch, spatial, channels = cu.split_shape(input_shape, self.data_format)
        if self.keepdims:
            return cu.join_shape(batch, (1,) * len(spatial), channels, self.data_format)
        return (batch, channels)

    def get_config(self) -> dict:
        return {**super().get_config(), "data_format": self.data_format,
                "keepdims": self.keepdims}


@keras_export("keras.layers.GlobalMaxPooling1D", "keras.layers.GlobalMaxPool1D")
class GlobalMaxPooling1D(_GlobalPooling):
    rank = 1


@keras_export("keras.layers.GlobalAveragePooling1D", "keras.layers.GlobalAvgPool1D")
class GlobalAveragePooling1D(_GlobalPooling):
    rank = 1
    _REDUCE = staticmethod(reduction.reduce_mean)

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(data_format=data_format, keepdims=keepdims, **kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        steps = 1 if self.data_format == "channels_last" else 2
        keep = array_core.expand_dims(cast(mask, "bool"),
                                      2 if self.data_format == "channels_last" else 1)
        total = reduction.reduce_sum(where(keep, inputs, zeros_like(inputs)), axis=steps,
                                     keepdims=self.keepdims)
        count = reduction.reduce_sum(cast(keep, inputs.dtype), axis=steps,
                                     keepdims=self.keepdims)
        return total / count

    def compute_mask(self, inputs, mask=None):
        return None


@keras_export("keras.layers.GlobalMaxPooling2D", "keras.layers.GlobalMaxPool2D")
class GlobalMaxPooling2D(_GlobalPooling):
    pass


@keras_export("keras.layers.GlobalAveragePooling2D", "keras.layers.GlobalAvgPool2D")
class GlobalAveragePooling2D(_GlobalPooling):
    _REDUCE = staticmethod(reduction.reduce_mean)


attach(globals(), pooling_docs.DOCS)
