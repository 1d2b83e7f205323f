"""`tf.keras.backend.rnn`: Keras 2's loop of a step function over time, with masking,
go_backwards, constants and time-major input, as Keras 3.15's legacy backend computes it
(unrolled in Python: ndflow runs eagerly or traces the loop into the graph)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.core.nest import flatten, map_structure, pack_sequence_as
from ndflow.ops import arithmetic, array_core, array_fill, array_transpose
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast


def _swap_batch_time(x):
    axes = list(range(len(x.shape)))
    axes[0], axes[1] = 1, 0
    return array_transpose.transpose(x, axes)


def _masked(mask_t, new, old):
    """where(mask_t, new, old), the [batch] mask broadcast over new's other axes."""
    rank = len(new.shape)
    shaped = array_core.reshape(mask_t, [-1] + [1] * (rank - 1))
    return arithmetic.where(shaped, new, old)


@keras_export("keras.backend.rnn")
def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None, constants=None,
        unroll=False, input_length=None, time_major=False, zero_output_for_mask=False,
        return_all_outputs=True):
    """Runs a step function over the time axis of `inputs` (Keras 2's backend RNN loop).

    Args:
      step_function: a callable `(input_t, states + constants) -> (output_t, new_states)`.
      inputs: a tensor (or nest) of shape (batch, time, ...) (time first with
        `time_major`).
      initial_states: the list of initial state tensors.
      go_backwards: whether to run from the last step to the first.
      mask: optional (batch, time) bool mask: masked steps keep the previous states and
        output.
      constants: optional list of tensors passed to every step after the states.
      unroll: whether to unroll the loop in graphs (a static number of steps).
      input_length: accepted for Keras' signature.
      time_major: whether `inputs` is (time, batch, ...).
      zero_output_for_mask: whether masked steps output zeros.
      return_all_outputs: whether to return every step's output (else only the last,
        with a time axis of 1).

    Returns:
      A tuple `(last_output, outputs, new_states)`.
    """
    inputs = map_structure(convert_to_tensor, inputs)
    if not time_major:
        inputs = map_structure(_swap_batch_time, inputs)
    flat_inputs = flatten(inputs)
    time_steps = flat_inputs[0].shape[0]
    if time_steps is None:
        raise ValueError("keras.backend.rnn needs a known number of time steps; the input "
                         f"has shape {flat_inputs[0].shape}")
    constants = list(constants or [])
    states = tuple(initial_states)
    order = range(time_steps - 1, -1, -1) if go_backwards else range(time_steps)
    masks = None
    if mask is not None:
        mask = cast(convert_to_tensor(mask), dtypes.bool)
        if len(mask.shape) == 3:      # [batch, time, 1] as Keras allows
            mask = array_core.squeeze(mask, [2])
        if not time_major:
            mask = array_transpose.transpose(mask, [1, 0])
        masks = [mask[t] for t in order]
    outputs = []
    for i, t in enumerate(order):
        step_input = pack_sequence_as(inputs, [x[t] for x in flat_inputs])
        output, new_states = step_function(step_input, tuple(states) + tuple(constants))
        new_states = tuple(flatten(new_states)) if not isinstance(new_states, (list, tuple)) \
            else tuple(new_states)
        if masks is not None:
            previous = outputs[-1] if outputs else map_structure(array_fill.zeros_like, output)
            output = map_structure(lambda o, p, m=masks[i]: _masked(m, o, p), output, previous)
            new_states = tuple(_masked(masks[i], n, s) for n, s in zip(new_states, states))
        states = new_states
        outputs.append(output)
    last_output = outputs[-1]
    kept = outputs if return_all_outputs else outputs[-1:]
    stacked = map_structure(lambda *steps: array_core.stack(list(steps)), *kept)
    if masks is not None and zero_output_for_mask:
        last_output = map_structure(
            lambda o: _masked(masks[-1], o, array_fill.zeros_like(o)), last_output)
        kept_masks = masks if return_all_outputs else masks[-1:]
        stacked_mask = array_core.stack(kept_masks)      # [time, batch]
        stacked = map_structure(lambda o: arithmetic.where(
            array_core.reshape(stacked_mask, list(stacked_mask.shape) +
                               [1] * (len(o.shape) - 2)), o, array_fill.zeros_like(o)),
            stacked)
    if not time_major:
        stacked = map_structure(_swap_batch_time, stacked)
    return last_output, stacked, list(states)
