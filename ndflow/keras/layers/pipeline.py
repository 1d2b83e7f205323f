"""`keras.layers.Pipeline`: layers applied in turn, as one layer (Keras 3's way to chain
preprocessing and augmentation layers in a `tf.data` map without making a model); the
training flag and each step's output mask pass on to the next layer."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.core.nest import map_structure
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.layer_serialization import deserialize, serialize


@keras_export("keras.layers.Pipeline")
class Pipeline(Layer):
    """Applies a list of (preprocessing) layers one after another, like a Sequential
    model but usable in a `tf.data` pipeline and passing dict inputs (images with
    bounding boxes or labels) from layer to layer.

    Args:
      layers: the list of layers.
      name: the layer's name.
    """

    _allow_non_tensor_positional_args = True

    def __init__(self, layers, name=None):
        super().__init__(name=name)
        self._pipeline_layers = layers

    @property
    def layers(self) -> list:
        return self._pipeline_layers

    def call(self, inputs, training=True, mask=None):
        outputs = inputs
        for layer in self._pipeline_layers:
            kwargs = {}
            if layer._call_takes_mask:
                kwargs["mask"] = mask
            if layer._call_takes_training and training is not None:
                kwargs["training"] = training
            outputs = layer(inputs, **kwargs)
            inputs = outputs
            mask = map_structure(lambda t: getattr(t, "_keras_mask", None), outputs)
        return outputs

    def get_config(self) -> dict:
        return {"layers": [serialize(layer) for layer in self._pipeline_layers],
                "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        layers = config.get("layers")
        if not isinstance(layers, (list, tuple)):
            raise ValueError("`Pipeline` config must contain a `layers` key mapping to a list "
                             f"of serialized layers. Received config with layers={layers}.")
        return cls([deserialize(x, custom_objects=custom_objects) for x in layers],
                   name=config.get("name"))
