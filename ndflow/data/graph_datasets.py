"""Datasets that depend on graph tensors (as TensorFlow builds dataset ops in the graph).

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

Traced functions (map, filter, ...) take and return dataset components as variant tensors.
graph_sources.py makes the sources and transformations accept graph tensors; reducing.py is
`Dataset.reduce` (in graphs the `_DatasetReduce` op).
"""

from __future__ import annotations

import copy
import itertools
import weakref

from ndflow.core import context, dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.graph import SymbolicTensor
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data import structure
from ndflow.data.dataset import UNKNOWN, DatasetV2, register_op
from ndflow.data.dataset_spec import DatasetSpec
from ndflow.data.traced_function import TracedFunction
from ndflow.data.unary_dataset import UnaryDataset
from ndflow.ops import dataset_ops
from ndflow.ops.apply import apply_op, convert_to_tensor

_tokens = itertools.count()
# graph -> {id(dataset): (dataset, its _GraphInputDataset output)} for per-run datasets
_RUN_VARIANTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _is_variable(value) -> bool:
    return hasattr(value, "handle") and hasattr(value, "read_value")


def has_graph_leaf(value) -> bool:
    """Whether `value` holds graph tensors or variables (read when the graph runs)."""
    return any(isinstance(leaf, SymbolicTensor) or _is_variable(leaf) for leaf in flatten(value))


def split_normalize(value):
    """A user value as a nest of tensors (structure.normalize's rules) whose leaves stay
    symbolic where they involve graph tensors and are eager elsewhere."""
    if isinstance(value, dict):
        items = {k: split_normalize(v) for k, v in value.items()}
        return items if type(value) is dict else type(value)(items.items())
    if isinstance(value, tuple):
        items = [split_normalize(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, SymbolicTensor):
        return value
    if _is_variable(value):
        return value.read_value()  # its value when the graph runs
    if has_graph_leaf(value):  # e.g. a list of graph tensors: one packed graph tensor
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
    if context.executing_eagerly() or not (has_graph_leaf(arguments) or any(
            isinstance(d, DatasetV2) and graph_tensors(d) for d in flatten(arguments))):
        return None
    return GraphSourceDataset(lambda a: cls(*a[0], **a[1]), arguments,
                              TensorSpec([], dtypes.string), UNKNOWN, what)


class GraphArgumentsDataset(UnaryDataset):
    """A transformation (`make(input, *arguments)`) some of whose arguments (counts, sizes,
    seeds) are graph tensors: `ds.take(n)` in a tf.function taking `n`."""

    def __init__(self, make, input_dataset: DatasetV2, arguments: tuple, element_spec):
        self._make, self._input, self._arguments = make, input_dataset, arguments
        self._graph_tensors = [t for t in flatten(list(arguments))
                               if isinstance(t, SymbolicTensor)]
        super().__init__(element_spec)

    def _iter_flat(self):
        raise tf_errors.FailedPreconditionError(
            None, None, "This dataset has arguments that are graph tensors: it can only be "
            "iterated in the graph that built it.")

    def _bound(self, values: dict, memo: dict) -> DatasetV2:
        return self._make(bind(self._input, values, memo),
                          *_bound_arguments(list(self._arguments), values, memo))

    def _cardinality(self):
        return UNKNOWN  # an element count that only running can tell


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
                for t in graph_captures(value):
                    found.setdefault(id(t), t)
        for d in ds._inputs():
            visit(d)
    visit(dataset)
    return list(found.values())


def has_run_state(dataset: DatasetV2) -> bool:
    """Whether `dataset`'s pipeline has datasets built in a graph that TF makes anew each
    time the graph runs with a state of their own (a shuffle's seed generator)."""
    seen, stack = set(), [dataset]
    while stack:
        ds = stack.pop()
        if id(ds) in seen:
            continue
        seen.add(id(ds))
        if getattr(ds, "_per_graph_run", False):
            return True
        stack.extend(ds._inputs())
    return False


def bind(dataset: DatasetV2, values: dict, memo: dict | None = None) -> DatasetV2:
    """`dataset` with its graph-tensor sources built from `values` (id(tensor) -> eager
    tensor or dataset): a shallow copy of each dataset that depends on them, or that has
    a per-run state (renewed in the copy: `_renew_for_graph_run`)."""
    memo = {} if memo is None else memo
    if id(dataset) in memo:
        return memo[id(dataset)]
    if isinstance(dataset, (GraphSourceDataset, GraphVariantDataset,
                            GraphArgumentsDataset)):
        out = dataset._bound(values, memo)
    elif not graph_tensors(dataset) and not has_run_state(dataset):
        out = dataset
    else:
        out = copy.copy(dataset)
        out.__dict__.pop("_graph_token", None)
        for name, value in vars(dataset).items():
            new = _bind_value(value, values, memo)
            if new is not value:
                setattr(out, name, new)
        renew = getattr(out, "_renew_for_graph_run", None)
        if renew is not None:
            renew()
    memo[id(dataset)] = out
    return out


def graph_captures(fn: TracedFunction) -> list:
    """The graph tensors a traced function (map's, filter's...) captured: a tf.function's
    tensors used by a dataset function built inside it."""
    return [c for c in fn.concrete.graph.external_captures if isinstance(c, SymbolicTensor)]


def bound_function(fn: TracedFunction, values: dict) -> TracedFunction:
    """`fn` running with its captured graph tensors' values."""
    if not graph_captures(fn):
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
        return bound_function(value, values)
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


def dataset_variant(dataset: DatasetV2):
    """The graph value of `dataset` (what iterators and reduce read): `_PythonDataset`, or
    `_GraphInputDataset` when the pipeline reads graph tensors or is made anew per run (a
    shuffle built in the graph: one op per graph then, as TF's dataset op, so the
    iterations of one run share its seed generator)."""
    tensors = graph_tensors(dataset)
    if tensors:
        return graph_input_variant(dataset, tensors)
    if has_run_state(dataset):
        made = _RUN_VARIANTS.setdefault(context.get_default_graph(), {})
        if id(dataset) not in made:
            made[id(dataset)] = (dataset, graph_input_variant(dataset, []))
        return made[id(dataset)][1]
    attrs = dataset_ops.type_attrs(dataset._flat_specs)
    token = dataset_ops.register_dataset(dataset)
    return apply_op(dataset_ops.PythonDataset, [], {"token": token, **attrs},
                    name="PythonDataset").outputs[0]


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
