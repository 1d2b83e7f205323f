"""Docstrings of the recurrent layers RNN, SimpleRNN, LSTM and GRU (rnn_layers.py, which
stays a readable length without them). Attached by `ndflow.keras.docstrings.attach`; the
examples run as doctests (tests/keras/test_keras_docstrings.py)."""

from __future__ import annotations

from ndflow.keras.docstrings import sections

_RUN = """      return_sequences: whether to return the output of every step, (batch, time,
        units), or only the last, (batch, units).
      return_state: whether to also return the final state(s), after the output.
      go_backwards: whether to run over the time axis in reverse (the outputs come
        reversed too).
      stateful: whether the final states of a batch are the initial states of the next
        (batch i of one call continues batch i of the previous; needs a fixed batch
        size; `reset_states()` clears them).
      unroll: whether, in a `tf.function` graph, the time loop is unrolled into one
        block of ops per step (a static length; faster for short sequences, more memory)
        rather than a while loop; eager calls step in Python either way."""

_CALL = """    Called as `layer(sequences, initial_state=None, mask=None, training=False)` on
    (batch, time, features) inputs; a (batch, time) mask skips padded steps (the state
    is carried over them)."""


def _cell_layer(summary: str, step: str, extra_args: str, example: str = "") -> str:
    doc = f"""{summary}

    Each step computes {step}

{_CALL}

    Args:
      units: the size of the output and state.
{extra_args}
      use_bias: whether the gates add biases.
      kernel_initializer: the input weights' initializer (default "glorot_uniform").
      recurrent_initializer: the recurrent weights' initializer (default "orthogonal").
      bias_initializer: the bias' initializer (default zeros).
      kernel_regularizer, recurrent_regularizer, bias_regularizer: optional penalties.
      activity_regularizer: optional penalty on the output.
      kernel_constraint, recurrent_constraint, bias_constraint: optional projections
        after each update.
      dropout: the fraction of the inputs dropped in training (one mask for all steps).
      recurrent_dropout: the fraction of the recurrent state dropped in training.
      seed: an int for reproducible dropout masks.
{_RUN}
      **kwargs: Layer arguments (name, dtype, input_shape, ...).
    """
    return sections(doc, example=example)


_GATES = """      activation: the activation of the candidate state and output (default "tanh").
      recurrent_activation: the gates' activation (default "sigmoid")."""

DOCS = {
    "RNN": f"""Runs a recurrent cell over the time axis of sequences: the base of SimpleRNN,
    LSTM and GRU, and the way to use a custom cell.

    A cell is any object with `call(input_t, states)` returning `(output_t, new_states)`
    and a `state_size` (an int, or one per state); a list of cells is stacked
    (`StackedRNNCells`).

{_CALL}

    Args:
      cell: the cell, or a list of cells.
{_RUN}
      zero_output_for_mask: whether masked steps output zeros (else the last output is
        repeated), with `return_sequences`.
      **kwargs: Layer arguments (name, dtype, input_shape, ...).

    Raises:
      ValueError: a cell without `call` or `state_size`, or a `state_size` that is not an
        int or list of ints; when called, inputs of rank below 3.

    Example:

    >>> layer = tf.keras.layers.RNN(tf.keras.layers.SimpleRNNCell(4), return_sequences=True)
    >>> layer(tf.zeros((2, 5, 3))).shape
    TensorShape([2, 5, 4])
    """,
    "SimpleRNN": _cell_layer(
        "A fully connected recurrent layer whose output is fed back as its state.",
        "`h_t = activation(x_t @ kernel + h_(t-1) @ recurrent_kernel + bias)`.",
        """      activation: the activation (default "tanh")."""),
    "LSTM": _cell_layer(
        "Long Short-Term Memory layer (Hochreiter & Schmidhuber, 1997).",
        "input, forget and output gates and a candidate from `x_t` and\n    `h_(t-1)`; "
        "then `c_t = f * c_(t-1) + i * candidate` and `h_t = o * activation(c_t)`.\n    "
        "The states are [h, c].",
        _GATES + """
      unit_forget_bias: whether to add 1 to the forget gate's bias at initialization.
      use_cudnn: accepted for Keras' signature ("auto", True or False).""",
        ">>> tf.keras.layers.LSTM(8)(tf.zeros((2, 5, 3))).shape\n"
        "    TensorShape([2, 8])"),
    "GRU": _cell_layer(
        "Gated Recurrent Unit layer (Cho et al., 2014).",
        "update and reset gates from `x_t` and `h_(t-1)`, a candidate\n    state from "
        "the reset-gated state, and `h_t = z * h_(t-1) + (1 - z) * candidate`.",
        _GATES + """
      reset_after: whether the reset gate applies after the recurrent matrix product
        (True, the default, CuDNN-compatible) or before.
      use_cudnn: accepted for Keras' signature ("auto", True or False).""",
        ">>> outputs, state = tf.keras.layers.GRU(4, return_state=True)(tf.zeros((2, 5, 3)))\n"
        "    >>> outputs.shape, state.shape\n"
        "    (TensorShape([2, 4]), TensorShape([2, 4]))"),
}
