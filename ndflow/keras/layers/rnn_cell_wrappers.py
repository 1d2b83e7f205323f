"""`tf.nn.RNNCellDropoutWrapper`, `RNNCellResidualWrapper`, `RNNCellDeviceWrapper`: TF 2's
Keras-layer cell wrappers (TensorFlow's `rnn_cell_wrapper_v2`) around a Keras cell. A wrapper
is itself a cell: `wrapper(inputs, states)` runs the wrapped cell's `call` with dropout,
a residual connection or a device scope around it, and `keras.layers.RNN(wrapper)` scans it.
What each wrapper does is shared with TF1's wrappers (ops/rnn_cell_wrapper_impl.py); this
module adds the Keras layer around it and its config."""

from __future__ import annotations

import importlib
import inspect

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.nest import map_structure
from ndflow.core.scopes import device as device_scope
from ndflow.core.shapes import as_shape
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.layer_serialization import deserialize
from ndflow.ops.array_fill import zeros
from ndflow.ops.rnn_cell_wrapper_impl import (
    DeviceWrapperBase,
    DropoutWrapperBase,
    ResidualWrapperBase,
    default_dropout_state_filter_visitor,
)


class _RNNCellWrapperV2(Layer):
    """A cell around `cell`; builds it and calls its `call`, as TensorFlow's wrapper does."""

    def __init__(self, cell, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cell = cell
        params = inspect.signature(cell.call).parameters
        self._expects_training_arg = "training" in params or any(
            p.kind == p.VAR_KEYWORD for p in params.values())

    wrapped_cell = property(lambda self: self.cell)
    state_size = property(lambda self: self.cell.state_size)
    output_size = property(lambda self: self.cell.output_size)

    def build(self, inputs_shape):
        if not self.cell.built:
            self.cell.build(inputs_shape)
        self.built = True

    def call(self, inputs, state, training=None, **kwargs):
        if training is not None and self._expects_training_arg:
            kwargs["training"] = training
        return self._call_wrapped_cell(inputs, state, self.cell.call, **kwargs)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """Zeros of the wrapped cell's state sizes (a tensor for a single state)."""
        fn = getattr(self.cell, "get_initial_state", None)
        if fn is not None and dtype is None and inputs is None:
            return fn(batch_size=batch_size)
        if inputs is not None:
            batch_size, dtype = inputs.shape[0], inputs.dtype
        dtype = dtypes.as_dtype(dtype or self.compute_dtype)
        state = map_structure(lambda s: zeros([batch_size] + as_shape(s).as_list(), dtype),
                              self.state_size)
        return state

    def zero_state(self, batch_size, dtype):
        return self.get_initial_state(batch_size=batch_size, dtype=dtype)

    def get_config(self):
        config = super().get_config()
        config["dtype"] = self._dtype_policy.name    # the legacy layers' plain dtype name
        config["cell"] = {"class_name": type(self.cell).__name__,
                          "config": self.cell.get_config()}
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cell = deserialize(config.pop("cell"), custom_objects=custom_objects)
        return cls(cell, **config)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        raise NotImplementedError


def _function_config(fn, prefix: str) -> dict:
    if not callable(fn):
        raise ValueError(f"Unrecognized function type for input: {type(fn)}")
    if fn.__name__ == "<lambda>":
        raise ValueError(f"ndflow cannot serialize the lambda {prefix}: pass a named function")
    return {prefix: fn.__name__, f"{prefix}_type": "function",
            f"{prefix}_module": fn.__module__}


def _function_from_config(config: dict, prefix: str, custom_objects):
    name = config.pop(prefix)
    config.pop(f"{prefix}_type", None)
    module = config.pop(f"{prefix}_module", None)
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, TypeError, ValueError):
        raise ValueError(f"Unknown {prefix}: {name!r} (module {module!r}); pass it in "
                         "custom_objects") from None


def _with_function(config, key: str, argument: str, custom_objects) -> dict:
    """A copy of `config` with the function serialized under `key` (if any) as `argument`."""
    config = dict(config)
    if key in config:
        config[argument] = _function_from_config(config, key, custom_objects)
    return config


@tf_export("nn.RNNCellDropoutWrapper", v1=[])
class DropoutWrapper(DropoutWrapperBase, _RNNCellWrapperV2):
    __doc__ = DropoutWrapperBase.__doc__

    def get_config(self):
        config = {**super().get_config(),
                  "input_keep_prob": self._input_keep_prob,
                  "output_keep_prob": self._output_keep_prob,
                  "state_keep_prob": self._state_keep_prob,
                  "variational_recurrent": self._variational_recurrent,
                  "input_size": self._input_size, "seed": self._seed}
        if self._dropout_state_filter is not default_dropout_state_filter_visitor:
            config.update(_function_config(self._dropout_state_filter, "dropout_fn"))
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = _with_function(config, "dropout_fn", "dropout_state_filter_visitor",
                                custom_objects)
        return super().from_config(config, custom_objects=custom_objects)


@tf_export("nn.RNNCellResidualWrapper", v1=[])
class ResidualWrapper(ResidualWrapperBase, _RNNCellWrapperV2):
    __doc__ = ResidualWrapperBase.__doc__

    def get_config(self):
        config = super().get_config()
        if self._residual_fn is not None:
            config.update(_function_config(self._residual_fn, "residual_fn"))
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = _with_function(config, "residual_fn", "residual_fn", custom_objects)
        return super().from_config(config, custom_objects=custom_objects)


@tf_export("nn.RNNCellDeviceWrapper", v1=[])
class DeviceWrapper(DeviceWrapperBase, _RNNCellWrapperV2):
    __doc__ = DeviceWrapperBase.__doc__

    def zero_state(self, batch_size, dtype):   # Keras cells have no zero_state of their own
        with device_scope(self._device):
            return self.get_initial_state(batch_size=batch_size, dtype=dtype)

    def get_config(self):
        return {**super().get_config(), "device": self._device}
