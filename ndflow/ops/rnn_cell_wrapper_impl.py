"""What TF1's RNN cell wrappers (`tf.compat.v1.nn.rnn_cell.*Wrapper`, ops/rnn_cell_wrapper_v1.py)
and TF 2's Keras-layer ones (`tf.nn.RNNCell*Wrapper`, keras/layers/rnn_cell_wrappers.py) share,
as TensorFlow shares it (its `rnn_cell_wrapper_impl`): mixins placed before each family's own
wrapper base, which supplies `cell`, `__call__`/`call` and serialization.

Dropout seeds are TensorFlow's (an md5 of the seed and the tensor's role and index), so with a
graph- or global-level seed the masks are TensorFlow's in both families."""

from __future__ import annotations

import hashlib

import numpy as np

from ndflow.core import dtypes
from ndflow.core.nest import assert_same_structure, flatten, is_nested, map_structure
from ndflow.core.scopes import device as device_scope
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import as_shape
from ndflow.ops.math import floor
from ndflow.ops.nn_dropout import dropout
from ndflow.ops.random import random_uniform
from ndflow.ops.rnn_cell_v1 import LSTMStateTuple


def default_dropout_state_filter_visitor(substate):
    """Dropout on every state but an LSTM's memory `c` (Gal & Ghahramani)."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


def should_dropout(p) -> bool:
    """False only for a known keep probability of 1 (a tensor may be anything)."""
    return not isinstance(p, float) or p < 1


def _state_filter(visitor, state) -> list:
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


class DropoutWrapperBase:
    """Dropout on the cell's inputs, outputs and (filtered) states: a new mask each call, or
    with `variational_recurrent` one mask drawn at construction for every call."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None, **kwargs):
        super().__init__(cell, dtype=dtype, **kwargs)
        if dropout_state_filter_visitor is not None and \
                not callable(dropout_state_filter_visitor):
            raise TypeError("dropout_state_filter_visitor must be callable")
        self._dropout_state_filter = dropout_state_filter_visitor or \
            default_dropout_state_filter_visitor
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
            if should_dropout(self._input_keep_prob):
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
            elif noise is not None:   # floor(keep + U[0, 1)) is 1 with probability keep
                out.append((v / keep_prob) * floor(keep_prob + noise[i]))
            else:
                out.append(dropout(v, rate=1.0 - keep_prob, seed=self._gen_seed(role, i)))
        return _pack(values, out)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        if should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._input_keep_prob)
        output, new_state = cell_call_fn(inputs, state, **kwargs)
        if should_dropout(self._state_keep_prob):
            keep = _state_filter(self._dropout_state_filter, new_state)
            new_state = self._dropout(new_state, "state", self._state_keep_prob, keep)
        if should_dropout(self._output_keep_prob):
            output = self._dropout(output, "output", self._output_keep_prob)
        return output, new_state


class ResidualWrapperBase:
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


class DeviceWrapperBase:
    """Runs the wrapped cell under `tf.device(device)`."""

    def __init__(self, cell, device, **kwargs):  # noqa: A002 - TF's name
        super().__init__(cell, **kwargs)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"), device_scope(self._device):
            return self.cell.zero_state(batch_size, dtype)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        with device_scope(self._device):
            return cell_call_fn(inputs, state, **kwargs)
