"""TF1's RNN cells, `tf.compat.v1.nn.rnn_cell`: `RNNCell` and its cells (`BasicRNNCell`,
`GRUCell`, `BasicLSTMCell`, `LSTMCell`), `MultiRNNCell` and `LSTMStateTuple` (the wrappers
are in rnn_cell_wrapper_v1.py).

A cell is a TF1 layer: its first call picks its variable scope (`<current scope>/<snake
case class name>`, made unique as `variable_scope(None, default_name=...)` makes it, or the
`scope` argument) and creates its variables there with `get_variable`, so they are named as
TensorFlow names them (`rnn/basic_lstm_cell/kernel`, `.../gru_cell/gates/kernel`) and
checkpoints interchange; later calls reuse them. Variables are created under `init_scope`:
a cell called inside a `tf.while_loop` body (`dynamic_rnn`) or a `tf.function` puts them in
the outer graph (or eagerly), as TensorFlow lifts them.
"""

from __future__ import annotations

import collections
import re

from ndflow.core import context, dtypes, logging
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten, is_nested, map_structure
from ndflow.core.scopes import init_scope, name_scope
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.core.tensor import Tensor
from ndflow.ops import init_ops_v1
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.arithmetic import add, multiply
from ndflow.ops.array_core import expand_dims, shape
from ndflow.ops.array_fill import zeros
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_split import split
from ndflow.ops.linalg import matmul
from ndflow.ops.math import clip_by_value, sigmoid, tanh
from ndflow.ops.nn_activation import elu, relu, relu6, selu, softplus
from ndflow.ops.nn_conv import bias_add
from ndflow.ops.partitioned_variables import fixed_size_partitioner
from ndflow.ops.variable_scope import get_variable, get_variable_scope, variable_scope

_ACTIVATIONS = {"tanh": tanh, "sigmoid": sigmoid, "relu": relu, "relu6": relu6, "elu": elu,
                "selu": selu, "softplus": softplus, "linear": lambda x: x}


def _activation(activation):
    if not activation:
        return tanh
    if isinstance(activation, str):
        if activation not in _ACTIVATIONS:
            raise ValueError(f"Unknown activation function: '{activation}'")
        return _ACTIVATIONS[activation]
    return activation


def _snake_case(name: str) -> str:
    """Keras' `to_snake_case`: BasicLSTMCell -> basic_lstm_cell."""
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()


def assert_like_rnncell(cell_name: str, cell) -> None:
    """TensorFlow's check that `cell` has what an RNN loop needs, with its message."""
    conditions = [hasattr(cell, "output_size"), hasattr(cell, "state_size"),
                  hasattr(cell, "get_initial_state") or hasattr(cell, "zero_state"),
                  callable(cell)]
    errors = ["'output_size' property is missing", "'state_size' property is missing",
              "either 'zero_state' or 'get_initial_state' method is required",
              "is not callable"]
    if not all(conditions):
        failed = ", ".join(e for c, e in zip(conditions, errors) if not c)
        raise TypeError(f"The argument {cell_name!r} ({cell}) is not an RNNCell: {failed}.")


def _state_shape(batch_size, size, static: bool):
    """[batch_size] + size (an int or TensorShape): a list (None for an unknown batch size),
    or, for a tensor batch size, a shape tensor."""
    inner = as_shape(size).as_list()
    if not isinstance(batch_size, Tensor):
        return [int(batch_size)] + inner
    if static:
        known = constant_value(batch_size)
        return [int(known) if known is not None and known.ndim == 0 else None] + inner
    b = batch_size if batch_size.shape.rank == 1 else expand_dims(batch_size, 0)
    return concat([b, convert_to_tensor(inner, dtypes.int32)], 0)


def zero_state_tensors(state_size, batch_size, dtype):
    """Zeros of shape [batch_size] + s for every s in the (nested) `state_size`."""
    def make(s):
        z = zeros(_state_shape(batch_size, s, False), dtype=dtype)
        if not context.executing_eagerly():
            z.set_shape(_state_shape(batch_size, s, True))
        return z
    return map_structure(make, state_size)


_LSTMStateTupleBase = collections.namedtuple("LSTMStateTuple", ("c", "h"))


