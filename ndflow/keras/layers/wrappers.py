"""`keras.layers.Wrapper` (a layer holding another layer) and `keras.layers.TimeDistributed`
(the inner layer applied to every time step of a [batch, time, ...] input, with the same
weights)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.layer_serialization import deserialize, serialize
from ndflow.ops.array_core import constant, reshape, shape, stack


@keras_export("keras.layers.Wrapper")
class Wrapper(Layer):
    """Base class of layers that wrap another layer (`self.layer`), which is serialized
    inside the wrapper's config, as Keras 3 does.

    Args:
      layer: the wrapped `keras.layers.Layer`.
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: `layer` is not a Layer.
    """

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Layer {layer} supplied to Wrapper isn't a supported layer type. "
                             "Please ensure wrapped layer is a valid Keras layer.")
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape=None) -> None:
        if not self.layer.built:
            with self._name_scope_if_outside():
                self.layer.build(input_shape)
            self.layer.built = True
        self.built = True

    def get_config(self) -> dict:
        return {**super().get_config(), "layer": serialize(self.layer)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        layer = deserialize(config.pop("layer"), custom_objects=custom_objects)
        return cls(layer, **config)


@keras_export("keras.layers.TimeDistributed")
class TimeDistributed(Wrapper):
    """Applies a layer to every time step of its inputs: `layer(inputs[:, t])` for each t,
    with the same weights (the batch and time axes are merged for one call of the inner
    layer). A (batch, time) mask passes through.

    Args:
      layer: the `keras.layers.Layer` to apply (e.g. Dense or Conv2D).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: `layer` is not a Layer; when built, inputs of rank below 3.

    Example:

    >>> layer = tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(8))
    >>> layer(tf.zeros((2, 5, 3))).shape
    TensorShape([2, 5, 8])
    """

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `TimeDistributed` layer with a "
                             f"`keras.layers.Layer` instance. Received: {layer}")
        super().__init__(layer, **kwargs)
        self.supports_masking = True

    @staticmethod
    def _child_input_shape(input_shape):
        if not isinstance(input_shape, (tuple, list)) or len(input_shape) < 3:
            raise ValueError("`TimeDistributed` Layer should be passed an `input_shape` with "
                             f"at least 3 dimensions, received: {input_shape}")
        return (input_shape[0], *input_shape[2:])

    def compute_output_shape(self, input_shape):
        child = self.layer.compute_output_shape(self._child_input_shape(input_shape))
        return (child[0], input_shape[1], *child[1:])

    def build(self, input_shape) -> None:
        super().build(self._child_input_shape(tuple(input_shape)))

    def call(self, inputs, training=None, mask=None):
        in_shape = inputs.shape.as_list()
        if mask is not None:
            m_shape = mask.shape.as_list()
            if len(m_shape) < 2:
                raise ValueError("The `mask` passed to the `TimeDistributed` layer must be at "
                                 "least 2D (e.g., `(batch_size, timesteps)`), but it has "
                                 f"{len(m_shape)} dimension(s) with shape {mask.shape}.")
            if any(a is not None and b is not None and a != b
                   for a, b in zip(in_shape[:2], m_shape[:2])):
                raise ValueError(f"The `mask` passed to the `TimeDistributed` layer has a "
                                 f"shape {tuple(m_shape)} that is incompatible with the input "
                                 f"shape {tuple(in_shape)}. The first two dimensions of the "
                                 "mask (batch size and timesteps) must match the input's first "
                                 "two dimensions. Expected mask shape prefix: "
                                 f"({in_shape[0]}, {in_shape[1]}).")
        # [batch, time, ...] -> [batch * time, ...]: one call, the same numbers as a loop
        merged = reshape(inputs, _dims([-1], inputs, 2))
        kwargs = {}
        if self.layer._call_takes_mask and mask is not None:
            kwargs["mask"] = reshape(mask, _dims([-1], mask, 2))
        if self.layer._call_takes_training:
            kwargs["training"] = training
        out = self.layer.call(merged, **kwargs)
        return reshape(out, _dims(_sizes(inputs)[:2], out, 1))


def _sizes(x) -> list:
    """x's dims: static ints where known, scalar tensors elsewhere."""
    static = x.shape.as_list()
    if all(d is not None for d in static):
        return static
    dynamic = shape(x)
    return [dynamic[i] if d is None else d for i, d in enumerate(static)]


def _dims(head: list, x, start: int):
    """`head` followed by x's dims from `start`: a list of ints, or a stacked tensor (a
    reshape to it keeps every statically known dim)."""
    dims = list(head) + _sizes(x)[start:]
    if all(isinstance(d, int) for d in dims):
        return dims
    return stack([d if not isinstance(d, int) else constant(d, dtypes.int32) for d in dims])
