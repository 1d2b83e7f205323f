"""Restoring an object-based checkpoint into Python objects, as TensorFlow does.

The checkpoint's object graph is matched against the live objects from the root, by local
names: each matched variable gets its saved value at once (after a dtype and shape check).
A checkpointed child that does not exist yet (a Keras layer not built, an optimizer without
its slots) is remembered on its parent; when the parent creates it and calls
`restore_deferred(parent)` (Keras does after `build`), the value is restored then. The
returned status tells what matched: `assert_consumed`, `assert_existing_objects_matched`,
`assert_nontrivial_match`, `expect_partial`.
"""

from __future__ import annotations

import weakref

import numpy as np
from tensorboard.compat.proto import trackable_object_graph_pb2

from ndflow.checkpoint import object_graph as og
from ndflow.checkpoint import saveables
from ndflow.checkpoint.tensor_bundle import BundleReader, dtype_name
from ndflow.core import context, errors, scopes, tf_logging
from ndflow.core.tensor import EagerTensor
from ndflow.ops import array_core, state
from ndflow.ops.variables import Variable
from ndflow.runtime.session import get_default_session

# id(anchor) -> (weakref to anchor, [(path of local names, node id, restoration), ...])
_DEFERRED: dict[int, tuple[object, list]] = {}
_SLOT = "\0slot"  # first element of the path of a deferred optimizer slot


def restore_deferred(parent) -> None:
    """Restores checkpointed objects below `parent` that it has created since a restore
    found them missing. Keras calls it after a layer's `build` and an optimizer's; harmless
    when nothing waits."""
    pending = _DEFERRED.get(id(parent))
    if pending is None or pending[0]() is not parent:
        return
    del _DEFERRED[id(parent)]
    still, slot_restorations = [], []
    for path, node_id, restoration in pending[1]:
        if path[:1] == (_SLOT,):  # an optimizer slot: retried below
            restoration.deferred_slots.discard(node_id)
            if restoration not in slot_restorations:
                slot_restorations.append(restoration)
            continue
        child = _follow(parent, path)
        if child is None:
            still.append((path, node_id, restoration))
        else:
            restoration.match(node_id, child, parent, path)
    if still:
        _defer(parent, still)
    for restoration in slot_restorations:
        restoration.match_slots()


def _follow(obj, path):
    """The object reached from `obj` by the local names of `path`, or None."""
    for name in path:
        obj = dict(og.trackable_children(obj)).get(name)
        if obj is None:
            return None
    return obj


def _defer(anchor, items) -> None:
    """Remembers (path from anchor, node id, restoration) items on `anchor`."""
    entry = _DEFERRED.get(id(anchor))
    if entry is None or entry[0]() is not anchor:
        try:
            ref = weakref.ref(anchor)
        except TypeError:  # not weakly referenceable: nothing can notify us later
            return
        key = id(anchor)
        entry = _DEFERRED[key] = (ref, [])
        weakref.finalize(anchor, _DEFERRED.pop, key, None)
    entry[1].extend(items)


def _assign(var: Variable, key: str, reader: BundleReader, graph_assigns=None) -> None:
    """Restores `var` from checkpoint `key`. Eagerly a numeric tensor is read straight into
    a new ATen tensor that the variable then owns (one copy of the bytes; no clone)."""
    _, saved_shape = reader.dtype_and_shape(key)
    shape = tuple(var.shape.as_list()) if var.shape.rank is not None else saved_shape
    if None in shape:
        shape = saved_shape
    if tuple(saved_shape) != tuple(shape):
        raise ValueError(f"Received incompatible tensor with shape {tuple(saved_shape)} when "
                         f"attempting to restore variable with shape {tuple(shape)} and name "
                         f"{var.name}.")
    saved = dtype_name(reader.dtype_enum(key))
    if saved != var.dtype.name:
        raise ValueError(f"Received incompatible tensor of dtype {saved} when attempting to "
                         f"restore variable {var.name} of dtype {var.dtype.name} (checkpoint "
                         f"key {key!r}).")
    if graph_assigns is not None and not context.executing_eagerly() and \
            not _eager_variable(var):
        value = reader.read(key)
        if var.dtype.name == "bfloat16":
            value = value.astype(np.float32)
        if var.dtype.is_quantized:   # the bundle's structured values: their integers
            value = value.view(var.dtype.np_dtype)
        graph_assigns.append((var, value))  # a graph: run by the status in a session
        return
    # an eager variable (one a tf.function's trace builds, as Keras layers' deferred
    # weights) is assigned now, outside the graph being traced
    with scopes.init_scope():
        tensor = reader.read_tensor(key)
        if tensor is not None:
            var.assign(EagerTensor(tensor, var.dtype))
            return
        value = reader.read(key)
        if var.dtype.name == "bfloat16":
            value = value.astype(np.float32)
        if var.dtype.is_quantized:
            value = value.view(var.dtype.np_dtype)
        var.assign(value)


