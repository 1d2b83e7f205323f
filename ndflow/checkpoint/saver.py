"""`tf.compat.v1.train.Saver`: TF1 name-based checkpoints in TensorFlow's V2 format.

Each variable is saved under its name ("dense/kernel", as TF's SaveV2 keys them) in a
TensorBundle, the directory's `checkpoint` file lists the kept checkpoints (at most
`max_to_keep`, plus one every `keep_checkpoint_every_n_hours`), and `prefix.meta` holds the
MetaGraphDef (meta_graph.py). In a graph, saving fetches the variables' values with the
session and writes the files from the host; restoring feeds the saved values to assign ops
that the Saver adds to the graph when it is built (under the "save" name scope).
"""

from __future__ import annotations

import os
import time

from ndflow.checkpoint import checkpoint_management, meta_graph, saveables, tensor_bundle
from ndflow.checkpoint.object_graph import is_saveable
from ndflow.core import context, errors, tf_logging
from ndflow.core.api_export import tf_export
from ndflow.ops import array_core, state
from ndflow.ops.variables import GraphKeys, Variable


def _variable_name(var) -> str:
    return var.name.split(":")[0] if var.name.endswith(":0") else var.name


def _saveable_name(obj) -> str:
    """A table's Saver name: the `name` it was made with, as TF's table saveables."""
    return str(obj._name)


def _names_to_variables(var_list) -> dict:
    """{checkpoint name: variable, saveable or list of parts} from a list or dict, as TF's
    op_list_to_dict: a mutable table saves "<name>-keys" and "<name>-values"; the parts of
    a partitioned variable (a PartitionedVariable, or variables with a SaveSliceInfo)
    share their full variable's name, each saved as a slice of it."""
    items = var_list.items() if isinstance(var_list, dict) else \
        [(None, v) for v in var_list]
    out = {}
    for name, var in items:
        if callable(getattr(var, "_get_variable_list", None)):  # a PartitionedVariable
            name, var = (var.name if name is None else name), list(var)
        elif isinstance(var, Variable) and var._get_save_slice_info() is not None:
            name = var._get_save_slice_info().full_name if name is None else name
            if isinstance(out.get(name), list):
                out[name].append(var)
                continue
            var = [var]
        elif isinstance(var, Variable):
            name = _variable_name(var) if name is None else name
        elif is_saveable(var):
            name = _saveable_name(var) if name is None else name
        else:
            raise TypeError(f"Variable to save is not a Variable: {var!r}")
        if name in out:
            raise ValueError(f"At least two variables have the same name: {name}")
        out[name] = var
    return out


def _check_part(part, name: str, reader, save_path: str) -> None:
    """InvalidArgumentError if the checkpoint's tensor `name` cannot hold `part`."""
    info = part._get_save_slice_info()
    dtype, shape = reader.dtype_and_shape(name)
    if list(shape) != list(info.full_shape):
        raise errors.InvalidArgumentError(
            None, None, "Restoring from checkpoint failed. This is most likely due to a "
                        "mismatch between the current graph and the graph from the checkpoint. "
                        "Original error:\n\nShape of partitioned variable "
                        f"{name} ({info.full_shape}) doesn't match the shape {list(shape)} "
                        f"saved in {save_path}")
    _check_saved_dtype(reader, name, part.dtype, save_path)


def _missing_key(key: str) -> errors.NotFoundError:
    """TF's Saver error for a key the checkpoint lacks."""
    return errors.NotFoundError(
        None, None, "Restoring from checkpoint failed. This is most likely due to a Variable "
                    "name or other graph key that is missing from the checkpoint. Please ensure "
                    "that you have not altered the graph expected based on the checkpoint. "
                    f"Original error:\n\nKey {key} not found in checkpoint")


def _check_saved_dtype(reader, name: str, dtype, save_path: str) -> None:
    """InvalidArgumentError if the checkpoint holds `name` in another dtype than `dtype`."""
    saved = tensor_bundle.dtype_name(reader.dtype_enum(name))
    if saved != dtype.name:
        raise errors.InvalidArgumentError(
            None, None, f"Restoring from checkpoint failed: variable {name} is "
                        f"{dtype.name}, the checkpoint {save_path} holds {saved}")


def _part_key(part) -> str:
    return "\0part:" + part.name  # a restore feed's key, apart from checkpoint names


