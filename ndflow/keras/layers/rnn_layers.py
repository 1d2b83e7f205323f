"""Keras 3's recurrent layers: the generic RNN (a cell run over the time axis), SimpleRNN,
LSTM, GRU (RNN around their cells, with Keras 3's weights, arguments and configs) and
Bidirectional.

The time loop (`rnn_loop`, Keras' TensorFlow backend `rnn`): eagerly, or with `unroll=True`
and a static number of steps, a Python loop over the steps; in graphs (`tf.function`) one
`tf.while_loop` reading the steps from a TensorArray and writing the outputs to another, so
that gradients flow through ndflow's While gradient. Masked steps keep the previous state and
output (zeros at the first step, or always with `zero_output_for_mask`)."""

from __future__ import annotations

from ndflow.core import context, dtypes
from ndflow.core.api_export import keras_export
from ndflow.core.nest import flatten, is_nested, map_structure, pack_sequence_as
from ndflow.core.scopes import init_scope
from ndflow.core.tensor import Tensor
from ndflow.keras import docstrings
from ndflow.keras import regularizer_functions as regularizers
from ndflow.keras.layers import rnn_docs, rnn_fused
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.input_spec import InputSpec
from ndflow.keras.layers.layer_serialization import deserialize, serialize
from ndflow.keras.layers.rnn_cells import GRUCell, LSTMCell, SimpleRNNCell, StackedRNNCells
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import where
from ndflow.ops.array_core import expand_dims, shape, stack, unstack
from ndflow.ops.array_fill import zeros, zeros_like
from ndflow.ops.array_reorder import reverse
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast
from ndflow.ops.comparison import less
from ndflow.ops.tensor_array_ops import TensorArray
from ndflow.runtime.control_flow import while_loop


def _swap_batch_time(x):
    rank = x.shape.rank
    return transpose(x, [1, 0] + list(range(2, rank)))


def _broadcastable(mask_t, x):
    """A (batch, 1) step mask with trailing unit axes up to x's rank."""
    for _ in range(x.shape.rank - mask_t.shape.rank):
        mask_t = expand_dims(mask_t, -1)
    return mask_t


def _masked(mask_t, new, old):
    return where(_broadcastable(mask_t, new), new, old)


def rnn_loop(step, inputs, initial_states, go_backwards=False, mask=None, unroll=False,
             zero_output_for_mask=False, return_all_outputs=True):
    """Runs `output, new_states = step(input_t, states)` over axis 1 of `inputs` (batch,
    time, ...). Returns (last output, all outputs (batch, time, ...) or None, final states
    in the structure of `initial_states`)."""
    xt = _swap_batch_time(inputs)
    mt = None
    if mask is not None:
        mask = convert_to_tensor(mask)
        if mask.dtype is not dtypes.bool:
            mask = cast(mask, dtypes.bool)
        if mask.shape.rank == 3:
            mask = mask[:, :, 0]
        mt = expand_dims(_swap_batch_time(mask), -1)  # (time, batch, 1)
    if go_backwards:
        xt = reverse(xt, [0])
        mt = None if mt is None else reverse(mt, [0])
    steps = xt.shape.as_list()[0]
    flat_init = flatten(initial_states)

    def call_step(x_t, flat_states):
        output, new_states = step(x_t, pack_sequence_as(initial_states, flat_states))
        return output, [convert_to_tensor(s) for s in flatten(new_states)]

    if context.executing_eagerly() or unroll:
        if steps is None:
            raise ValueError("Unrolling requires a fixed number of timesteps.")
        xs = unstack(xt, num=steps)
        ms = None if mt is None else unstack(mt, num=steps)
        states, outputs, last = flat_init, [], None
        for t in range(steps):
            output, new = call_step(xs[t], states)
            if ms is not None:
                fallback = zeros_like(output) if zero_output_for_mask or last is None else last
                output = _masked(ms[t], output, fallback)
                new = [_masked(ms[t], n, s) for n, s in zip(new, states)]
            states, last = new, output
            if return_all_outputs:
                outputs.append(output)
        all_outputs = stack(outputs, axis=1) if return_all_outputs else None
        return last, all_outputs, pack_sequence_as(initial_states, states)

    n = steps if steps is not None else shape(xt)[0]
    input_ta = TensorArray(xt.dtype, size=n, element_shape=xt.shape[1:]).unstack(xt)
    mask_ta = None if mt is None else TensorArray(dtypes.bool, size=n,
                                                  element_shape=mt.shape[1:]).unstack(mt)
    # The first step's output, traced only for its dtype and shape (pruned from the graph).
    output0, _ = call_step(xt[0], flat_init)
    zero_output = zeros_like(output0)
    out_ta = TensorArray(output0.dtype, size=n, element_shape=output0.shape) \
        if return_all_outputs else None

    def body(t, last, states, *ta):
        output, new = call_step(input_ta.read(t), states)
        if mask_ta is not None:
            m = mask_ta.read(t)
            output = _masked(m, output, zero_output if zero_output_for_mask else last)
            new = [_masked(m, s_new, s) for s_new, s in zip(new, states)]
        if ta:
            ta = (ta[0].write(t, output),)
        return (t + 1, output, new) + ta

    loop_vars = (0, zero_output, flat_init) + ((out_ta,) if out_ta is not None else ())
    result = while_loop(lambda t, *_: less(t, n), body, loop_vars, parallel_iterations=32,
                        maximum_iterations=n)
    last, states = result[1], result[2]
    all_outputs = None
    if return_all_outputs:
        all_outputs = result[3].stack()
        if steps is not None and hasattr(all_outputs, "set_shape"):
            all_outputs.set_shape([steps] + output0.shape.as_list())
        all_outputs = _swap_batch_time(all_outputs)
    return last, all_outputs, pack_sequence_as(initial_states, states)


