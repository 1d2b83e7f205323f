"""Keras 3's recurrent cells: SimpleRNNCell, LSTMCell, GRUCell (one time step each, Keras 3's
weights `kernel`, `recurrent_kernel`, `bias` in its gate order and layout, defaults, configs
and dropout masks) and StackedRNNCells; built from ndflow ops (matmul, split, activations).
Recurrent kernels default to the Orthogonal initializer (ndflow/ops/init_orthogonal.py)."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.core.nest import flatten, is_nested
from ndflow.keras import activation_functions as activations
from ndflow.keras import constraint_functions as constraints
from ndflow.keras import regularizer_functions as regularizers
from ndflow.keras.layers import rnn_cell_docs
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.layer_serialization import deserialize, serialize
from ndflow.keras.random_functions import SeedGenerator
from ndflow.ops import init_ops, linalg, nn_dropout
from ndflow.ops.array_core import unstack
from ndflow.ops.array_fill import ones_like, zeros
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_split import split


def activation_name(fn):
    return activations.config_name(fn)


def _positive_units(units) -> None:
    if not isinstance(units, int) or isinstance(units, bool) or units <= 0:
        raise ValueError("Received an invalid value for argument `units`, expected a positive "
                         f"integer, got {units}.")


_ROLES = ("kernel", "recurrent", "bias")


class DropoutRNNCell:
    """The dropout masks of a cell: made once per RNN call (`RNN` makes them before its time
    loop and resets them after), the same mask for every time step. `_dropout_mask_count`
    masks each (one per gate) for Keras' implementation 1, else one."""

    _dropout_mask_count = None

    def _new_dropout_mask(self, step_input, rate):
        ones = ones_like(step_input)
        if self._dropout_mask_count is None:
            return nn_dropout.dropout(ones, rate=rate, seed=self.seed)
        return [nn_dropout.dropout(ones, rate=rate, seed=self.seed)
                for _ in range(self._dropout_mask_count)]

    def get_dropout_mask(self, step_input):
        if getattr(self, "_dropout_mask", None) is None and self.dropout > 0:
            self._dropout_mask = self._new_dropout_mask(step_input, self.dropout)
        return getattr(self, "_dropout_mask", None)

    def get_recurrent_dropout_mask(self, step_input):
        if getattr(self, "_recurrent_dropout_mask", None) is None and self.recurrent_dropout > 0:
            self._recurrent_dropout_mask = self._new_dropout_mask(step_input,
                                                                  self.recurrent_dropout)
        return getattr(self, "_recurrent_dropout_mask", None)

    def reset_dropout_mask(self) -> None:
        self._dropout_mask = None

    def reset_recurrent_dropout_mask(self) -> None:
        self._recurrent_dropout_mask = None