def _eager_variable(var) -> bool:
    var = getattr(var, "_primary", var)   # a distributed variable: its components'
    return getattr(var, "_in_graph_mode", True) is False


def _ref(obj):
    """A weak reference to `obj` where it can have one, else a strong one of the same use."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj


class _Matched(dict):
    """Checkpoint node id -> the object bound to it, held weakly where it can be (as TF's
    coordinator does): a restoration waiting on an object's children must not keep that
    object alive, so that it can go, and its unused values be reported."""

    def __setitem__(self, node_id, obj):
        super().__setitem__(node_id, _ref(obj))

    def get(self, node_id, default=None):
        ref = super().get(node_id)
        obj = None if ref is None else ref()
        return default if obj is None else obj

    def values(self):
        return [obj for obj in (ref() for ref in super().values()) if obj is not None]

    def items(self):
        return [(k, obj) for k, ref in super().items() if (obj := ref()) is not None]


class Restoration:
    """One `restore()`/`read()` of a checkpoint into a root object."""

    def __init__(self, reader: BundleReader, graph_proto, root, save_path: str):
        self.reader = reader
        self.proto = graph_proto
        self.save_path = save_path
        self._root = _ref(root)
        self.matched: dict[int, object] = _Matched()
        self.deferred_slots: set[int] = set()
        self.graph_assigns: list = []  # (variable, value) to run in a session (TF1 graphs)
        self.paths: dict[int, tuple[str, ...]] = {0: ()}
        self._set_paths()
        self.partial = [False]   # set by the status's expect_partial()
        weakref.finalize(self, _warn_unrestored, graph_proto, self.matched, self.paths,
                         self.partial)

    @property
    def root(self):
        return self._root()

    def _set_paths(self) -> None:
        queue = [0]
        for node_id in queue:
            for child in self.proto.nodes[node_id].children:
                if child.node_id not in self.paths:
                    self.paths[child.node_id] = self.paths[node_id] + (child.local_name,)
                    queue.append(child.node_id)

    def match(self, node_id: int, obj, anchor=None, path=()) -> None:
        """Binds checkpoint node `node_id` to `obj`, restores its value, then its children
        (breadth first). A child not created yet is deferred on the nearest object above it
        that is not a list or dict (its anchor), by its path from there."""
        queue = [(node_id, obj, anchor, tuple(path))]
        for node_id, obj, anchor, path in queue:
            if node_id in self.matched or node_id >= len(self.proto.nodes):
                continue
            self.matched[node_id] = obj
            node = self.proto.nodes[node_id]
            if isinstance(obj, Variable):
                for attribute in node.attributes:
                    if attribute.name == og.VARIABLE_VALUE_KEY:
                        key = attribute.checkpoint_key
                        _assign(obj, key, self.reader, self.graph_assigns)
                continue
            if og.is_saveable(obj):  # a mutable table: its tensors by suffix
                for attribute in node.attributes:
                    values = saveables.saved_tensors(self.reader, attribute.checkpoint_key,
                                                     obj)
                    if values:
                        saveables.restore(obj, values, self.graph_assigns)
                continue
            if anchor is None or not isinstance(obj, (list, tuple, dict)):
                anchor, path = obj, ()
            children = dict(og.trackable_children(obj))
            missing = []
            for child in node.children:
                value = children.get(child.local_name)
                child_path = path + (child.local_name,)
                if value is None:
                    missing.append((child_path, child.node_id, self))
                elif child.node_id not in self.matched:
                    queue.append((child.node_id, value, anchor, child_path))
            if missing:
                _defer(anchor, missing)
        self.match_slots()

    def match_slots(self) -> None:
        """Binds the saved slot variables of matched optimizers (TF1 ones: their
        `_checkpoint_slots`) whose original variable is matched; a slot the optimizer has
        not created yet waits for the optimizer's `restore_deferred`."""
        for opt_id, optimizer in list(self.matched.items()):
            refs = self.proto.nodes[opt_id].slot_variables
            slots_fn = getattr(optimizer, "_checkpoint_slots", None)
            if not refs or not callable(slots_fn):
                continue
            slots = {(id(var), name): slot for var, name, slot in slots_fn()}
            for ref in refs:
                var = self.matched.get(ref.original_variable_node_id)
                node_id = ref.slot_variable_node_id
                if var is None or node_id in self.matched or node_id in self.deferred_slots:
                    continue
                slot = slots.get((id(var), ref.slot_name))
                if slot is not None:
                    self.match(node_id, slot)
                else:
                    self.deferred_slots.add(node_id)
                    _defer(optimizer, [((_SLOT,), node_id, self)])

    def unresolved_nodes(self) -> list[int]:
        return [i for i, node in enumerate(self.proto.nodes)
                if node.attributes and i not in self.matched]

    def unmatched_objects(self) -> list:
        """Variables (and saveables) reachable from the root that no checkpoint value was
        bound to."""
        bound = {id(o) for o in self.matched.values()}
        graph = og.ObjectGraph(self.root)
        return [obj for _, obj in graph.variables() + graph.saveables()
                if id(obj) not in bound]


