"""TF1's RNN loops: `tf.compat.v1.nn.dynamic_rnn` (a `tf.while_loop` over time, inputs and
outputs in TensorArrays), `static_rnn` (the cell called once per element of a Python list),
`bidirectional_dynamic_rnn` and `static_bidirectional_rnn` (a forward and a backward pass,
the backward one over the inputs reversed with `reverse_sequence`).

With `sequence_length`, as TensorFlow: at and after a sequence's length the output is zero
and the state is carried through unchanged, so the final state is each sequence's state at
its last step. Variable scopes match TensorFlow's (`rnn/<cell>/...`,
`bidirectional_rnn/fw/<cell>/...`); the cell's variables, created in the loop body, go to
the graph the loop is built in (the body shares its variable store).
"""

from __future__ import annotations

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten, is_nested, map_structure, pack_sequence_as
from ndflow.core.scopes import control_dependencies, name_scope
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import where
from ndflow.ops.array_core import identity, reshape, shape, stack, unstack
from ndflow.ops.array_reorder import reverse, reverse_sequence
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal, greater_equal, less
from ndflow.ops.control_flow_assert import Assert
from ndflow.ops.reduction import reduce_all
from ndflow.ops.rnn_cell_v1 import assert_like_rnncell, zero_state_tensors
from ndflow.ops.tensor_array_ops import TensorArray
from ndflow.ops.variable_scope import variable_scope
from ndflow.runtime.control_flow import while_loop


def _transpose_batch_time(x):
    """[batch, time, ...] <-> [time, batch, ...]."""
    x = convert_to_tensor(x)
    rank = x.shape.rank
    if rank is not None and rank < 2:
        raise ValueError(f"Expected input tensor {x} to have rank at least 2, but saw shape: "
                         f"{x.shape}")
    if rank is None:
        raise ValueError(f"Expected input tensor {x} to have a known rank")
    return transpose(x, [1, 0] + list(range(2, rank)))


def _best_effort_input_batch_size(flat_input):
    """The batch size (dimension 1 of time-major inputs): static when known."""
    for x in flat_input:
        s = x.shape
        if s.rank is None:
            continue
        if s.rank < 2:
            raise ValueError(f"Input tensor should have rank >= 2. Received input={x} of rank "
                             f"{s.rank}")
        if s.as_list()[1] is not None:
            return s.as_list()[1]
    return shape(flat_input[0])[1]


def _assert_has_shape(x, expected):
    x_shape = shape(x)
    packed = stack(expected)
    return Assert(reduce_all(equal(x_shape, packed)),
                  [f"Expected shape for Tensor {x.name} is ", packed, " but saw shape: ",
                   x_shape])


def _infer_state_dtype(explicit_dtype, state):
    if explicit_dtype is not None:
        return dtypes.as_dtype(explicit_dtype)
    flat = flatten(state)
    if not flat:
        raise ValueError(f"Unable to infer dtype from argument state={state}.")
    inferred = [s.dtype for s in flat]
    if not all(d == inferred[0] for d in inferred):
        raise ValueError(f"Unable to infer the dtype of the state: dtypes {inferred} differ; "
                         "specify a dtype.")
    return inferred[0]


def _sequence_length(sequence_length, what: str):
    if sequence_length is None:
        return None
    sequence_length = cast(sequence_length, dtypes.int32)
    if sequence_length.shape.rank not in (None, 1):
        raise ValueError(what.format(sequence_length=sequence_length,
                                     shape=sequence_length.shape))
    return identity(sequence_length, name="sequence_length")


def _zero_output(cell, batch_size, dtype):
    """Zeros like one step's output, flat."""
    return flatten(zero_state_tensors(cell.output_size, batch_size, dtype))


def _initial_state(cell, initial_state, batch_size, dtype):
    if initial_state is not None:
        return initial_state
    if not dtype:
        raise ValueError("If no initial_state is provided, argument `dtype` must be specified")
    if getattr(cell, "get_initial_state", None) is not None:
        return cell.get_initial_state(inputs=None, batch_size=batch_size, dtype=dtype)
    return cell.zero_state(batch_size, dtype)


def _copy_through(copy_cond, old, new):
    """`old` where the sequence has ended (`copy_cond`, one per batch row), else `new`."""
    rank = new.shape.rank
    cond = copy_cond if rank == 1 else reshape(copy_cond, [-1] + [1] * (rank - 1))
    return where(cond, old, new)


