"""`Session.run`'s fetch structures and graph-element lookup, with TensorFlow's messages.

A fetch is a tensor, an operation, a name (`"y:0"` a tensor, `"train"` an op), an object
with `_as_graph_element()` (e.g. a variable), or any nesting of lists, tuples, namedtuples
and dicts of those. `FetchMapper` flattens it to unique graph elements and rebuilds the
same structure from their values (an operation's value is None).
"""

from __future__ import annotations

import collections
from collections.abc import Mapping

from ndflow.core.errors import InaccessibleTensorError
from ndflow.core.graph import Graph, Operation, SymbolicTensor


def as_graph_element(graph: Graph, obj, allow_tensor: bool = True,
                     allow_operation: bool = True):
    """TensorFlow's `Graph.as_graph_element`, raising its exact errors."""
    if allow_tensor and allow_operation:
        types_str = "Tensor or Operation"
    elif allow_tensor:
        types_str = "Tensor"
    else:
        types_str = "Operation"
    convert = getattr(obj, "_as_graph_element", None)
    if callable(convert) and not isinstance(obj, (SymbolicTensor, Operation)):
        converted = convert()
        if converted is not None:
            obj = converted
    if isinstance(obj, bytes):
        obj = obj.decode("utf-8")
    if isinstance(obj, str):
        return _by_name(graph, obj, allow_tensor, allow_operation, types_str)
    if isinstance(obj, SymbolicTensor) and allow_tensor:
        if obj.graph is not graph:
            raise ValueError(f"Tensor {obj} is not an element of this graph.")
        return obj
    if isinstance(obj, Operation) and allow_operation:
        if obj.graph is not graph:
            raise ValueError(f"Operation {obj} is not an element of this graph.")
        return obj
    raise TypeError(f"Can not convert a {type(obj).__name__} into a {types_str}.")


def _by_name(graph: Graph, name: str, allow_tensor: bool, allow_operation: bool,
             types_str: str):
    if ":" in name and allow_tensor:
        try:
            op_name, out_n = name.split(":")
            out_n = int(out_n)
        except ValueError:
            raise ValueError(f"The name {name!r} looks a like a Tensor name, but is not a valid "
                             "one. Tensor names must be of the form "
                             "\"<op_name>:<output_index>\".") from None
        try:
            op = graph.get_operation_by_name(op_name)
        except KeyError:
            raise KeyError(f"The name {name!r} refers to a Tensor which does not exist. The "
                           f"operation, {op_name!r}, does not exist in the graph.") from None
        if not 0 <= out_n < len(op.outputs):
            raise KeyError(f"The name {name!r} refers to a Tensor which does not exist. The "
                           f"operation, {op_name!r}, exists but only has {len(op.outputs)} "
                           "outputs.")
        return op.outputs[out_n]
    if ":" in name:
        raise ValueError(f"Name {name!r} appears to refer to a Tensor, not a {types_str}.")
    if allow_operation:
        try:
            return graph.get_operation_by_name(name)
        except KeyError:
            raise KeyError(f"The name {name!r} refers to an Operation not in the "
                           "graph.") from None
    try:
        graph.get_operation_by_name(name)
        msg = f"The name {name!r} refers to an Operation, not a {types_str}."
    except KeyError:
        msg = f"The name {name!r} looks like an (invalid) Operation name, not a {types_str}."
    raise ValueError(msg + " Tensor names must be of the form \"<op_name>:<output_index>\".")


def _fetch_element(graph: Graph, fetch):
    try:
        el = as_graph_element(graph, fetch)
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
        el = _fetch_element(self.graph, fetch)
        self._add(el)
        return lambda values: values[el]

    def build(self, values: dict):
        """The fetch structure with each element replaced by `values[element]`."""
        return self._builder(values)
