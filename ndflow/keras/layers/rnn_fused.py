"""Keras' fused LSTM and GRU (Keras 3's `backend.lstm`/`backend.gru` on TensorFlow): where the
layer's configuration is cuDNN's (tanh and sigmoid activations, a bias, not unrolled; a GRU
with `reset_after`), the whole sequence runs as one CudnnRNNV3 op on cuDNN's canonical
weights, built from the Keras kernels as Keras builds them. TF takes this path on GPUs only;
ndflow has the op's kernels on every device (kernels/cudnn_rnn.py), so it is taken
everywhere: the time loop and its gradient cost no per-step dispatch. Other configurations
run the generic time loop (rnn_layers.rnn_loop).

Keras has no fused SimpleRNN; ndflow runs one with a tanh or relu activation (with or
without a bias, not unrolled) as CudnnRNNV3 in cuDNN's rnn_tanh / rnn_relu mode, the same
arithmetic as the cell's loop: on the Embedding + SimpleRNN(128) probe (seq 100, batch 64)
the loop's per-step ops cost 27 ms a `fit` step, TF's 11.

A mask (Embedding(mask_zero=True), padded sequences) keeps the generic loop's semantics on
CPUs: a masked step holds the states and repeats the last output (zeros before the first
unmasked step, or at every masked step with `zero_output_for_mask`), whatever the mask's
shape (padding before, after, holes). Each row's unmasked steps are gathered to the front
(a stable argsort of the mask), the op runs them with `sequence_lengths` (the kernels hold a
row's states after its length), and each step's output is gathered back from the row's
latest unmasked step. Masked sequences run float32 on CPUs only (where the kernels take
lengths); elsewhere the generic loop.

Recurrent dropout (and input dropout with Keras' implementation 1) draws one mask per gate,
the same at every step; Keras on TF then runs the generic loop, four (LSTM) input and four
recurrent products a step. ndflow draws the same masks in the same order and runs
_RecurrentDropoutRNN, CudnnRNNV3's computation with those masks (on the LSTM(64)
recurrent-dropout probe, seq 50, batch 64: 29 ms a `fit` step in the loop, TF's 14).
"""

from __future__ import annotations

import inspect

from ndflow.core import dtypes, save_context
from ndflow.keras import activation_functions as activations
from ndflow.ops import (
    arithmetic,
    comparison,
    cudnn_rnn,
    math,
    math_cumulative,
    nn_activation,
    reduction,
    sort,
)
from ndflow.ops.apply import apply_op
from ndflow.ops.array_core import expand_dims, reshape, shape, squeeze
from ndflow.ops.array_fill import fill, zeros, zeros_like
from ndflow.ops.array_reorder import reverse
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_split import split
from ndflow.ops.array_stack import stack
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast
from ndflow.ops.gather_batch import gather
from ndflow.runtime import device_config

_TANH = (activations.tanh, math.tanh)
_SIGMOID = (activations.sigmoid, math.sigmoid)
_RELU = (activations.relu, nn_activation.relu)


def applies(cell, unroll: bool, mask, sequences=None) -> bool:
    """Whether an LSTM, GRU or SimpleRNN layer over `cell` computes what CudnnRNNV3 (with
    dropout masks, _RecurrentDropoutRNN) computes (Keras' `cudnn_ok` without its GPU and
    recurrent-dropout tests; a SimpleRNN: `simple_mode`; with a mask, float32 sequences and
    no GPU, where the kernels take sequence lengths), and is not being traced into a
    SavedModel (TensorFlow has CudnnRNNV3 kernels on GPUs only, and no
    _RecurrentDropoutRNN: a file ndflow writes runs on TensorFlow's CPUs too)."""
    if mask is not None and not (sequences is not None and
                                 sequences.dtype.base_dtype is dtypes.float32
                                 and not device_config.list_physical_devices("GPU")):
        return False
    if save_context.in_save_context() or unroll:
        return False
    if not hasattr(cell, "recurrent_activation"):
        return simple_mode(cell) is not None
    return (_is(cell.activation, _TANH) and _is(cell.recurrent_activation, _SIGMOID)
            and cell.use_bias and getattr(cell, "reset_after", True))