def _rnn_step(time, sequence_length, zero_output, state, call_cell):
    """One step with sequence lengths: the new output and state where `time` is within a
    sequence, zeros and the old state where it is past it."""
    copy_cond = greater_equal(time, sequence_length)
    new_output, new_state = call_cell()
    flat_output = [_copy_through(copy_cond, z, o)
                   for z, o in zip(zero_output, flatten(new_output))]
    flat_state = [_copy_through(copy_cond, s, n)
                  for s, n in zip(flatten(state), flatten(new_state))]
    for o, n in zip(flat_output, flatten(new_output)):
        o.set_shape(n.shape)
    return (pack_sequence_as(new_output, flat_output),
            pack_sequence_as(new_state, flat_state))


def _dynamic_rnn_loop(cell, inputs, initial_state, parallel_iterations, swap_memory,
                      sequence_length, dtype):
    state = initial_state
    flat_input = flatten(inputs)
    flat_output_size = flatten(cell.output_size)
    time_steps = shape(flat_input[0])[0]
    batch_size = _best_effort_input_batch_size(flat_input)
    got = []
    for x in flat_input:
        s = x.shape
        if s.rank is not None and s.rank < 3:
            raise ValueError(f"Shape {s} must have rank at least 3")
        got.append(s)
    const_time_steps, const_batch_size = got[0].as_list()[:2]
    for x, s in zip(flat_input, got):
        if not TensorShape(s.as_list()[2:]).is_fully_defined():
            raise ValueError("Input size (depth of inputs) must be accessible via shape "
                             f"inference, but saw value None for input={x}.")
        if s.as_list()[0] != const_time_steps:
            raise ValueError("Time steps is not the same for all the elements in the input "
                             "in a batch.")
        if s.as_list()[1] != const_batch_size:
            raise ValueError("Batch_size is not the same for all the elements in the input.")
    dtype = _infer_state_dtype(dtype, state)
    zero_output = _zero_output(cell, batch_size, dtype) if sequence_length is not None else None
    with name_scope("dynamic_rnn"):
        output_ta = [TensorArray(dtype, size=time_steps,
                                 element_shape=[const_batch_size] + as_shape(s).as_list())
                     for s in flat_output_size]
        input_ta = [TensorArray(x.dtype, size=time_steps, element_shape=x.shape[1:]).unstack(x)
                    for x in flat_input]
    def time_step(time, output_ta_t, state):
        input_t = []
        for ta, x in zip(input_ta, flat_input):
            t = ta.read(time)
            t.set_shape(x.shape[1:])
            input_t.append(t)
        input_t = pack_sequence_as(inputs, input_t)

        def call_cell():
            return cell(input_t, state)

        if sequence_length is not None:
            output, new_state = _rnn_step(time, sequence_length, zero_output, state, call_cell)
        else:
            output, new_state = call_cell()
        new_state = pack_sequence_as(state, flatten(new_state))
        output_ta_t = [ta.write(time, o) for ta, o in zip(output_ta_t, flatten(output))]
        return time + 1, output_ta_t, new_state

    time = convert_to_tensor(0, dtypes.int32, name="time")
    _, final_ta, final_state = while_loop(
        lambda time, *_: less(time, time_steps), time_step, (time, output_ta, state),
        parallel_iterations=parallel_iterations, swap_memory=swap_memory,
        maximum_iterations=time_steps)
    outputs = []
    for ta, size in zip(final_ta, flat_output_size):
        out = ta.stack()
        if not context.executing_eagerly():
            out.set_shape([const_time_steps, const_batch_size] + as_shape(size).as_list())
        outputs.append(out)
    return pack_sequence_as(cell.output_size, outputs), final_state


@tf_export(v1=["nn.dynamic_rnn"])
def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """Runs `cell` over the time dimension of `inputs` ([batch, time, ...], or [time,
    batch, ...] with `time_major`): (outputs, final state)."""
    assert_like_rnncell("cell", cell)
    with variable_scope(scope or "rnn"):
        flat_input = [convert_to_tensor(x) for x in flatten(inputs)]
        if not time_major:
            flat_input = [_transpose_batch_time(x) for x in flat_input]
        parallel_iterations = parallel_iterations or 32
        sequence_length = _sequence_length(
            sequence_length, "Argument sequence_length must be a vector of length batch_size. "
            "Received sequence_length={sequence_length} of shape: {shape}")
        batch_size = _best_effort_input_batch_size(flat_input)
        state = _initial_state(cell, initial_state, batch_size, dtype)
        if not context.executing_eagerly() and sequence_length is not None:
            with control_dependencies([_assert_has_shape(sequence_length, [batch_size])]):
                sequence_length = identity(sequence_length, name="CheckSeqLen")
        inputs = pack_sequence_as(inputs, flat_input)
        outputs, final_state = _dynamic_rnn_loop(cell, inputs, state, parallel_iterations,
                                                 swap_memory, sequence_length, dtype)
        if not time_major:
            outputs = map_structure(_transpose_batch_time, outputs)
        return outputs, final_state


