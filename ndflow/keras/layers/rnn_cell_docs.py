"""The docstrings of SimpleRNNCell, LSTMCell and GRUCell (attached at the end of rnn_cells.py)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "units": "the size of the output and state.",
    "use_bias": "whether to add biases.",
    "kernel_initializer": "the input weights' initializer (default \"glorot_uniform\").",
    "recurrent_initializer": "the recurrent weights' initializer (default \"orthogonal\").",
    "bias_initializer": "the bias' initializer (default zeros).\n"
                        "      kernel_regularizer, recurrent_regularizer, bias_regularizer: "
                        "optional penalties.\n"
                        "      kernel_constraint, recurrent_constraint, bias_constraint: optional "
                        "projections.",
    "dropout": "the fraction of the inputs dropped in training (one mask per RNN call).",
    "recurrent_dropout": "the fraction of the recurrent state dropped in training.",
    "seed": "an int for reproducible dropout masks.",
    "**kwargs": "Layer arguments (name, dtype, ...).",
    "activation": "the candidate's and output's activation (default \"tanh\").",
    "recurrent_activation": "the gates' activation (default \"sigmoid\").",
}
_RAISES = """

    Raises:
      ValueError: `units` is not a positive int."""


DOCS = docs_with_args(_ARGS, {
    "SimpleRNNCell": (
        "The cell of `SimpleRNN`: one step `h = activation(x @ kernel + h_prev @\n"
        "    recurrent_kernel + bias)`, the output being the new state. Run it over time with\n"
        "    `keras.layers.RNN`.",
        ["units", 'activation: the activation (default "tanh").', "use_bias", "kernel_initializer",
         "recurrent_initializer", "bias_initializer", "dropout", "recurrent_dropout", "seed",
         "**kwargs"],
        _RAISES),
    "LSTMCell": (
        "The cell of `LSTM`: gates i, f, c, o (Keras' order in the kernels and bias) from\n"
        "    the input and the previous output; `c = f * c_prev + i * activation(z_c)`,\n"
        "    `h = o * activation(c)`. The states are [h, c].",
        ["units: the size of the output and of each state.", "activation", "recurrent_activation",
         "use_bias", "kernel_initializer", "recurrent_initializer", "bias_initializer", "dropout",
         "recurrent_dropout",
         "unit_forget_bias: whether to initialize the forget gate's bias to 1.", "seed",
         "**kwargs"],
        _RAISES),
    "GRUCell": (
        "The cell of `GRU`: update (z) and reset (r) gates and a candidate `hh` (Keras' order\n"
        "    in the kernels), `h = z * h_prev + (1 - z) * hh`.\n"
        "\n"
        "    With `reset_after` (the default, cuDNN's form) the reset gate multiplies the "
        "recurrent\n"
        "    projection, and the bias has shape (2, 3 * units): input bias, recurrent bias.",
        ["units", "activation", "recurrent_activation", "use_bias", "kernel_initializer",
         "recurrent_initializer", "bias_initializer", "dropout", "recurrent_dropout",
         "reset_after: where the reset gate applies (see above).", "seed", "**kwargs"],
        _RAISES),
})