def _config_dropout_masks(cell, step_input, state) -> None:
    """Makes the cells' dropout masks before the time loop (one mask for every step)."""
    if isinstance(cell, StackedRNNCells):
        batch = shape(step_input)[0]
        for c, s in zip(cell.cells, state):
            _config_dropout_masks(c, step_input, s)
            size = getattr(c, "output_size", None) or flatten(c.state_size)[0]
            step_input = zeros((batch, size), dtype=step_input.dtype)
        return
    if hasattr(cell, "get_dropout_mask"):
        cell.get_dropout_mask(step_input)
        cell.get_recurrent_dropout_mask(flatten(state)[0])


def _reset_dropout_masks(cell) -> None:
    for c in getattr(cell, "cells", [cell]):
        if hasattr(c, "reset_dropout_mask"):
            c.reset_dropout_mask()
            c.reset_recurrent_dropout_mask()


@keras_export("keras.layers.RNN")
class RNN(Layer):
    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, zero_output_for_mask=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if "call" not in dir(cell):
            raise ValueError(f"Argument `cell` should have a `call` method. Received: "
                             f"cell={cell}")
        if "state_size" not in dir(cell):
            raise ValueError("The RNN cell should have a `state_size` attribute (single "
                             "integer or list of integers, one integer per RNN state). "
                             f"Received: cell={cell}")
        super().__init__(**kwargs)
        self.zero_output_for_mask = zero_output_for_mask
        self.cell = cell
        self.return_sequences = return_sequences
        self.return_state = return_state
        self.go_backwards = go_backwards
        self.stateful = stateful
        self.unroll = unroll
        self.supports_masking = True
        self.states = None  # stateful: the state variables (not weights), made by build
        self._expected_batch_size = None
        state_size = getattr(self.cell, "state_size", None)
        if state_size is None:
            raise ValueError("state_size must be specified as property on the RNN cell.")
        if not isinstance(state_size, (list, tuple, int)):
            raise ValueError("state_size must be an integer, or a list/tuple of integers (one "
                             "for each state tensor).")
        self.single_state = isinstance(state_size, int)
        self.state_size = [state_size] if self.single_state else list(state_size)

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        batch, length = sequences_shape[0], sequences_shape[1]
        states_shape = []
        for size in self.state_size:
            if isinstance(size, int):
                states_shape.append((batch, size))
            else:
                states_shape.append([(batch, s) for s in size])
        output_size = getattr(self.cell, "output_size", None)
        if output_size is None:
            output_size = self.state_size[0]
        if not isinstance(output_size, int):
            raise ValueError("output_size must be an integer.")
        out = (batch, length, output_size) if self.return_sequences else (batch, output_size)
        return (out, *states_shape) if self.return_state else out

    def compute_mask(self, inputs, mask=None):
        mask = flatten(mask)[0] if mask is not None else None
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None for _ in flatten(self.state_size)]
        return output_mask

    def build(self, sequences_shape, initial_state_shape=None) -> None:
        step_shape = (sequences_shape[0],) + tuple(sequences_shape[2:])
        if isinstance(self.cell, Layer) and not self.cell.built:
            with self._name_scope_if_outside():
                self.cell.build_from_config({"input_shape": step_shape})
        if self.stateful:
            if self.states is not None:
                self.reset_state()
            else:
                if sequences_shape[0] is None:
                    raise ValueError("When using `stateful=True` in a RNN, the batch size must "
                                     "be static. Found dynamic batch size: sequence.shape="
                                     f"{tuple(sequences_shape)}")
                self._create_state_variables(sequences_shape[0])
        self.built = True

    def _create_state_variables(self, batch_size: int) -> None:
        """Keras 3's stateful RNN: one non-trainable "rnn_state" variable per state, in the
        variable dtype; not among the layer's weights (Keras does not track them either)."""
        dtype = dtypes.as_dtype(self.variable_dtype)
        with init_scope():
            initial = self.get_initial_state(batch_size)
        self.states = map_structure(
            lambda v: self._new_variable(lambda: cast(v, dtype), "rnn_state", dtype,
                                         trainable=False), initial)
        self._expected_batch_size = batch_size

    def get_initial_state(self, batch_size):
        fn = getattr(self.cell, "get_initial_state", None)
        if fn is None:
            return [zeros((batch_size, d), dtype=self.cell.compute_dtype)
                    for d in self.state_size]
        state = fn(batch_size=batch_size)
        return list(state) if is_nested(state) else [state]

    def reset_state(self) -> None:
        """Stateful layers: sets the carried states back to zeros."""
        if self.states is not None:
            for v in flatten(self.states):
                v.assign(zeros_like(v.value()))

    reset_states = reset_state

    def _step_fn(self, training):
        kwargs = {"training": training} if getattr(self.cell, "_call_takes_training",
                                                   False) else {}

        def step(inputs, states):
            output, new_states = self.cell(inputs, states, **kwargs)
            return output, (new_states if is_nested(new_states) else [new_states])
        return step

    def call(self, sequences, initial_state=None, mask=None, training=False):
        rank = sequences.shape.rank
        if rank is not None and rank < 3:
            raise ValueError(f"Layer {self.name} expects inputs of shape (batch, timesteps, "
                             f"features). Received: sequences.shape={tuple(sequences.shape)}")
        if self.unroll and sequences.shape.as_list()[1] is None:
            raise ValueError("Cannot unroll a RNN if the time dimension is undefined. \n- If "
                             "using a Sequential model, specify the time dimension by passing "
                             "an `Input()` as your first layer.\n- If using the functional "
                             "API, specify the time dimension by passing a `shape` or "
                             "`batch_shape` argument to your `Input()`.")
        batch = sequences.shape.as_list()[0]
        if initial_state is None:
            initial_state = (self.states if self.stateful else
                             self.get_initial_state(shape(sequences)[0] if batch is None
                                                    else batch))
        if (self.stateful and self._expected_batch_size is not None and batch is not None
                and batch != self._expected_batch_size):
            raise ValueError("If an RNN is stateful, the batch size of the input sequences "
                             "must be the same as the batch size of the initial state. \n"
                             f"- Expected batch size: {self._expected_batch_size}\n"
                             f"- Received batch size: {batch}")
        if not is_nested(initial_state):
            initial_state = [initial_state]
        state_dtype = dtypes.as_dtype(getattr(self.cell, "compute_dtype", self.compute_dtype))

        def as_state(x):
            x = convert_to_tensor(x) if isinstance(x, Tensor) else \
                convert_to_tensor(x, dtype=state_dtype)
            return x if x.dtype is state_dtype else cast(x, state_dtype)
        initial_state = map_structure(as_state, list(initial_state))
        if mask is not None:
            mask = flatten(mask)[0]
        last, outputs, states = self.inner_loop(sequences, initial_state, mask, training)
        if self.stateful:
            for var, new in zip(flatten(self.states), flatten(states)):
                var.assign(new if new.dtype is var.dtype.base_dtype else cast(new, var.dtype))
        output = outputs if self.return_sequences else last
        compute = dtypes.as_dtype(self.compute_dtype)
        output = output if output.dtype is compute else cast(output, compute)
        if self.return_state:
            states = map_structure(lambda s: s if s.dtype is compute else cast(s, compute),
                                   states)
            return (output, *states)
        return output

    def inner_loop(self, sequences, initial_state, mask, training=False) -> tuple:
        """(last output, all outputs or None, final states): the cell over the time axis
        (Keras 3's `RNN.inner_loop`; LSTM and GRU take a fused op where they can)."""
        if training is not None and training is not False:
            _config_dropout_masks(self.cell, sequences[:, 0], initial_state)
        try:
            return rnn_loop(self._step_fn(training), sequences, initial_state,
                            go_backwards=self.go_backwards, mask=mask, unroll=self.unroll,
                            zero_output_for_mask=self.zero_output_for_mask,
                            return_all_outputs=self.return_sequences)
        finally:
            _reset_dropout_masks(self.cell)

    def get_config(self) -> dict:
        return {**super().get_config(), "return_sequences": self.return_sequences,
                "return_state": self.return_state, "go_backwards": self.go_backwards,
                "stateful": self.stateful, "unroll": self.unroll,
                "zero_output_for_mask": self.zero_output_for_mask,
                "cell": serialize(self.cell)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cell = deserialize(config.pop("cell"), custom_objects)
        return cls(cell, **config)


def _delegate(*names):
    """Read-only properties reading the cell's attributes of these names."""
    def add(cls):
        for name in names:
            setattr(cls, name, property(lambda self, n=name: getattr(self.cell, n)))
        return cls
    return add


_CELL_ATTRS = ("units", "activation", "use_bias", "kernel_initializer",
               "recurrent_initializer", "bias_initializer", "kernel_regularizer",
               "recurrent_regularizer", "bias_regularizer", "kernel_constraint",
               "recurrent_constraint", "bias_constraint", "dropout", "recurrent_dropout")
_ROLES = ("kernel", "recurrent", "bias")
_RNN_KEYS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll")


class _CellLayer(RNN):
    """SimpleRNN, LSTM, GRU: an RNN making its own cell from the layer's arguments; their
    config is the cell's arguments (not the cell)."""

    _CELL: type = SimpleRNNCell
    _CELL_NAME = ""
    _FUSED = None   # rnn_fused's whole-sequence form, where the layer has one

    def __init__(self, args: dict):
        """`args`: the subclass constructor's locals."""
        args = {k: v for k, v in args.items() if k not in ("self", "__class__")}
        kwargs = args.pop("kwargs")
        use_cudnn = args.pop("use_cudnn", "auto")
        activity_regularizer = args.pop("activity_regularizer")
        rnn_args = {k: args.pop(k) for k in _RNN_KEYS}
        if self._CELL is not SimpleRNNCell:
            args["implementation"] = kwargs.pop("implementation", 2)
        cell = self._CELL(dtype=kwargs.get("dtype"), trainable=kwargs.get("trainable", True),
                          name=self._CELL_NAME, **args)
        super().__init__(cell, activity_regularizer=activity_regularizer, **rnn_args, **kwargs)
        self.input_spec = InputSpec(ndim=3)
        if use_cudnn not in ("auto", True, False):
            raise ValueError("Invalid valid received for argument `use_cudnn`. Expected one "
                             f"of {{'auto', True, False}}. Received: use_cudnn={use_cudnn}")
        self.use_cudnn = use_cudnn

    def call(self, sequences, initial_state=None, mask=None, training=False):
        return super().call(sequences, initial_state=initial_state, mask=mask,
                            training=training)

    def inner_loop(self, sequences, initial_state, mask, training=False) -> tuple:
        """LSTM, GRU and SimpleRNN (`_FUSED`): one CudnnRNNV3 op over the sequence where the
        configuration allows (as Keras 3 does on TF with cuDNN for the first two, here on
        every device: keras/layers/rnn_fused.py), else the generic loop; `use_cudnn=False`
        always loops."""
        cell = self.cell
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        # Keras refuses use_cudnn=True with recurrent dropout (cuDNN has none); "auto" here
        # still runs one op, with the dropout masks (rnn_fused.py)
        if (self._FUSED is not None and self.use_cudnn in ("auto", True)
                and not (self.use_cudnn is True and cell.recurrent_dropout)
                and rnn_fused.applies(cell, self.unroll, mask, sequences)):
            sequences, masks = rnn_fused.dropout_masks(cell, sequences, initial_state,
                                                       training)
            return self._FUSED(sequences, initial_state, cell, self.go_backwards,
                               self.return_sequences, mask, self.zero_output_for_mask, masks)
        if self.use_cudnn is True:
            raise ValueError("use_cudnn=True was specified, but cuDNN is not supported for "
                             "this layer configuration with this backend. Pass "
                             "use_cudnn='auto' to fallback to a non-cuDNN implementation.")
        return super().inner_loop(sequences, initial_state, mask, training)

    def get_config(self) -> dict:
        base = super().get_config()
        del base["cell"]
        cell = self.cell._cell_config()
        config = {k: cell[k] for k in ("units", "activation", "recurrent_activation",
                                       "use_bias") if k in cell}
        for role in _ROLES:
            config[f"{role}_initializer"] = cell[f"{role}_initializer"]
        for key in ("unit_forget_bias",):
            if key in cell:
                config[key] = cell[key]
        for role in _ROLES:
            config[f"{role}_regularizer"] = cell[f"{role}_regularizer"]
        config["activity_regularizer"] = regularizers.serialize(self.activity_regularizer)
        for role in _ROLES:
            config[f"{role}_constraint"] = cell[f"{role}_constraint"]
        config.update(dropout=cell["dropout"], recurrent_dropout=cell["recurrent_dropout"])
        if "reset_after" in cell:
            config["reset_after"] = cell["reset_after"]
        if self._CELL is not SimpleRNNCell:
            config["seed"] = cell["seed"]
        return {**base, **config}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


@keras_export("keras.layers.SimpleRNN")
@_delegate(*_CELL_ATTRS)
class SimpleRNN(_CellLayer):
    _CELL, _CELL_NAME = SimpleRNNCell, "simple_rnn_cell"
    _FUSED = staticmethod(rnn_fused.simple_rnn)

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, seed=None, **kwargs):
        super().__init__(locals())


@keras_export("keras.layers.LSTM")
@_delegate(*_CELL_ATTRS, "recurrent_activation", "unit_forget_bias")
class LSTM(_CellLayer):
    _CELL, _CELL_NAME = LSTMCell, "lstm_cell"
    _FUSED = staticmethod(rnn_fused.lstm)

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, seed=None, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, unroll=False,
                 use_cudnn="auto", **kwargs):
        super().__init__(locals())


@keras_export("keras.layers.GRU")
@_delegate(*_CELL_ATTRS, "recurrent_activation", "reset_after")
class GRU(_CellLayer):
    _CELL, _CELL_NAME = GRUCell, "gru_cell"
    _FUSED = staticmethod(rnn_fused.gru)

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, reset_after=True,
                 use_cudnn="auto", **kwargs):
        super().__init__(locals())


docstrings.attach(globals(), rnn_docs.DOCS)
