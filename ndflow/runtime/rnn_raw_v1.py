"""TF1's `tf.compat.v1.nn.raw_rnn` (a `tf.while_loop` whose inputs, state and outputs a
user's `loop_fn` decides step by step) and `static_state_saving_rnn` (`static_rnn` starting
from and saving to a state saver's states).

raw_rnn calls `loop_fn(time, cell_output, cell_state, loop_state)`: first with time 0 and
`None`s, returning `(finished, next_input, initial_state, emit_structure, loop_state)`;
then after each cell step. As in TensorFlow, the loop runs while some batch entry is not
finished; a finished entry emits zeros and keeps its state (scalars and TensorArrays pass
through as `loop_fn` returns them); the emitted values go to dynamically sized TensorArrays
shaped like `emit_structure` (or `cell.output_size` when it is None).
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.nest import (
    assert_same_structure,
    flatten,
    is_nested,
    map_structure,
    pack_sequence_as,
)
from ndflow.core.scopes import control_dependencies
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import constant, identity, shape
from ndflow.ops.array_fill import zeros
from ndflow.ops.array_slicing import concat
from ndflow.ops.comparison import logical_not, logical_or
from ndflow.ops.reduction import reduce_all
from ndflow.ops.rnn_cell_v1 import assert_like_rnncell
from ndflow.ops.tensor_array_ops import TensorArray
from ndflow.ops.variable_scope import variable_scope
from ndflow.runtime.control_flow import while_loop
from ndflow.runtime.rnn_v1 import _copy_through, static_rnn


def _emit_size(x):
    """An emitted tensor's per-entry shape: static when known, else its shape tensor."""
    return x.shape if x.shape.is_fully_defined() else shape(x)


def _prefixed(batch, size):
    """The shape [batch] + size as a tensor (size: int, TensorShape or shape tensor)."""
    if isinstance(size, int):
        size = TensorShape([size])
    if isinstance(size, TensorShape):
        if not size.is_fully_defined():
            raise ValueError(f"Provided a prefix or suffix of None: {batch} and {size}")
        size = constant(size.as_list(), dtype=dtypes.int32)
    return concat([[batch], size], 0)


def _element_shape(const_batch, size) -> TensorShape:
    if not isinstance(size, (int, TensorShape)):
        return TensorShape([const_batch]).concatenate(TensorShape(None))
    return TensorShape([const_batch]).concatenate(as_shape(size))


