"""`tf.keras.Sequential`: a stack of layers, each called on the previous one's output."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.keras.layers import core_layers
from ndflow.keras.layers.base_layer import Layer

_LAYERS = {c.__name__: c for c in (core_layers.Dense, core_layers.Activation,
                                   core_layers.Flatten, core_layers.Dropout)}


@tf_export("keras.Sequential", "keras.models.Sequential",
           v1=["keras.Sequential", "keras.models.Sequential"])
class Sequential(Layer):
    """Layers applied in order; `training` is passed to the layers that take it."""

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(trainable=trainable, name=name)
        self._layers_list: list = []
        for layer in layers or []:
            self.add(layer)

    @property
    def _layers(self) -> list:
        return list(self._layers_list)

    @property
    def layers(self) -> list:
        return list(self._layers_list)

    def add(self, layer) -> None:
        if not isinstance(layer, Layer):
            raise TypeError("Only instances of `keras.Layer` can be added to a Sequential "
                            f"model. Received: {layer} (of type {type(layer)})")
        if any(existing.name == layer.name for existing in self._layers_list):
            raise ValueError(f"All layers added to a Sequential model should have unique "
                             f"names. Name '{layer.name}' is already the name of a layer in "
                             "this model.")
        self._layers_list.append(layer)
        self.built = False

    def pop(self):
        if not self._layers_list:
            raise TypeError("There are no layers in the model.")
        return self._layers_list.pop()

    def build(self, input_shape=None) -> None:
        self.built = True

    def call(self, inputs, training=None, mask=None):
        x = inputs
        for layer in self._layers:
            x = layer(x, training=training)
        return x

    def get_config(self) -> dict:
        return {**super().get_config(), "layers": [
            {"module": "keras.layers", "class_name": type(layer).__name__,
             "config": layer.get_config(), "registered_name": None} for layer in self._layers]}

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        known = {**_LAYERS, **(custom_objects or {})}
        layers = []
        for spec in config["layers"]:
            layer_cls = known.get(spec["class_name"])
            if layer_cls is None:
                raise TypeError(f"Could not locate class '{spec['class_name']}'. Make sure "
                                "custom classes are passed in `custom_objects`.")
            layers.append(layer_cls.from_config(spec["config"]))
        return cls(layers, trainable=config.get("trainable", True), name=config.get("name"))
