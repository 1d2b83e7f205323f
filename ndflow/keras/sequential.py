"""`tf.keras.Sequential`: a stack of layers, each called on the previous one's output. Once
the input shape is known (an `Input`/`InputLayer` first, `input_shape=` on the first layer,
or the first call) the stack is also recorded as a functional graph, which gives
`summary()` its shapes and the model its `inputs`/`outputs`."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.core.tensor import Tensor
from ndflow.keras.functional import Functional, adjust_input_rank
from ndflow.keras.keras_tensor import KerasTensor
from ndflow.keras.layers import layer_serialization
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.input_layer import InputLayer
from ndflow.keras.model import Model
from ndflow.ops.cast import cast


@keras_export("keras.Sequential", "keras.models.Sequential")
class Sequential(Model):
    """A model that is a plain stack of layers, each taking the previous one's output
    (`training` is passed to the layers that take it).

    Built on its first call or when it starts with `keras.Input` (then `summary()` works
    at once); `add(layer)` and `pop()` change the stack.

    Args:
      layers: optional list of layers (a `keras.Input` first fixes the input shape).
      trainable: whether the weights are trained.
      name: the model's name.

    Example:

    >>> model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4),
    ...                              tf.keras.layers.Dense(1)])
    >>> model.output_shape
    (None, 1)
    """

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(trainable=trainable, name=name)
        self._functional = None
        self._layers_list: list = []
        for layer in layers or []:
            self.add(layer, rebuild=False)
        self._maybe_rebuild()

    @property
    def _layers(self) -> list:
        return list(self._layers_list)

    @property
    def layers(self) -> list:
        return [layer for layer in self._layers_list if not isinstance(layer, InputLayer)]

    def add(self, layer, rebuild=True) -> None:
        if isinstance(layer, KerasTensor) and layer._keras_history is not None and \
                isinstance(layer._keras_history.operation, InputLayer):
            layer = layer._keras_history.operation
        if not isinstance(layer, Layer):
            raise ValueError("Only instances of `keras.Layer` can be added to a Sequential "
                             f"model. Received: {layer} (of type {type(layer)})")
        if isinstance(layer, InputLayer) and self._layers_list:
            raise ValueError(f"Sequential model '{self.name}' has already been configured to "
                             f"use input shape {self._layers_list[0]}. You cannot add a "
                             "different Input layer to it.")
        # Keras 3: another layer of the same name; the same layer again is allowed (its
        # weights shared, as a repeated block)
        if any(existing.name == layer.name and existing is not layer
               for existing in self._layers_list):
            raise ValueError("All layers added to a Sequential model should have unique "
                             f"names. Name '{layer.name}' is already the name of a layer in "
                             "this model. Update the `name` argument to pass a unique name.")
        if not self._layers_list and not isinstance(layer, InputLayer) and \
                getattr(layer, "_input_shape_arg", None) is not None:
            self._layers_list.append(InputLayer(batch_shape=layer._input_shape_arg))
        self._layers_list.append(layer)
        if rebuild:
            self._maybe_rebuild()
        else:
            self.built = False

    def pop(self, rebuild=True):
        if not self.layers:
            raise TypeError("There are no layers in the model.")
        layer = self._layers_list.pop()
        self.built = False
        self._functional = None
        if rebuild:
            self._maybe_rebuild()
        return layer

    def _maybe_rebuild(self) -> None:
        self.built = False
        self._functional = None
        if self._layers_list and isinstance(self._layers_list[0], InputLayer) and \
                len(self._layers_list) > 1:
            self.build(self._layers_list[0].batch_shape)

    def build(self, input_shape=None) -> None:
        if input_shape is None or not self._layers_list:
            raise ValueError(f"Sequential model {self.name} cannot be built because it has no "
                             "layers. Call `model.add(layer)`.")
        if isinstance(input_shape, list):
            input_shape = tuple(input_shape)
        if not isinstance(self._layers_list[0], InputLayer):
            self._layers_list.insert(0, InputLayer(batch_shape=input_shape,
                                                   dtype=self._layers_list[0].compute_dtype))
        inputs = self._layers_list[0].output
        x = inputs
        with self._name_scope_if_outside():
            for layer in self._layers_list[1:]:
                x = layer(x)
        self._functional = Functional(inputs, x)   # takes an automatic name, as Keras
        self.built = True

    def call(self, inputs, training=None, mask=None):
        if self._functional is not None and type(inputs) in (list, tuple):
            # Keras 3 runs a built Sequential as its Functional: a list's structure mismatch
            # is a warning, its first tensor the input
            return self._functional.call(inputs, training=training, mask=mask)
        x = inputs
        first = self._layers_list[0] if self._layers_list else None
        if isinstance(first, InputLayer) and not isinstance(x, (list, tuple, dict)):
            if isinstance(x, Tensor) and x.dtype != first.output.dtype:
                x = cast(x, first.output.dtype)   # as its Functional: the Input's dtype
            x = adjust_input_rank(x, first.batch_shape, first.name)
        for layer in self.layers:
            x = layer(x, training=training) if layer._call_takes_training else layer(x)
        return x

    @property
    def input_shape(self):
        if self._functional:
            return self._functional.input_shape
        raise AttributeError(f"Sequential model '{self.name}' has no defined input shape yet.")

    @property
    def output_shape(self):
        if self._functional:
            return self._functional.output_shape
        raise AttributeError(f"Sequential model '{self.name}' has no defined output shape yet.")

    @property
    def inputs(self):
        if self._functional:
            return self._functional.inputs
        raise AttributeError(f"Sequential model '{self.name}' has no defined inputs yet.")

    @property
    def outputs(self):
        if self._functional:
            return self._functional.outputs
        raise AttributeError(f"Sequential model '{self.name}' has no defined outputs yet.")

    # `input` / `output` are the Layer's (Keras 3): the tensors of the model's first call
    # on KerasTensors, an AttributeError ("has never been called") until then, even once
    # built from an `Input`.

    @property
    def _inputs_struct(self):
        """The input structure of the functional graph (export signatures read it, as
        Functional's); None until built."""
        return self._functional._inputs_struct if self._functional else None

    @property
    def output_names(self) -> list:
        return self._functional.output_names if self._functional else []

    def compute_output_shape(self, input_shape):
        shape = input_shape
        for layer in self.layers:
            shape = layer.compute_output_shape(shape)
        return shape

    def get_config(self) -> dict:
        layers = [layer_serialization.serialize(layer) for layer in self._layers_list]
        config = {**Layer.get_config(self), "layers": layers}
        if self._functional is not None:
            config["build_input_shape"] = self._layers_list[0].batch_shape
        return config

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        model = cls(name=config.get("name"), trainable=config.get("trainable", True))
        for spec in config["layers"]:
            model.add(layer_serialization.deserialize(spec, custom_objects), rebuild=False)
        model._maybe_rebuild()
        if not model.built and config.get("build_input_shape"):
            model.build(tuple(config["build_input_shape"]))
        return model