def _is(fn, functions: tuple) -> bool:
    """Whether `fn` is one of `functions`, or wraps one (tf.nn.relu is a dispatch wrapper)."""
    return inspect.unwrap(fn) in functions if callable(fn) else False


def simple_mode(cell) -> str | None:
    """CudnnRNNV3's rnn_mode for a SimpleRNN cell's activation (tanh or relu with Keras'
    defaults), else None."""
    if _is(cell.activation, _TANH):
        return "rnn_tanh"
    if _is(cell.activation, _RELU):
        return "rnn_relu"
    return None


def _as(x, dtype):
    return x if x.dtype.base_dtype is dtype else cast(x, dtype)


def _flat_t(w):
    return reshape(transpose(w), [-1])


def dropout_masks(cell, sequences, initial_state, training):
    """(sequences, per-gate masks or None): Keras' dropout masks for a training call, drawn as
    the generic loop draws them (input first, the same calls). A single input mask (Keras'
    implementation 2) scales `sequences`; per-gate ones (implementation 1, and every
    recurrent mask) come back as (input masks, recurrent masks), lists or None, for the
    layer's fused function."""
    if not training:
        return sequences, None
    dp = cell.get_dropout_mask(sequences[:, 0, :]) if 0.0 < cell.dropout < 1.0 else None
    rec = (cell.get_recurrent_dropout_mask(initial_state[0])
           if 0.0 < cell.recurrent_dropout < 1.0 else None)
    cell.reset_dropout_mask()
    cell.reset_recurrent_dropout_mask()
    if dp is not None and not isinstance(dp, (list, tuple)):
        sequences, dp = sequences * expand_dims(dp, 1), None
    if rec is not None and not isinstance(rec, (list, tuple)):
        rec = [rec]                         # a SimpleRNN's one mask: its one gate's
    return sequences, (None if dp is None and rec is None else (dp, rec))


def _stacked(masks, order, dtype):
    """Per-gate masks (Keras' gate order) as one (G, B, X) tensor in cuDNN's `order`, or no
    values."""
    if masks is None:
        return zeros([0], dtype)
    return stack([_as(masks[k], dtype) for k in order])


def _op_masks(masks, order, dtype):
    """`dropout_masks`' (input, recurrent) masks as _RecurrentDropoutRNN's inputs, or None."""
    return None if masks is None else tuple(_stacked(m, order, dtype) for m in masks)


def _run(mode, sequences, h0, c0, params, go_backwards, return_sequences: bool, mask=None,
         zero_output_for_mask=False, masks=None):
    """(last output, all outputs or None, h, c) of the op over batch-major `sequences`, with
    the generic loop's mask semantics (module doc); `masks`: the (input, recurrent) dropout
    masks as `_stacked` makes them, or None."""
    if go_backwards:
        sequences = reverse(sequences, [1])
    if mask is None:
        lengths = fill(expand_dims(shape(sequences, out_type=dtypes.int32)[0], 0),
                       shape(sequences, out_type=dtypes.int32)[1])
    else:
        mask = cast(mask[:, :, 0] if mask.shape.rank == 3 else mask, dtypes.bool)
        if go_backwards:
            mask = reverse(mask, [1])
        steps = cast(mask, dtypes.int32)
        lengths = reduction.reduce_sum(steps, 1)
        # each row's unmasked steps first, in time order (a stable sort of 0s before 1s)
        order = sort.argsort(1 - steps, axis=1, stable=True)
        sequences = gather(sequences, order, axis=1, batch_dims=1)
    if masks is None:
        outputs, h, c, _, _ = apply_op(
            cudnn_rnn.CudnnRNNV3, [sequences, expand_dims(h0, 1), c0, params, lengths],
            {"rnn_mode": mode, "is_training": True, "time_major": False},
            name="CudnnRNNV3").outputs
    else:
        outputs, h, c, _ = apply_op(
            cudnn_rnn.RecurrentDropoutRNN,
            [sequences, expand_dims(h0, 1), c0, params, lengths, *masks],
            {"rnn_mode": mode, "time_major": False}, name="RecurrentDropoutRNN").outputs
    h = squeeze(h, [1])
    if mask is None:
        return h, (outputs if return_sequences else None), h, c
    # the last step shows the state (zeros for a row with no unmasked step, or a masked last
    # step with zero_output_for_mask)
    shown_last = mask[:, -1] if zero_output_for_mask else comparison.greater(lengths, 0)
    last = arithmetic.where(expand_dims(shown_last, -1), h, zeros_like(h))
    if not return_sequences:
        return last, None, h, c
    # step t shows the output of the row's latest unmasked step (zeros before any)
    latest = math_cumulative.cumsum(steps, axis=1) - 1
    outputs = gather(outputs, arithmetic.maximum(latest, 0), axis=1, batch_dims=1)
    shown = mask if zero_output_for_mask else comparison.greater_equal(latest, 0)
    outputs = arithmetic.where(expand_dims(shown, -1), outputs, zeros_like(outputs))
    return last, outputs, h, c