@tf_export(v1=["nn.raw_rnn"])
def raw_rnn(cell, loop_fn, parallel_iterations=None, swap_memory=False, scope=None):
    """`tf.compat.v1.nn.raw_rnn` (see the module doc): `(emit_ta, final_state,
    final_loop_state)`, the last None when `loop_fn` kept no loop state."""
    assert_like_rnncell("cell", cell)
    if not callable(loop_fn):
        raise TypeError(f"Argument `loop_fn` must be a callable. Received: {loop_fn}.")
    parallel_iterations = parallel_iterations or 32
    with variable_scope(scope or "rnn"):
        time = constant(0, dtype=dtypes.int32)
        finished, next_input, initial_state, emit_structure, init_loop_state = loop_fn(
            time, None, None, None)
        flat_input = flatten(next_input)
        loop_state = init_loop_state if init_loop_state is not None else constant(
            0, dtype=dtypes.int32)
        batch_dims = [x.shape[0] if x.shape.rank else None for x in flat_input]
        known = [b for b in batch_dims if b is not None]
        if any(b != known[0] for b in known):
            raise ValueError(f"Dimensions {known[0]} and {next(b for b in known if b != known[0])}"
                             " are not compatible")
        const_batch = known[0] if known else None
        batch = const_batch if const_batch is not None else shape(flat_input[0])[0]

        assert_same_structure(initial_state, cell.state_size)
        state = pack_sequence_as(initial_state,
                                 [convert_to_tensor(s) for s in flatten(initial_state)])
        flat_state = flatten(state)
        if emit_structure is not None:
            flat_emit = flatten(emit_structure)
            emit_sizes = [_emit_size(e) for e in flat_emit]
            emit_dtypes = [e.dtype for e in flat_emit]
        else:
            emit_structure = cell.output_size
            emit_sizes = flatten(emit_structure)
            emit_dtypes = [flat_state[0].dtype] * len(emit_sizes)
        emit_ta = pack_sequence_as(emit_structure, [
            TensorArray(dtype=d, size=0, dynamic_size=True,
                        element_shape=_element_shape(const_batch, s), name=f"rnn_output_{i}")
            for i, (d, s) in enumerate(zip(emit_dtypes, emit_sizes))])
        zero_emit = pack_sequence_as(emit_structure, [
            zeros(_prefixed(batch, s), d) for s, d in zip(emit_sizes, emit_dtypes)])

        def condition(unused_time, elements_finished, *_):
            return logical_not(reduce_all(elements_finished))

        def body(time, elements_finished, current_input, emit_ta, state, loop_state):
            next_output, cell_state = cell(current_input, state)
            assert_same_structure(state, cell_state)
            assert_same_structure(cell.output_size, next_output)
            next_time = time + 1
            next_finished, next_input, next_state, emit_output, next_loop_state = loop_fn(
                next_time, next_output, cell_state, loop_state)
            assert_same_structure(state, next_state)
            assert_same_structure(current_input, next_input)
            assert_same_structure(emit_ta, emit_output)
            loop_state = loop_state if next_loop_state is None else next_loop_state

            def copy_some_through(current, candidate):
                def copy(cur, cand):   # TensorArrays and scalars pass through
                    if isinstance(cur, TensorArray) or cur.shape.rank == 0:
                        return cand
                    return _copy_through(elements_finished, cur, cand)
                return map_structure(copy, current, candidate)

            emit_output = copy_some_through(zero_emit, emit_output)
            next_state = copy_some_through(state, next_state)
            emit_ta = map_structure(lambda ta, emit: ta.write(time, emit), emit_ta,
                                    emit_output)
            elements_finished = logical_or(elements_finished, next_finished)
            return (next_time, elements_finished, next_input, emit_ta, next_state,
                    loop_state)

        returned = while_loop(condition, body,
                              [time, finished, next_input, emit_ta, state, loop_state],
                              parallel_iterations=parallel_iterations,
                              swap_memory=swap_memory)
        emit_ta, final_state, final_loop_state = returned[-3:]
        return emit_ta, final_state, (None if init_loop_state is None else final_loop_state)


@tf_export(v1=["nn.static_state_saving_rnn"])
def static_state_saving_rnn(cell, inputs, state_saver, state_name, sequence_length=None,
                            scope=None):
    """`tf.compat.v1.nn.static_state_saving_rnn`: `static_rnn` from
    `state_saver.state(name)` (one name per state tensor when the state is a tuple); the
    final state goes back through `state_saver.save_state(name, value)`, which the last
    output and the returned state depend on. Returns (outputs, state)."""
    state_size = cell.state_size
    state_is_tuple, name_is_tuple = is_nested(state_size), is_nested(state_name)
    if state_is_tuple != name_is_tuple:
        raise ValueError("Argument `state_name` should be the same type as "
                         f"`cell.state_size`. Received: state_name={state_name!s}, "
                         f"cell.state_size={state_size!s}.")
    if state_is_tuple:
        names, sizes = flatten(state_name), flatten(state_size)
        if len(names) != len(sizes):
            raise ValueError("Number of elements in argument `state_name` and "
                             "`cell.state_size` are mismatched. Received "
                             f"state_name={state_name} with {len(names)} elements and "
                             f"cell.state_size={state_size} with {len(sizes)} elements.")
        initial_state = pack_sequence_as(state_size, [state_saver.state(n) for n in names])
    else:
        names, initial_state = [state_name], state_saver.state(state_name)
    outputs, state = static_rnn(cell, inputs, initial_state=initial_state,
                                sequence_length=sequence_length, scope=scope)
    saves = [state_saver.save_state(n, s) for n, s in zip(names, flatten(state))]
    with control_dependencies(saves):
        last = outputs[-1]
        outputs[-1] = pack_sequence_as(last, [identity(o) for o in flatten(last)])
        state = pack_sequence_as(state, [identity(s) for s in flatten(state)])
    return outputs, state