@tf_export(v1=["nn.rnn_cell.LSTMStateTuple"])
class LSTMStateTuple(_LSTMStateTupleBase):
    """An LSTM's state, `(c, h)`: the memory cell and the hidden state (the output)."""

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent dtypes for internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


@tf_export(v1=["nn.rnn_cell.RNNCell"])
class RNNCell:
    """An RNN cell: `(output, new_state) = cell(inputs, state)`, with `state_size`,
    `output_size` and `zero_state`. Subclasses implement `build(inputs_shape)` (creating
    variables with `add_variable`) and `call(inputs, state)`."""

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        self.trainable = trainable
        self._reuse = kwargs.pop("_reuse", None)
        self._base_name = name or _snake_case(type(self).__name__)
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._scope = None
        self.built = False
        self._trainable_weights: list = []
        self._non_trainable_weights: list = []
        self._is_tf_rnn_cell = True

    # -- sizes -------------------------------------------------------------------------------
    @property
    def state_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def name(self) -> str:
        return self._scope.name if self._scope is not None else self._base_name

    @property
    def dtype(self):
        return self._dtype

    @property
    def scope_name(self) -> str:
        return self._scope.name if self._scope is not None else ""

    # -- variables -----------------------------------------------------------------------------
    def _sub_cells(self) -> list:
        return []

    @property
    def trainable_weights(self) -> list:
        out = list(self._trainable_weights) if self.trainable else []
        for c in self._sub_cells():
            out += [w for w in c.trainable_weights if all(w is not o for o in out)]
        return out

    @property
    def non_trainable_weights(self) -> list:
        out = list(self._non_trainable_weights) + \
            ([] if self.trainable else list(self._trainable_weights))
        for c in self._sub_cells():
            out += c.non_trainable_weights
        return out

    @property
    def weights(self) -> list:
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    def add_variable(self, name, shape=None, dtype=None, initializer=None, trainable=None,
                     partitioner=None, **kwargs):
        """A variable `name` of the cell's scope, from `get_variable` (outside any function
        being traced: TensorFlow lifts variables created in loop bodies and functions)."""
        scope = get_variable_scope()
        dtype = dtype or self._dtype or dtypes.float32
        trainable = (trainable is None or bool(trainable)) and self.trainable
        with init_scope(), name_scope(None):  # eagerly the name scope would prefix it
            if get_variable_scope() is scope:
                v = get_variable(name, shape, dtype, initializer, trainable=trainable,
                                 partitioner=partitioner)
            elif context.executing_eagerly():  # traced from eager code: no store to share
                v = get_variable(f"{scope.name}/{name}" if scope.name else name, shape, dtype,
                                 initializer if initializer is not None else scope.initializer,
                                 trainable=trainable, partitioner=partitioner)
            else:
                with variable_scope(scope, auxiliary_name_scope=False):
                    v = get_variable(name, shape, dtype, initializer, trainable=trainable,
                                     partitioner=partitioner)
        (self._trainable_weights if trainable else self._non_trainable_weights).append(v)
        return v

    add_weight = add_variable

    def build(self, inputs_shape) -> None:
        self.built = True

    def call(self, inputs, state):
        raise NotImplementedError("Abstract method")

    # -- calling -------------------------------------------------------------------------------
    def __call__(self, inputs, state, scope=None):
        if self._scope is None:
            if self._reuse:
                cm = variable_scope(scope if scope is not None else self._base_name)
            else:
                cm = variable_scope(scope, default_name=self._base_name)
            with cm as captured:
                self._scope = captured
        with variable_scope(self._scope, reuse=True if self.built else self._reuse,
                            auxiliary_name_scope=False):
            with name_scope(self._scope.name.split("/")[-1] or self._base_name):
                if not self.built:
                    first = flatten(inputs)[0]
                    first = convert_to_tensor(first)
                    if self._dtype is None:
                        self._dtype = first.dtype
                    self.build(first.shape)
                    self.built = True
                return self.call(inputs, state)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        if inputs is not None:
            inputs = convert_to_tensor(inputs, name="inputs")
            if batch_size is not None:
                static = batch_size if not isinstance(batch_size, Tensor) else None
                if static is not None and inputs.shape.as_list()[0] != static:
                    raise ValueError(
                        "batch size from input tensor is different from the input param. "
                        f"Input tensor batch: {inputs.shape.as_list()[0]}, "
                        f"batch_size: {batch_size}")
            if dtype is not None and inputs.dtype != dtype:
                raise ValueError(
                    "dtype from input tensor is different from the input param. Input "
                    f"tensor dtype: {inputs.dtype}, dtype: {dtype}")
            batch_size = inputs.shape.as_list()[0] or shape(inputs)[0]
            dtype = inputs.dtype
        if batch_size is None or dtype is None:
            raise ValueError("batch_size and dtype cannot be None while constructing initial "
                             f"state: batch_size={batch_size}, dtype={dtype}")
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size, dtype):
        """Zeros shaped [batch_size] + s for each s in `state_size`."""
        with name_scope(type(self).__name__ + "ZeroState"):
            return zero_state_tensors(self.state_size, batch_size, dtypes.as_dtype(dtype))

    def get_config(self) -> dict:
        return {"name": self._base_name, "trainable": self.trainable,
                "dtype": self._dtype.name if self._dtype is not None else None}


