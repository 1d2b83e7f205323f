"""The `.meta` file a TF1 Saver writes beside a checkpoint: a `MetaGraphDef` holding the
graph's GraphDef and its variable collections (`VariableDef`s), so TensorFlow's
`tf.compat.v1.train.import_meta_graph` rebuilds the graph and its variables, and a Saver
over them restores the checkpoint. No `saver_def` is written: ndflow's Saver has no save
ops in the graph, and TensorFlow builds a fresh Saver for an imported graph without one.

`import_meta_graph` does the same here: imports the GraphDef, rebuilds the variables of the
variable collections around their imported ops, restores the other collections of node
names, and returns a Saver over the global variables (TF's own save ops are ignored)."""

from __future__ import annotations

import itertools
import os

from google.protobuf import text_format
from tensorboard.compat.proto import meta_graph_pb2, variable_pb2

from ndflow.core import errors
from ndflow.core.atomic_file import atomic_write
from ndflow.core.graph_def import graph_to_graph_def
from ndflow.core.protos.queue_runner_pb import QueueRunnerDef
from ndflow.core.versions import GIT_VERSION, VERSION
from ndflow.ops.importer import import_graph_def
from ndflow.ops.partitioned_variables import SaveSliceInfo
from ndflow.ops.variables import GraphKeys, Variable
from ndflow.train.queue_runner import QueueRunner

_VARIABLE_COLLECTIONS = (GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES,
                         GraphKeys.LOCAL_VARIABLES, GraphKeys.MODEL_VARIABLES)


def variable_def(var: Variable):
    """The VariableDef TensorFlow records for a resource variable of a graph."""
    proto = variable_pb2.VariableDef(variable_name=var.name, is_resource=True,
                                     trainable=var.trainable)
    if var.initializer is not None:
        proto.initializer_name = var.initializer.name
    if var._graph_element is not None:
        proto.snapshot_name = var._graph_element.name
    if var._initial_value is not None:
        proto.initial_value_name = var._initial_value.name
    info = var._get_save_slice_info()
    if info is not None:  # a partitioned variable's part: where it lies in the whole
        proto.save_slice_info_def.full_name = info.full_name
        proto.save_slice_info_def.full_shape.extend(info.full_shape)
        proto.save_slice_info_def.var_offset.extend(info.var_offset)
        proto.save_slice_info_def.var_shape.extend(info.var_shape)
    return proto


def build_meta_graph(graph):
    meta = meta_graph_pb2.MetaGraphDef()
    meta.meta_info_def.tensorflow_version = VERSION
    meta.meta_info_def.tensorflow_git_version = GIT_VERSION
    meta.graph_def.CopyFrom(graph_to_graph_def(graph))
    for key in _VARIABLE_COLLECTIONS:
        variables = [v for v in graph.get_collection(key) if isinstance(v, Variable)]
        if variables:
            values = meta.collection_def[key].bytes_list.value
            values.extend(variable_def(v).SerializeToString() for v in variables)
    runners = [r.to_proto() for r in graph.get_collection(GraphKeys.QUEUE_RUNNERS)
               if isinstance(r, QueueRunner)]  # TF1 input pipelines' queue runners
    if any(r is not None for r in runners):
        meta.collection_def[GraphKeys.QUEUE_RUNNERS].bytes_list.value.extend(
            r.SerializeToString() for r in runners if r is not None)
    # TF1 summary tensors, by name (node_list): merge_all works on the imported graph
    summaries = [t.name for t in graph.get_collection(GraphKeys.SUMMARIES)
                 if hasattr(t, "name")]
    if summaries:
        meta.collection_def[GraphKeys.SUMMARIES].node_list.value.extend(summaries)
    return meta


def write_meta_graph(filename, graph, as_text: bool = False):
    """Builds the MetaGraphDef of `graph`; writes it (atomically) when `filename` is given."""
    meta = build_meta_graph(graph)
    if filename:
        data = text_format.MessageToString(meta).encode() if as_text else \
            meta.SerializeToString()
        atomic_write(str(filename), data)
    return meta


