"""Datasets built from graph tensors, and `Dataset.reduce` in graphs (as TensorFlow builds
dataset ops in the graph).

Inside a `tf.function` (or a TF1 graph) `tf.data.Dataset.from_tensor_slices(x)`,
`from_tensors(x)` and `range(n)` may take symbolic tensors. ndflow's datasets are Python
objects, so such a source is a `GraphSourceDataset`: its element_spec comes from the tensors'
static shapes, and its values are only known when the graph runs. When a graph iterates
(`for x in ds`, `iter(ds)`, TF1's `make_initializable_iterator`) or reduces the dataset, the
op producing the dataset is `_GraphInputDataset`: it takes the symbolic tensors the pipeline
depends on as inputs, and its kernel *binds* the pipeline to their values — a copy of each
dataset on the path from the sources to the one iterated, with the sources built from the
values. So each run of the graph reads that run's tensors (a tf.function's arguments, a TF1
Session's feeds).

A dataset-valued component produced in a graph (a window of `Dataset.window` iterated in a
tf.function) is a `GraphVariantDataset`: a dataset whose value is that variant tensor's.

`ds.reduce(...)` in a graph is the `_DatasetReduce` op: it folds the dataset's elements with
the traced reduce function when the graph runs (not once while tracing).
"""

from __future__ import annotations

import copy
import itertools

from ndflow.core import context, dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.graph import SymbolicTensor
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import EagerTensor, Tensor
from ndflow.core.tensor_spec import TensorSpec

# These register "reduce", the sources and the transformations wrapped here first.
from ndflow.data import (  # noqa: F401
    batching,
    mapping,
    ordering,
    prefetching,
    selection,
    sources,
    structure,
    windowing,
)
from ndflow.data.dataset import _OPS, UNKNOWN, DatasetV2, register_op
from ndflow.data.dataset_spec import DatasetSpec
from ndflow.data.traced_function import TracedFunction
from ndflow.ops import dataset_ops
from ndflow.ops.apply import apply_op, convert_to_tensor

_tokens = itertools.count()


def _has_graph_leaf(value) -> bool:
    return any(isinstance(leaf, SymbolicTensor) for leaf in flatten(value))


