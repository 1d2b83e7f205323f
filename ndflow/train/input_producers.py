"""TF1 queue-based input producers (`tf.compat.v1.train.string_input_producer`,
`input_producer`, `range_input_producer`, `slice_input_producer`, `limit_epochs`;
`match_filenames_once` is in ops/io_serialization_ops.py), as TensorFlow's
training/input.py: a FIFO queue filled by a QueueRunner (registered in the QUEUE_RUNNERS
collection) with the (shuffled) input, once per epoch; after `num_epochs` epochs (a local
variable counting them) the runner closes the queue, and readers get OutOfRangeError once
it drains. Batching: input_batching.py."""

from __future__ import annotations

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.core.scopes import control_dependencies, name_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import identity, shape
from ndflow.ops.array_gather import gather
from ndflow.ops.array_range import range as range_op
from ndflow.ops.cast import cast
from ndflow.ops.data_flow_queues import FIFOQueue, resource_count_up_to
from ndflow.ops.random import random_shuffle
from ndflow.ops.variables import Variable
from ndflow.summary.v1_summary_ops import scalar as summary_scalar
from ndflow.train.queue_runner import QueueRunner, add_queue_runner


def _local_variable(initial_value, name):
    return Variable(initial_value, trainable=False, name=name,
                    collections=[GraphKeys.LOCAL_VARIABLES])


def op_scope(name, default: str):
    """TF's `with name_scope(name, default) as scope: ... op(name=scope)` naming: (the name
    of the final op, relative to the current scope; the full scope to build its inputs in).
    A name ending in '/' (a scope passed down by a caller) is used as is."""
    graph = context.get_default_graph()
    if name and name.endswith("/"):
        full = name[:-1]
    else:
        full = graph.unique_name(name or default, mark_as_used=False)
    current = graph.get_name_scope()
    relative = full[len(current) + 1:] if current and full.startswith(current + "/") else full
    return relative, full + "/"


@tf_export(v1=["train.limit_epochs"])
def limit_epochs(tensor, num_epochs=None, name=None):
    """`tensor`, readable `num_epochs` times: each read counts an epoch in a local variable
    (initialize local variables first); the next read raises OutOfRangeError."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    final, scope = op_scope(name, "limit_epochs")
    with name_scope(scope):
        tensor = convert_to_tensor(tensor)
        epochs = _local_variable(convert_to_tensor(0, dtype=dtypes.int64), name="epochs")
        counter = resource_count_up_to(epochs.handle, num_epochs, dtypes.int64)
    with control_dependencies([counter]):
        return identity(tensor, name=final)


@tf_export(v1=["train.input_producer"])
def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True,
                   seed=None, capacity=32, shared_name=None, summary_name=None, name=None,
                   cancel_op=None):
    """A queue of the rows of `input_tensor` (shuffled per epoch when `shuffle`), filled by
    a QueueRunner added to the graph's QUEUE_RUNNERS collection. Named as TF's: the queue
    `input_producer`, its ops `input_producer/input_producer_EnqueueMany`, ...."""
    queue_name, scope = op_scope(name, "input_producer")
    with name_scope(scope):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = TensorShape(input_tensor.shape[1:] if input_tensor.shape.rank
                                    else None).merge_with(TensorShape(element_shape))
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or "
                             "`element_shape` must be specified")
        if shuffle:
            input_tensor = random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
    q = FIFOQueue(capacity=capacity, dtypes=[input_tensor.dtype.base_dtype],
                  shapes=[element_shape], shared_name=shared_name, name=queue_name)
    with name_scope(scope):
        enqueue = q.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(q, [enqueue], cancel_op=cancel_op))
        if summary_name is not None:  # TF's queue-fill summary (in merge_all)
            summary_scalar(summary_name, cast(q.size(), dtypes.float32) * (1.0 / capacity))
    return q


@tf_export(v1=["train.string_input_producer"])
def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None,
                          capacity=32, shared_name=None, name=None, cancel_op=None):
    """A queue of file names (strings) for a reader, `num_epochs` times over (forever when
    None), shuffled per epoch unless `shuffle=False`."""
    not_null_err = "string_input_producer requires a non-null input tensor"
    if isinstance(string_tensor, (list, tuple)) and not string_tensor:
        raise ValueError(not_null_err)
    _, scope = op_scope(name, "input_producer")
    with name_scope(scope):
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        if string_tensor.shape.rank is not None and string_tensor.shape.num_elements() == 0:
            raise ValueError(not_null_err)
    return input_producer(string_tensor, element_shape=[], num_epochs=num_epochs,
                          shuffle=shuffle, seed=seed, capacity=capacity,
                          shared_name=shared_name, summary_name=f"fraction_of_{capacity}_full",
                          name=scope, cancel_op=cancel_op)


@tf_export(v1=["train.range_input_producer"])
def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """A queue of the integers 0 .. limit-1 (int32)."""
    _, scope = op_scope(name, "input_producer")
    with name_scope(scope):
        r = range_op(limit, dtype=dtypes.int32)
    return input_producer(r, [], num_epochs, shuffle, seed, capacity, shared_name,
                          f"fraction_of_{capacity}_full", name=scope)


@tf_export(v1=["train.slice_input_producer"])
def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """One row of each tensor of `tensor_list` at a time (the same row index for all)."""
    with name_scope(name or "input_producer"):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = shape(tensor_list[0], out_type=dtypes.int32)[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle,
                                     seed=seed, capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [gather(t, index) for t in tensor_list]
