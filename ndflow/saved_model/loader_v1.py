"""`tf.compat.v1.saved_model.load(sess, tags, export_dir)`: a SavedModel's graph imported
into a Session's graph, its variables restored, its MetaGraphDef returned (for the
signature defs' tensor names).

The saver's own nodes (SaveV2/RestoreV2 and what depends on them, or calls of functions
that save or restore) are not imported: the variables are restored by assigning the
checkpoint's values directly. Which checkpoint key goes to which variable is read from the
graph's restore wiring (RestoreV2 output i -> AssignVariableOp, TF1's Saver), or for TF2
SavedModels from the signature calls' captured variables and the object graph.
Function-call nodes (StatefulPartitionedCall) are rebuilt by inlining their functions
and an IdentityN named like the call, so "StatefulPartitionedCall:0" names its output.
"""

from __future__ import annotations

import os

from tensorboard.compat.proto import graph_pb2

from ndflow.core import errors
from ndflow.core.api_export import tf_export
from ndflow.core.graph_def import tensor_proto_to_ndarray
from ndflow.ops.apply import apply_op
from ndflow.ops.array_core import IdentityN, NoOp, constant
from ndflow.ops.importer import import_graph_def
from ndflow.ops.lookup_ops import LookupTableImportV2
from ndflow.ops.state import assign_variable_op
from ndflow.runtime.func_graph import inline_graph
from ndflow.saved_model import constants
from ndflow.saved_model.call_inlining import CALL_OPS
from ndflow.saved_model.loading import _Loader, _meta_graph, read_saved_model
from ndflow.saved_model.v1_deprecation import warn_deprecated
from ndflow.saved_model.variables_io import VariablesReader

_SAVER_OPS = frozenset({"SaveV2", "RestoreV2", "MergeV2Checkpoints", "ShardedFilename",
                        "SaveSlices", "Save"})
# string ops a saver builds its paths with: the saver's only inside its own name scope (a
# model's own StringJoin, e.g. a classifier's class names, stays)
_SAVER_PATH_OPS = frozenset({"StringJoin", "StaticRegexFullMatch"})


def _source(ref: str) -> str:
    return ref.lstrip("^").split(":")[0]


def _saver_nodes(gd, library: dict) -> set:
    """Nodes of the saver: saver ops, calls of saving/restoring functions, and every node
    depending on them."""
    def saves(fname, seen=()):
        fd = library.get(fname)
        if fd is None or fname in seen:
            return False
        return any(n.op in _SAVER_OPS or (n.op in CALL_OPS and
                                          saves(n.attr["f"].func.name, seen + (fname,)))
                   for n in fd.node_def)

    dropped = {n.name for n in gd.node if n.op in _SAVER_OPS or
               (n.op in CALL_OPS and saves(n.attr["f"].func.name))}
    scopes = {n.name.rpartition("/")[0] for n in gd.node if n.op in _SAVER_OPS}
    dropped |= {n.name for n in gd.node
                if n.op in _SAVER_PATH_OPS and n.name.rpartition("/")[0] in scopes}
    changed = True
    while changed:
        changed = False
        for n in gd.node:
            if n.name not in dropped and any(_source(i) in dropped for i in n.input):
                dropped.add(n.name)
                changed = True
    return dropped


def _graph_restore_map(gd) -> dict:
    """{variable node name: checkpoint key} from RestoreV2 -> AssignVariableOp wiring."""
    nodes = {n.name: n for n in gd.node}
    out = {}
    for n in gd.node:
        if n.op not in ("AssignVariableOp", "Assign") or len(n.input) < 2:
            continue
        src = n.input[1]
        while _source(src) in nodes and nodes[_source(src)].op == "Identity":
            src = nodes[_source(src)].input[0]
        restore = nodes.get(_source(src))
        if restore is None or restore.op != "RestoreV2":
            continue
        index = int(src.split(":")[1]) if ":" in src else 0
        names = nodes.get(_source(restore.input[1]))
        if names is None or names.op != "Const":
            continue
        keys = tensor_proto_to_ndarray(names.attr["value"].tensor)[0].reshape(-1)
        key = keys[index]
        out[_source(n.input[0])] = key.decode() if isinstance(key, bytes) else str(key)
    return out


def _object_graph_restore_map(mg, gd, reader, attribute: str = "VARIABLE_VALUE") -> dict:
    """{variable node name: checkpoint key} for a TF2 SavedModel: a signature call's
    captured inputs are its function's bound inputs (object-graph variables); with
    `attribute="table"`, {table node name: its checkpoint key prefix} (mutable tables)."""
    proto = mg.object_graph_def
    keys = {i: attrs[attribute] for i, attrs in reader.attribute_keys(proto.nodes).items()
            if attribute in attrs}
    library = {f.signature.name: f for f in gd.library.function}
    out = {}
    for n in gd.node:
        if n.op not in CALL_OPS:
            continue
        fname = n.attr["f"].func.name
        if fname not in proto.concrete_functions or fname not in library:
            continue
        bound = list(proto.concrete_functions[fname].bound_inputs)
        data = [i for i in n.input if not i.startswith("^")]
        for ref, node_id in zip(data[len(data) - len(bound):], bound):
            if node_id in keys:
                out[_source(ref)] = keys[node_id]
    return out


