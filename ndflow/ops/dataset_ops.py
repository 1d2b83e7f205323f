"""Iterator ops: how graphs (a `tf.function`, a TF1 Session's graph) pull dataset elements.

A dataset stays a Python object (ndflow/data); a graph refers to it through
`_PythonDataset` (ndflow's own op), whose `token` attr keys `DATASETS` (as py_func's
registry: such a graph runs only in the process that built it). An iterator is a resource
whose runtime value is an `IteratorResource` holding a Python iterator of the dataset's
flat elements; the kernels (kernels/dataset_ops.py) pull from it when the graph runs:

- TF2 (`iter(ds)` in a tf.function): `AnonymousIteratorV3` + `MakeIterator`, then
  `IteratorGetNext` / `IteratorGetNextAsOptional` + `OptionalHasValue` / `OptionalGetValue`;
  `for x in ds` (AutoGraph) loops while `_IteratorHasNext` (ndflow's own op: a peek that
  buffers the next element) and takes each element with `IteratorGetNext`.
- An eager iterator passed into a tf.function: `_PythonIterator` (ndflow's own op) is its
  resource, so `next(it)` in the graph pulls from the same iterator as eager code.
- A dataset whose source values are graph tensors (`from_tensor_slices(x)` of a tf.function
  argument or a TF1 placeholder): `_GraphInputDataset` takes them as inputs and its kernel
  builds the Python dataset from their values each time it runs; `ds.reduce` in a graph is
  `_DatasetReduce`, folding the dataset's elements when the graph runs.
- TF1: `OneShotIterator` (initialized on first use) and `IteratorV2` (a named iterator,
  initialized by running `MakeIterator`), each per Session.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from types import SimpleNamespace

import torch

from ndflow.core.errors import FailedPreconditionError, OutOfRangeError
from ndflow.core.shapes import TensorShape
from ndflow.ops.op_def import op_def

DATASETS: dict = {}  # token -> dataset (a Python object with `_iter_flat()`)
# token -> a dataset's binder (`bind(values) -> dataset`) or reducer (`(dataset, values) ->
# values`): the Python side of `_GraphInputDataset` / `_DatasetReduce` (ndflow/data).
DATASET_FUNCTIONS: dict = {}
ITERATORS: dict = {}  # token -> IteratorResource of an eager iterator used in a graph
_tokens = itertools.count()


def register_dataset(dataset) -> str:
    """The token a graph uses to refer to `dataset` (one per dataset object)."""
    token = getattr(dataset, "_graph_token", None)
    if token is None:
        token = f"dataset_{next(_tokens)}"
        DATASETS[token] = dataset
        dataset._graph_token = token
    return token


def register_iterator(resource) -> str:
    """The token a graph uses to pull from an eager iterator's `IteratorResource`."""
    token = getattr(resource, "graph_token", None)
    if token is None:
        token = resource.graph_token = f"iterator_{next(_tokens)}"
        ITERATORS[token] = resource
    return token


# The data layer's iterator checkpoint functions (ndflow/data/iterator_saveable.py), which
# the kernels of MakeIterator, OneShotIterator and _RestoreIteratorState call:
# `start(dataset)` -> the states of its shuffles before a pass; `restore(resource, state)`.
iterator_state = SimpleNamespace(start=None, restore=None)


def end_of_sequence() -> OutOfRangeError:
    return OutOfRangeError(None, None, "End of sequence")


class IteratorResource:
    """An iterator's state: the Python iterator of flat elements (None before
    initialization), at most one element peeked ahead, how many elements it has handed
    out since the last reset (an iterator checkpoint's position) and whether it has been
    pulled since (an iterator never read still took its shuffles' seeds in TF)."""

    _NOTHING = object()

    def __init__(self, name: str = ""):
        self.name = name
        self.graph_token = None
        self._it = None
        self._peeked = self._NOTHING
        self._lock = threading.Lock()
        self.produced = 0
        self.pulled = False
        # set by the kernels that start a pass (MakeIterator, OneShotIterator), for the
        # iterator checkpoint ops: the dataset and its shuffles' states at the start
        self.dataset = None
        self.start_states = []

    def reset(self, dataset) -> None:
        with self._lock:
            self._it = dataset._iter_flat()
            self._peeked = self._NOTHING
            self.produced = 0
            self.pulled = False

    @property
    def initialized(self) -> bool:
        return self._it is not None

    def _pull(self):
        if self._it is None:
            raise FailedPreconditionError(
                None, None, "GetNext() failed because the iterator has not been initialized. "
                "Ensure that you have run the initializer operation for this iterator before "
                "getting the next element.")
        if self._peeked is not self._NOTHING:
            value, self._peeked = self._peeked, self._NOTHING
            return value
        self.pulled = True
        return next(self._it, None)

    def get_next(self):
        """The next flat element, or None at the end."""
        with self._lock, single_threaded_kernels():
            value = self._pull()
            if value is not None:
                self.produced += 1
            return value

    def has_next(self) -> bool:
        """Whether an element follows (pulled ahead and kept for the next `get_next`)."""
        with self._lock, single_threaded_kernels():
            if self._peeked is self._NOTHING:
                self._peeked = self._pull()
            return self._peeked is not None