def _input_depth(inputs_shape) -> int:
    shape = TensorShape(inputs_shape)
    if shape.rank is None or shape.as_list()[-1] is None:
        raise ValueError(f"Expected inputs.shape[-1] to be known, saw shape: {shape}")
    return shape.as_list()[-1]


@tf_export(v1=["nn.rnn_cell.BasicRNNCell"])
class BasicRNNCell(RNNCell):
    """`output = new_state = act(W * [inputs, state] + b)`."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None,
                 **kwargs):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = num_units
        self._activation = _activation(activation)

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        self._kernel = self.add_variable("kernel", [depth + self._num_units, self._num_units])
        self._bias = self.add_variable("bias", [self._num_units],
                                       initializer=init_ops_v1.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        out = self._activation(bias_add(matmul(concat([inputs, state], 1), self._kernel),
                                        self._bias))
        return out, out


@tf_export(v1=["nn.rnn_cell.GRUCell"])
class GRUCell(RNNCell):
    """The gated recurrent unit (Cho et al., 2014): reset and update gates (`gates/`, bias
    1.0 by default) and a candidate (`candidate/`)."""

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = num_units
        self._activation = _activation(activation)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        n = self._num_units
        bias_init = self._bias_initializer
        self._gate_kernel = self.add_variable("gates/kernel", [depth + n, 2 * n],
                                              initializer=self._kernel_initializer)
        self._gate_bias = self.add_variable(
            "gates/bias", [2 * n], initializer=bias_init if bias_init is not None
            else init_ops_v1.constant_initializer(1.0))
        self._candidate_kernel = self.add_variable("candidate/kernel", [depth + n, n],
                                                   initializer=self._kernel_initializer)
        self._candidate_bias = self.add_variable(
            "candidate/bias", [n], initializer=bias_init if bias_init is not None
            else init_ops_v1.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        gates = sigmoid(bias_add(matmul(concat([inputs, state], 1), self._gate_kernel),
                                 self._gate_bias))
        r, u = split(gates, 2, axis=1)
        candidate = bias_add(matmul(concat([inputs, r * state], 1), self._candidate_kernel),
                             self._candidate_bias)
        c = self._activation(candidate)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


@tf_export(v1=["nn.rnn_cell.BasicLSTMCell"])
class BasicLSTMCell(RNNCell):
    """The LSTM of Zaremba et al. (2014): one kernel for the gates i, j, f, o (in that
    order), `forget_bias` added to f; no peepholes, clipping or projection."""

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        n = self._num_units
        self._kernel = self.add_variable("kernel", [depth + n, 4 * n])
        self._bias = self.add_variable("bias", [4 * n], initializer=init_ops_v1.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = split(state, 2, axis=1)
        gates = bias_add(matmul(concat([inputs, h], 1), self._kernel), self._bias)
        i, j, f, o = split(gates, 4, axis=1)
        forget_bias = convert_to_tensor(self._forget_bias, dtype=f.dtype)
        new_c = add(multiply(c, sigmoid(add(f, forget_bias))),
                    multiply(sigmoid(i), self._activation(j)))
        new_h = multiply(self._activation(new_c), sigmoid(o))
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple \
            else concat([new_c, new_h], 1)
        return new_h, new_state


def _shards(count):
    return None if count is None else fixed_size_partitioner(count)


@tf_export(v1=["nn.rnn_cell.LSTMCell"])
class LSTMCell(RNNCell):
    """The LSTM with optional peepholes (`w_f_diag`, `w_i_diag`, `w_o_diag`), cell clipping
    and a projection of the output (`projection/kernel`, `proj_clip`)."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, num_unit_shards=None, num_proj_shards=None,
                 forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        if num_unit_shards is not None or num_proj_shards is not None:
            logging.warning(f"{self}: The num_unit_shards and proj_unit_shards parameters are "
                            "deprecated and will be removed in Jan 2017.  Use a variable "
                            "scope with a partitioner instead.")
        self._num_unit_shards, self._num_proj_shards = num_unit_shards, num_proj_shards
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self):
        n, p = self._num_units, self._num_proj or self._num_units
        return LSTMStateTuple(n, p) if self._state_is_tuple else n + p

    output_size = property(lambda self: self._num_proj or self._num_units)

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        n = self._num_units
        h_depth = n if self._num_proj is None else self._num_proj
        init = self._initializer
        # the deprecated shards: the kernels made in parts along their first axis
        self._kernel = self.add_variable("kernel", [depth + h_depth, 4 * n], initializer=init,
                                         partitioner=_shards(self._num_unit_shards))
        self._bias = self.add_variable("bias", [4 * n], initializer=init_ops_v1.zeros_initializer())
        if self._use_peepholes:
            self._w_f_diag = self.add_variable("w_f_diag", [n], initializer=init)
            self._w_i_diag = self.add_variable("w_i_diag", [n], initializer=init)
            self._w_o_diag = self.add_variable("w_o_diag", [n], initializer=init)
        if self._num_proj is not None:
            self._proj_kernel = self.add_variable("projection/kernel", [n, self._num_proj],
                                                  initializer=init,
                                                  partitioner=_shards(self._num_proj_shards))
        self.built = True

    def call(self, inputs, state):
        n = self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev, m_prev = split(state, [n, self._num_proj or n], axis=1)
        if TensorShape(inputs.shape).with_rank(2).as_list()[1] is None:
            raise ValueError("Could not infer input size from inputs.get_shape()[-1]")
        lstm = bias_add(matmul(concat([inputs, m_prev], 1), self._kernel), self._bias)
        i, j, f, o = split(lstm, 4, axis=1)
        act = self._activation
        if self._use_peepholes:
            c = sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev + \
                sigmoid(i + self._w_i_diag * c_prev) * act(j)
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * act(j)
        if self._cell_clip is not None:
            c = clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sigmoid(o + self._w_o_diag * c) * act(c)
        else:
            m = sigmoid(o) * act(c)
        if self._num_proj is not None:
            m = matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else concat([c, m], 1)
        return m, new_state


