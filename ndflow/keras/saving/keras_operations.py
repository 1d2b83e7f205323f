"""The keras.ops operations Keras 3 records as nodes of a functional model's config, as layers.

With the TensorFlow backend a Masking layer's mask is computed symbolically by
`keras.ops.not_equal` and `keras.ops.any`, and Keras saves those operations as graph nodes
(module `keras.src.ops.numpy`) whose output feeds the next layers' `mask=` argument. These
classes let ndflow load such configs, compute the same values, and write the nodes back the
way Keras reads them."""

from __future__ import annotations

from ndflow.keras.layers.base_layer import Layer
from ndflow.ops import comparison, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast


class KerasOperation(Layer):
    """A stateless keras.ops operation as a functional node (no weights, no mask)."""

    _allow_non_tensor_positional_args = True   # Keras Operations: constants too

    _keras_module = "keras.src.ops.numpy"

    def __init__(self, name=None, **kwargs):
        super().__init__(name=name, **kwargs)

    @property
    def _keras_registered_name(self):
        return type(self).__name__

    def get_config(self):
        return {"name": self.name}


class NotEqual(KerasOperation):
    """`keras.ops.not_equal(x1, x2)`: elementwise x1 != x2 (bool)."""

    def call(self, x1, x2):
        return comparison.not_equal(x1, x2)

    def compute_output_shape(self, x1_shape, x2_shape=None):
        return x1_shape


class Any(KerasOperation):
    """`keras.ops.any(x, axis, keepdims)`: logical or over `axis` (bool)."""

    def __init__(self, axis=None, keepdims=False, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.axis, self.keepdims = axis, keepdims

    def call(self, x):
        return reduction.reduce_any(x, axis=self.axis, keepdims=self.keepdims)

    def get_config(self):
        return {"name": self.name, "axis": self.axis, "keepdims": self.keepdims}


class LogicalOr(KerasOperation):
    """`keras.ops.logical_or(x1, x2)`: how a merge layer combines its inputs' masks."""

    def call(self, x1, x2):
        return comparison.logical_or(x1, x2)

    def compute_output_shape(self, x1_shape, x2_shape=None):
        return x1_shape


class ConvertToTensor(KerasOperation):
    """`keras.ops.convert_to_tensor(x, dtype)`: Keras' Attention layers record it on their
    output mask (module `keras.src.ops.core`)."""

    _keras_module = "keras.src.ops.core"

    def __init__(self, dtype=None, sparse=None, ragged=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self._target_dtype, self.sparse, self.ragged = dtype, sparse, ragged

    def call(self, x):
        x = convert_to_tensor(x)
        return x if self._target_dtype is None else cast(x, self._target_dtype)

    def compute_output_shape(self, x_shape):
        return x_shape

    def get_config(self):
        return {"name": self.name, "dtype": self._target_dtype, "sparse": self.sparse,
                "ragged": self.ragged}