def _warn_unrestored(proto, matched, paths, partial) -> None:
    """TF's warnings when a restoration that left checkpointed values unused goes away
    (garbage collected, or at exit), unless its status's expect_partial() was called."""
    if partial[0]:
        return
    unused = [i for i, node in enumerate(proto.nodes) if node.attributes and i not in matched]
    if not unused:
        return
    tf_logging.warning(
        "Detecting that an object or model or tf.train.Checkpoint is being deleted with "
        "unrestored values. See the following logs for the specific values in question. To "
        "silence these warnings, use `status.expect_partial()`. See "
        "https://www.tensorflow.org/api_docs/python/tf/train/Checkpoint#restorefor details "
        "about the status object returned by the restore function.")
    for i in unused:
        tf_logging.warning("Value in checkpoint could not be found in the restored object: "
                           f"{og.pretty_path(paths.get(i, ('?',)))}")


class CheckpointLoadStatus:
    """What `Checkpoint.restore(path)` returns: assertions on how the checkpoint matched."""

    def __init__(self, restoration: Restoration):
        self._restoration = restoration
        self._root = restoration.root   # the restoration holds it weakly; the status not

    def assert_consumed(self):
        """Every variable was matched and every value in the checkpoint was restored (checked
        in that order, as TensorFlow does)."""
        self.assert_existing_objects_matched()
        r = self._restoration
        for node_id in r.unresolved_nodes():
            raise AssertionError(f"Unresolved object in checkpoint "
                                 f"{og.pretty_path(r.paths.get(node_id, ('?',)))}: "
                                 f"{r.proto.nodes[node_id]}")
        return self

    def assert_existing_objects_matched(self):
        """Every variable reachable from the root now was matched with a saved value."""
        unmatched = self._restoration.unmatched_objects()
        if unmatched:
            shown = unmatched[:10]
            raise AssertionError(
                f"Found {len(unmatched)} Python objects that were not bound to checkpointed "
                f"values, likely due to changes in the Python program. Showing {len(shown)} "
                f"of {len(unmatched)} unmatched objects: {shown!r}")
        return self

    def assert_nontrivial_match(self):
        """Something besides the root was matched."""
        if len(self._restoration.matched) <= 1:
            raise AssertionError(f"Nothing except the root object matched a checkpointed "
                                 f"value. Typically this means that the checkpoint does not "
                                 f"match the Python program. The following objects have no "
                                 f"matching checkpointed value: "
                                 f"{self._restoration.unmatched_objects()!r}")
        return self

    def expect_partial(self):
        """Silences the warnings about checkpointed values left unrestored."""
        self._restoration.partial[0] = True
        return self

    def run_restore_ops(self, session=None):
        """In a TF1 graph, assigns the restored values in `session` (the default session
        if None); eagerly, values were restored at `restore` time."""
        run_graph_assigns(self._restoration.graph_assigns, session)

    def initialize_or_restore(self, session=None):
        """In a TF1 graph, initializes the root's variables that were not restored, then
        runs the restore ops."""
        if context.executing_eagerly():
            return
        session = _session(session)
        bound = {id(o) for o in self._restoration.matched.values()}
        init = [v.initializer for _, v in og.ObjectGraph(self._restoration.root).variables()
                if id(v) not in bound and v.initializer is not None]
        if init:
            session.run(init)
        self.run_restore_ops(session)


def run_graph_assigns(pending: list, session=None) -> None:
    """Runs (variable, value) assignments of a TF1 graph in a session, then forgets them."""
    if not pending:
        return
    session = _session(session)
    feeds, ops = {}, []
    graph = session.graph
    with graph.as_default(), graph.control_dependencies(None), \
            graph.name_scope("checkpoint_restore"):
        for var, value in pending:
            if not isinstance(var, Variable):  # a saveable (table) and its tensors
                ops.append(saveables.graph_restore_op(var, value, feeds))
                continue
            holder = array_core.placeholder(var.dtype, var.shape)
            ops.append(state.assign_variable_op(var.handle, holder))
            feeds[holder] = value
    session.run(ops, feed_dict=feeds)
    del pending[:]


