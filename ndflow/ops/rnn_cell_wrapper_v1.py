"""TF1's RNN cell wrappers, `tf.compat.v1.nn.rnn_cell.DropoutWrapper`, `ResidualWrapper`
and `DeviceWrapper`: cells around a cell, which they call with no variable scope of their own
(as TensorFlow's `_RNNCellWrapperV1` does), so the wrapped cell's variables keep their names.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.nest import assert_same_structure, flatten, is_nested, map_structure
from ndflow.core.scopes import device as device_scope
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import as_shape
from ndflow.ops.math import floor
from ndflow.ops.nn_dropout import dropout
from ndflow.ops.random import random_uniform
from ndflow.ops.rnn_cell_v1 import LSTMStateTuple, RNNCell, assert_like_rnncell


class _Wrapper(RNNCell):
    """A cell around `cell`: calls it with no scope of its own (TF's _RNNCellWrapperV1)."""

    def __init__(self, cell, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        assert_like_rnncell("cell", cell)
        self.cell = cell

    wrapped_cell = property(lambda self: self.cell)
    state_size = property(lambda self: self.cell.state_size)
    output_size = property(lambda self: self.cell.output_size)

    def _sub_cells(self) -> list:
        return [self.cell]

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"):
            return self.cell.zero_state(batch_size, dtype)

    def __call__(self, inputs, state, scope=None):
        return self._call_wrapped_cell(inputs, state, self.cell.__call__, scope=scope)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        raise NotImplementedError


def _default_dropout_state_filter_visitor(substate):
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


@tf_export(v1=["nn.rnn_cell.DropoutWrapper"])
class DropoutWrapper(_Wrapper):
    """Dropout on the cell's inputs, outputs and (filtered) states: a new mask each step, or
    with `variational_recurrent` one mask per wrapper for every step (Gal & Ghahramani)."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None, **kwargs):
        super().__init__(cell, dtype=dtype, **kwargs)
        if dropout_state_filter_visitor is not None and \
                not callable(dropout_state_filter_visitor):
            raise TypeError("dropout_state_filter_visitor must be callable")
        self._filter = dropout_state_filter_visitor or _default_dropout_state_filter_visitor
        for attr, v in (("input_keep_prob", input_keep_prob),
                        ("state_keep_prob", state_keep_prob),
                        ("output_keep_prob", output_keep_prob)):
            if isinstance(v, (int, float)) and not 0 <= v <= 1:
                raise ValueError(f"Parameter {attr} must be between 0 and 1: {int(v)}")
        self._input_keep_prob = input_keep_prob
        self._state_keep_prob = state_keep_prob
        self._output_keep_prob = output_keep_prob
        self._variational = variational_recurrent
        self._seed = seed
        self._noise = {}
        if variational_recurrent:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")
            self._dtype = dtypes.as_dtype(dtype)
            if _should_dropout(input_keep_prob):
                if input_size is None:
                    raise ValueError("When variational_recurrent=True and input_keep_prob < 1, "
                                     "input_size must be provided")
                self._noise["input"] = self._variational_noise(input_size, 1)
            self._noise["state"] = self._variational_noise(cell.state_size, 2)
            self._noise["output"] = self._variational_noise(cell.output_size, 3)

    def _variational_noise(self, size, salt):
        seed = None if self._seed is None else self._seed * 7 + salt
        return map_structure(lambda s: random_uniform([1] + as_shape(s).as_list(),
                                                      seed=seed, dtype=self._dtype), size)

    def _dropout(self, values, kind, keep_prob, shallow_filter=None):
        def one(i, v, noise=None):
            if noise is not None:
                return (v / keep_prob) * floor(keep_prob + noise)
            seed = None if self._seed is None else self._seed * 131 + i
            return dropout(v, rate=1 - keep_prob, seed=seed)

        noise = self._noise.get(kind) if self._variational else None
        flat = flatten(values)
        noises = flatten(noise) if noise is not None else [None] * len(flat)
        keep = flatten(shallow_filter) if shallow_filter is not None else [True] * len(flat)
        out = [one(i, v, n) if k else v for i, (v, n, k) in enumerate(zip(flat, noises, keep))]
        return _pack(values, out)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        if _should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._input_keep_prob)
        output, new_state = cell_call_fn(inputs, state, **kwargs)
        if _should_dropout(self._state_keep_prob):
            keep = _state_filter(self._filter, new_state)
            new_state = self._dropout(new_state, "state", self._state_keep_prob, keep)
        if _should_dropout(self._output_keep_prob):
            output = self._dropout(output, "output", self._output_keep_prob)
        return output, new_state


def _should_dropout(p) -> bool:
    return not isinstance(p, float) or p < 1


def _state_filter(visitor, state):
    """Per flat state tensor, whether dropout applies (the visitor's answer at each level)."""
    def walk(s):
        d = visitor(s)
        if d is True or d is False:
            return [d] * len(flatten(s))
        if isinstance(s, (tuple, list)) and not isinstance(d, bool):
            out = []
            for sub, dec in zip(s, d):
                out += walk(sub) if dec is True else [False] * len(flatten(sub))
            return out
        return [bool(d)] * len(flatten(s))
    return walk(state)


def _pack(structure, flat):
    if not is_nested(structure):
        return flat[0]
    it = iter(flat)
    return map_structure(lambda _: next(it), structure)


@tf_export(v1=["nn.rnn_cell.ResidualWrapper"])
class ResidualWrapper(_Wrapper):
    """`output = residual_fn(inputs, cell_output)`, by default their sum."""

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


@tf_export(v1=["nn.rnn_cell.DeviceWrapper"])
class DeviceWrapper(_Wrapper):
    """Runs the cell on `device`."""

    def __init__(self, cell, device, **kwargs):  # noqa: A002 - TF's name
        super().__init__(cell, **kwargs)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"), device_scope(self._device):
            return self.cell.zero_state(batch_size, dtype)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        with device_scope(self._device):
            return cell_call_fn(inputs, state, **kwargs)