@tf_export(v1=["saved_model.load", "saved_model.loader.load"])
def load_v1(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Loads the MetaGraph tagged `tags` into `sess.graph` and restores its variables;
    returns the MetaGraphDef."""
    warn_deprecated("load", "tensorflow.python.saved_model.loader_impl",
                    "Use `tf.saved_model.load` instead.")
    return load_into_session(sess, tags, export_dir, import_scope, **saver_kwargs)


def load_into_session(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """`load_v1` without TF's deprecation warning (for tf.saved_model.load of TF1 models)."""
    export_dir = os.fspath(export_dir)
    if not (hasattr(sess, "graph") and hasattr(sess, "run")):
        raise RuntimeError(f"tf.compat.v1.saved_model.load needs a Session, got {sess!r}")
    if import_scope:
        raise errors.UnimplementedError(None, None, "import_scope is not supported by ndflow's "
                                        "SavedModel loader")
    sm = read_saved_model(export_dir)
    mg = _meta_graph(sm, tags if tags is not None else [constants.SERVING], export_dir)
    gd = mg.graph_def
    library = {f.signature.name: f for f in gd.library.function}
    dropped = _saver_nodes(gd, library)
    calls = [n for n in gd.node if n.op in CALL_OPS and n.name not in dropped]
    call_names = {n.name for n in calls}
    keep = graph_pb2.GraphDef()
    keep.versions.CopyFrom(gd.versions)
    keep.library.CopyFrom(gd.library)
    # NoOps waiting on calls (the init op runs the table initializers' calls): made after
    # the calls are rebuilt
    after_calls = [n for n in gd.node if n.op == "NoOp" and n.name not in dropped
                   and any(_source(i) in call_names for i in n.input)]
    later = {n.name for n in after_calls}
    for n in gd.node:
        if n.name in dropped or n.name in call_names or n.name in later:
            continue
        if any(_source(i) in call_names | later for i in n.input):
            raise errors.UnimplementedError(None, None, f"Node '{n.name}' consumes the output "
                                            "of a function call; ndflow's TF1 SavedModel "
                                            "loader supports calls only as graph outputs")
        keep.node.add().CopyFrom(n)
    prefix = os.path.join(export_dir, constants.VARIABLES_DIRECTORY,
                          constants.VARIABLES_FILENAME)
    has_variables = any(n.op in ("VarHandleOp", "VariableV2", "MutableHashTableV2",
                                 "MutableDenseHashTableV2") for n in keep.node)
    reader = VariablesReader(prefix) if has_variables else None
    restore = _graph_restore_map(gd) if reader else {}
    tables = {}
    if reader and len(mg.object_graph_def.nodes):
        restore.update(_object_graph_restore_map(mg, gd, reader))
        tables = _object_graph_restore_map(mg, gd, reader, "table")
    graph = sess.graph
    with graph.as_default():
        # asset paths: the files in this SavedModel's assets/ (TF feeds them at load)
        # (named apart from the imported nodes: a plain "Const" would take the name of the
        # graph's own first constant)
        assets = {_tensor_name(a.tensor_info.name): constant(
            os.path.join(export_dir, constants.ASSETS_DIRECTORY, a.filename),
            name=f"{_source(a.tensor_info.name)}/saved_model_asset_path")
            for a in mg.asset_file_def}
        present = {n.name for n in keep.node}
        import_graph_def(keep, name="", input_map={k: v for k, v in assets.items()
                                                    if _source(k) in present})
        loader = _Loader(mg, export_dir, None)
        for n in calls:
            fgraph = loader._function_graph(n.attr["f"].func.name)
            fgraph.name = n.attr["f"].func.name.lstrip("_") or "function"
            inputs = [assets[_tensor_name(i)] if _tensor_name(i) in assets
                      else graph.get_tensor_by_name(_tensor_name(i))
                      for i in n.input if not i.startswith("^")]
            first = len(graph.get_operations())
            outs = inline_graph(fgraph, inputs, fgraph.outputs)
            # a call runs its stateful ops (a table's import) even when no output needs them
            stateful = [op for op in graph.get_operations()[first:] if op.is_stateful]
            with graph.control_dependencies(stateful):
                if outs:
                    apply_op(IdentityN, [list(outs)], name=n.name)
                else:
                    apply_op(NoOp, [], name=n.name)
        for n in after_calls:
            with graph.control_dependencies([graph.get_operation_by_name(_source(i))
                                             for i in n.input]):
                apply_op(NoOp, [], name=n.name)
        assigns = []
        for var_name, key in restore.items():
            handle = graph.get_tensor_by_name(f"{var_name}:0")
            assigns.append(assign_variable_op(handle, constant(reader.read(key))))
        for table_name, prefix in tables.items():  # a mutable table's keys and values
            saved = reader.saveable_keys(prefix)
            if len(saved) == 2:
                handle = graph.get_tensor_by_name(f"{table_name}:0")
                assigns.append(apply_op(LookupTableImportV2, [handle] + [
                    constant(reader.read(k)) for k in saved]))
    if assigns:
        sess.run(assigns)
    init = mg.signature_def[constants.INIT_OP_SIGNATURE_KEY].outputs \
        if constants.INIT_OP_SIGNATURE_KEY in mg.signature_def else {}
    for info in init.values():  # the init op (asset paths, tables), as TF's loader runs it
        name = _source(info.name)
        if name in {n.name for n in keep.node} | later:
            sess.run(graph.get_operation_by_name(name))
    return mg


def _tensor_name(ref: str) -> str:
    return ref if ":" in ref else f"{ref}:0"

