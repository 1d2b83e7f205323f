"""The object graph of an object-based checkpoint, as TensorFlow's trackable machinery sees it.

From a root object, the graph's nodes are found breadth first: each object lists its
children as (local name, child) pairs, in the order TensorFlow tracks them (attribute
assignment order). A variable is a leaf whose value is saved under
`<path>/.ATTRIBUTES/VARIABLE_VALUE`, the path being the local names from the root along the
first (shortest) route that reaches it, each escaped as TensorFlow does ("." -> "..",
"/" -> ".S"). Lists, tuples and dicts are nodes too, their children named "0", "1", ... or
by key. The graph is saved in the checkpoint as a `TrackableObjectGraph` proto under
`_CHECKPOINTABLE_OBJECT_GRAPH`.

An object that is not a variable but declares `_serialize_to_tensors` (a mutable lookup
table) is a leaf too: its tensors are saved under `<path>/.ATTRIBUTES/<name><suffix>`, the
name being its legacy saveable name ("table", as TensorFlow keys them) and the suffixes
those of the dict it returns ("-keys", "-values"); `_restore_from_tensors` takes them back.

Which children an object has: a class registered with `register_children` (Keras registers
its layers, models and optimizers so that keys match Keras 3 under TensorFlow), else the
object's own `_checkpoint_children()`, else (tf.Module and plain objects) the attributes
holding variables, trackables or containers of them.
"""

from __future__ import annotations

from tensorboard.compat.proto import trackable_object_graph_pb2

from ndflow.ops.module import Module
from ndflow.ops.variables import Variable

OBJECT_GRAPH_PROTO_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
VARIABLE_VALUE_KEY = "VARIABLE_VALUE"
_ATTRIBUTES = ".ATTRIBUTES"
SERIALIZE_TO_TENSORS_NAME = ".TENSORS"  # TF's attribute name when no legacy name is set
_OPTIMIZER_SLOT = ".OPTIMIZER_SLOT"

_REGISTERED: dict[type, object] = {}


def register_children(cls: type, children_fn) -> None:
    """Declares `children_fn(obj) -> [(local_name, child), ...]` for instances of `cls`
    (and its subclasses, unless they register their own)."""
    _REGISTERED[cls] = children_fn


def _registered_fn(obj):
    for klass in type(obj).__mro__:
        fn = _REGISTERED.get(klass)
        if fn is not None:
            return fn
    return None


def is_saveable(value) -> bool:
    """Whether `value` saves tensors of its own through `_serialize_to_tensors`."""
    return not isinstance(value, (Variable, type)) and \
        callable(getattr(value, "_serialize_to_tensors", None))


def saveable_name(obj) -> str:
    """The attribute name of a saveable's tensors ("table" for lookup tables)."""
    return getattr(obj, "_legacy_saveable_name", None) or SERIALIZE_TO_TENSORS_NAME


def is_trackable(value) -> bool:
    """Whether `value` is a node of its own in the graph (not counting containers)."""
    return (isinstance(value, (Variable, Module)) or _registered_fn(value) is not None
            or callable(getattr(value, "_checkpoint_children", None)) or is_saveable(value))


def holds_trackables(value, depth: int = 0) -> bool:
    """Whether `value` is trackable, or a list/tuple/dict holding one (at any depth)."""
    if is_trackable(value):
        return True
    if depth > 50:
        return False
    if isinstance(value, dict):
        return any(holds_trackables(v, depth + 1) for v in list(value.values()))
    if isinstance(value, (list, tuple)):
        return any(holds_trackables(v, depth + 1) for v in value)
    return False


def attribute_children(obj, names=None) -> list[tuple[str, object]]:
    """The default children: attributes (in assignment order) holding trackables."""
    ignored = getattr(type(obj), "_TF_MODULE_IGNORED_PROPERTIES", frozenset())
    attributes = vars(obj) if hasattr(obj, "__dict__") else {}
    items = attributes.items() if names is None else \
        [(n, attributes[n]) for n in names if n in attributes]
    return [(name, value) for name, value in items
            if name not in ignored and holds_trackables(value)]


def container_children(value) -> list[tuple[str, object]]:
    if isinstance(value, dict):
        return [(str(k), v) for k, v in list(value.items()) if holds_trackables(v)]
    return [(str(i), v) for i, v in enumerate(value) if holds_trackables(v)]


def trackable_children(obj) -> list[tuple[str, object]]:
    """(local name, child) pairs of one node, in TensorFlow's order. A child may be None:
    a slot with no object yet (it keeps its name, so the numbering stays as TF's)."""
    if isinstance(obj, Variable) or is_saveable(obj):
        return []
    if isinstance(obj, (list, tuple, dict)):
        return container_children(obj)
    fn = _registered_fn(obj)
    if fn is not None:
        return list(fn(obj))
    own = getattr(obj, "_checkpoint_children", None)
    if callable(own):
        return list(own())
    return attribute_children(obj)


def escape_local_name(name: str) -> str:
    return name.replace(".", "..").replace("/", ".S")


def variable_key(path: tuple[str, ...]) -> str:
    """The bundle key of the variable at `path`."""
    return "/".join([escape_local_name(n) for n in path] +
                    [_ATTRIBUTES, VARIABLE_VALUE_KEY])


