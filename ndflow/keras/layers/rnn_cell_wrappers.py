"""`tf.nn.RNNCellDropoutWrapper`, `RNNCellResidualWrapper`, `RNNCellDeviceWrapper`: TF 2's
Keras-layer cell wrappers (TensorFlow's `rnn_cell_wrapper_v2`) around a Keras cell. A wrapper
is itself a cell: `wrapper(inputs, states)` runs the wrapped cell's `call` with dropout,
a residual connection or a device scope around it, and `keras.layers.RNN(wrapper)` scans it.
Dropout seeds are TensorFlow's (an md5 of the seed and the tensor's role), so with
`tf.random.set_seed` the masks are TensorFlow's."""

from __future__ import annotations

import hashlib
import importlib
import inspect

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.nest import assert_same_structure, flatten, map_structure
from ndflow.core.scopes import device as device_scope
from ndflow.core.shapes import as_shape
from ndflow.keras.layers.base_layer import Layer, deserialize
from ndflow.ops.array_fill import zeros
from ndflow.ops.math import floor
from ndflow.ops.nn_dropout import dropout
from ndflow.ops.random import random_uniform
from ndflow.ops.rnn_cell_wrapper_v1 import (
    _default_dropout_state_filter_visitor,
    _pack,
    _should_dropout,
    _state_filter,
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


@tf_export("nn.RNNCellDropoutWrapper", v1=[])
class DropoutWrapper(_RNNCellWrapperV2):
    """Dropout on the inputs, outputs and states of the given cell: a new mask each call, or
    with `variational_recurrent=True` one mask drawn at construction for every call."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None, **kwargs):
        super().__init__(cell, dtype=dtype, **kwargs)
        if dropout_state_filter_visitor is not None and \
                not callable(dropout_state_filter_visitor):
            raise TypeError("dropout_state_filter_visitor must be callable")
        self._dropout_state_filter = dropout_state_filter_visitor or \
            _default_dropout_state_filter_visitor
        for attr, v in (("input_keep_prob", input_keep_prob),
                        ("state_keep_prob", state_keep_prob),
                        ("output_keep_prob", output_keep_prob)):
            if isinstance(v, (int, float)):
                # TF reads a Python number back from a tensor: floats as float32 values
                v = float(np.float32(v)) if isinstance(v, float) else float(v)
                if not 0 <= v <= 1:
                    raise ValueError(f"Parameter {attr} must be between 0 and 1: {int(v)}")
            setattr(self, f"_{attr}", v)
        self._variational_recurrent = variational_recurrent
        self._input_size = input_size
        self._seed = seed
        self._noise = {}
        if variational_recurrent:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")
            if _should_dropout(self._input_keep_prob):
                if input_size is None:
                    raise ValueError("When variational_recurrent=True and input_keep_prob < "
                                     "1.0 or is unknown, input_size must be provided")
                self._noise["input"] = self._batch_noise(input_size, "input", dtype)
            self._noise["state"] = self._batch_noise(cell.state_size, "state", dtype)
            self._noise["output"] = self._batch_noise(cell.output_size, "output", dtype)

    def _gen_seed(self, salt_prefix: str, index: int):
        """TensorFlow's per-tensor op seed: md5 of str(seed) + "<role>_<index>"."""
        if self._seed is None:
            return None
        digest = hashlib.md5(f"{self._seed}{salt_prefix}_{index}".encode()).hexdigest()
        return int(digest[:8], 16) & 0x7FFFFFFF

    def _batch_noise(self, sizes, role, dtype):
        flat = [random_uniform([1] + as_shape(s).as_list(), seed=self._gen_seed(role, i),
                               dtype=dtypes.as_dtype(dtype))
                for i, s in enumerate(flatten(sizes))]
        return _pack(sizes, flat)

    def _dropout(self, values, role, keep_prob, keep=None):
        flat = flatten(values)
        keep = [True] * len(flat) if keep is None else keep
        noise = flatten(self._noise[role]) if self._variational_recurrent else None
        out = []
        for i, (v, k) in enumerate(zip(flat, keep)):
            if not k:
                out.append(v)
            elif noise is not None:
                out.append((v / keep_prob) * floor(keep_prob + noise[i]))
            else:
                out.append(dropout(v, rate=1.0 - keep_prob, seed=self._gen_seed(role, i)))
        return _pack(values, out)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        if _should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._input_keep_prob)
        output, new_state = cell_call_fn(inputs, state, **kwargs)
        if _should_dropout(self._state_keep_prob):
            keep = _state_filter(self._dropout_state_filter, new_state)
            new_state = self._dropout(new_state, "state", self._state_keep_prob, keep)
        if _should_dropout(self._output_keep_prob):
            output = self._dropout(output, "output", self._output_keep_prob)
        return output, new_state

    def get_config(self):
        config = {**super().get_config(),
                  "input_keep_prob": self._input_keep_prob,
                  "output_keep_prob": self._output_keep_prob,
                  "state_keep_prob": self._state_keep_prob,
                  "variational_recurrent": self._variational_recurrent,
                  "input_size": self._input_size, "seed": self._seed}
        if self._dropout_state_filter is not _default_dropout_state_filter_visitor:
            config.update(_function_config(self._dropout_state_filter, "dropout_fn"))
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        if "dropout_fn" in config:
            config["dropout_state_filter_visitor"] = _function_from_config(
                config, "dropout_fn", custom_objects)
        return super().from_config(config, custom_objects=custom_objects)


@tf_export("nn.RNNCellResidualWrapper", v1=[])
class ResidualWrapper(_RNNCellWrapperV2):
    """The cell's outputs plus its inputs (or `residual_fn(inputs, outputs)`)."""

    def __init__(self, cell, residual_fn=None, **kwargs):
        super().__init__(cell, **kwargs)
        self._residual_fn = residual_fn

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        outputs, new_state = cell_call_fn(inputs, state, **kwargs)

        def default_residual_fn(inputs, outputs):
            assert_same_structure(inputs, outputs)
            for i, o in zip(flatten(inputs), flatten(outputs)):
                i.shape.assert_is_compatible_with(o.shape)
            return map_structure(lambda i, o: i + o, inputs, outputs)

        return (self._residual_fn or default_residual_fn)(inputs, outputs), new_state

    def get_config(self):
        config = super().get_config()
        if self._residual_fn is not None:
            config.update(_function_config(self._residual_fn, "residual_fn"))
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        if "residual_fn" in config:
            config["residual_fn"] = _function_from_config(config, "residual_fn",
                                                          custom_objects)
        return super().from_config(config, custom_objects=custom_objects)


@tf_export("nn.RNNCellDeviceWrapper", v1=[])
class DeviceWrapper(_RNNCellWrapperV2):
    """Runs the wrapped cell under `tf.device(device)`."""

    def __init__(self, cell, device, **kwargs):  # noqa: A002 - TF's name
        super().__init__(cell, **kwargs)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with device_scope(self._device):
            return super().zero_state(batch_size, dtype)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        with device_scope(self._device):
            return cell_call_fn(inputs, state, **kwargs)

    def get_config(self):
        return {**super().get_config(), "device": self._device}