def _split_normalize(value):
    """A user value as a nest of tensors (structure.normalize's rules) whose leaves stay
    symbolic where they involve graph tensors and are eager elsewhere."""
    if isinstance(value, dict):
        items = {k: _split_normalize(v) for k, v in value.items()}
        return items if type(value) is dict else type(value)(items.items())
    if isinstance(value, tuple):
        items = [_split_normalize(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, SymbolicTensor):
        return value
    if _has_graph_leaf(value):  # e.g. a list of graph tensors: one packed graph tensor
        return convert_to_tensor(value)
    with context.eager_scope():
        return structure.normalize(value)


class GraphSourceDataset(DatasetV2):
    """A source dataset (`make(values)`) whose arguments include graph tensors."""

    def __init__(self, make, arguments, element_spec, cardinality: int, what: str):
        self._make, self._arguments = make, arguments
        leaves = flatten(arguments)
        self._graph_tensors = [t for t in leaves if isinstance(t, SymbolicTensor)] + [
            t for d in leaves if isinstance(d, DatasetV2) for t in graph_tensors(d)]
        self._static_cardinality, self._what = cardinality, what
        super().__init__(element_spec)

    def _cardinality(self):
        return self._static_cardinality

    def _iter_flat(self):
        raise tf_errors.FailedPreconditionError(
            None, None, f"This dataset ({self._what} of graph tensors) can only be iterated "
            "in the graph that built it: its values exist when that graph runs.")

    def _bound(self, values: dict, memo: dict) -> DatasetV2:
        return self._make(_bound_arguments(self._arguments, values, memo))


class GraphVariantDataset(DatasetV2):
    """A dataset that is the value of a variant graph tensor (a dataset component of an
    element iterated in a graph)."""

    def __init__(self, variant, element_spec):
        self._variant = variant
        self._graph_tensors = [variant]
        super().__init__(element_spec)

    def _iter_flat(self):
        raise tf_errors.FailedPreconditionError(
            None, None, "This dataset is a value of the graph that built it: iterate or "
            "reduce it in that graph.")

    def _bound(self, values: dict, memo: dict) -> DatasetV2:
        return values[id(self._variant)]


def _bound_arguments(arguments, values: dict, memo: dict):
    """`arguments` with graph tensors replaced by their values (datasets bound)."""
    leaves = [values[id(t)] if isinstance(t, SymbolicTensor) else
              bind(t, values, memo) if isinstance(t, DatasetV2) else t
              for t in flatten(arguments)]
    return pack_sequence_as(arguments, leaves)


def graph_file_source(cls, what: str, args: tuple, kwargs: dict):
    """For a file dataset's `__new__` (TFRecordDataset, TextLineDataset, ...): while a graph
    is built, a GraphSourceDataset when an argument is a graph tensor (a TF1 placeholder of
    file names fed to an initializable iterator) or a dataset reading one; else None."""
    arguments = (args, kwargs)
    if context.executing_eagerly() or not (_has_graph_leaf(arguments) or any(
            isinstance(d, DatasetV2) and graph_tensors(d) for d in flatten(arguments))):
        return None
    return GraphSourceDataset(lambda a: cls(*a[0], **a[1]), arguments,
                              TensorSpec([], dtypes.string), UNKNOWN, what)


class GraphArgumentsDataset(DatasetV2):
    """A transformation (`make(input, *arguments)`) some of whose arguments (counts, sizes,
    seeds) are graph tensors: `ds.take(n)` in a tf.function taking `n`."""

    def __init__(self, make, input_dataset: DatasetV2, arguments: tuple, element_spec):
        self._make, self._input, self._arguments = make, input_dataset, arguments
        self._graph_tensors = [t for t in flatten(list(arguments))
                               if isinstance(t, SymbolicTensor)]
        super().__init__(element_spec)

    def _inputs(self):
        return [self._input]

    def _iter_flat(self):
        raise tf_errors.FailedPreconditionError(
            None, None, "This dataset has arguments that are graph tensors: it can only be "
            "iterated in the graph that built it.")

    def _bound(self, values: dict, memo: dict) -> DatasetV2:
        return self._make(bind(self._input, values, memo),
                          *_bound_arguments(list(self._arguments), values, memo))


def graph_tensors(dataset: DatasetV2) -> list:
    """The graph tensors `dataset`'s pipeline reads (its sources' and its windows')."""
    found, seen = {}, set()

    def visit(ds):
        if id(ds) in seen:
            return
        seen.add(id(ds))
        for t in getattr(ds, "_graph_tensors", ()):
            found.setdefault(id(t), t)
        for value in vars(ds).values():  # functions capturing tensors of the graph
            if isinstance(value, TracedFunction):
                for t in _graph_captures(value):
                    found.setdefault(id(t), t)
        for d in ds._inputs():
            visit(d)
    visit(dataset)
    return list(found.values())


def bind(dataset: DatasetV2, values: dict, memo: dict | None = None) -> DatasetV2:
    """`dataset` with its graph-tensor sources built from `values` (id(tensor) -> eager
    tensor or dataset): a shallow copy of each dataset that depends on them."""
    memo = {} if memo is None else memo
    if id(dataset) in memo:
        return memo[id(dataset)]
    if isinstance(dataset, (GraphSourceDataset, GraphVariantDataset,
                            GraphArgumentsDataset)):
        out = dataset._bound(values, memo)
    elif not graph_tensors(dataset):
        out = dataset
    else:
        out = copy.copy(dataset)
        out.__dict__.pop("_graph_token", None)
        for name, value in vars(dataset).items():
            new = _bind_value(value, values, memo)
            if new is not value:
                setattr(out, name, new)
    memo[id(dataset)] = out
    return out


def _graph_captures(fn: TracedFunction) -> list:
    """The graph tensors a traced function (map's, filter's...) captured: a tf.function's
    tensors used by a dataset function built inside it."""
    return [c for c in fn.concrete.graph.external_captures if isinstance(c, SymbolicTensor)]


def _bound_function(fn: TracedFunction, values: dict) -> TracedFunction:
    """`fn` running with its captured graph tensors' values."""
    if not _graph_captures(fn):
        return fn
    concrete = copy.copy(fn.concrete)
    concrete._capture_vals = [values[id(c)]._value if isinstance(c, SymbolicTensor)
                              else c._value for c in concrete.graph.external_captures]
    out = copy.copy(fn)
    out.concrete = concrete
    return out


def _bind_value(value, values: dict, memo: dict):
    if isinstance(value, DatasetV2):
        return bind(value, values, memo)
    if isinstance(value, TracedFunction):
        return _bound_function(value, values)
    if isinstance(value, (list, tuple)) and any(isinstance(v, (DatasetV2, list, tuple, dict))
                                                for v in value[:64]):
        items = [_bind_value(v, values, memo) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        if isinstance(value, list):
            return items
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, dict) and any(isinstance(v, (DatasetV2, list, tuple, dict))
                                       for v in value.values()):
        items = {k: _bind_value(v, values, memo) for k, v in value.items()}
        if all(items[k] is value[k] for k in value):
            return value
        return type(value)(items.items()) if type(value) is not dict else items
    return value


class _Binder:
    """The `_GraphInputDataset` kernel's function: the pipeline bound to the op's inputs."""

    def __init__(self, dataset: DatasetV2, tensors: list):
        self._dataset = dataset
        self._keys = [id(t) for t in tensors]
        self._dtypes = [t.dtype for t in tensors]

    def __call__(self, raw_values: list) -> DatasetV2:
        values = {k: v if d is dtypes.variant else EagerTensor(v, d)
                  for k, v, d in zip(self._keys, raw_values, self._dtypes)}
        with context.eager_scope():
            return bind(self._dataset, values)


def graph_input_variant(dataset: DatasetV2, tensors: list):
    """The `_GraphInputDataset` op making `dataset` from the values of `tensors`."""
    token = f"graph_dataset_{next(_tokens)}"
    dataset_ops.DATASET_FUNCTIONS[token] = _Binder(dataset, tensors)
    attrs = dataset_ops.type_attrs(dataset._flat_specs)
    return apply_op(dataset_ops.GraphInputDataset, [list(tensors)],
                    {"token": token, **attrs},
                    name="GraphInputDataset").outputs[0]


# -- dataset components as variant tensors in traced functions (map over windows) ------------

@register_op("variant_specs")
def variant_specs(spec_structure):
    """`spec_structure` with each DatasetSpec a variant scalar's TensorSpec (how a traced
    function takes a dataset argument)."""
    return pack_sequence_as(spec_structure, [
        TensorSpec([], dtypes.variant) if isinstance(s, DatasetSpec) else s
        for s in flatten(spec_structure)])


@register_op("graph_datasets_of")
def graph_datasets_of(element, spec_structure):
    """A traced function's argument with its variant placeholders as datasets."""
    return pack_sequence_as(spec_structure, [
        GraphVariantDataset(t, s.element_spec) if isinstance(s, DatasetSpec) else t
        for t, s in zip(flatten(element), flatten(spec_structure))])


@register_op("datasets_as_variants")
def datasets_as_variants(output, returned: dict):
    """A traced function's result with each dataset as its variant tensor; `returned`
    records the DatasetSpec of each (by flat index)."""
    leaves = flatten(output)
    if not any(isinstance(v, DatasetV2) for v in leaves):
        return output
    out = []
    for i, v in enumerate(leaves):
        if isinstance(v, DatasetV2):
            returned[i] = DatasetSpec(v.element_spec)
            v = dataset_variant(v)
        out.append(v)
    return pack_sequence_as(output, out)


# -- sources taking graph tensors -----------------------------------------------------------

def _slices_spec(arguments):
    flat = flatten(arguments)
    rows = None
    for t in flat:
        if t.shape.rank == 0:
            raise ValueError("Unbatching a tensor is only supported for rank >= 1")
        n = t.shape.as_list()[0] if t.shape.rank is not None else None
        if n is not None and rows is not None and n != rows:
            raise ValueError(f"Dimensions {rows} and {n} are not compatible")
        rows = rows if n is None else n
    spec = pack_sequence_as(arguments, [
        TensorSpec(None if t.shape.rank is None else t.shape.as_list()[1:], t.dtype)
        for t in flat])
    return spec, UNKNOWN if rows is None else rows


def _from_tensor_slices(tensors):
    if context.executing_eagerly() or not _has_graph_leaf(tensors):
        return sources.TensorSliceDataset(tensors)
    arguments = _split_normalize(tensors)
    spec, rows = _slices_spec(arguments)
    return GraphSourceDataset(sources.TensorSliceDataset, arguments, spec, rows,
                              "Dataset.from_tensor_slices")


def _from_tensors(tensors):
    if context.executing_eagerly() or not _has_graph_leaf(tensors):
        return sources.TensorDataset(tensors)
    arguments = _split_normalize(tensors)
    return GraphSourceDataset(sources.TensorDataset, arguments, structure.specs_of(arguments),
                              1, "Dataset.from_tensors")


def _range(*args, output_type=dtypes.int64):
    if context.executing_eagerly() or not _has_graph_leaf(list(args)):
        return sources.RangeDataset(*args, output_type=output_type)
    if not 1 <= len(args) <= 3:
        raise ValueError("Invalid `args`. The length of `args` should be between 1 and 3 but "
                         f"was {len(args)}.")
    arguments = tuple(_split_normalize(a) for a in args)
    for a in arguments:
        if not a.dtype.is_integer or a.shape.rank not in (0, None):
            raise TypeError(f"`Dataset.range` takes integer scalars, got {a!r}.")
    return GraphSourceDataset(lambda a: sources.RangeDataset(*a, output_type=output_type),
                              arguments, TensorSpec([], output_type), UNKNOWN,
                              "Dataset.range")


# Sources built while a graph is the default accept graph tensors (the eager path is the
# sources.py classes unchanged).
register_op("from_tensor_slices")(_from_tensor_slices)
register_op("from_tensors")(_from_tensors)
register_op("range")(_range)


@register_op("graph_cardinality")
def _graph_cardinality(dataset: DatasetV2):
    """`cardinality()` in a graph: a constant, or (when the pipeline reads graph tensors) a
    `DatasetCardinality` op counting the dataset bound to their values."""
    if not graph_tensors(dataset):
        return convert_to_tensor(dataset._cardinality(), dtypes.int64)
    return apply_op(dataset_ops.DatasetCardinality, [dataset_variant(dataset)], {},
                    name="DatasetCardinality").outputs[0]


# -- transformations taking graph tensors as arguments ---------------------------------------

def _with_graph_arguments(name: str):
    """Wraps the registered `Dataset.<name>` so that its scalar arguments may be graph
    tensors while a graph is built (the eager path is the original)."""
    make = _OPS[name]
    batches = name in ("batch", "padded_batch")

    def transformation(dataset, *args):
        if context.executing_eagerly() or not _has_graph_leaf(list(args)):
            return make(dataset, *args)
        if not batches:  # take, skip, repeat, shuffle, prefetch, shard keep the spec
            spec = dataset.element_spec
        else:  # the spec of a batch of 1; the batch dimension unknown (as TF's)
            stand_in = [1 if i == 0 else False if isinstance(a, SymbolicTensor) else a
                        for i, a in enumerate(args)]
            spec = _unknown_batch(make(dataset, *stand_in).element_spec)
        arguments = tuple(a if isinstance(a, SymbolicTensor) or not _has_graph_leaf(a)
                          else convert_to_tensor(a) for a in args)
        return GraphArgumentsDataset(make, dataset, arguments, spec)
    register_op(name)(transformation)


def _unknown_batch(spec):
    return pack_sequence_as(spec, [TensorSpec(TensorShape([None]).concatenate(
        s.shape[1:]), s.dtype) for s in flatten(spec)])


for _name in ("take", "skip", "repeat", "batch", "padded_batch", "shuffle", "prefetch",
              "shard", "window"):
    _with_graph_arguments(_name)


# -- reduce in graphs -----------------------------------------------------------------------

class _Reducer:
    """The `_DatasetReduce` kernel's function: the traced reduce function folded over the
    dataset's flat elements."""

    def __init__(self, fn: TracedFunction, state_dtypes: list):
        self._fn, self._dtypes = fn, state_dtypes

    def __call__(self, dataset: DatasetV2, raw_state: list, raw_captures=()) -> list:
        state = tuple(EagerTensor(v, d) for v, d in zip(raw_state, self._dtypes))
        fn = self._fn
        if raw_captures:  # the values of the graph tensors the function captured
            fn = _bound_function(fn, {id(c): EagerTensor(v, c.dtype) for c, v in
                                      zip(_graph_captures(fn), raw_captures)})
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


def dataset_variant(dataset: DatasetV2):
    """The graph value of `dataset` (what iterators and reduce read): `_PythonDataset`, or
    `_GraphInputDataset` when the pipeline reads graph tensors."""
    tensors = graph_tensors(dataset)
    if tensors:
        return graph_input_variant(dataset, tensors)
    attrs = dataset_ops.type_attrs(dataset._flat_specs)
    token = dataset_ops.register_dataset(dataset)
    return apply_op(dataset_ops.PythonDataset, [], {"token": token, **attrs},
                    name="PythonDataset").outputs[0]


def _reduce(dataset: DatasetV2, initial_state, reduce_func):
    """`Dataset.reduce`: eagerly the fold itself; in a graph a `_DatasetReduce` op folding
    when the graph runs."""
    graph = not context.executing_eagerly()
    state = _split_normalize(initial_state) if graph else structure.normalize(initial_state)
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
                     _graph_captures(fn)],
                    {"token": token, "output_shapes": [s.shape for s in flat_specs]},
                    name="ReduceDataset").outputs
    return pack_sequence_as(state_spec, list(outs))


register_op("reduce")(_reduce)
