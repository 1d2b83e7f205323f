"""Keras 3's 3-D pooling layers: MaxPooling3D, AveragePooling3D (on ndflow's MaxPool3D /
AvgPool3D ops), GlobalMaxPooling3D and GlobalAveragePooling3D, with their Keras aliases."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.keras.layers import pooling_docs
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
    pass


@keras_export("keras.layers.AveragePooling3D", "keras.layers.AvgPool3D")
class AveragePooling3D(_Pooling3D):
    _MODE = "average"

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, name=None,
                 **kwargs):   # Keras 3: no default pool_size
        super().__init__(pool_size, strides, padding, data_format, name, **kwargs)


@keras_export("keras.layers.GlobalMaxPooling3D", "keras.layers.GlobalMaxPool3D")
class GlobalMaxPooling3D(_GlobalPooling):
    rank = 3


@keras_export("keras.layers.GlobalAveragePooling3D", "keras.layers.GlobalAvgPool3D")
class GlobalAveragePooling3D(_GlobalPooling):
    rank = 3
    _REDUCE = staticmethod(reduction.reduce_mean)


attach(globals(), pooling_docs.DOCS_3D)
