"""TF1's module-level `tf.compat.v1.train.export_meta_graph` (a graph's MetaGraphDef, optionally
written to a file) and `update_checkpoint_state` (the public writer of the `checkpoint`
state file: paths written as given, relative ones made relative to a relative save_dir)."""

from __future__ import annotations

import os

from google.protobuf import text_format

from ndflow.checkpoint.checkpoint_management import (
    STATE_FILENAME,
    atomic_write_text,
    generate_checkpoint_state_proto,
)
from ndflow.checkpoint.meta_graph import build_meta_graph
from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.atomic_file import atomic_write


def _strip_scope(name: str, scope: str) -> str:
    """A node/tensor reference without the `scope/` prefix ('^' and 'loc:@' kept)."""
    for marker in ("^", "loc:@", ""):
        if name.startswith(marker + scope + "/"):
            return marker + name[len(marker) + len(scope) + 1:]
    return name


def _in_scope(name: str, scope: str) -> bool:
    return name.startswith(scope + "/")


def _scope_meta_graph(meta, scope: str) -> None:
    """Keeps the nodes under `scope` with the prefix stripped (TF's export_scope)."""
    nodes = [n for n in meta.graph_def.node if _in_scope(n.name, scope)]
    for node in nodes:
        node.name = _strip_scope(node.name, scope)
        inputs = [_strip_scope(i, scope) for i in node.input]
        del node.input[:]
        node.input.extend(inputs)
        if "_class" in node.attr:
            refs = [_strip_scope(c.decode(), scope).encode() for c in node.attr["_class"].list.s]
            del node.attr["_class"].list.s[:]
            node.attr["_class"].list.s.extend(refs)
    kept = list(nodes)
    del meta.graph_def.node[:]
    meta.graph_def.node.extend(kept)
    for key in list(meta.collection_def):
        del meta.collection_def[key]  # variable defs outside the scope cannot be rebuilt


@tf_export(v1=["train.export_meta_graph"])
def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None,
                      collection_list=None, as_text=False, graph=None, export_scope=None,
                      clear_devices=False, clear_extraneous_savers=False,  # noqa: ARG001
                      strip_default_attrs=False, save_debug_info=False,  # noqa: ARG001
                      **kwargs):
    """The MetaGraphDef of `graph` (default graph): its GraphDef (or `graph_def`), variable
    collections (those in `collection_list` when given), `saver_def` and `meta_info_def`;
    written to `filename` (text with `as_text`) when given."""
    if context.executing_eagerly() and graph is None:
        raise RuntimeError("Exporting/importing meta graphs is not supported when eager "
                           "execution is enabled. No graph exists when eager execution is "
                           "enabled.")
    meta = build_meta_graph(graph or context.get_default_graph())
    if graph_def is not None:
        meta.graph_def.CopyFrom(graph_def)
    if meta_info_def is not None:
        meta.meta_info_def.MergeFrom(meta_info_def)
    if saver_def is not None:
        meta.saver_def.CopyFrom(saver_def)
    if collection_list is not None:
        for key in list(meta.collection_def):
            if key not in collection_list:
                del meta.collection_def[key]
    if clear_devices:
        for node in meta.graph_def.node:
            node.device = ""
    if export_scope:
        _scope_meta_graph(meta, export_scope)
    if filename:
        data = text_format.MessageToString(meta).encode() if as_text else \
            meta.SerializeToString()
        atomic_write(os.fspath(filename), data)
    return meta


@tf_export(v1=["train.update_checkpoint_state"])
def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None):
    """Writes `save_dir/checkpoint` (or `latest_filename`): the latest path last in the list;
    with a relative `save_dir`, relative paths are rewritten relative to it, as TF."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    if all_model_checkpoint_timestamps and \
            len(all_model_checkpoint_timestamps) != len(paths):
        raise ValueError(f"Checkpoint timestamps, if provided, must match checkpoint paths "
                         f"(got paths {paths} and timestamps "
                         f"{all_model_checkpoint_timestamps})")
    if not os.path.isabs(save_dir):
        if not os.path.isabs(model_checkpoint_path):
            model_checkpoint_path = os.path.relpath(model_checkpoint_path, save_dir)
        paths = [p if os.path.isabs(p) else os.path.relpath(p, save_dir) for p in paths]
    state = generate_checkpoint_state_proto(save_dir, model_checkpoint_path, paths,
                                            all_model_checkpoint_timestamps,
                                            last_preserved_timestamp)
    state_file = os.path.join(save_dir, latest_filename or STATE_FILENAME)
    if state_file == state.model_checkpoint_path:
        raise RuntimeError(f"Save path '{model_checkpoint_path}' conflicts with path used for "
                           "checkpoint state.  Please use a different save path.")
    atomic_write_text(state_file, text_format.MessageToString(state))