@contextlib.contextmanager
def single_threaded_kernels():
    """Pipeline work pulled on the consumer's thread runs its ATen kernels on that thread
    alone (as on the pipeline's own threads): OpenMP kernels spread over cores that other
    work holds stall for milliseconds. ATen's thread count is per thread under OpenMP, and
    restored after (a pair of calls costs well under a microsecond)."""
    n = torch.get_num_threads()
    if n == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(n)


def _element_shapes(ctx):
    return [TensorShape(s) for s in ctx.attrs["output_shapes"]]


_TYPES = ["output_types: list(type)", "output_shapes: list(shape)"]

PythonDataset = op_def(
    "_PythonDataset", outputs=["handle: variant"], attrs=["token: string"] + _TYPES,
    shape=lambda ctx: [TensorShape([])], stateful=True, gradient_undefined=True)
AnonymousIteratorV3 = op_def(
    "AnonymousIteratorV3", outputs=["handle: resource"], attrs=_TYPES,
    shape=lambda ctx: [TensorShape([])], stateful=True, gradient_undefined=True)
IteratorV2 = op_def(
    "IteratorV2", outputs=["handle: resource"],
    attrs=["shared_name: string", "container: string"] + _TYPES,
    shape=lambda ctx: [TensorShape([])], stateful=True, gradient_undefined=True)
OneShotIterator = op_def(
    "OneShotIterator", outputs=["handle: resource"],
    attrs=["token: string", "container: string = ''", "shared_name: string = ''"] + _TYPES,
    shape=lambda ctx: [TensorShape([])], stateful=True, gradient_undefined=True)
PythonIterator = op_def(
    "_PythonIterator", outputs=["handle: resource"], attrs=["token: string"],
    shape=lambda ctx: [TensorShape([])], stateful=True, gradient_undefined=True)
GraphInputDataset = op_def(
    "_GraphInputDataset", inputs=["components: Targuments"], outputs=["handle: variant"],
    attrs=["token: string", "Targuments: list(type)"] + _TYPES,
    shape=lambda ctx: [TensorShape([])], stateful=True, gradient_undefined=True)
DatasetReduce = op_def(
    "_DatasetReduce", inputs=["input_dataset: variant", "initial_state: Tstate",
                              "other_arguments: Targuments"],
    outputs=["components: Tstate"],
    attrs=["token: string", "Tstate: list(type)", "Targuments: list(type)",
           "output_shapes: list(shape)"],
    shape=lambda ctx: [TensorShape(s) for s in ctx.attrs["output_shapes"]], stateful=True,
    gradient_undefined=True)
DatasetCardinality = op_def(
    "DatasetCardinality", inputs=["input_dataset: variant"], outputs=["cardinality: int64"],
    attrs=["cardinality_options: string = ''"], shape=lambda ctx: [TensorShape([])],
    gradient_undefined=True)
MakeIterator = op_def(
    "MakeIterator", inputs=["dataset: variant", "iterator: resource"], stateful=True,
    gradient_undefined=True)
IteratorGetNext = op_def(
    "IteratorGetNext", inputs=["iterator: resource"], outputs=["components: output_types"],
    attrs=_TYPES, shape=_element_shapes, stateful=True, gradient_undefined=True)
IteratorHasNext = op_def(
    "_IteratorHasNext", inputs=["iterator: resource"], outputs=["has_next: bool"],
    shape=lambda ctx: [TensorShape([])], stateful=True, gradient_undefined=True)
IteratorGetNextAsOptional = op_def(
    "IteratorGetNextAsOptional", inputs=["iterator: resource"], outputs=["optional: variant"],
    attrs=_TYPES, shape=lambda ctx: [TensorShape([])], stateful=True, gradient_undefined=True)
# ndflow's own: a graph iterator's checkpoint state (what tf.train.Checkpoint saves for an
# eager iterator: int64 [position, shuffle states...]) and its restore, for the SaveableObject
# of tf.data.experimental.make_saveable_from_iterator. TensorFlow's SerializeIterator /
# DeserializeIterator carry a variant of the whole pipeline state instead.
SerializeIteratorState = op_def(
    "_SerializeIteratorState", inputs=["resource_handle: resource"],
    outputs=["serialized: int64"], shape=lambda ctx: [TensorShape([None])], stateful=True,
    gradient_undefined=True)
RestoreIteratorState = op_def(
    "_RestoreIteratorState", inputs=["resource_handle: resource", "serialized: int64"],
    stateful=True, gradient_undefined=True)
OptionalHasValue = op_def(
    "OptionalHasValue", inputs=["optional: variant"], outputs=["has_value: bool"],
    shape=lambda ctx: [TensorShape([])], gradient_undefined=True)
OptionalGetValue = op_def(
    "OptionalGetValue", inputs=["optional: variant"], outputs=["components: output_types"],
    attrs=_TYPES, shape=_element_shapes)


@OptionalGetValue.def_grad
def _optional_get_value_grad(op, *grads):
    return [None]  # no gradient flows into the optional (a variant)


def type_attrs(flat_specs) -> dict:
    return {"output_types": [s.dtype for s in flat_specs],
            "output_shapes": [s.shape for s in flat_specs]}
