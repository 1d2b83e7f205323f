"""Kernels of the iterator ops (ops/dataset_ops.py): they pull flat elements from the Python
iterators that `IteratorResource`s hold. Iterator resources live in the runtime context of
the Session (TF1) or of eager execution and tf.functions (TF2)."""

from __future__ import annotations

import torch

from ndflow.core import context
from ndflow.core.errors import FailedPreconditionError
from ndflow.kernels.registry import kernel
from ndflow.ops import dataset_ops as ops
from ndflow.ops.dataset_ops import DATASETS, IteratorResource, end_of_sequence


def _values(flat, n: int):
    # a dataset component (a window) is its own value (a variant)
    values = tuple(getattr(t, "_value", t) for t in flat)
    return values[0] if n == 1 else values


def _named_iterator(ctx, container: str, name: str) -> IteratorResource:
    key = ("iterator", container, name)
    with ctx._lock:
        it = ctx.resources.get(key)
        if it is None:
            it = ctx.resources[key] = IteratorResource(name)
    return it


@kernel(ops.PythonDataset)
def _python_dataset(node):
    token = node.attrs["token"]
    return lambda: DATASETS[token]


@kernel(ops.GraphInputDataset)
def _graph_input_dataset(node):
    token = node.attrs["token"]

    def run(*values):
        return ops.DATASET_FUNCTIONS[token](list(values))  # the binder: the Python dataset
    return run


@kernel(ops.DatasetReduce)
def _dataset_reduce(node):
    token, n = node.attrs["token"], len(node.attrs["Tstate"])

    def run(dataset, *args):  # the initial state, then the function's captured tensors
        with context.eager_scope():  # the pipeline and the reduce function run eagerly
            out = ops.DATASET_FUNCTIONS[token](dataset, list(args[:n]), list(args[n:]))
        return out[0] if n == 1 else tuple(out)
    return run


@kernel(ops.DatasetCardinality)
def _dataset_cardinality(node):
    return lambda dataset: torch.tensor(dataset._cardinality(), dtype=torch.int64)


@kernel(ops.PythonIterator)
def _python_iterator(node):
    token = node.attrs["token"]
    return lambda: ops.ITERATORS[token]


@kernel(ops.AnonymousIteratorV3)
def _anonymous_iterator(node):
    return lambda: IteratorResource(node.name)


@kernel(ops.IteratorV2)
def _iterator(node):
    ctx, container = node.ctx, node.attrs["container"]
    name = node.attrs["shared_name"] or node.name
    return lambda: _named_iterator(ctx, container, name)


@kernel(ops.OneShotIterator)
def _one_shot_iterator(node):
    ctx, token = node.ctx, node.attrs["token"]
    name = node.attrs["shared_name"] or node.name

    def run():
        it = _named_iterator(ctx, node.attrs["container"], name)
        if not it.initialized:
            _start(it, DATASETS[token])
        return it
    return run


@kernel(ops.MakeIterator)
def _make_iterator(node):
    def run(dataset, iterator):
        _start(iterator, dataset)
    return run


def _start(iterator: IteratorResource, dataset) -> None:
    """A new pass of `dataset`; its start is what the iterator's checkpoint state replays."""
    start = ops.iterator_state.start
    try:
        iterator.start_states = start(dataset) if start is not None else []
    except (AttributeError, TypeError):  # not a pipeline of ndflow datasets: not savable
        iterator.start_states = None
    iterator.dataset = dataset
    iterator.reset(dataset)


@kernel(ops.SerializeIteratorState)
def _serialize_iterator_state(node):
    def run(iterator):
        if iterator.dataset is None:
            raise FailedPreconditionError(
                None, None, "Cannot save the state of an iterator that has not been "
                "initialized: run its initializer first.")
        if iterator.start_states is None:
            raise FailedPreconditionError(None, None, "Cannot save the state of this iterator: "
                                          "its dataset is not a pipeline of tf.data datasets.")
        return torch.tensor([iterator.produced, *iterator.start_states], dtype=torch.int64)
    return run


@kernel(ops.RestoreIteratorState)
def _restore_iterator_state(node):
    def run(iterator, state):
        if iterator.dataset is None:
            raise FailedPreconditionError(
                None, None, "Cannot restore the state of an iterator that has not been "
                "initialized: ndflow replays the iterator's dataset, so run the iterator's "
                "initializer before restoring.")
        with context.eager_scope():  # the replay runs the pipeline eagerly, as get_next
            ops.iterator_state.restore(iterator, state.numpy())
    return run


@kernel(ops.IteratorGetNext)
def _get_next(node):
    n = len(node.attrs["output_types"])

    def run(iterator):
        with context.eager_scope():  # the pipeline runs eagerly (map's functions, ...)
            flat = iterator.get_next()
        if flat is None:
            raise end_of_sequence()
        return _values(flat, n)
    return run


@kernel(ops.IteratorHasNext)
def _has_next(node):
    def run(iterator):
        with context.eager_scope():
            return torch.tensor(bool(iterator.has_next()))
    return run


@kernel(ops.IteratorGetNextAsOptional)
def _get_next_as_optional(node):
    def run(iterator):
        with context.eager_scope():
            return iterator.get_next()  # the optional: a flat element or None
    return run


@kernel(ops.OptionalHasValue)
def _optional_has_value(node):
    return lambda optional: torch.tensor(optional is not None)


@kernel(ops.OptionalGetValue)
def _optional_get_value(node):
    n = len(node.attrs["output_types"])

    def run(optional):
        if optional is None:
            raise FailedPreconditionError(None, None, "The optional does not have a value.")
        return _values(optional, n)
    return run
