"""`keras.layers.Bidirectional`: a recurrent layer run forwards and backwards over the time
axis, the two outputs merged (concat, sum, mul, ave, or kept apart)."""

from __future__ import annotations

import copy

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.core.nest import flatten
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.layer_serialization import deserialize, serialize
from ndflow.ops.array_reorder import reverse
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast

_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


@keras_export("keras.layers.Bidirectional")
class Bidirectional(Layer):
    """A bidirectional recurrent layer: runs a copy of a recurrent layer forwards and
    another backwards over the sequence, and merges their outputs.

    Args:
      layer: the recurrent layer (LSTM, GRU, RNN...); a copy with `go_backwards` flipped
        runs backwards.
      merge_mode: how the two outputs combine: "concat" (the default), "sum", "mul",
        "ave", or None (a list of both).
      weights: optional initial weights (forward's then backward's).
      backward_layer: optional explicit backward layer (its `go_backwards` must be the
        opposite of `layer`'s).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: `layer` or `backward_layer` is not a Layer, or an unknown `merge_mode`.

    Example:

    >>> layer = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(4))
    >>> layer(tf.zeros((2, 5, 3))).shape
    TensorShape([2, 8])
    """

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None,
                 **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `Bidirectional` layer with a "
                             f"`keras.layers.Layer` instance. Received: {layer}")
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError("`backward_layer` need to be a `keras.layers.Layer` instance. "
                             f"Received: {backward_layer}")
        if merge_mode not in _MERGE_MODES:
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should "
                             'be one of {"sum", "mul", "ave", "concat", None}')
        super().__init__(**kwargs)
        config = serialize(layer)
        config["config"]["name"] = "forward_" + layer.name.removeprefix("forward_")
        self.forward_layer = deserialize(config)
        if backward_layer is None:
            config = serialize(layer)
            config["config"]["go_backwards"] = True
            config["config"]["name"] = "backward_" + layer.name.removeprefix("backward_")
            self.backward_layer = deserialize(config)
        else:
            self.backward_layer = backward_layer
        if hasattr(layer, "use_cudnn"):
            self.forward_layer.use_cudnn = layer.use_cudnn
            self.backward_layer.use_cudnn = layer.use_cudnn
        self._verify_layer_config()
        for sub in (self.forward_layer, self.backward_layer):
            if getattr(sub, "zero_output_for_mask", None) is not None:
                sub.zero_output_for_mask = sub.return_sequences
        self.merge_mode = merge_mode
        self._initial_weights = list(weights) if weights else None
        self.stateful = layer.stateful
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self.supports_masking = True
        self.input_spec = layer.input_spec

    def _verify_layer_config(self) -> None:
        fwd, bwd = self.forward_layer, self.backward_layer
        if fwd.go_backwards == bwd.go_backwards:
            raise ValueError("Forward layer and backward layer should have different "
                             "`go_backwards` value. Received: forward_layer.go_backwards "
                             f"{fwd.go_backwards}, backward_layer.go_backwards="
                             f"{bwd.go_backwards}")
        for a in ("stateful", "return_sequences", "return_state"):
            if getattr(fwd, a) != getattr(bwd, a):
                raise ValueError("Forward layer and backward layer are expected to have the "
                                 f'same value for attribute "{a}", got "{getattr(fwd, a)}" '
                                 f'for forward layer and "{getattr(bwd, a)}" for backward '
                                 "layer")

    def build(self, sequences_shape, initial_state_shape=None) -> None:
        with self._name_scope_if_outside():
            for sub in (self.forward_layer, self.backward_layer):
                if not sub.built:
                    sub.build_from_config({"input_shape": tuple(sequences_shape)})
        if self._initial_weights:
            self.built = True
            self.set_weights(self._initial_weights)
            self._initial_weights = None
        self.built = True

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        output_shape = self.forward_layer.compute_output_shape(sequences_shape)
        state_shape = ()
        if self.return_state:
            output_shape, state_shape = output_shape[0], tuple(output_shape[1:])
        if self.merge_mode == "concat":
            output_shape = tuple(output_shape[:-1]) + (output_shape[-1] * 2,)
        elif self.merge_mode is None:
            output_shape = [output_shape, output_shape]
        if self.return_state:
            if self.merge_mode is None:
                return tuple(output_shape) + state_shape + state_shape
            return (output_shape,) + state_shape + state_shape
        return tuple(output_shape)

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        if self.return_sequences:
            output_mask = mask if self.merge_mode else [mask, mask]
        else:
            output_mask = None if self.merge_mode else [None, None]
        if self.return_state:
            n_states = 2 * len(flatten(self.forward_layer.state_size))
            head = output_mask if isinstance(output_mask, list) else [output_mask]
            return head + [None] * n_states
        return output_mask

    def call(self, sequences, initial_state=None, mask=None, training=None):
        kwargs = {}
        if getattr(self.forward_layer, "_call_takes_training", False):
            kwargs["training"] = training
        if getattr(self.forward_layer, "_call_takes_mask", False):
            kwargs["mask"] = mask
        forward_state = backward_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            forward_state, backward_state = initial_state[:half], initial_state[half:]
        y = self.forward_layer(sequences, initial_state=forward_state, **kwargs)
        y_rev = self.backward_layer(sequences, initial_state=backward_state, **kwargs)
        states = ()
        if self.return_state:
            states = tuple(y[1:]) + tuple(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        compute = dtypes.as_dtype(self.compute_dtype)
        y = y if y.dtype is compute else cast(y, compute)
        y_rev = y_rev if y_rev.dtype is compute else cast(y_rev, compute)
        if self.return_sequences:
            y_rev = reverse(y_rev, [1])
        if self.merge_mode == "concat":
            output = concat([y, y_rev], -1)
        elif self.merge_mode == "sum":
            output = y + y_rev
        elif self.merge_mode == "ave":
            output = (y + y_rev) / 2
        elif self.merge_mode == "mul":
            output = y * y_rev
        else:
            output = (y, y_rev)
        if self.return_state:
            return (output if self.merge_mode is None else (output,)) + states
        return output

    @property
    def states(self):
        if self.forward_layer.states and self.backward_layer.states:
            return tuple(list(self.forward_layer.states) + list(self.backward_layer.states))
        return None

    def reset_state(self) -> None:
        if not self.stateful:
            raise AttributeError("Layer must be stateful.")
        self.forward_layer.reset_state()
        self.backward_layer.reset_state()

    reset_states = reset_state

    def get_config(self) -> dict:
        return {**super().get_config(), "merge_mode": self.merge_mode,
                "layer": serialize(self.forward_layer),
                "backward_layer": serialize(self.backward_layer)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = copy.deepcopy(config)
        config["layer"] = deserialize(config["layer"], custom_objects)
        backward = config.pop("backward_layer", None)
        if backward is not None:
            config["backward_layer"] = deserialize(backward, custom_objects)
        return cls(**config)

