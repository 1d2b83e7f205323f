"""`tf.keras.Input` and `InputLayer`: where a functional model's graph starts. `Input`
returns the KerasTensor that an InputLayer produces (a Node with no inputs)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.keras import global_config
from ndflow.keras.keras_tensor import KerasTensor, Node
from ndflow.keras.layers import input_layer_docs
from ndflow.keras.layers.base_layer import Layer


@keras_export("keras.layers.InputLayer")
class InputLayer(Layer):
    def __init__(self, shape=None, batch_size=None, dtype=None, sparse=None, ragged=None,
                 batch_shape=None, input_tensor=None, optional=False, name=None, **kwargs):
        if "input_shape" in kwargs:
            shape = kwargs.pop("input_shape")
        if "batch_input_shape" in kwargs:
            batch_shape = kwargs.pop("batch_input_shape")
        super().__init__(name=name, **kwargs)
        if shape is not None and batch_shape is not None:
            raise ValueError("You cannot pass both `shape` and `batch_shape` at the same time.")
        if batch_size is not None and batch_shape is not None:
            raise ValueError("You cannot pass both `batch_size` and `batch_shape` at the same "
                             "time.")
        if ragged:
            raise ValueError("Ragged inputs (`ragged=True`) are not supported by ndflow's "
                             "Keras yet.")
        if shape is None and batch_shape is None and input_tensor is None:
            raise ValueError("You must pass a `shape` argument.")
        if shape is not None:
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            batch_shape = (batch_size,) + shape
        if input_tensor is not None:
            if not isinstance(input_tensor, KerasTensor):
                raise ValueError("Argument `input_tensor` must be a KerasTensor. Received "
                                 f"invalid type: input_tensor={input_tensor} (of type "
                                 f"{type(input_tensor)})")
            batch_shape, dtype = input_tensor.shape, input_tensor.dtype
        self._batch_shape = tuple(batch_shape)
        self._input_dtype = dtypes.as_dtype(dtype or global_config.floatx())
        self.sparse, self.optional = bool(sparse), optional
        self.built = True
        if input_tensor is None:
            input_tensor = KerasTensor(self._batch_shape, self._input_dtype,
                                       sparse=self.sparse, name=name)
        Node(self, (), {}, input_tensor)
        self.output = input_tensor

    @property
    def batch_shape(self) -> tuple:
        return self._batch_shape

    @property
    def dtype(self) -> str:
        return self._input_dtype.name

    def call(self, inputs):
        return inputs

    def get_build_config(self):
        return None

    def compute_output_shape(self, input_shape=None):
        return self._batch_shape

    def get_config(self) -> dict:
        return {"batch_shape": self._batch_shape, "dtype": self._input_dtype.name,
                "sparse": self.sparse, "ragged": False, "name": self.name,
                "optional": self.optional}

    @classmethod
    def from_config(cls, config: dict):
        config = dict(config)
        if "batch_input_shape" in config:
            config["batch_shape"] = config.pop("batch_input_shape")
        return cls(**config)


@keras_export("keras.Input", "keras.layers.Input")
def Input(shape=None, batch_size=None, dtype=None, sparse=None, ragged=None, batch_shape=None,
          name=None, tensor=None, optional=False):  # noqa: N802 - Keras' name
    layer = InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, sparse=sparse,
                       ragged=ragged, batch_shape=batch_shape, name=name, input_tensor=tensor,
                       optional=optional)
    return layer.output


attach(globals(), input_layer_docs.DOCS)
