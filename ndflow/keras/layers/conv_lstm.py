"""Keras 3's convolutional LSTMs: ConvLSTM1D, ConvLSTM2D, ConvLSTM3D (Shi et al. 2015), an
RNN over the time axis of (batch, time, *spatial, channels) inputs whose cell (ConvLSTMCell)
replaces the LSTM's matrix products by convolutions: the input's with the layer's strides,
padding and dilation, the state's with stride 1 and "same" padding.

Weights are Keras 3's (`kernel` kernel_size + (channels, 4 * filters), `recurrent_kernel`
kernel_size + (filters, 4 * filters), `bias` (4 * filters,), gates i, f, c, o), and so are
the defaults, configs and the four dropout masks per step (one per gate).

Keras convolves each gate apart, eight convolutions a step. Here the input's convolutions
do not wait for the recurrence: the layer runs them for all time steps at once, one
convolution over batch x time rows (four with per-gate dropout masks, which are the same at
every step), and a step convolves only the state, with the whole recurrent kernel where no
recurrent dropout differs per gate. On a two-layer ConvLSTM2D(16) over 10 steps of 8 x 16 x
16 frames: 72 -> 38 ms a `fit` step (TF 40; 27 with the gates' dense activations,
kernels/math.py).
"""

from __future__ import annotations

import inspect

from ndflow.core.api_export import keras_export
from ndflow.core.nest import flatten
from ndflow.keras import activation_functions as activations
from ndflow.keras import constraint_functions as constraints
from ndflow.keras import regularizer_functions as regularizers
from ndflow.keras.docstrings import sections
from ndflow.keras.layers import conv_utils as cu
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.input_spec import InputSpec
from ndflow.keras.layers.rnn_cells import (
    DropoutRNNCell,
    UnitForgetBias,
    activation_name,
    lstm_step,
)
from ndflow.keras.layers.rnn_layers import RNN, rnn_loop
from ndflow.keras.random_functions import SeedGenerator
from ndflow.ops import init_ops, nn_conv_nd
from ndflow.ops.array_core import expand_dims, reshape, shape
from ndflow.ops.array_fill import zeros
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_split import split

_ROLES = ("kernel", "recurrent", "bias")


def _tf_format(data_format: str, rank: int) -> str:
    spatial = "DHW"[3 - rank:]
    return f"N{spatial}C" if data_format == "channels_last" else f"NC{spatial}"