@tf_export(v1=["nn.rnn_cell.MultiRNNCell"])
class MultiRNNCell(RNNCell):
    """Cells stacked: cell i reads cell i-1's output, in variable scope `cell_<i>`."""

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not is_nested(cells):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells}.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(is_nested(c.state_size) for c in self._cells):
            raise ValueError("Some cells return tuples of states, but the flag "
                             "state_is_tuple is not set. State sizes are: "
                             f"{[c.state_size for c in self._cells]}")

    def _sub_cells(self) -> list:
        return self._cells

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(c.state_size for c in self._cells)
        return sum(c.state_size for c in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"):
            if self._state_is_tuple:
                return tuple(c.zero_state(batch_size, dtype) for c in self._cells)
            return super().zero_state(batch_size, dtype)

    def call(self, inputs, state):
        cur, pos, new_states = inputs, 0, []
        for i, cell in enumerate(self._cells):
            with variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    if not is_nested(state):
                        raise ValueError(f"Expected state to be a tuple of length "
                                         f"{len(self.state_size)}, but received: {state}")
                    cur_state = state[i]
                else:
                    cur_state = state[:, pos:pos + cell.state_size]
                    pos += cell.state_size
                cur, new_state = cell(cur, cur_state)
                new_states.append(new_state)
        return cur, (tuple(new_states) if self._state_is_tuple else concat(new_states, 1))
