"""`tf.train.Checkpoint`: object-based checkpoints in TensorFlow's format.

`Checkpoint(model=..., optimizer=...)` is the root of an object graph (object_graph.py).
`write(prefix)` saves every variable reachable from it under its object-path key plus the
graph itself (`_CHECKPOINTABLE_OBJECT_GRAPH`) as a TensorBundle; `save(prefix)` also counts
saves in `save_counter`, writes `prefix-<n>` and updates the directory's `checkpoint` file.
`restore`/`read` match the saved graph against the live objects (restore.py).
"""

from __future__ import annotations

import os

import numpy as np

from ndflow.checkpoint import (
    checkpoint_management,
    object_graph,
    restore,
    saveables,
    sharded_save,
    sharding,
    tensor_bundle,
)
from ndflow.checkpoint.list_wrapper import ListWrapper
from ndflow.core import context, dtypes, errors
from ndflow.core.api_export import tf_export
from ndflow.ops.variables import Variable
from ndflow.train.init_scope import init_scope


@tf_export("train.CheckpointOptions", v1=["train.CheckpointOptions"])
class CheckpointOptions:
    """Options of `save`/`restore`. A `tf.train.experimental.ShardingCallback` as
    `experimental_sharding_callback` splits the files written (sharded_save.py); the
    other options are accepted (ndflow writes on the host)."""

    def __init__(self, experimental_io_device=None, experimental_enable_async_checkpoint=False,
                 experimental_write_callbacks=None, enable_async=False,
                 experimental_sharding_callback=None, experimental_skip_slot_variables=False):
        if experimental_sharding_callback is not None and not isinstance(
                experimental_sharding_callback, sharding.ShardingCallback):
            raise ValueError("The experimental_sharding_callback checkpoint option"
                             "must be of type ShardingCallback. The option provided"
                             f"was of type {type(experimental_sharding_callback)}.")
        self.experimental_io_device = experimental_io_device
        self.enable_async = enable_async or experimental_enable_async_checkpoint
        self.experimental_enable_async_checkpoint = self.enable_async
        self.experimental_write_callbacks = experimental_write_callbacks
        self.experimental_sharding_callback = experimental_sharding_callback
        self.experimental_skip_slot_variables = experimental_skip_slot_variables


def _variable_value(var: Variable) -> np.ndarray:
    value = var.numpy()
    if var.dtype is dtypes.bfloat16:
        value = np.asarray(value, dtype=tensor_bundle.numpy_dtype_of(14))
    if var.dtype.is_quantized:   # TF's structured form, so the bundle records qint8, not int8
        value = np.ascontiguousarray(value).view(var.dtype.as_numpy_dtype)
    return value


def write_object_graph(root, file_prefix: str, session=None, options=None) -> str:
    """Writes the variables reachable from `root` and the object graph under `file_prefix`
    (in a TF1 graph, their values fetched with `session`; in the shards of `options`'
    sharding callback if it has one)."""
    graph = object_graph.ObjectGraph(root)
    variables = graph.variables()
    tables = graph.saveables()  # objects saving tensors of their own (mutable tables)
    if context.executing_eagerly():
        values = [_variable_value(var) for _, var in variables]
        serialized = saveables.serialize([obj for _, obj in tables])
    else:
        session = restore._session(session)
        serialized = saveables.serialize([obj for _, obj in tables], session)
        values = session.run([var for _, var in variables]) if variables else []
        values = [np.asarray(v, dtype=tensor_bundle.numpy_dtype_of(14))
                  if var.dtype is dtypes.bfloat16 else v for (_, var), v in zip(variables, values)]
        values = [np.ascontiguousarray(v).view(var.dtype.as_numpy_dtype)
                  if var.dtype.is_quantized else v for (_, var), v in zip(variables, values)]
    callback = getattr(options, "experimental_sharding_callback", None)
    if callback is not None:
        sharded_save.write_sharded(file_prefix, callback, sharded_save.checkpoint_items(
            graph, variables, values, tables, serialized, graph.to_proto().SerializeToString()))
        return file_prefix
    writer = tensor_bundle.BundleWriter(file_prefix)
    writer.add(object_graph.OBJECT_GRAPH_PROTO_KEY,
               np.array(graph.to_proto().SerializeToString(), dtype=object))
    for (node_id, _), value in zip(variables, values):
        writer.add(graph.key(node_id), value)
    for (node_id, _), tensors in zip(tables, serialized):
        prefix = graph.saveable_key(node_id)
        for suffix, value in tensors.items():
            writer.add(prefix + suffix, value)
    writer.finish()
    return file_prefix


def _check_trackable(name: str, value) -> None:
    if not object_graph.holds_trackables(value) and not object_graph.is_trackable(value) \
            and not isinstance(value, (list, tuple, dict)):
        raise ValueError(f"`Checkpoint` was expecting {name} to be a trackable object (an "
                         f"object derived from `Trackable`), got {value}. If you believe "
                         "this object should be trackable (i.e. it is part of the TensorFlow "
                         "Python API and manages state), please open an issue.")