def saveable_key(path: tuple[str, ...], name: str) -> str:
    """The bundle key prefix of a saveable's tensors at `path` (each tensor's key is it
    plus the tensor's suffix)."""
    return "/".join([escape_local_name(n) for n in path] + [_ATTRIBUTES,
                                                              escape_local_name(name)])


def slot_variable_key(variable_path, optimizer_path, slot_name: str) -> str:
    return "/".join([escape_local_name(n) for n in variable_path] + [_OPTIMIZER_SLOT] +
                    [escape_local_name(n) for n in optimizer_path] +
                    [escape_local_name(slot_name), _ATTRIBUTES, VARIABLE_VALUE_KEY])


def pretty_path(path: tuple[str, ...]) -> str:
    """TensorFlow's way of naming a node in messages: "(root).model.dense"."""
    return ".".join(("(root)",) + tuple(path))


class ObjectGraph:
    """The nodes reachable from a root, breadth first: `nodes[i]` is the object of node i,
    `paths[i]` its path of local names, `children[i]` its (local name, node id) pairs."""

    def __init__(self, root):
        self.nodes = [root]
        self.paths: list[tuple[str, ...]] = [()]
        self.children: list[list[tuple[str, int]]] = []
        self.keys: dict[int, str] = {}  # node id -> bundle key, for slot variables
        # optimizer node id -> [(original variable node id, slot name, slot node id)]
        self.slots: dict[int, list[tuple[int, str, int]]] = {}
        index = {id(root): 0}
        i = 0
        while i < len(self.nodes):
            kids = []
            for name, child in trackable_children(self.nodes[i]):
                if child is None:
                    continue
                node_id = index.get(id(child))
                if node_id is None:
                    node_id = index[id(child)] = len(self.nodes)
                    self.nodes.append(child)
                    self.paths.append(self.paths[i] + (name,))
                kids.append((name, node_id))
            self.children.append(kids)
            i += 1
        self._add_slot_variables(index)

    def _add_slot_variables(self, index: dict) -> None:
        """Optimizer slots of variables in the graph become nodes after all others, keyed
        `<variable path>/.OPTIMIZER_SLOT/<optimizer path>/<slot name>/...` as TF's."""
        for opt_id in range(len(self.nodes)):
            slots_fn = getattr(self.nodes[opt_id], "_checkpoint_slots", None)
            if not callable(slots_fn) or isinstance(self.nodes[opt_id], Variable):
                continue
            for var, slot_name, slot in slots_fn():
                var_id = index.get(id(var))
                if var_id is None or id(slot) in index:
                    continue
                slot_id = index[id(slot)] = len(self.nodes)
                self.nodes.append(slot)
                self.paths.append(self.paths[var_id] + (slot_name,))
                self.children.append([])
                self.keys[slot_id] = slot_variable_key(self.paths[var_id],
                                                       self.paths[opt_id], slot_name)
                self.slots.setdefault(opt_id, []).append((var_id, slot_name, slot_id))

    def key(self, node_id: int) -> str:
        """The bundle key of the variable at node `node_id`."""
        return self.keys.get(node_id) or variable_key(self.paths[node_id])

    def variables(self) -> list[tuple[int, Variable]]:
        return [(i, obj) for i, obj in enumerate(self.nodes) if isinstance(obj, Variable)]

    def saveables(self) -> list[tuple[int, object]]:
        """(node id, object) of the nodes saved through `_serialize_to_tensors`."""
        return [(i, obj) for i, obj in enumerate(self.nodes) if is_saveable(obj)]

    def saveable_key(self, node_id: int) -> str:
        return saveable_key(self.paths[node_id], saveable_name(self.nodes[node_id]))

    def to_proto(self):
        """The `TrackableObjectGraph` proto TensorFlow writes for these nodes."""
        has_values = self._has_values()
        graph = trackable_object_graph_pb2.TrackableObjectGraph()
        for i, obj in enumerate(self.nodes):
            node = graph.nodes.add()
            for name, child_id in self.children[i]:
                node.children.add(node_id=child_id, local_name=name)
            for var_id, slot_name, slot_id in self.slots.get(i, ()):
                node.slot_variables.add(original_variable_node_id=var_id, slot_name=slot_name,
                                        slot_variable_node_id=slot_id)
            if isinstance(obj, Variable):
                node.attributes.add(name=VARIABLE_VALUE_KEY,
                                    full_name=obj.name.split(":")[0],
                                    checkpoint_key=self.key(i))
            elif is_saveable(obj):
                node.attributes.add(name=saveable_name(obj),
                                    checkpoint_key=self.saveable_key(i))
            if has_values[i]:
                node.has_checkpoint_values.value = True
        return graph

    def _has_values(self) -> list[bool]:
        """Whether a node's subgraph holds a saved value (TF's has_checkpoint_values)."""
        has = [isinstance(obj, Variable) or is_saveable(obj) for obj in self.nodes]
        changed = True
        while changed:
            changed = False
            for i, kids in enumerate(self.children):
                linked = [c for _, c in kids] + [s for _, _, s in self.slots.get(i, ())]
                if not has[i] and any(has[c] for c in linked):
                    has[i] = changed = True
        return has