class ConvLSTMCell(Layer, DropoutRNNCell):
    """One time step: `i, f, o = recurrent_activation(x * W + h * U + b)` per gate,
    `c = f * c_prev + i * activation(x * W_c + h * U_c + b_c)`, `h = o * activation(c)`,
    where `*` is a convolution."""

    _dropout_mask_count = 4

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self.seed_generator = SeedGenerator(seed)
        if rank > 3:
            raise ValueError(f"Rank {rank} convolutions are not currently implemented. "
                             f"Received: rank={rank}")
        self.rank, self.filters = rank, filters
        self.kernel_size = cu.standardize_tuple(kernel_size, rank, "kernel_size")
        self.strides = cu.standardize_tuple(strides, rank, "strides", allow_zero=True)
        self.padding = cu.standardize_padding(padding)
        self.data_format = cu.standardize_data_format(data_format)
        self.dilation_rate = cu.standardize_tuple(dilation_rate, rank, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("Specifying `strides > 1` is not compatible with `dilation_rate > "
                             "1`. Please provide `strides=1` or `dilation_rate=1`. Received: "
                             f"strides={self.strides} and dilation_rate={self.dilation_rate}")
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = use_bias
        self.kernel_initializer = init_ops.get(kernel_initializer)
        self.recurrent_initializer = init_ops.get(recurrent_initializer)
        self.bias_initializer = init_ops.get(bias_initializer)
        self.unit_forget_bias = unit_forget_bias
        for role, args in (("kernel", (kernel_regularizer, kernel_constraint)),
                           ("recurrent", (recurrent_regularizer, recurrent_constraint)),
                           ("bias", (bias_regularizer, bias_constraint))):
            setattr(self, f"{role}_regularizer", regularizers.get(args[0]))
            setattr(self, f"{role}_constraint", constraints.get(args[1]))
        self.dropout = min(1.0, max(0.0, dropout))
        self.recurrent_dropout = min(1.0, max(0.0, recurrent_dropout))
        self.input_spec = InputSpec(ndim=rank + 2)
        self.state_size = -1   # Keras' marker: the states are shaped like the outputs
        self.kernel = self.recurrent_kernel = self.bias = None

    def build(self, inputs_shape, states_shape=None) -> None:
        inputs_shape = tuple(inputs_shape)
        channel_axis = 1 if self.data_format == "channels_first" else -1
        self.spatial_dims = inputs_shape[2:] if channel_axis == 1 else inputs_shape[1:-1]
        if None in self.spatial_dims:
            raise ValueError("ConvLSTM layers only support static input shapes for the spatial "
                             f"dimension. Received invalid input shape: input_shape="
                             f"{inputs_shape}")
        if inputs_shape[channel_axis] is None:
            raise ValueError("The channel dimension of the inputs (last axis) should be "
                             "defined. Found None. Full input shape received: "
                             f"input_shape={inputs_shape}")
        self.input_spec = InputSpec(ndim=self.rank + 3, shape=(None,) + inputs_shape[1:])
        self.input_dim = inputs_shape[channel_axis]
        gates = self.filters * 4
        self.kernel = self._weight("kernel", self.kernel_size + (self.input_dim, gates))
        self.recurrent_kernel = self._weight("recurrent", self.kernel_size + (self.filters,
                                                                              gates),
                                             name="recurrent_kernel")
        if self.use_bias:
            init = (UnitForgetBias(self.bias_initializer, self.filters)
                    if self.unit_forget_bias else None)
            self.bias = self._weight("bias", (gates,), init)
        self.built = True

    def _weight(self, role: str, shape, initializer_=None, name=None):
        return self.add_weight(shape=shape, name=name or role,
                               initializer=initializer_ or getattr(self, f"{role}_initializer"),
                               regularizer=getattr(self, f"{role}_regularizer"),
                               constraint=getattr(self, f"{role}_constraint"))

    def _conv(self, x, w, strides, padding, dilations):
        return nn_conv_nd.convolution(x, w, strides=list(strides), padding=padding.upper(),
                                      data_format=_tf_format(self.data_format, self.rank),
                                      dilations=list(dilations))

    def _masks(self, inputs, h_prev, training) -> tuple:
        """(input dropout masks, recurrent dropout masks): four each, or None."""
        dp = (self.get_dropout_mask(inputs) if training and 0.0 < self.dropout < 1.0
              else None)
        rec = (self.get_recurrent_dropout_mask(h_prev)
               if training and 0.0 < self.recurrent_dropout < 1.0 else None)
        return dp, rec

    def _channel_axis(self) -> int:
        return -1 if self.data_format == "channels_last" else 1

    def _gate_convs(self, xs, kernel, strides, padding, dilations):
        """The four gates' convolutions by `kernel` (kernel_size + (in, 4 * filters)),
        concatenated along the channels: of `xs` by the whole kernel, or, where `xs` is a list
        (each gate's input times its dropout mask), of each by its gate's part."""
        if not isinstance(xs, list):
            return self._conv(xs, kernel, strides, padding, dilations)
        kernels = split(kernel, 4, axis=self.rank + 1)
        return concat([self._conv(x, k, strides, padding, dilations)
                       for x, k in zip(xs, kernels)], self._channel_axis())

    def input_gates(self, xs):
        """The input's part of the four gates' pre-activations, bias included (`xs` as
        `_gate_convs` takes it)."""
        z = self._gate_convs(xs, self.kernel, self.strides, self.padding, self.dilation_rate)
        if self.use_bias:
            bias_shape = ((1,) * (self.rank + 1) + (-1,) if self.data_format == "channels_last"
                          else (1, -1) + (1,) * self.rank)
            z = z + reshape(self.bias, bias_shape)
        return z

    def recurrent_step(self, x_gates, states, rec):
        """(h, [h, c]) of a step from the input's gate pre-activations, the states and the
        recurrent dropout masks (or None)."""
        h_prev, c_prev = states[0], states[1]
        ones = (1,) * self.rank
        hs = [h_prev * m for m in rec] if rec is not None else h_prev
        z = x_gates + self._gate_convs(hs, self.recurrent_kernel, ones, "same", ones)
        return lstm_step(self, split(z, 4, axis=self._channel_axis()), c_prev)

    def call(self, inputs, states, training=False):
        dp, rec = self._masks(inputs, states[0], training)
        xs = [inputs * m for m in dp] if dp is not None else inputs
        return self.recurrent_step(self.input_gates(xs), states, rec)

    def compute_output_shape(self, inputs_shape, states_shape=None):
        out = cu.conv_output_shape(inputs_shape, self.filters, self.kernel_size, self.strides,
                                   self.padding, self.data_format, self.dilation_rate)
        return out, [out, out]

    def get_initial_state(self, batch_size=None):
        if self.data_format == "channels_last":
            input_shape = (batch_size,) + tuple(self.spatial_dims) + (self.input_dim,)
        else:
            input_shape = (batch_size, self.input_dim) + tuple(self.spatial_dims)
        state_shape = self.compute_output_shape(input_shape)[0]
        return [zeros(state_shape, dtype=self.compute_dtype),
                zeros(state_shape, dtype=self.compute_dtype)]

    def _cell_config(self) -> dict:
        config = {"filters": self.filters, "kernel_size": self.kernel_size,
                  "strides": self.strides, "padding": self.padding,
                  "data_format": self.data_format, "dilation_rate": self.dilation_rate,
                  "activation": activation_name(self.activation),
                  "recurrent_activation": activation_name(self.recurrent_activation),
                  "use_bias": self.use_bias}
        for role in _ROLES:
            config[f"{role}_initializer"] = init_ops.serialize(
                getattr(self, f"{role}_initializer"))
        config["unit_forget_bias"] = self.unit_forget_bias
        for role in _ROLES:
            config[f"{role}_regularizer"] = regularizers.serialize(
                getattr(self, f"{role}_regularizer"))
        return config

    def _constraints_and_rest(self) -> dict:
        config = {f"{role}_constraint": constraints.serialize(getattr(self, f"{role}_constraint"))
                  for role in _ROLES}
        config.update(dropout=self.dropout, recurrent_dropout=self.recurrent_dropout,
                      seed=self.seed)
        return config

    def get_config(self) -> dict:
        return {**super().get_config(), **self._cell_config(), **self._constraints_and_rest()}


class ConvLSTM(RNN):
    """The RNN of a ConvLSTMCell: Keras 3's ConvLSTM base of ConvLSTM1D/2D/3D."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, **kwargs):
        cell = ConvLSTMCell(
            rank=rank, filters=filters, kernel_size=kernel_size, strides=strides,
            padding=padding, data_format=data_format, dilation_rate=dilation_rate,
            activation=activation, recurrent_activation=recurrent_activation,
            use_bias=use_bias, kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer,
            unit_forget_bias=unit_forget_bias, kernel_regularizer=kernel_regularizer,
            recurrent_regularizer=recurrent_regularizer, bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint, recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint, dropout=dropout,
            recurrent_dropout=recurrent_dropout, seed=seed, name="conv_lstm_cell",
            dtype=kwargs.get("dtype"))
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.input_spec = InputSpec(ndim=rank + 3)

    def inner_loop(self, sequences, initial_state, mask, training=False) -> tuple:
        """The input's convolutions for every step at once (module doc), then the time loop
        of the recurrent convolutions; dropout masks drawn as the generic loop draws them."""
        cell = self.cell
        dp = rec = None
        if training is not None and training is not False:
            dp = cell.get_dropout_mask(sequences[:, 0])
            rec = cell.get_recurrent_dropout_mask(flatten(initial_state)[0])
            dp = dp if 0.0 < cell.dropout < 1.0 else None
            rec = rec if 0.0 < cell.recurrent_dropout < 1.0 else None
        try:
            frames = [-1] + sequences.shape.as_list()[2:]   # batch x time rows
            xs = ([reshape(sequences * expand_dims(m, 1), frames) for m in dp]
                  if dp is not None else reshape(sequences, frames))
            x_gates = cell.input_gates(xs)
            rows = shape(sequences)[:2]
            x_gates = reshape(x_gates, concat([rows, shape(x_gates)[1:]], 0))
            return rnn_loop(lambda x_t, states: cell.recurrent_step(x_t, states, rec),
                            x_gates, initial_state, go_backwards=self.go_backwards, mask=mask,
                            unroll=self.unroll, zero_output_for_mask=self.zero_output_for_mask,
                            return_all_outputs=self.return_sequences)
        finally:
            cell.reset_dropout_mask()
            cell.reset_recurrent_dropout_mask()

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        sequences_shape = tuple(sequences_shape)
        batch, steps = sequences_shape[0], sequences_shape[1]
        state = tuple(self.cell.compute_output_shape((batch,) + sequences_shape[2:])[0][1:])
        out = (batch, steps) + state if self.return_sequences else (batch,) + state
        if self.return_state:
            return out, (batch,) + state, (batch,) + state
        return out

    def get_config(self) -> dict:
        base = super().get_config()
        del base["cell"]
        config = self.cell._cell_config()
        config["activity_regularizer"] = regularizers.serialize(self.activity_regularizer)
        config.update(self.cell._constraints_and_rest())
        return {**base, **config}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


for _name in ("filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
              "activation", "recurrent_activation", "use_bias", "kernel_initializer",
              "recurrent_initializer", "bias_initializer", "unit_forget_bias",
              "kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
              "kernel_constraint", "recurrent_constraint", "bias_constraint", "dropout",
              "recurrent_dropout"):
    setattr(ConvLSTM, _name, property(lambda self, n=_name: getattr(self.cell, n)))


class _ConvLSTMND(ConvLSTM):
    """ConvLSTM at the rank `_rank` of a subclass, whose `__init__` shows ConvLSTM's arguments
    less `rank`, as Keras spells each class's arguments out (the signature tools and
    `tf.keras` users read)."""

    _rank = 2

    def __init__(self, filters, kernel_size, **kwargs):
        super().__init__(self._rank, filters, kernel_size, **kwargs)


_BASE_SIGNATURE = inspect.signature(ConvLSTM.__init__)
_ConvLSTMND.__init__.__signature__ = _BASE_SIGNATURE.replace(
    parameters=[p for p in _BASE_SIGNATURE.parameters.values() if p.name != "rank"])

_DOC = """{rank}-D convolutional LSTM{what}.

    Each step runs an LSTM whose input and recurrent transformations are convolutions, so
    the state keeps its spatial layout. Inputs are (batch, time, {axes}, channels) (channels
    last) or with the channels before the spatial axes.

    Args:
      filters: the number of output channels (and state channels).
      kernel_size: the convolution window, an int or a tuple of {rank}.
      strides: the input convolution's strides.
      padding: "valid" or "same".
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      dilation_rate: the input convolution's dilation.
      activation: the candidate's and output's activation (default "tanh").
      recurrent_activation: the gates' activation (default "sigmoid").
      use_bias, kernel_initializer, recurrent_initializer, bias_initializer,
        unit_forget_bias, the regularizers and constraints: as in `LSTM`.
      dropout: the fraction of the inputs dropped in training.
      recurrent_dropout: the fraction of the recurrent state dropped in training.
      seed: an int for reproducible dropout masks.
      return_sequences, return_state, go_backwards, stateful: as in `RNN`.
      **kwargs: Layer arguments (name, dtype, ...).
    """
_EXAMPLE_2D = """>>> layer = tf.keras.layers.ConvLSTM2D(4, 3, padding="same")
    >>> layer(tf.zeros((1, 2, 5, 5, 3))).shape
    TensorShape([1, 5, 5, 4])"""


@keras_export("keras.layers.ConvLSTM1D")
class ConvLSTM1D(_ConvLSTMND):
    __doc__ = _DOC.format(rank=1, what="", axes="steps")
    _rank = 1


@keras_export("keras.layers.ConvLSTM2D")
class ConvLSTM2D(_ConvLSTMND):
    __doc__ = sections(_DOC.format(rank=2, what=" (for sequences of images, e.g. video frames)",
                                   axes="rows, cols"), example=_EXAMPLE_2D)
    _rank = 2


@keras_export("keras.layers.ConvLSTM3D")
class ConvLSTM3D(_ConvLSTMND):
    __doc__ = _DOC.format(rank=3, what=" (for sequences of volumes)", axes="d1, d2, d3")
    _rank = 3