def lstm(sequences, states, cell, go_backwards: bool, return_sequences: bool, mask=None,
         zero_output_for_mask: bool = False, masks=None) -> tuple:
    """(last output, all outputs or None, [h, c]) of an LSTM cell's weights over batch-major
    `sequences` from `states` ([h0, c0]), one CudnnRNNV3 op. The input biases are zeros and
    the recurrent ones Keras' bias (the gates see one bias, as in the cell)."""
    dtype = sequences.dtype.base_dtype
    h0, c0 = states[0], states[1]
    kernel, recurrent_kernel, bias = (_as(w, dtype) for w in (cell.kernel,
                                                              cell.recurrent_kernel, cell.bias))
    params = concat([_flat_t(kernel), _flat_t(recurrent_kernel), zeros_like(bias), bias], 0)
    last, outputs, h, c = _run("lstm", sequences, _as(h0, dtype),
                               expand_dims(_as(c0, dtype), 1), params, go_backwards,
                               return_sequences, mask, zero_output_for_mask,
                               _op_masks(masks, (0, 1, 2, 3), dtype))
    return last, outputs, [h, squeeze(c, [1])]


def gru(sequences, states, cell, go_backwards: bool, return_sequences: bool, mask=None,
        zero_output_for_mask: bool = False, masks=None) -> tuple:
    """(last output, all outputs or None, [h]) of a GRU cell's weights (`reset_after`) over
    batch-major `sequences` from `states` ([h0]), one CudnnRNNV3 op. Keras orders the gates
    z, r, h, cuDNN r, z, h; Keras' bias is (input bias, recurrent bias), cuDNN's too."""
    dtype = sequences.dtype.base_dtype
    h0 = states[0]
    kernel, recurrent_kernel, bias = (_as(w, dtype) for w in (cell.kernel,
                                                              cell.recurrent_kernel, cell.bias))

    def rzh(w, axis):
        z, r, hh = split(w, 3, axis=axis)
        return concat([r, z, hh], axis)
    params = concat([_flat_t(rzh(kernel, 1)), _flat_t(rzh(recurrent_kernel, 1)),
                     rzh(reshape(bias[0], [-1]), 0), rzh(reshape(bias[1], [-1]), 0)], 0)
    last, outputs, h, _ = _run("gru", sequences, _as(h0, dtype), zeros([], dtype), params,
                               go_backwards, return_sequences, mask, zero_output_for_mask,
                               _op_masks(masks, (1, 0, 2), dtype))
    return last, outputs, [h]


def simple_rnn(sequences, states, cell, go_backwards: bool, return_sequences: bool, mask=None,
               zero_output_for_mask: bool = False, masks=None) -> tuple:
    """(last output, all outputs or None, [h]) of a SimpleRNN cell's weights over batch-major
    `sequences` from `states` ([h0]), one CudnnRNNV3 op in rnn_tanh / rnn_relu mode; the
    cell's bias (or zeros) is the recurrent one."""
    dtype = sequences.dtype.base_dtype
    kernel, recurrent_kernel = _as(cell.kernel, dtype), _as(cell.recurrent_kernel, dtype)
    no_bias = zeros([cell.units], dtype)
    bias = _as(cell.bias, dtype) if cell.use_bias else no_bias
    params = concat([_flat_t(kernel), _flat_t(recurrent_kernel), no_bias, bias], 0)
    last, outputs, h, _ = _run(simple_mode(cell), sequences, _as(states[0], dtype),
                               zeros([], dtype), params, go_backwards, return_sequences, mask,
                               zero_output_for_mask, _op_masks(masks, (0,), dtype))
    return last, outputs, [h]
