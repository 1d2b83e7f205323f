"""The `.meta` file a TF1 Saver writes beside a checkpoint: a `MetaGraphDef` holding the
graph's GraphDef and its variable collections (`VariableDef`s), so TensorFlow's
`tf.compat.v1.train.import_meta_graph` rebuilds the graph and its variables, and a Saver
over them restores the checkpoint. No `saver_def` is written: ndflow's Saver has no save
ops in the graph, and TensorFlow builds a fresh Saver for an imported graph without one."""

from __future__ import annotations

from google.protobuf import text_format
from tensorboard.compat.proto import meta_graph_pb2, variable_pb2

from ndflow.core.graph_def import graph_to_graph_def
from ndflow.core.graph_io import atomic_write
from ndflow.core.versions import GIT_VERSION, VERSION
from ndflow.ops.variables import GraphKeys, Variable

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
    return meta


def write_meta_graph(filename, graph, as_text: bool = False):
    """Builds the MetaGraphDef of `graph`; writes it (atomically) when `filename` is given."""
    meta = build_meta_graph(graph)
    if filename:
        data = text_format.MessageToString(meta).encode() if as_text else \
            meta.SerializeToString()
        atomic_write(str(filename), data)
    return meta
