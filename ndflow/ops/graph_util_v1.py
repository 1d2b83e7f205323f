"""The rest of TF1's `tf.compat.v1.graph_util`: `must_run_on_cpu` (TF's placement rule for
nodes GPUs cannot run), `tensor_shape_from_node_def_name`, `remove_training_nodes` (drop
CheckNumerics, splice out Identity/StopGradient nodes) and the `import_graph_def` alias. They
work on TensorFlow's NodeDef/GraphDef protos (the tensorboard package's)."""

from __future__ import annotations

from tensorboard.compat.proto import graph_pb2, node_def_pb2

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.graph import Operation
from ndflow.ops.importer import import_graph_def

tf_export(v1=["graph_util.import_graph_def"])(import_graph_def)

# TF1's ref-variable ops that a device function may pin to the CPU (TF's list).
_VARIABLE_OPS = frozenset({"Assign", "AssignAdd", "AssignSub", "Queue", "ScatterAdd",
                           "ScatterSub", "ScatterUpdate", "TruncatedNormal", "Variable",
                           "VariableV2"})


@tf_export(v1=["graph_util.must_run_on_cpu"])
def must_run_on_cpu(node, pin_variables_on_cpu=False) -> bool:
    """Whether `node` (an Operation or NodeDef) must run on the CPU: int32/string Consts,
    int32 DynamicStitch and int32 Casts (and TF1 variable ops when pinning them)."""
    if isinstance(node, Operation):
        node_def = node.node_def
    elif isinstance(node, node_def_pb2.NodeDef):
        node_def = node
    else:
        raise AssertionError(f"must_run_on_cpu: expected an Operation or a NodeDef, got "
                             f"{type(node).__name__}")
    if pin_variables_on_cpu and node_def.op in _VARIABLE_OPS:
        return True
    if node_def.op == "Const":
        return node_def.attr["dtype"].type in (dtypes.string.as_datatype_enum,
                                               dtypes.int32.as_datatype_enum)
    if node_def.op in ("DynamicStitch", "ParallelDynamicStitch"):
        return node_def.attr["T"].type == dtypes.int32.as_datatype_enum
    if node_def.op == "Cast":
        return node_def.attr["SrcT"].type == dtypes.int32.as_datatype_enum
    return False


@tf_export(v1=["graph_util.tensor_shape_from_node_def_name"])
def tensor_shape_from_node_def_name(graph, input_name):
    """The static shape of the tensor a GraphDef input string names ('x' means 'x:0')."""
    name = input_name if ":" in input_name else input_name + ":0"
    return graph.get_tensor_by_name(name).get_shape()


def _colocated_name(entry) -> str:
    text = entry.decode("utf-8") if isinstance(entry, bytes) else entry
    return text[len("loc:@"):] if text.startswith("loc:@") else text


def _strip(name: str) -> str:
    return name[1:] if name.startswith("^") else name


@tf_export(v1=["graph_util.remove_training_nodes"])
def remove_training_nodes(input_graph, protected_nodes=None) -> graph_pb2.GraphDef:
    """`input_graph` without CheckNumerics nodes (inputs naming them are dropped, as TF) and
    with Identity/StopGradient nodes spliced out, except protected ones, colocation targets,
    and nodes with or feeding control edges."""
    protected = set(protected_nodes or ())
    removed = {n.name for n in input_graph.node
               if n.op == "CheckNumerics" and n.name not in protected}
    kept = []
    for node in input_graph.node:
        if node.name in removed:
            continue
        new = node_def_pb2.NodeDef()
        new.CopyFrom(node)
        del new.input[:]
        new.input.extend(i for i in node.input if _strip(i) not in removed)
        kept.append(new)

    control_inputs, with_control_input, colocated = set(), set(), set()
    for node in kept:
        for i in node.input:
            if "^" in i:
                control_inputs.add(i.replace("^", ""))
                with_control_input.add(node.name)
        if "_class" in node.attr:
            colocated.update(_colocated_name(c) for c in node.attr["_class"].list.s)
    splice = {}
    for n in kept:
        if n.op in ("Identity", "StopGradient") and n.name not in protected \
                and n.name not in colocated and n.name not in with_control_input \
                and n.name not in control_inputs:
            if not n.input:  # TF fails here too (an IndexError), without saying why
                raise IndexError(f"remove_training_nodes: {n.op} node '{n.name}' has no input "
                                 "left to splice in: its input was a removed CheckNumerics "
                                 "node (protect one of them with protected_nodes)")
            splice[n.name] = n.input[0]

    out = graph_pb2.GraphDef()
    for node in kept:
        if node.name in splice:
            continue
        new = out.node.add()
        new.CopyFrom(node)
        del new.input[:]
        for full in node.input:
            name = _strip(full)
            while name in splice:  # follow chains of spliced nodes to their source
                full = splice[name]
                name = _strip(full)
            new.input.append(full)
    return out