def _session(session):
    if session is None:
        session = get_default_session()
    if session is None:
        raise ValueError("Restoring or saving a checkpoint in a graph needs a session: pass "
                         "`session=` or run inside `with tf.compat.v1.Session():`.")
    return session


class InitializationOnlyStatus:
    """What `restore(None)` returns: nothing was restored."""

    def __init__(self, root=None):
        self._root = root

    def assert_consumed(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being "
                             "restored.")

    def assert_existing_objects_matched(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being "
                             "restored.")

    def assert_nontrivial_match(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being "
                             "restored.")

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None):
        """Nothing to restore."""

    def initialize_or_restore(self, session=None):
        """Initializes the root's variables in a TF1 graph (eagerly they already are)."""
        if context.executing_eagerly() or self._root is None:
            return
        init = [v.initializer for _, v in og.ObjectGraph(self._root).variables()
                if v.initializer is not None]
        if init:
            _session(session).run(init)


class NameBasedSaverStatus:
    """What restoring a TF1 Saver (name-based) checkpoint returns: variables were matched by
    their names, as TensorFlow's fallback does."""

    def __init__(self, unmatched: list, graph_assigns: list):
        self._unmatched = unmatched
        self._graph_assigns = graph_assigns

    def assert_consumed(self):
        if self._unmatched:
            listed = "\n".join(f"    {v!r}: [{v.name.split(':')[0]!r}]"
                                for v in self._unmatched)
            raise AssertionError(f"Some objects had attributes which were not restored: "
                                 f"\n{listed}")
        return self

    def assert_existing_objects_matched(self):
        return self.assert_consumed()

    def assert_nontrivial_match(self):
        return self

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None):
        """In a TF1 graph, assigns the values in a session; eagerly they already are."""
        run_graph_assigns(self._graph_assigns, session)

    def initialize_or_restore(self, session=None):
        self.run_restore_ops(session)


def restore_by_name(reader: BundleReader, root) -> NameBasedSaverStatus:
    """Restores the variables reachable from `root` whose names (without ":0") are keys of
    a name-based checkpoint."""
    unmatched, graph_assigns = [], []
    graph = og.ObjectGraph(root)
    for _, var in graph.variables():
        key = var.name.split(":")[0]
        info = var._get_save_slice_info()
        if info is not None and reader.has(info.full_name):  # a part: its slice
            value = reader.read_slice(info.full_name, info.extents)
            if graph_assigns is not None and not context.executing_eagerly():
                graph_assigns.append((var, value))
            else:
                var.assign(value)
        elif reader.has(key):
            _assign(var, key, reader, graph_assigns)
        else:
            unmatched.append(var)
    for _, obj in graph.saveables():  # a table: "<its name>-keys", "-values"
        values = saveables.saved_tensors(reader, str(getattr(obj, "_name", "")))
        if values and getattr(obj, "_name", None):
            saveables.restore(obj, values, graph_assigns)
        else:
            unmatched.append(obj)
    return NameBasedSaverStatus(unmatched, graph_assigns)


def read_object_graph(reader: BundleReader):
    """The checkpoint's TrackableObjectGraph; NotFoundError for a name-based (TF1 Saver)
    checkpoint, DataLossError if the stored proto does not parse."""
    if not reader.has(og.OBJECT_GRAPH_PROTO_KEY):
        raise errors.NotFoundError(
            None, None, f"The checkpoint at {reader.prefix} has no object graph "
                        f"({og.OBJECT_GRAPH_PROTO_KEY}): it was written by a name-based "
                        "saver (tf.compat.v1.train.Saver); restore it with a Saver, or read "
                        "its values with tf.train.load_checkpoint.")
    data = reader.read(og.OBJECT_GRAPH_PROTO_KEY).reshape(()).item()
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    try:
        graph.ParseFromString(data)
    except Exception:  # noqa: BLE001 - protobuf's DecodeError
        raise errors.DataLossError(None, None, f"The object graph of checkpoint "
                                               f"{reader.prefix} does not parse") from None
    for node in graph.nodes:
        for child in node.children:
            if not 0 <= child.node_id < len(graph.nodes):
                raise errors.DataLossError(None, None, f"The object graph of checkpoint "
                                                       f"{reader.prefix} is corrupted")
    return graph