@tf_export("train.Checkpoint", v1=["train.Checkpoint"])
class Checkpoint:
    """Groups trackable objects (variables, `tf.Module`s, Keras models and optimizers) and
    saves/restores them in TensorFlow's object-based checkpoint format."""

    def __init__(self, root=None, **kwargs):
        object.__setattr__(self, "_children", {})
        object.__setattr__(self, "_save_counter", None)
        object.__setattr__(self, "_root", root)
        if root is not None:
            _check_trackable("root", root)
        for name, value in sorted(kwargs.items()):  # TensorFlow tracks them sorted by name
            _check_trackable(name, value)
            self._children[name] = ListWrapper(value, self) if type(value) is list else value

    def __setattr__(self, name, value):
        tracked = not name.startswith("_") and (object_graph.holds_trackables(value) or
                                                isinstance(value, (list, tuple, dict)))
        if tracked:
            if type(value) is list:   # TF's ListWrapper: growing it restores into it
                value = ListWrapper(value, self)
            self._children[name] = value
        object.__setattr__(self, name, value)
        if tracked:   # values a restore found missing, waiting for this attribute
            restore.restore_deferred(self)

    def __getattr__(self, name):
        children = object.__getattribute__(self, "_children")
        if name in children:
            return children[name]
        raise AttributeError(f"'Checkpoint' object has no attribute {name!r}")

    def _checkpoint_children(self):
        kids = []
        if self._root is not None:
            kids.extend(object_graph.trackable_children(self._root))
        kids.extend(self._children.items())
        if self._save_counter is not None:
            kids.append(("save_counter", self._save_counter))
        return kids

    # -- the save counter --------------------------------------------------------------------
    def _maybe_create_save_counter(self) -> None:
        if self._save_counter is None:
            with init_scope():
                counter = Variable(0, dtype=dtypes.int64, trainable=False, name="save_counter")
            object.__setattr__(self, "_save_counter", counter)

    def _graph_increment(self, session) -> int:
        """In a TF1 graph: initializes the counter the first time, then runs one cached
        assign_add op."""
        counter = self._save_counter
        if getattr(self, "_save_assign_op", None) is None:
            if not session.run(counter.is_initialized()):
                session.run(counter.initializer)
            with session.graph.as_default():
                object.__setattr__(self, "_save_assign_op", counter.assign_add(1))
        return int(session.run(self._save_assign_op))

    @property
    def save_counter(self) -> Variable:
        """How many times `save` ran (restored with the checkpoint)."""
        self._maybe_create_save_counter()
        return self._save_counter

    # -- saving ------------------------------------------------------------------------------
    def write(self, file_prefix, options=None, session=None) -> str:
        """Writes a checkpoint at exactly `file_prefix` (no counter, no state file). In a TF1
        graph the values are fetched with `session` (default: the default session)."""
        return write_object_graph(self, os.fspath(file_prefix), session, options)

    def save(self, file_prefix, options=None, session=None) -> str:
        """Increments `save_counter`, writes `<file_prefix>-<counter>` and records it as the
        latest checkpoint in the directory's `checkpoint` file. Returns the path."""
        file_prefix = os.fspath(file_prefix)
        self._maybe_create_save_counter()
        if context.executing_eagerly():
            number = int(self._save_counter.assign_add(1).numpy())
        else:
            number = self._graph_increment(restore._session(session))
        path = self.write(f"{file_prefix}-{number}", options, session)
        checkpoint_management.update_checkpoint_state(
            os.path.dirname(file_prefix) or ".", path, all_model_checkpoint_paths=[path])
        return path

    # -- restoring ---------------------------------------------------------------------------
    def read(self, save_path, options=None):
        """Restores the checkpoint at `save_path`; returns a load status."""
        save_path = os.fspath(save_path)
        reader = tensor_bundle.BundleReader(save_path)
        if not reader.has(object_graph.OBJECT_GRAPH_PROTO_KEY):  # a TF1 Saver's checkpoint
            return restore.restore_by_name(reader, self)
        proto = restore.read_object_graph(reader)
        if any(c.local_name == "save_counter" for c in proto.nodes[0].children):
            self._maybe_create_save_counter()
        restoration = restore.Restoration(reader, proto, self, save_path)
        restoration.match(0, self)
        return restore.CheckpointLoadStatus(restoration)

    def restore(self, save_path, options=None):
        """Restores from a checkpoint prefix (or a directory's latest checkpoint); `None`
        restores nothing. Variables created later (Keras layers built lazily) get their
        values when they are created."""
        if save_path is None:
            return restore.InitializationOnlyStatus(self)
        save_path = os.fspath(save_path)
        if os.path.isdir(save_path):
            save_path = checkpoint_management.latest_checkpoint(save_path) or save_path
        try:
            return self.read(save_path, options)
        except errors.NotFoundError as e:
            raise errors.NotFoundError(
                None, None, f"Error when restoring from checkpoint or SavedModel at "
                            f"{save_path}: {e.message}\nPlease double-check that the path is "
                            "correct. You may be missing the checkpoint suffix (e.g. the '-1' "
                            "in 'path/to/ckpt-1').") from None