class _GatedCell(Layer, DropoutRNNCell):
    """What the three cells share: units, activations, the weight arguments of the three
    roles (kernel, recurrent, bias), dropout rates, the seed, zero initial states, configs."""

    _HAS_RECURRENT_ACTIVATION = True
    # Keras 3 makes each cell's SeedGenerator (which takes a Python-random seed) after its
    # initializers, SimpleRNNCell before them: the same order keeps seeded weights TF's.
    _SEED_GENERATOR_FIRST = False

    def __init__(self, units, activation, recurrent_activation, use_bias, weight_args: dict,
                 dropout, recurrent_dropout, seed, **kwargs):
        _positive_units(units)
        super().__init__(**kwargs)
        if self._SEED_GENERATOR_FIRST:
            self.seed_generator = SeedGenerator(seed)
        self.units = units
        self.activation = activations.get(activation)
        if self._HAS_RECURRENT_ACTIVATION:
            self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = use_bias
        for role in _ROLES:
            setattr(self, f"{role}_initializer", init_ops.get(weight_args[f"{role}_initializer"]))
            setattr(self, f"{role}_regularizer",
                    regularizers.get(weight_args[f"{role}_regularizer"]))
            setattr(self, f"{role}_constraint",
                    constraints.get(weight_args[f"{role}_constraint"]))
        self.dropout = min(1.0, max(0.0, dropout))
        self.recurrent_dropout = min(1.0, max(0.0, recurrent_dropout))
        self.seed = seed
        if not self._SEED_GENERATOR_FIRST:
            self.seed_generator = SeedGenerator(seed)
        self.kernel = self.recurrent_kernel = self.bias = None
        self.state_size = self.units
        self.output_size = self.units

    def _weight(self, role: str, shape, initializer_=None, name=None):
        return self.add_weight(shape=shape, name=name or role,
                               initializer=initializer_ or getattr(self, f"{role}_initializer"),
                               regularizer=getattr(self, f"{role}_regularizer"),
                               constraint=getattr(self, f"{role}_constraint"))

    def _build_kernels(self, input_shape, gates: int) -> None:
        self.kernel = self._weight("kernel", (input_shape[-1], self.units * gates))
        self.recurrent_kernel = self._weight("recurrent", (self.units, self.units * gates),
                                             name="recurrent_kernel")

    def get_initial_state(self, batch_size=None):
        sizes = self.state_size if isinstance(self.state_size, (list, tuple)) \
            else [self.state_size]
        return [zeros((batch_size, d), dtype=self.compute_dtype) for d in sizes]

    def _masks(self, inputs, state, training):
        """(input dropout mask, recurrent dropout mask), None where not dropping."""
        dp = self.get_dropout_mask(inputs) if training and 0.0 < self.dropout < 1.0 else None
        rec = (self.get_recurrent_dropout_mask(state)
               if training and 0.0 < self.recurrent_dropout < 1.0 else None)
        return dp, rec

    def _cell_config(self) -> dict:
        config = {"units": self.units, "activation": activation_name(self.activation)}
        if self._HAS_RECURRENT_ACTIVATION:
            config["recurrent_activation"] = activation_name(self.recurrent_activation)
        config["use_bias"] = self.use_bias
        config.update(self._extra_config_after_bias())
        for role in _ROLES:
            config[f"{role}_initializer"] = init_ops.serialize(
                getattr(self, f"{role}_initializer"))
        for role in _ROLES:
            config[f"{role}_regularizer"] = regularizers.serialize(
                getattr(self, f"{role}_regularizer"))
        for role in _ROLES:
            config[f"{role}_constraint"] = constraints.serialize(
                getattr(self, f"{role}_constraint"))
        config.update(dropout=self.dropout, recurrent_dropout=self.recurrent_dropout)
        config.update(self._extra_config_at_end())
        config["seed"] = self.seed
        return config

    def _extra_config_after_bias(self) -> dict:
        return {}

    def _extra_config_at_end(self) -> dict:
        return {}

    def get_config(self) -> dict:
        return {**super().get_config(), **self._cell_config()}


def lstm_step(cell, z, c_prev):
    """(h, [h, c]) of an LSTM step from its four gate pre-activations `z` (i, f, candidate,
    o) and the previous cell state: LSTMCell's and ConvLSTMCell's."""
    i = cell.recurrent_activation(z[0])
    f = cell.recurrent_activation(z[1])
    c = f * c_prev + i * cell.activation(z[2])
    o = cell.recurrent_activation(z[3])
    h = o * cell.activation(c)
    return h, [h, c]


def _weight_args(local: dict) -> dict:
    """The <role>_initializer/_regularizer/_constraint arguments from a constructor's locals
    (the recurrent role's are named recurrent_*)."""
    return {f"{role}_{kind}": local[f"{role}_{kind}"] for role in _ROLES
            for kind in ("initializer", "regularizer", "constraint")}


@keras_export("keras.layers.SimpleRNNCell")
class SimpleRNNCell(_GatedCell):
    _HAS_RECURRENT_ACTIVATION = False
    _SEED_GENERATOR_FIRST = True

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 **kwargs):
        super().__init__(units, activation, None, use_bias, _weight_args(locals()), dropout,
                         recurrent_dropout, seed, **kwargs)

    def build(self, input_shape) -> None:
        self._build_kernels(input_shape, 1)
        if self.use_bias:
            self.bias = self._weight("bias", (self.units,))
        self.built = True

    def call(self, sequence, states, training=False):
        prev = states[0] if isinstance(states, (list, tuple)) else states
        dp, rec = self._masks(sequence, prev, training)
        if dp is not None:
            sequence = sequence * dp
        h = linalg.matmul(sequence, self.kernel)
        if self.bias is not None:
            h = h + self.bias
        if rec is not None:
            prev = prev * rec
        output = self.activation(h + linalg.matmul(prev, self.recurrent_kernel))
        return output, ([output] if isinstance(states, (list, tuple)) else output)


