"""`tf.graph_util.import_graph_def`: recreate a `GraphDef`'s nodes in the default graph.

Every node is looked up in the OpDef registry (an unknown op type is a `NotFoundError`, as
in TensorFlow), its attrs are converted back to Python values and checked against the
OpDef (defaults filled in), its inputs are wired by name (`"x"`, `"x:1"`, `"^x"`) or taken
from `input_map`, and shape inference runs again through the OpDef's shape function.

The import is all-or-nothing: everything is validated, then built once into a scratch
graph (which surfaces shape-inference errors), and only then into the caller's graph.
Attrs whose names start with `_` (`_output_shapes`, `_class`, ...) are dropped; an attr the
OpDef does not know is dropped when it holds its zero value (TensorFlow's newer optional
attrs, such as MatMul's `grad_a: false`) and an error otherwise.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from tensorboard.compat.proto import graph_pb2

from ndflow.core import context, dtypes
from ndflow.core.graph import Graph, Operation, SymbolicTensor
from ndflow.core.graph_def import attr_from_proto, dtype_name
from ndflow.core.shapes import TensorShape
from ndflow.ops import op_def as op_defs
from ndflow.ops.apply import convert_to_tensor, infer_shapes, output_dtypes


@dataclass
class _Node:
    name: str
    op_def: op_defs.OpDef
    attrs: dict
    inputs: list            # (source node name, output index, name as written)
    controls: list          # source node names
    device: str
    out_dtypes: list


def _parse_tensor_name(name: str) -> tuple[str, int]:
    op, sep, idx = name.rpartition(":")
    if sep and idx.isdigit():
        return op, int(idx)
    return name, 0


def _signature(d: op_defs.OpDef) -> str:
    def arg(a):
        if a.number_attr:
            return f"{a.name}:{a.number_attr}*{a.type_attr or dtype_name(a.dtype)}"
        return f"{a.name}:{a.type_list_attr or a.type_attr or dtype_name(a.dtype)}"
    ins = ", ".join(arg(a) for a in d.inputs)
    outs = ", ".join(arg(a) for a in d.outputs)
    return f"Op<name={d.name}; signature={ins} -> {outs}>"


def _is_zero(v) -> bool:
    return v is False or (isinstance(v, (int, float, str, list)) and not isinstance(v, bool)
                          and not v)


def _convert_attrs(nd, d: op_defs.OpDef) -> dict:
    where = f"; NodeDef: {{{{node {nd.name}}}}}"
    attrs = {}
    for key in sorted(nd.attr):
        if key.startswith("_"):
            continue
        try:
            value = attr_from_proto(nd.attr[key])
        except (TypeError, ValueError) as e:
            raise ValueError(f"Node '{nd.name}': attr '{key}': {e}") from None
        ad = d.attrs.get(key)
        if ad is None:
            if _is_zero(value):
                continue
            raise ValueError(f"NodeDef mentions attr '{key}' not in {_signature(d)}{where}")
        if ad.kind == "type":
            if not isinstance(value, dtypes.DType):
                raise ValueError(f"AttrValue for attr '{key}' must be a type, got {value!r}"
                                 f"{where}")
            if ad.allowed is not None and value not in ad.allowed:
                allowed = ", ".join(dtype_name(t) for t in ad.allowed)
                raise ValueError(f"Value for attr '{key}' of {dtype_name(value)} is not in the "
                                 f"list of allowed values: {allowed}{where}")
        elif ad.kind == "shape" and not isinstance(value, TensorShape):
            raise ValueError(f"AttrValue for attr '{key}' must be a shape, got {value!r}{where}")
        elif ad.kind == "bool" and not isinstance(value, bool):
            raise ValueError(f"AttrValue for attr '{key}' must be a bool, got {value!r}{where}")
        elif ad.kind.startswith("int") and (not isinstance(value, int)
                                            or isinstance(value, bool)):
            raise ValueError(f"AttrValue for attr '{key}' must be an int, got {value!r}{where}")
        elif ad.kind == "float" and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        elif ad.kind == "float" and not isinstance(value, float):
            raise ValueError(f"AttrValue for attr '{key}' must be a float, got {value!r}{where}")
        elif ad.kind.startswith("list(") and not isinstance(value, list):
            raise ValueError(f"AttrValue for attr '{key}' must be a list, got {value!r}{where}")
        elif ad.kind == "string" and ad.allowed is not None and value not in ad.allowed:
            raise ValueError(f"Value for attr '{key}' of \"{value}\" is not in the list of "
                             f"allowed values: {', '.join(map(repr, ad.allowed))}{where}")
        attrs[key] = value
    for key, ad in d.attrs.items():
        if key not in attrs:
            if not ad.has_default:
                raise ValueError(f"NodeDef missing attr '{key}' from {_signature(d)}{where}")
            attrs[key] = ad.default
    return attrs


def _expected_input_dtypes(node: _Node) -> list:
    out = []
    for arg in node.op_def.inputs:
        if arg.type_list_attr:
            out.extend(node.attrs[arg.type_list_attr])
            continue
        dt = arg.dtype or node.attrs[arg.type_attr]
        out.extend([dt] * (node.attrs[arg.number_attr] if arg.number_attr else 1))
    return out


def _parse_node(nd) -> _Node:
    d = op_defs.lookup(nd.op)  # NotFoundError: "Op type not registered '...'"
    attrs = _convert_attrs(nd, d)
    inputs, controls = [], []
    for inp in nd.input:
        if inp.startswith("^"):
            controls.append(inp[1:])
        elif controls:
            raise ValueError(f"Node '{nd.name}': Control dependencies must come after regular "
                             "dependencies")
        else:
            inputs.append(_parse_tensor_name(inp) + (inp,))
    try:
        out_dtypes = output_dtypes(d, attrs)
    except (KeyError, TypeError) as e:
        raise ValueError(f"Node '{nd.name}': cannot derive output types of {nd.op}: {e}") \
            from None
    return _Node(nd.name, d, attrs, inputs, controls, nd.device, out_dtypes)


def _topological_order(nodes: dict, mapped: set) -> list:
    """Node names, producers first, otherwise in GraphDef order."""
    deps = {}
    for n in nodes.values():
        ds = {src for src, i, _ in n.inputs if f"{src}:{i}" not in mapped}
        ds.update(c for c in n.controls if f"^{c}" not in mapped)
        deps[n.name] = ds
    users: dict = {name: [] for name in nodes}
    for name, ds in deps.items():
        for d in ds:
            users[d].append(name)
    remaining = {name: len(ds) for name, ds in deps.items()}
    index = {name: i for i, name in enumerate(nodes)}
    ready = [(index[name], name) for name in nodes if remaining[name] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, name = heapq.heappop(ready)
        order.append(name)
        for u in users[name]:
            remaining[u] -= 1
            if remaining[u] == 0:
                heapq.heappush(ready, (index[u], u))
    if len(order) != len(nodes):
        stuck = [name for name in nodes if remaining[name] > 0]
        raise ValueError(f"GraphDef is invalid, it contains a cycle with {len(stuck)} nodes, "
                         f"including: {', '.join(stuck[:3])}")
    return order


def _check_edges(nodes: dict, mapped: dict, scope: str) -> None:
    prefix = scope + "/" if scope else ""
    for n in nodes.values():
        expected = _expected_input_dtypes(n)
        if len(expected) != len(n.inputs):
            want = ", ".join(dtype_name(t) for t in expected)
            raise ValueError(f"NodeDef expected inputs '{want}' do not match "
                             f"{len(n.inputs)} inputs specified; {_signature(n.op_def)}; "
                             f"NodeDef: {{{{node {n.name}}}}}")
        for i, ((src, idx, raw), want) in enumerate(zip(n.inputs, expected)):
            key = f"{src}:{idx}"
            if key in mapped:
                got, where = mapped[key].dtype, mapped[key].name
            elif src not in nodes:
                raise ValueError(f"Node '{n.name}': Unknown input node '{raw}'")
            elif idx >= len(nodes[src].out_dtypes):
                raise ValueError(f"Node '{n.name}': Connecting to invalid output {idx} of "
                                 f"source node {src} which has "
                                 f"{len(nodes[src].out_dtypes)} outputs.")
            else:
                got, where = nodes[src].out_dtypes[idx], key
            if got is not want:
                raise ValueError(f"Input {i} of node {prefix}{n.name} was passed "
                                 f"{dtype_name(got)} "
                                 f"from {where} incompatible with expected "
                                 f"{dtype_name(want)}.")
        for c in n.controls:
            if f"^{c}" not in mapped and c not in nodes:
                raise ValueError(f"Node '{n.name}': Unknown input node '^{c}'")


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
        src, idx = _parse_tensor_name(key)
        if not isinstance(value, SymbolicTensor):
            value = convert_to_tensor(value)
        if not isinstance(value, SymbolicTensor) or value.graph is not graph:
            raise ValueError(f"Tensor {value!r} in input_map is not an element of the graph "
                             "being imported into.")
        out[f"{src}:{idx}"] = value
    return out


def _stand_ins(scratch: Graph, mapped: dict) -> dict:
    """Scratch-graph copies of the mapped tensors (constants keep their values)."""
    const, ph = op_defs.lookup("Const"), op_defs.lookup("Placeholder")
    out = {}
    for i, (key, v) in enumerate(mapped.items()):
        name = f"input_map_{i}"
        if isinstance(v, Operation):
            out[key] = scratch.create_op(ph, [], {"dtype": dtypes.float32,
                                                  "shape": TensorShape(None)},
                                         [(dtypes.float32, TensorShape(None))], name)
        elif v.op.type == "Const":
            out[key] = scratch.create_op(const, [], v.op.attrs, [(v.dtype, v.shape)],
                                         name).outputs[0]
        else:
            out[key] = scratch.create_op(ph, [], {"dtype": v.dtype, "shape": v.shape},
                                         [(v.dtype, v.shape)], name).outputs[0]
    return out


def _build(graph: Graph, scope: str, order: list, nodes: dict, mapped: dict) -> dict:
    created: dict = {}
    with graph.name_scope(scope + "/" if scope else ""):
        for name in order:
            n = nodes[name]
            inputs = []
            for src, idx, _ in n.inputs:
                m = mapped.get(f"{src}:{idx}")
                inputs.append(m if m is not None else created[src].outputs[idx])
            controls = [mapped[f"^{c}"] if f"^{c}" in mapped else created[c]
                        for c in n.controls]
            full = graph.unique_name(name)
            shapes = infer_shapes(n.op_def, full, inputs, n.attrs, len(n.out_dtypes),
                                  eager=False)
            created[name] = graph.create_op(n.op_def, inputs, n.attrs,
                                            list(zip(n.out_dtypes, shapes)), full, controls,
                                            n.device or None)
    return created


def _check_return_elements(return_elements, nodes: dict) -> None:
    for r in return_elements:
        if not isinstance(r, str):
            raise TypeError(f"return_elements must be strings, got {r!r}")
        if ":" in r:
            src, idx = _parse_tensor_name(r)
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
    nodes: dict = {}
    for nd in gd.node:
        if nd.name in nodes:
            raise ValueError(f"Node '{nd.name}' is not unique")
        nodes[nd.name] = _parse_node(nd)
    missing = [k for k in mapped if (k[1:] if k.startswith("^")
                                     else _parse_tensor_name(k)[0]) not in nodes]
    if missing:
        raise ValueError("Attempted to map inputs that were not found in graph_def: "
                         f"[{', '.join(missing)}]")
    scope = graph.unique_name("import" if name is None else name) if name != "" else ""
    _check_edges(nodes, mapped, scope)
    order = _topological_order(nodes, set(mapped))
    if return_elements is not None:
        _check_return_elements(return_elements, nodes)
    scratch = Graph()
    _build(scratch, scope, order, nodes, _stand_ins(scratch, mapped))
    created = _build(graph, scope, order, nodes, mapped)
    if return_elements is None:
        return None
    out = []
    for r in return_elements:
        if ":" in r:
            src, idx = _parse_tensor_name(r)
            key = f"{src}:{idx}"
            out.append(mapped[key] if key in mapped else created[src].outputs[idx])
        else:
            out.append(created[r])
    return out
