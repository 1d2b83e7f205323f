"""`tf.graph_util.import_graph_def`: recreate a `GraphDef`'s nodes in the default graph.

Every node is looked up in the OpDef registry (an unknown op type is a `NotFoundError`, as
in TensorFlow), its attrs are converted back to Python values and checked against the
OpDef (defaults filled in), its inputs are wired by name (`"x"`, `"x:1"`, `"^x"`) or taken
from `input_map`, and shape inference runs again through the OpDef's shape function.

The import is all-or-nothing: everything is validated, then built once into a scratch
graph (which surfaces shape-inference errors), and only then into the caller's graph.
Attrs whose names start with `_` (`_output_shapes`, `_class`, ...) are dropped; an attr the
OpDef does not know is dropped when it holds its zero value (TensorFlow's newer optional
attrs, such as MatMul's `grad_a: false`) and an error otherwise. `func` attrs (If/While
branches and bodies) name FunctionDefs of `graph_def.library`, rebuilt as function graphs
before anything is added (ndflow/ops/function_library.py); node parsing and building are
shared with it (ndflow/ops/graph_def_nodes.py).
"""

from __future__ import annotations

from tensorboard.compat.proto import graph_pb2

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.graph import Graph, Operation, SymbolicTensor
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import Placeholder
from ndflow.ops.constant_op import Const
from ndflow.ops.function_library import FunctionLibrary
from ndflow.ops.graph_def_nodes import (
    build,
    check_edges,
    parse_node,
    parse_tensor_name,
    topological_order,
)


def _normalize_input_map(input_map, graph: Graph) -> dict:
    out = {}
    for key, value in (input_map or {}).items():
        if not isinstance(key, str):
            raise TypeError(f"input_map keys must be strings, got {key!r}")
        if key.startswith("^"):
            if not isinstance(value, Operation):
                raise TypeError(f"input_map entry {key!r} maps a control input and must map "
                                f"to an Operation, got {value!r}")
            if value.graph is not graph:
                raise ValueError(f"Operation {value.name} in input_map is not an element of "
                                 "the graph being imported into.")
            out[key] = value
            continue
        src, idx = parse_tensor_name(key)
        if not isinstance(value, SymbolicTensor):
            value = convert_to_tensor(value)
        if not isinstance(value, SymbolicTensor) or value.graph is not graph:
            raise ValueError(f"Tensor {value!r} in input_map is not an element of the graph "
                             "being imported into.")
        out[f"{src}:{idx}"] = value
    return out


def _stand_ins(scratch: Graph, mapped: dict) -> dict:
    """Scratch-graph copies of the mapped tensors (constants keep their values)."""
    out = {}
    for i, (key, v) in enumerate(mapped.items()):
        name = f"input_map_{i}"
        if isinstance(v, Operation):
            out[key] = scratch.create_op(Placeholder, [], {"dtype": dtypes.float32,
                                                  "shape": TensorShape(None)},
                                         [(dtypes.float32, TensorShape(None))], name)
        elif v.op.type == "Const":
            out[key] = scratch.create_op(Const, [], v.op.attrs, [(v.dtype, v.shape)],
                                         name).outputs[0]
        else:
            out[key] = scratch.create_op(Placeholder, [], {"dtype": v.dtype, "shape": v.shape},
                                         [(v.dtype, v.shape)], name).outputs[0]
    return out


def _check_return_elements(return_elements, nodes: dict) -> None:
    for r in return_elements:
        if not isinstance(r, str):
            raise TypeError(f"return_elements must be strings, got {r!r}")
        if ":" in r:
            src, idx = parse_tensor_name(r)
            if src not in nodes or idx >= len(nodes[src].out_dtypes):
                raise ValueError(f"Requested return tensor '{r}' not found in graph def")
        elif r not in nodes:
            raise ValueError(f"Requested return node '{r}' not found in graph def")


def _as_graph_def(graph_def) -> graph_pb2.GraphDef:
    if isinstance(graph_def, graph_pb2.GraphDef):
        return graph_def
    if hasattr(graph_def, "node") and hasattr(graph_def, "SerializeToString"):
        gd = graph_pb2.GraphDef()  # e.g. TensorFlow's own GraphDef class
        gd.ParseFromString(graph_def.SerializeToString())
        return gd
    raise TypeError("Argument `graph_def` must be a GraphDef proto.")


@tf_export("import_graph_def")
def import_graph_def(graph_def, input_map: dict | None = None,
                     return_elements: list | None = None, name: str | None = None,
                     op_dict=None, producer_op_list=None) -> list | None:
    """Imports `graph_def` into the default graph under the name scope `name` ("import")."""
    gd = _as_graph_def(graph_def)
    graph = context.get_default_graph()
    if input_map is not None and not isinstance(input_map, dict):
        raise TypeError("Argument `input_map` must be a dictionary, got "
                        f"{type(input_map).__name__}")
    with graph.as_default():
        mapped = _normalize_input_map(input_map, graph)
    library = FunctionLibrary(gd.library)
    nodes: dict = {}
    for nd in gd.node:
        if nd.name in nodes:
            raise ValueError(f"Node '{nd.name}' is not unique")
        nodes[nd.name] = parse_node(nd, library.resolve)
    missing = [k for k in mapped if (k[1:] if k.startswith("^")
                                     else parse_tensor_name(k)[0]) not in nodes]
    if missing:
        raise ValueError("Attempted to map inputs that were not found in graph_def: "
                         f"[{', '.join(missing)}]")
    scope = graph.unique_name("import" if name is None else name) if name != "" else ""
    check_edges(nodes, mapped, scope)
    order = topological_order(nodes, set(mapped))
    if return_elements is not None:
        _check_return_elements(return_elements, nodes)
    scratch = Graph()
    build(scratch, scope, order, nodes, _stand_ins(scratch, mapped))
    created = build(graph, scope, order, nodes, mapped)
    if return_elements is None:
        return None
    out = []
    for r in return_elements:
        if ":" in r:
            src, idx = parse_tensor_name(r)
            key = f"{src}:{idx}"
            out.append(mapped[key] if key in mapped else created[src].outputs[idx])
        else:
            out.append(created[r])
    return out