class UnitForgetBias(init_ops.Initializer):
    """An LSTM's (or ConvLSTM's) bias with `unit_forget_bias`: the bias initializer's values
    for the input gate, ones for the forget gate, the initializer's for the cell and output
    gates."""

    def __init__(self, base, units: int):
        super().__init__()
        self.base, self.units = base, units

    def __call__(self, shape, dtype=None, **kwargs):
        u = self.units
        return concat([self.base((u,), dtype=dtype), init_ops.Ones()((u,), dtype=dtype),
                       self.base((2 * u,), dtype=dtype)], 0)


@keras_export("keras.layers.LSTMCell")
class LSTMCell(_GatedCell):
    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, **kwargs):
        implementation = kwargs.pop("implementation", 2)
        super().__init__(units, activation, recurrent_activation, use_bias,
                         _weight_args(locals()), dropout, recurrent_dropout, seed, **kwargs)
        self.implementation = 1 if self.recurrent_dropout != 0.0 else implementation
        if self.implementation == 1:
            self._dropout_mask_count = 4
        self.unit_forget_bias = unit_forget_bias
        self.state_size = [self.units, self.units]

    def build(self, input_shape) -> None:
        self._build_kernels(input_shape, 4)
        if self.use_bias:
            init = (UnitForgetBias(self.bias_initializer, self.units) if self.unit_forget_bias
                    else None)
            self.bias = self._weight("bias", (self.units * 4,), init)
        self.built = True

    def call(self, inputs, states, training=False):
        h_prev, c_prev = states[0], states[1]
        dp, rec = self._masks(inputs, h_prev, training)
        if self.implementation == 1 and (dp is not None or rec is not None):
            # one dropout mask per gate
            kernels = split(self.kernel, 4, axis=1)
            recurrent = split(self.recurrent_kernel, 4, axis=1)
            biases = split(self.bias, 4, axis=0) if self.use_bias else [None] * 4
            z = []
            for k in range(4):
                x_k = inputs * dp[k] if dp is not None else inputs
                h_k = h_prev * rec[k] if rec is not None else h_prev
                z_k = linalg.matmul(x_k, kernels[k])
                if biases[k] is not None:
                    z_k = z_k + biases[k]
                z.append(z_k + linalg.matmul(h_k, recurrent[k]))
        else:
            if dp is not None:
                inputs = inputs * dp
            z = linalg.matmul(inputs, self.kernel) + linalg.matmul(h_prev,
                                                                   self.recurrent_kernel)
            if self.use_bias:
                z = z + self.bias
            z = split(z, 4, axis=1)
        return lstm_step(self, z, c_prev)

    def _extra_config_after_bias(self) -> dict:
        return {"unit_forget_bias": self.unit_forget_bias}