def read_meta_graph(filename):
    """A MetaGraphDef from a binary or text `.meta` file."""
    filename = os.fspath(filename)
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise OSError(f"File {filename} does not exist.") from None
    meta = meta_graph_pb2.MetaGraphDef()
    try:
        meta.ParseFromString(data)
    except Exception:  # noqa: BLE001 - not binary: try the text format
        try:
            text_format.Parse(data.decode("utf-8"), meta)
        except Exception:  # noqa: BLE001
            raise errors.DataLossError(None, None, f"Cannot parse file {filename} as a "
                                                   "MetaGraphDef") from None
    return meta


_imported_ids = itertools.count(1 << 40)


def _scoped(name: str, scope: str) -> str:
    return f"{scope}/{name}" if scope else name


def variable_from_def(graph, proto, scope: str = "") -> Variable:
    """A graph Variable around the imported ops a VariableDef names (TF's
    `Variable(variable_def=...)`)."""
    var = Variable.__new__(Variable)
    handle = graph.get_tensor_by_name(_scoped(proto.variable_name, scope))
    var._handle = handle
    var._name = handle.name
    var._shared_name = handle.op.name
    var._dtype = handle.op.get_attr("dtype")
    var._shape = handle.op.get_attr("shape")
    var._trainable = proto.trainable
    var._constraint = var._synchronization = var._aggregation = None
    var._unique_id = next(_imported_ids)
    var._initializer_op = graph.get_operation_by_name(_scoped(proto.initializer_name, scope)) \
        if proto.initializer_name else None
    var._graph_element = graph.get_tensor_by_name(_scoped(proto.snapshot_name, scope)) \
        if proto.snapshot_name else None
    var._initial_value = graph.get_tensor_by_name(_scoped(proto.initial_value_name, scope)) \
        if proto.initial_value_name else None
    if proto.HasField("save_slice_info_def"):
        info = SaveSliceInfo(save_slice_info_def=proto.save_slice_info_def)
        info.full_name = _scoped(info.full_name, scope)
        var._set_save_slice_info(info)
    is_initialized = _scoped(f"{handle.op.name}/IsInitialized/VarIsInitializedOp", "")
    try:
        var._is_initialized_op = graph.get_operation_by_name(is_initialized).outputs[0]
    except (KeyError, ValueError):
        var._is_initialized_op = None
    return var


def import_into_graph(meta, graph, scope: str = "", clear_devices: bool = False) -> list:
    """Imports the MetaGraphDef's graph and collections into `graph`; returns the rebuilt
    variables."""
    if clear_devices:
        for node in meta.graph_def.node:
            node.device = ""
    with graph.as_default():
        import_graph_def(meta.graph_def, name=scope)
    by_handle = {}
    for key, collection in meta.collection_def.items():
        if key in _VARIABLE_COLLECTIONS:
            for raw in collection.bytes_list.value:
                proto = variable_pb2.VariableDef.FromString(raw)
                var = by_handle.get(proto.variable_name)
                if var is None:
                    var = by_handle[proto.variable_name] = variable_from_def(graph, proto,
                                                                             scope)
                graph.add_to_collection(key, var)
        elif key == GraphKeys.QUEUE_RUNNERS and collection.HasField("bytes_list"):
            with graph.as_default():
                for raw in collection.bytes_list.value:
                    graph.add_to_collection(key, QueueRunner.from_proto(
                        QueueRunnerDef.FromString(raw), import_scope=scope or None))
        elif collection.HasField("node_list"):
            for name in collection.node_list.value:
                try:
                    graph.add_to_collection(key, graph.as_graph_element(_scoped(name, scope)))
                except (KeyError, ValueError):
                    pass
    return list(by_handle.values())
