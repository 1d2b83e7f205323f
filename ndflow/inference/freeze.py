"""A ConcreteFunction frozen for inference: variables read by the function become Const
nodes holding their current values (TF's convert_variables_to_constants_v2), and the result
is a plain Graph with the function's argument placeholders and output tensors.

    graph, inputs, outputs = freeze(concrete_function)

Only reads of captured variables are frozen; a function that writes a variable (or passes a
handle on) is not an inference function: InvalidArgumentError naming the op.
"""

from __future__ import annotations

from tensorboard.compat.proto import graph_pb2

from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.core.graph_def import ndarray_to_tensor_proto
from ndflow.inference.onnx_export.graph_source import frozen_variable_values, function_inputs
from ndflow.ops.graph_def_nodes import parse_tensor_name
from ndflow.ops.importer import import_graph_def


def _const_node(name: str, value, device: str):
    node = graph_pb2.GraphDef().node.add()
    node.name, node.op, node.device = name, "Const", device
    proto = ndarray_to_tensor_proto(value)
    node.attr["value"].tensor.CopyFrom(proto)
    node.attr["dtype"].type = proto.dtype
    return node


def frozen_graph_def(cf) -> graph_pb2.GraphDef:
    """The function's GraphDef with variable reads replaced by constants."""
    frozen = frozen_variable_values(cf)
    captured = {p.op.name for _, p in cf.graph.captures}
    gd = cf.graph.as_graph_def()
    out = graph_pb2.GraphDef()
    out.versions.CopyFrom(gd.versions)
    out.library.CopyFrom(gd.library)
    for node in gd.node:
        if node.name in captured:
            continue
        if node.op == "ReadVariableOp" and f"{node.name}:0" in frozen:
            out.node.append(_const_node(node.name, frozen[f"{node.name}:0"], node.device))
            continue
        for inp in node.input:
            src = inp[1:] if inp.startswith("^") else parse_tensor_name(inp)[0]
            if src in captured and not inp.startswith("^"):
                raise InvalidArgumentError(
                    None, None, f"Cannot freeze op '{node.name}' of type '{node.op}': it uses "
                    f"the captured resource '{src}' other than by reading a variable")
        copy = out.node.add()
        copy.CopyFrom(node)
        del copy.input[:]
        copy.input.extend(i for i in node.input
                          if not (i.startswith("^") and i[1:] in captured))
    return out


def import_frozen(gd: graph_pb2.GraphDef) -> Graph:
    graph = Graph()
    with graph.as_default():
        import_graph_def(gd, name="")
    return graph


def freeze(cf) -> tuple:
    """(frozen Graph, its input placeholders' outputs, its output tensors)."""
    graph = import_frozen(frozen_graph_def(cf))
    inputs = [graph.get_tensor_by_name(t.name) for t in function_inputs(cf)]
    outputs = [graph.get_tensor_by_name(t.name) for t in cf.graph.outputs]
    return graph, inputs, outputs

