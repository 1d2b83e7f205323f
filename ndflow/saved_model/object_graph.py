"""The trackable objects of a SavedModel: what `tf.saved_model.save` walks from the root.

As TensorFlow's AutoTrackable: a `tf.Module`'s children are its attributes in assignment
order (variables, sub-modules, tf.functions, concrete functions, and lists, tuples and dicts
holding any of them), then the `tf.function`s defined on its class (`@tf.function def
__call__`), bound to it. Nodes are numbered breadth first from the root, each object once;
a variable's checkpoint key is its first path, with TensorFlow's escaping.
"""

from __future__ import annotations

import inspect

from ndflow.checkpoint import object_graph as ckpt_graph
from ndflow.ops.module import Module
from ndflow.ops.variables import Variable
from ndflow.runtime.concrete_function import ConcreteFunction
from ndflow.runtime.function import Function
from ndflow.saved_model.asset import Asset
from ndflow.saved_model.restored_functions import RestoredFunction
from ndflow.saved_model.restored_resources import RestoredResource
from ndflow.saved_model.table_resources import LookupInterface, table_children
from ndflow.saved_model.trackable_resource import TrackableResource


class Container:
    """A list, tuple or dict on the path to trackables (TF's ListWrapper/DictWrapper)."""

    def __init__(self, value, identifier: str):
        self.value = value
        self.identifier = identifier


def _is_trackable(value) -> bool:
    """Trackables, and containers holding some (or empty ones, which TF tracks too)."""
    if isinstance(value, (Variable, Module, Function, ConcreteFunction, RestoredFunction,
                          Asset, RestoredResource, LookupInterface, TrackableResource)):
        return True
    if isinstance(value, (list, tuple)):
        return not value or any(_is_trackable(v) for v in value)
    if isinstance(value, dict):
        return not value or any(_is_trackable(v) for v in value.values())
    return False


def _wrap(value):
    if isinstance(value, dict):
        return Container(value, "trackable_dict_wrapper")
    if isinstance(value, list):
        return Container(value, "trackable_list_wrapper")
    if isinstance(value, tuple):
        return Container(value, "trackable_tuple_wrapper")
    return value


_FUNCTIONS = (Function, ConcreteFunction, RestoredFunction)
# Keras' fit/evaluate/predict step functions: TensorFlow does not save them (they capture
# the metrics' variables, which are not part of the model's object graph)
_KERAS_STEP_FUNCTIONS = frozenset({"train_function", "test_function", "predict_function"})


def _uses_checkpoint_children(obj) -> bool:
    return (ckpt_graph._registered_fn(obj) is not None or
            callable(getattr(obj, "_checkpoint_children", None)))


def children(obj) -> list:
    """(local name, child) pairs of a node, in TensorFlow's order."""
    if isinstance(obj, Container):
        items = obj.value.items() if isinstance(obj.value, dict) else enumerate(obj.value)
        return [(str(k), _wrap(v)) for k, v in items if _is_trackable(v)]
    if isinstance(obj, LookupInterface):
        return table_children(obj)
    own = getattr(obj, "_saved_model_children", None)
    if own is not None and not isinstance(obj, Module):
        return own()
    if not ckpt_graph.is_trackable(obj):
        return []
    if _uses_checkpoint_children(obj):
        # Keras layers/models (registered) and tf.train.Checkpoint: the checkpoint's
        # children, so variable keys are those TF writes for them; then their functions
        out = [(n, _wrap(v)) for n, v in ckpt_graph.trackable_children(obj) if v is not None]
        seen = {name for name, _ in out}
        for name, value in vars(obj).items():
            if name not in seen and isinstance(value, _FUNCTIONS) and \
                    name not in _KERAS_STEP_FUNCTIONS:
                out.append((name, value))
    else:
        out = []
        ignored = getattr(obj, "_TF_MODULE_IGNORED_PROPERTIES", frozenset())
        for name, value in vars(obj).items():
            if name in ignored or not _is_trackable(value):
                continue
            out.append((name, _wrap(value)))
    seen = {name for name, _ in out}
    for name in sorted(dir(type(obj))):
        if name in seen:
            continue
        try:
            static = inspect.getattr_static(type(obj), name)
        except AttributeError:
            continue
        if isinstance(static, Function):
            out.append((name, getattr(obj, name)))
    return out


def escape(name: str) -> str:
    """TensorFlow's escaping of a local name inside a checkpoint key."""
    return name.replace(".", "..").replace("/", ".S")


class ObjectGraph:
    """The nodes reachable from `root` (plus extra root children such as `signatures`):
    `nodes[i]` is the object of node i, `edges[i]` its (local name, node id) pairs and
    `paths[i]` its first path of local names."""

    def __init__(self, root, extra_root_children=()):
        self.nodes = [root]
        self.edges: list = [[]]
        self.paths: list = [()]
        ids = {id(root): 0}
        queue = [0]
        while queue:
            i = queue.pop(0)
            kids = children(self.nodes[i])
            if i == 0:  # the extra children replace attributes of the same name
                extra = list(extra_root_children)
                names = {n for n, _ in extra}
                kids = [(n, c) for n, c in kids if n not in names] + extra
            for name, child in kids:
                key = id(child.value) if isinstance(child, Container) else id(child)
                j = ids.get(key)
                if j is None:
                    j = ids[key] = len(self.nodes)
                    self.nodes.append(child)
                    self.edges.append([])
                    self.paths.append(self.paths[i] + (name,))
                    queue.append(j)
                self.edges[i].append((name, j))
        self._ids = ids

    def add_detached(self, obj, path: tuple) -> int:
        """Adds a node no other node names as a child (a table's save/restore functions,
        referenced by id from its `saveable_objects`); its id."""
        j = self._ids[id(obj)] = len(self.nodes)
        self.nodes.append(obj)
        self.edges.append([])
        self.paths.append(tuple(path))
        return j

    def node_id(self, obj) -> int | None:
        return self._ids.get(id(obj))

    def checkpoint_key(self, node_id: int) -> str:
        return "/".join(escape(n) for n in self.paths[node_id]) + "/.ATTRIBUTES/VARIABLE_VALUE"
