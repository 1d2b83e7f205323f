"""`Session.run`'s fetch structures and graph-element lookup, with TensorFlow's messages.

A fetch is a tensor, an operation, a name (`"y:0"` a tensor, `"train"` an op), an object
with `_as_graph_element()` (e.g. a variable), a RaggedTensor (fetched as a
RaggedTensorValue), a SparseTensor (fetched as a SparseTensorValue), or any nesting of
lists, tuples, namedtuples and dicts of those.
`FetchMapper` flattens it to unique graph elements and rebuilds the same structure from
their values (an operation's value is None).
"""

from __future__ import annotations

import collections
from collections.abc import Mapping

from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.errors import InaccessibleTensorError
from ndflow.core.graph import Graph, Operation
from ndflow.ops.indexed_slices import IndexedSlices, IndexedSlicesValue
from ndflow.ops.sparse_tensor import SparseTensor, SparseTensorValue


def _fetch_element(graph: Graph, fetch):
    try:
        el = graph.as_graph_element(fetch)
    except TypeError as e:
        raise TypeError(f"Argument `fetch` = {fetch} has invalid type "
                        f"\"{type(fetch).__name__}\" must be a string or Tensor. ({e})") from None
    except (ValueError, KeyError) as e:
        raise ValueError(f"Argument `fetch` = {fetch} cannot be interpreted as a Tensor. "
                         f"({e})") from None
    if not graph.is_fetchable(el):
        op = el if isinstance(el, Operation) else el.op
        raise InaccessibleTensorError(
            f"Operation {op.name} has been marked as not fetchable. Typically this happens "
            "when it is defined in another function or code block. Use return values, "
            "explicit Python locals or TensorFlow collections to access it.")
    return el


class FetchMapper:
    """Flattens a fetch structure to `unique_elements`; `build(values)` restores it."""

    def __init__(self, graph: Graph, fetches):
        self.graph = graph
        self.unique_elements: list = []
        self._seen: set = set()
        self._builder = self._map(fetches)

    def _add(self, el) -> None:
        if el not in self._seen:
            self._seen.add(el)
            self.unique_elements.append(el)

    def _map(self, fetch):
        if fetch is None:
            raise TypeError(f"Argument `fetch` = {fetch} has invalid type "
                            f"\"{type(fetch).__name__}\". Cannot be None")
        if isinstance(fetch, SparseTensor):   # its NumPy arrays, as TF's SparseTensorValue
            parts = [self._map(t) for t in fetch]
            return lambda values: SparseTensorValue(*[c(values) for c in parts])
        if isinstance(fetch, (list, tuple)):
            children = [self._map(f) for f in fetch]
            kind = type(fetch)
            if isinstance(fetch, tuple) and hasattr(fetch, "_fields"):  # namedtuple
                return lambda values: kind(*(c(values) for c in children))
            return lambda values: kind(c(values) for c in children)
        if isinstance(fetch, Mapping):
            keys = list(fetch.keys())
            children = [self._map(fetch[k]) for k in keys]
            if isinstance(fetch, collections.defaultdict):
                factory = fetch.default_factory
                return lambda values: collections.defaultdict(
                    factory, zip(keys, (c(values) for c in children)))
            kind = type(fetch)
            return lambda values: kind(zip(keys, (c(values) for c in children)))
        if isinstance(fetch, IndexedSlices):
            parts = [self._map(t) for t in (fetch.values, fetch.indices, fetch.dense_shape)
                     if t is not None]
            return lambda values: IndexedSlicesValue(
                *[c(values) for c in parts], *([None] * (3 - len(parts))))
        if isinstance(fetch, CompositeTensor):  # a RaggedTensor: a RaggedTensorValue
            parts = [self._map(t) for t in fetch._to_components()]
            return lambda values: fetch._session_value([c(values) for c in parts])
        el = _fetch_element(self.graph, fetch)
        self._add(el)
        return lambda values: values[el]

    def build(self, values: dict):
        """The fetch structure with each element replaced by `values[element]`."""
        return self._builder(values)