@tf_export(v1=["nn.static_rnn"])
def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None,
               scope=None):
    """Runs `cell` on each element of the list `inputs` (each [batch, ...]): (the list of
    outputs, the final state)."""
    assert_like_rnncell("cell", cell)
    if not is_nested(inputs):
        raise TypeError(f"Argument `inputs` must be a sequence. Received: {inputs}")
    if not inputs:
        raise ValueError("Argument `inputs` must not be empty.")
    outputs = []
    with variable_scope(scope or "rnn") as varscope:
        flat_first = [convert_to_tensor(x) for x in flatten(inputs[0])]
        fixed_batch = None
        for x in flat_first:
            s = x.shape
            if s.rank is not None and s.rank < 2:
                raise ValueError(f"Shape {s} must have rank at least 2")
            dims = s.as_list() if s.rank is not None else [None, None]
            fixed_batch = fixed_batch or dims[0]
            for i, size in enumerate(dims[1:]):
                if size is None:
                    raise ValueError(f"Input size (dimension {i} of inputs) must be accessible "
                                     "via shape inference, but saw value None.")
        batch_size = fixed_batch if fixed_batch is not None else shape(flat_first[0])[0]
        state = _initial_state(cell, initial_state, batch_size, dtype)
        sequence_length = _sequence_length(
            sequence_length, "Argument `sequence_length` must be a vector of length equal to "
            "the batch size. Received: {sequence_length}.")
        if sequence_length is not None:
            zero_output = _zero_output(cell, batch_size, _infer_state_dtype(dtype, state))
        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()

            def call_cell(input_=input_, state=state):
                return cell(input_, state)

            if sequence_length is not None:
                output, state = _rnn_step(convert_to_tensor(time, dtypes.int32),
                                          sequence_length, zero_output, state, call_cell)
            else:
                output, state = call_cell()
            outputs.append(output)
        return outputs, state


def _reverse(x, seq_lengths, seq_axis, batch_axis):
    if seq_lengths is not None:
        return reverse_sequence(x, seq_lengths, seq_axis=seq_axis, batch_axis=batch_axis)
    return reverse(x, axis=[seq_axis])


@tf_export(v1=["nn.bidirectional_dynamic_rnn"])
def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False, time_major=False,
                              scope=None):
    """A forward `dynamic_rnn` and one over the reversed inputs (reversed back): ((output_fw,
    output_bw), (output_state_fw, output_state_bw))."""
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw, inputs, sequence_length, initial_state_fw, dtype, parallel_iterations,
                swap_memory, time_major, scope=fw_scope)
        time_axis, batch_axis = (0, 1) if time_major else (1, 0)
        if sequence_length is not None:
            sequence_length = cast(sequence_length, dtypes.int64)
        with variable_scope("bw") as bw_scope:
            reversed_inputs = map_structure(
                lambda x: _reverse(x, sequence_length, time_axis, batch_axis), inputs)
            tmp, state_bw = dynamic_rnn(
                cell_bw, reversed_inputs, sequence_length, initial_state_bw, dtype,
                parallel_iterations, swap_memory, time_major, scope=bw_scope)
    output_bw = map_structure(lambda x: _reverse(x, sequence_length, time_axis, batch_axis),
                              tmp)
    return (output_fw, output_bw), (state_fw, state_bw)


def _reverse_seq(input_seq, lengths):
    """The list `input_seq` reversed in time, up to each sequence's length."""
    if lengths is None:
        return list(reversed(input_seq))
    flat_seq = [flatten(x) for x in input_seq]
    columns = []
    for sequence in zip(*flat_seq):
        joined = stack(list(sequence))
        columns.append(unstack(reverse_sequence(joined, cast(lengths, dtypes.int64),
                                                seq_axis=0, batch_axis=1)))
    return [pack_sequence_as(x, [c[t] for c in columns]) for t, x in enumerate(input_seq)]


@tf_export(v1=["nn.static_bidirectional_rnn"])
def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None):
    """`static_rnn` forward and over the reversed list: (outputs with the two directions
    concatenated on the last axis, output_state_fw, output_state_bw)."""
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    if not is_nested(inputs):
        raise TypeError(f"Argument `inputs` must be a sequence. Received: {inputs}")
    if not inputs:
        raise ValueError("Argument `inputs` must not be empty.")
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                             sequence_length, scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_seq(inputs, sequence_length)
            tmp, state_bw = static_rnn(cell_bw, reversed_inputs, initial_state_bw, dtype,
                                       sequence_length, scope=bw_scope)
    output_bw = _reverse_seq(tmp, sequence_length)
    flat = [concat([fw, bw], 1) for fw, bw in zip(flatten(output_fw), flatten(output_bw))]
    return pack_sequence_as(output_fw, flat), state_fw, state_bw