@keras_export("keras.layers.GRUCell")
class GRUCell(_GatedCell):
    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, reset_after=True,
                 seed=None, **kwargs):
        implementation = kwargs.pop("implementation", 2)
        super().__init__(units, activation, recurrent_activation, use_bias,
                         _weight_args(locals()), dropout, recurrent_dropout, seed, **kwargs)
        self.implementation = 1 if self.recurrent_dropout != 0.0 else implementation
        if self.implementation == 1:
            self._dropout_mask_count = 3
        self.reset_after = reset_after

    def build(self, input_shape) -> None:
        self._build_kernels(input_shape, 3)
        if self.use_bias:
            shape = (2, 3 * self.units) if self.reset_after else (3 * self.units,)
            self.bias = self._weight("bias", shape)
        self.built = True

    def call(self, inputs, states, training=False):
        h_prev = states[0] if is_nested(states) else states
        input_bias = recurrent_bias = None
        if self.use_bias:
            if self.reset_after:
                input_bias, recurrent_bias = unstack(self.bias, num=2)
            else:
                input_bias = self.bias
        dp, rec = self._masks(inputs, h_prev, training)
        per_gate = self.implementation == 1 and (dp is not None or rec is not None)
        if per_gate:
            xs = [inputs * dp[k] if dp is not None else inputs for k in range(3)]
            hs = [h_prev * rec[k] if rec is not None else h_prev for k in range(3)]
        else:
            xs = [inputs * dp if dp is not None else inputs] * 3
            hs = [h_prev] * 3
        kernels = split(self.kernel, 3, axis=1)
        if per_gate:
            x_z, x_r, x_h = (linalg.matmul(x, k) for x, k in zip(xs, kernels))
        else:
            x_z, x_r, x_h = split(linalg.matmul(xs[0], self.kernel), 3, axis=1)
        if input_bias is not None:
            b_z, b_r, b_h = split(input_bias, 3, axis=0)
            x_z, x_r, x_h = x_z + b_z, x_r + b_r, x_h + b_h
        r_kernels = split(self.recurrent_kernel, 3, axis=1)
        if self.reset_after and not per_gate:
            inner = linalg.matmul(h_prev, self.recurrent_kernel)
            if recurrent_bias is not None:
                inner = inner + recurrent_bias
            rec_z, rec_r, rec_h = split(inner, 3, axis=1)
        else:
            rec_z = linalg.matmul(hs[0], r_kernels[0])
            rec_r = linalg.matmul(hs[1], r_kernels[1])
            rec_h = None
            if self.reset_after:
                rec_h = linalg.matmul(hs[2], r_kernels[2])
                if recurrent_bias is not None:
                    rb_z, rb_r, rb_h = split(recurrent_bias, 3, axis=0)
                    rec_z, rec_r, rec_h = rec_z + rb_z, rec_r + rb_r, rec_h + rb_h
        z = self.recurrent_activation(x_z + rec_z)
        r = self.recurrent_activation(x_r + rec_r)
        if self.reset_after:
            rec_h = r * rec_h
        else:
            rec_h = linalg.matmul(r * hs[2], r_kernels[2])
        hh = self.activation(x_h + rec_h)
        h = z * h_prev + (1 - z) * hh
        return h, ([h] if is_nested(states) else h)

    def _extra_config_at_end(self) -> dict:
        return {"reset_after": self.reset_after}


def _output_size(cell) -> int:
    if getattr(cell, "output_size", None) is not None:
        return cell.output_size
    size = cell.state_size
    return size[0] if isinstance(size, (list, tuple)) else size


@keras_export("keras.layers.StackedRNNCells")
class StackedRNNCells(Layer):
    """Several RNN cells acting as one: within each time step a cell's output is the next
    cell's input; the states are one entry per cell. `RNN([cell1, cell2])` builds one.

    Args:
      cells: a list of cells (objects with `call` and `state_size`).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: a cell without `call` or `state_size`.
    """

    def __init__(self, cells, **kwargs):
        super().__init__(**kwargs)
        for cell in cells:
            if "call" not in dir(cell):
                raise ValueError("All cells must have a `call` method. Received cell without "
                                 f"a `call` method: {cell}")
            if "state_size" not in dir(cell):
                raise ValueError("All cells must have a `state_size` attribute. Received cell "
                                 f"without a `state_size`: {cell}")
        self.cells = list(cells)

    @property
    def state_size(self):
        return [c.state_size for c in self.cells]

    @property
    def output_size(self):
        return _output_size(self.cells[-1])

    def get_initial_state(self, batch_size=None):
        states = []
        for cell in self.cells:
            if getattr(cell, "get_initial_state", None):
                states.append(cell.get_initial_state(batch_size=batch_size))
            elif isinstance(cell.state_size, int):
                states.append(zeros((batch_size, cell.state_size), dtype=self.compute_dtype))
            else:
                states.append([zeros((batch_size, d), dtype=self.compute_dtype)
                               for d in cell.state_size])
        return states

    def call(self, inputs, states, training=False):
        new_states = []
        for cell, state in zip(self.cells, states):
            was_list = is_nested(state)
            state = list(state) if was_list else [state]
            kwargs = {"training": training} if getattr(cell, "_call_takes_training",
                                                       False) else {}
            inputs, state = cell(inputs, state, **kwargs)
            if len(state) == 1 and not was_list:
                state = state[0]
            new_states.append(state)
        if len(new_states) == 1:
            new_states = new_states[0]
        return inputs, new_states

    def build(self, input_shape) -> None:
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                cell.build_from_config({"input_shape": tuple(input_shape)})
            input_shape = (flatten(input_shape)[0], _output_size(cell))
        self.built = True

    def get_config(self) -> dict:
        return {**super().get_config(), "cells": [serialize(c) for c in self.cells]}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cells = [deserialize(c, custom_objects) for c in config.pop("cells")]
        return cls(cells, **config)


attach(globals(), rnn_cell_docs.DOCS)
