"""TF1's graph freezing, `tf.compat.v1.graph_util`: `extract_sub_graph` (the nodes a set of
outputs needs, in the GraphDef's order) and `convert_variables_to_constants` (that subgraph
with every variable replaced by a Const of its value in the session, as TensorFlow's
convert_to_constants does for a Session: the VarHandleOp becomes the Const, each
ReadVariableOp of it an Identity and each ResourceGather a GatherV2 on axis 0). Both work on
`GraphDef` protos (TensorFlow's, from the tensorboard package), so frozen graphs load in
TensorFlow and in `tf.import_graph_def` alike.
"""

from __future__ import annotations

import numpy as np
from tensorboard.compat.proto import graph_pb2

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.graph_def import ndarray_to_tensor_proto

_VARIABLES = ("VarHandleOp",)


def _node_name(input_name: str) -> str:
    """'^x' / 'x:1' / 'x' -> 'x'."""
    return input_name.lstrip("^").split(":")[0]


@tf_export(v1=["graph_util.extract_sub_graph"])
def extract_sub_graph(graph_def, dest_nodes) -> graph_pb2.GraphDef:
    """The nodes `dest_nodes` need through data and control inputs, in `graph_def`'s order
    (with its versions and function library)."""
    if not isinstance(graph_def, graph_pb2.GraphDef):
        raise TypeError(f"graph_def must be a graph_pb2.GraphDef proto, but got "
                        f"{type(graph_def)}.")
    if isinstance(dest_nodes, str):
        raise TypeError(f"dest_nodes must be an iterable of strings, but got "
                        f"{type(dest_nodes)}.")
    by_name = {n.name: n for n in graph_def.node}
    for d in dest_nodes:
        if d not in by_name:
            raise AssertionError(f"{d} is not in graph")
    keep, stack = set(), list(dest_nodes)
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        stack.extend(_node_name(i) for i in by_name[name].input)
    out = graph_pb2.GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    out.node.extend(n for n in graph_def.node if n.name in keep)
    return out


def _variable_values(sess, nodes: list) -> list:
    """Each VarHandleOp node's value in `sess`: its variable's standard read
    (`<name>/Read/ReadVariableOp:0`, TensorFlow's way), else the variable's value."""
    graph = sess.graph
    variables = {v.handle.op.name: v for key in ("variables", "local_variables")
                 for v in graph.get_collection(key)}
    fetches = []
    for node in nodes:
        try:
            fetches.append(graph.get_tensor_by_name(f"{node.name}/Read/ReadVariableOp:0"))
        except (KeyError, ValueError):
            if node.name not in variables:
                raise ValueError(f"Cannot freeze variable {node.name}: it is not a variable "
                                 "of the session's graph") from None
            with graph.as_default():
                fetches.append(variables[node.name].value())
    return sess.run(fetches) if fetches else []


@tf_export(v1=["graph_util.convert_variables_to_constants"])
def convert_variables_to_constants(sess, input_graph_def, output_node_names,
                                   variable_names_whitelist=None,
                                   variable_names_blacklist=None) -> graph_pb2.GraphDef:
    """The subgraph of `output_node_names` with its variables (those allowed by the
    white/black lists of node names) as Consts of their values in `sess`."""
    graph_def = extract_sub_graph(input_graph_def, output_node_names)
    allow = None if variable_names_whitelist is None else set(variable_names_whitelist)
    deny = set(variable_names_blacklist or ())
    frozen = [n for n in graph_def.node if n.op in _VARIABLES
              and (allow is None or n.name in allow) and n.name not in deny]
    values = dict(zip((n.name for n in frozen), _variable_values(sess, frozen)))
    out = graph_pb2.GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    for node in graph_def.node:
        new = out.node.add()
        if node.name in values:
            dt = dtypes.as_dtype(node.attr["dtype"].type)
            value = np.asarray(values[node.name], dtype=dt.as_numpy_dtype)
            new.name, new.op = node.name, "Const"
            new.attr["dtype"].type = node.attr["dtype"].type
            new.attr["value"].tensor.CopyFrom(ndarray_to_tensor_proto(value, dt))
            continue
        new.CopyFrom(node)
        handles = [i for i in node.input if not i.startswith("^") and _node_name(i) in values]
        if not handles:
            continue
        if node.op == "ReadVariableOp":
            new.op = "Identity"
            new.attr["T"].type = node.attr["dtype"].type
            del new.attr["dtype"]
        elif node.op == "ResourceGather" and node.attr["batch_dims"].i == 0:
            axis = out.node.add()
            axis.name, axis.op = f"{node.name}/axis", "Const"
            axis.attr["dtype"].CopyFrom(node.attr["Tindices"])
            axis.attr["value"].tensor.CopyFrom(ndarray_to_tensor_proto(
                np.asarray(0, dtypes.as_dtype(node.attr["Tindices"].type).as_numpy_dtype),
                dtypes.as_dtype(node.attr["Tindices"].type)))
            new.op = "GatherV2"
            new.input.append(axis.name)
            new.attr["Tparams"].CopyFrom(node.attr["dtype"])
            new.attr["Taxis"].CopyFrom(node.attr["Tindices"])
            for key in ("dtype", "batch_dims", "validate_indices"):
                if key in new.attr:
                    del new.attr[key]
        else:
            raise ValueError(f"Cannot freeze the graph: node {node.name} ({node.op}) uses "
                             f"variable {_node_name(handles[0])}, and only ReadVariableOp "
                             "and ResourceGather (batch_dims 0) readers can be frozen")
    return out
