"""`Dataset.reduce`: the state folded over the elements by one traced function (its state
shapes relaxed to a fixed point, as TensorFlow). Eagerly it folds at once; in a graph it is
the `_DatasetReduce` op, folding when the graph runs (also a dataset read from graph tensors,
and with the function's captured graph tensors as inputs). As in TensorFlow, the element is
one argument: `reduce_func(state, element)`, a tuple element not unpacked.
"""

from __future__ import annotations

import itertools

from ndflow.core import context
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.tensor import EagerTensor, Tensor
from ndflow.data import structure
from ndflow.data.dataset import DatasetV2, register_op
from ndflow.data.graph_datasets import (
    bound_function,
    dataset_variant,
    graph_captures,
    split_normalize,
)
from ndflow.data.traced_function import TracedFunction
from ndflow.ops import dataset_ops
from ndflow.ops.apply import apply_op, convert_to_tensor

_tokens = itertools.count()

class _Reducer:
    """The `_DatasetReduce` kernel's function: the traced reduce function folded over the
    dataset's flat elements."""

    def __init__(self, fn: TracedFunction, state_dtypes: list):
        self._fn, self._dtypes = fn, state_dtypes

    def __call__(self, dataset: DatasetV2, raw_state: list, raw_captures=()) -> list:
        state = tuple(EagerTensor(v, d) for v, d in zip(raw_state, self._dtypes))
        fn = self._fn
        if raw_captures:  # the values of the graph tensors the function captured
            fn = bound_function(fn, {id(c): EagerTensor(v, c.dtype) for c, v in
                                      zip(graph_captures(fn), raw_captures)})
        for i, element in enumerate(dataset._iter_flat()):
            try:
                state = fn(state + tuple(element))
            except Exception as e:  # noqa: BLE001 - re-raised as TF's error
                raise fn.error(e, i) from e
        return [t._value for t in state]


def _traced_reduce(reduce_func, state_spec, element_spec) -> tuple:
    """The reduce function traced for the state (its shapes relaxed until they are a fixed
    point, as TensorFlow) and the final state spec."""
    while True:  # reduce_func(state, element): the element is not unpacked (as TF)
        fn = TracedFunction(reduce_func, (state_spec, element_spec), "ReduceDataset")
        old, new = flatten(state_spec), flatten(fn.output_spec)
        if len(old) != len(new) or any(a.dtype is not b.dtype for a, b in zip(old, new)):
            raise TypeError("The element types for the new state must match the initial "
                            f"state. Expected {state_spec}; got {fn.output_spec}.")
        relaxed = [a.shape.most_specific_compatible_shape(b.shape) for a, b in zip(old, new)]
        if all(a.shape == r for a, r in zip(old, relaxed)):
            return fn, state_spec
        state_spec = structure.with_shapes(state_spec, relaxed)


def _reduce(dataset: DatasetV2, initial_state, reduce_func):
    """`Dataset.reduce`: eagerly the fold itself; in a graph a `_DatasetReduce` op folding
    when the graph runs."""
    graph = not context.executing_eagerly()
    state = split_normalize(initial_state) if graph else structure.normalize(initial_state)
    for leaf in flatten(state):
        if not isinstance(leaf, Tensor):
            raise TypeError(f"The initial state of `reduce` must be tensors, got {leaf!r}.")
    fn, state_spec = _traced_reduce(reduce_func, structure.specs_of(state),
                                    dataset.element_spec)
    flat_specs = flatten(state_spec)
    reducer = _Reducer(fn, [s.dtype for s in flat_specs])
    if not graph:
        out = reducer(dataset, [t._value for t in flatten(state)])
        return pack_sequence_as(state_spec, [EagerTensor(v, s.dtype)
                                             for v, s in zip(out, flat_specs)])
    token = f"dataset_reduce_{next(_tokens)}"
    dataset_ops.DATASET_FUNCTIONS[token] = reducer
    outs = apply_op(dataset_ops.DatasetReduce,
                    [dataset_variant(dataset), [convert_to_tensor(t) for t in flatten(state)],
                     graph_captures(fn)],
                    {"token": token, "output_shapes": [s.shape for s in flat_specs]},
                    name="ReduceDataset").outputs
    return pack_sequence_as(state_spec, list(outs))


register_op("reduce")(_reduce)
