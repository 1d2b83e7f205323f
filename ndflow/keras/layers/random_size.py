"""`tf.keras.layers.RandomHeight` and `RandomWidth`: Keras 2's layers that TF 2.21's tf.keras
still exports (Keras 3 keeps them as legacy layers). Each call draws one factor for the batch
and resizes the images' height (or width) to int(factor * size) with `tf.image.resize`; the
layer's `training` defaults to True, so it resizes at inference too unless told otherwise."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.keras.layers import random_size_docs
from ndflow.keras.layers.base_layer import Layer
from ndflow.ops import array_core, image_resize
from ndflow.ops import random as random_ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast


class _RandomSize(Layer):
    """One image axis (-3: height, -2: width) scaled by a factor drawn in
    [1 + lower, 1 + upper]."""

    _axis = -3
    _word = ""

    def __init__(self, factor, interpolation="bilinear", seed=None, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor
        lower, upper = (factor[0], factor[1]) if isinstance(factor, (tuple, list)) \
            else (-factor, factor)
        if upper < lower:
            raise ValueError(f"`factor` argument cannot have an upper bound {self._word} than "
                             f"the lower bound. Received: factor={factor}")
        if lower < -1.0 or upper < -1.0:
            raise ValueError("`factor` argument must have values larger than -1. "
                             f"Received: factor={factor}")
        self.lower, self.upper = lower, upper
        self.interpolation, self.seed = interpolation, seed

    def call(self, inputs, training=True):
        inputs = convert_to_tensor(inputs, dtype=self.compute_dtype)
        if not training:
            return inputs
        dims = array_core.shape(inputs)
        factor = random_ops.random_uniform([], 1.0 + self.lower, 1.0 + self.upper,
                                           seed=self.seed)
        sizes = [dims[-3], dims[-2]]
        i = self._axis + 3
        sizes[i] = cast(factor * cast(sizes[i], dtypes.float32), dtypes.int32)
        output = cast(image_resize.resize(inputs, array_core.stack(sizes),
                                          method=self.interpolation), self.compute_dtype)
        shape = inputs.shape.as_list() if inputs.shape.rank is not None else None
        if shape is not None:
            shape[self._axis] = None
            output.set_shape(shape)
        return output

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        shape[self._axis] = None
        return tuple(shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor,
                "interpolation": self.interpolation, "seed": self.seed}


@keras_export("keras.layers.RandomHeight")
class RandomHeight(_RandomSize):
    _axis = -3
    _word = "lesser"


@keras_export("keras.layers.RandomWidth")
class RandomWidth(_RandomSize):
    _axis = -2
    _word = "less"


attach(globals(), random_size_docs.DOCS)