@tf_export(v1=["train.Saver"])
class Saver:
    """Saves and restores variables by name (TF1)."""

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                 saver_def=None, builder=None, defer_build=False, allow_empty=False,
                 write_version=2, pad_step_number=False, save_relative_paths=False,
                 filename=None):
        self._eager = context.executing_eagerly()
        if self._eager:
            tf_logging.warning(
                "Saver is deprecated, please switch to tf.train.Checkpoint or "
                "tf.keras.Model.save_weights for training checkpoints. When executing eagerly "
                "variables do not necessarily have unique names, and so the variable.name-based "
                "lookups Saver performs are error-prone.")
        if var_list is None:
            if self._eager:
                raise RuntimeError("When eager execution is enabled, `var_list` must specify "
                                   "a list or dict of variables to save")
            graph = context.get_default_graph()
            var_list = graph.get_collection(GraphKeys.GLOBAL_VARIABLES) + \
                graph.get_collection(GraphKeys.SAVEABLE_OBJECTS)
        named = _names_to_variables(var_list)
        self._variables = {n: v for n, v in named.items() if isinstance(v, Variable)}
        self._parts = [(n, part) for n, v in named.items() if isinstance(v, list)
                       for part in v]  # (full name, part) of partitioned variables
        self._saveables = {n: v for n, v in named.items()
                           if not isinstance(v, (Variable, list))}
        if not named and not allow_empty:
            raise ValueError("No variables to save")
        self._max_to_keep = max_to_keep
        self._keep_every_seconds = keep_checkpoint_every_n_hours * 3600.0
        self._next_keep_time = time.time() + self._keep_every_seconds
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._filename = filename
        self._last_checkpoints: list[tuple[str, float]] = []
        self._restore_feeds = None
        self._saveable_tensors = {}
        if not self._eager:
            self._build_restore_ops(name or "save")

    def _build_restore_ops(self, scope: str) -> None:
        """One placeholder and assign op per variable, and per table a restore op on one
        placeholder per saved tensor, grouped as `<scope>/restore_all`; the tables' tensors
        that saving fetches."""
        graph = context.get_default_graph()
        feeds, assigns = {}, []
        with graph.as_default(), graph.control_dependencies(None), graph.name_scope(scope):
            self._saveable_tensors = {n: obj._serialize_to_tensors()
                                      for n, obj in self._saveables.items()}
            for i, (name, var) in enumerate(self._variables.items()):
                value = array_core.placeholder(var.dtype, var.shape,
                                               name=f"restore_value_{i}")
                assigns.append(state.assign_variable_op(var.handle, value,
                                                        name=f"Assign_{i}"))
                feeds[name] = value
            for _, part in self._parts:
                value = array_core.placeholder(part.dtype, part.shape)
                assigns.append(state.assign_variable_op(part.handle, value))
                feeds[_part_key(part)] = value
            for name, obj in self._saveables.items():
                holders = {suffix: array_core.placeholder(t.dtype, None)
                           for suffix, t in self._saveable_tensors[name].items()}
                assigns.append(obj._restore_from_tensors(holders))
                feeds.update({name + suffix: h for suffix, h in holders.items()})
            self._restore_op = array_core.group(*assigns, name="restore_all")
        self._restore_feeds = feeds

    # -- bookkeeping of kept checkpoints -----------------------------------------------------
    @property
    def last_checkpoints(self) -> list[str]:
        """The checkpoints not yet deleted, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time) -> None:
        self._last_checkpoints = [(p, t) for p, t in last_checkpoints_with_time]

    def recover_last_checkpoints(self, checkpoint_paths) -> None:
        stamps = checkpoint_management.get_checkpoint_mtimes(checkpoint_paths)
        self.set_last_checkpoints_with_time(list(zip(checkpoint_paths, stamps)))

    def _record(self, path: str, meta_graph_suffix: str) -> list[str]:
        """Adds `path` as the newest checkpoint; returns those to delete."""
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != path]
        self._last_checkpoints.append((path, time.time()))
        doomed = []
        if self._max_to_keep is None or self._max_to_keep <= 0:
            return doomed
        while len(self._last_checkpoints) > self._max_to_keep:
            old, stamp = self._last_checkpoints.pop(0)
            if stamp > self._next_keep_time:  # one kept every n hours
                self._next_keep_time += self._keep_every_seconds
                continue
            doomed.append(old)
        return doomed

    # -- saving ------------------------------------------------------------------------------
    def _values(self, sess) -> tuple[dict, list]:
        """({bundle key: value} of the variables and the saveables' tensors, [value] of
        the partitioned variables' parts)."""
        if self._eager or sess is None:
            if not self._eager:
                raise errors.InvalidArgumentError(None, None, "Saver.save needs a session "
                                                              "in graph mode")
            out = {n: v.numpy() for n, v in self._variables.items()}
            parts = [part.numpy() for _, part in self._parts]
            tensors = saveables.serialize(list(self._saveables.values()))
        else:
            names = list(self._variables)
            specs = [self._saveable_tensors[n] for n in self._saveables]
            flat = [t for spec in specs for t in spec.values()]
            fetched = iter(sess.run([self._variables[n] for n in names] +
                                    [part for _, part in self._parts] + flat))
            out = {n: next(fetched) for n in names}
            parts = [next(fetched) for _ in self._parts]
            tensors = [{s: next(fetched) for s in spec} for spec in specs]
        for name, spec in zip(self._saveables, tensors):
            for suffix, value in spec.items():
                out[name + suffix] = value
        return out, parts

    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False):
        """Writes `save_path[-step]` (.index, .data, .meta) and updates the state file;
        returns the checkpoint's path."""
        save_path = os.fspath(save_path)
        directory = os.path.dirname(save_path)
        if directory and not os.path.isdir(directory):
            # TF's SaveV2 kernel makes the checkpoint's directory when its parent exists (one
            # level, as its BundleWriter does); Saver.save fails for anything deeper
            try:
                os.mkdir(directory)
            except OSError:
                pass
            if not os.path.isdir(directory):
                raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
        if global_step is not None:
            if not isinstance(global_step, int):
                global_step = int(sess.run(global_step) if sess is not None and
                                  not self._eager else global_step.numpy())
            path = f"{save_path}-{global_step:08d}" if self._pad_step_number else \
                f"{save_path}-{global_step}"
        else:
            path = save_path
        writer = tensor_bundle.BundleWriter(path)
        whole, parts = self._values(sess)
        for name, value in whole.items():
            writer.add(name, value)
        for (name, part), value in zip(self._parts, parts):
            info = part._get_save_slice_info()
            writer.add_slice(name, info.full_shape, info.extents, value)
        writer.finish()
        if write_meta_graph and not self._eager:
            meta_graph.write_meta_graph(f"{path}.{meta_graph_suffix}",
                                        context.get_default_graph()
                                        if sess is None else sess.graph)
        if write_state:
            doomed = self._record(path, meta_graph_suffix)
            checkpoint_management.update_checkpoint_state(
                directory or ".", path, all_model_checkpoint_paths=self.last_checkpoints,
                latest_filename=latest_filename,
                save_relative_paths=self._save_relative_paths)  # no timestamps, as TF's
            for old in doomed:
                checkpoint_management.remove_checkpoint(old, meta_graph_suffix=meta_graph_suffix)
        return path

    # -- restoring ---------------------------------------------------------------------------
    def restore(self, sess, save_path) -> None:
        """Assigns every variable its value saved under its name."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if not checkpoint_management.checkpoint_prefix_exists(save_path):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {save_path}")
        reader = tensor_bundle.BundleReader(save_path)
        values = {}
        for name, var in self._variables.items():
            if not reader.has(name):
                raise _missing_key(name)
            value = reader.read(name)
            want = var.shape
            if want.rank is not None and (len(want) != value.ndim or any(
                    d is not None and d != s for d, s in zip(want.as_list(), value.shape))):
                raise errors.InvalidArgumentError(
                    None, None, "Restoring from checkpoint failed. This is most likely due to "
                                "a mismatch between the current graph and the graph from the "
                                "checkpoint. Please ensure that you have not altered the graph "
                                "expected based on the checkpoint. Original error:\n\n"
                                f"Shape of variable {name} ({want}) doesn't match the shape "
                                f"{list(value.shape)} saved in {save_path}")
            _check_saved_dtype(reader, name, var.dtype, save_path)
            values[name] = value
        for name in self._saveables:
            tables = saveables.saved_tensors(reader, name, self._saveables[name])
            expected = set(self._saveable_tensors.get(name, {"-keys": None}))
            if not tables or not expected <= set(tables):
                raise _missing_key(name + (sorted(expected - set(tables)) or ["-keys"])[0])
            if self._eager:
                saveables.restore(self._saveables[name], tables)
            else:
                values.update({name + suffix: v for suffix, v in tables.items()})
        for name, part in self._parts:  # read from any partitioning, or a whole tensor
            if not reader.has(name):
                raise _missing_key(name)
            _check_part(part, name, reader, save_path)
            values[_part_key(part)] = reader.read_slice(
                name, part._get_save_slice_info().extents)
        if self._eager:
            for name, var in self._variables.items():
                var.assign(values[name])
            for _, part in self._parts:
                part.assign(values[_part_key(part)])
            return
        sess.run(self._restore_op,
                 feed_dict={self._restore_feeds[n]: v for n, v in values.items()
                            if n in self._restore_feeds})

    def export_meta_graph(self, filename=None, collection_list=None, as_text=False,
                          export_scope=None, clear_devices=False, clear_extraneous_savers=False,
                          strip_default_attrs=False, save_debug_info=False):
        """Writes the default graph's MetaGraphDef; returns it."""
        return meta_graph.write_meta_graph(filename, context.get_default_graph(),
                                           as_text=as_text)


@tf_export(v1=["train.import_meta_graph"])
def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """Imports a MetaGraphDef (or a `.meta` file) into the default graph; returns a Saver
    over its variables (None when it has none)."""
    if context.executing_eagerly():
        raise RuntimeError("Exporting/importing meta graphs is not supported when eager "
                           "execution is enabled. No graph exists when eager execution is "
                           "enabled.")
    meta = meta_graph_or_file if hasattr(meta_graph_or_file, "graph_def") else \
        meta_graph.read_meta_graph(meta_graph_or_file)
    graph = context.get_default_graph()
    variables = meta_graph.import_into_graph(meta, graph, import_scope or "", clear_devices)
    # As TF: a Saver only when there is something to save (a TF1 input pipeline's meta graph
    # holds just local variables such as limit_epochs' counter).
    saved = {id(x) for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.SAVEABLE_OBJECTS)
             for x in graph.get_collection(key)}
    return Saver() if any(id(v) in saved for v in variables) else None
