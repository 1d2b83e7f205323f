"""NodeDefs back into operations: parsing, attr checks, edge checks, ordering, building.

Shared by `import_graph_def` (ndflow/ops/importer.py) and the function-library import
(ndflow/ops/function_library.py). `func` attrs are resolved by a caller-given
`resolve(attr_value, key, node_name)` (no resolver: a ValueError, as before).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from ndflow.core import dtypes
from ndflow.core.graph import Graph
from ndflow.core.graph_def import arg_tensor_count, attr_from_proto, dtype_name
from ndflow.core.shapes import TensorShape
from ndflow.ops import op_def as op_defs
from ndflow.ops.apply import infer_shapes, output_dtypes


@dataclass
class Node:
    name: str
    op_def: op_defs.OpDef
    attrs: dict
    inputs: list            # (source node name, output index, name as written)
    controls: list          # source node names
    device: str
    out_dtypes: list


def parse_tensor_name(name: str) -> tuple[str, int]:
    op, sep, idx = name.rpartition(":")
    if sep and idx.isdigit():
        return op, int(idx)
    return name, 0


def signature(d: op_defs.OpDef) -> str:
    def arg(a):
        if a.number_attr:
            return f"{a.name}:{a.number_attr}*{a.type_attr or dtype_name(a.dtype)}"
        return f"{a.name}:{a.type_list_attr or a.type_attr or dtype_name(a.dtype)}"
    ins = ", ".join(arg(a) for a in d.inputs)
    outs = ", ".join(arg(a) for a in d.outputs)
    return f"Op<name={d.name}; signature={ins} -> {outs}>"


def is_zero(v) -> bool:
    return v is False or (isinstance(v, (int, float, str, list)) and not isinstance(v, bool)
                          and not v)


def is_func_attr(a) -> bool:
    """Whether an AttrValue names functions (`func`, or a list of them)."""
    which = a.WhichOneof("value")
    return which == "func" or (which == "list" and len(a.list.func) > 0)


def convert_attrs(nd, d: op_defs.OpDef, resolve=None) -> dict:
    where = f"; NodeDef: {{{{node {nd.name}}}}}"
    attrs = {}
    for key in sorted(nd.attr):
        if key.startswith("_"):
            continue
        if resolve is not None and is_func_attr(nd.attr[key]):
            value = resolve(nd.attr[key], key, nd.name)
            if key not in d.attrs:
                raise ValueError(f"NodeDef mentions attr '{key}' not in {signature(d)}{where}")
            attrs[key] = value
            continue
        try:
            value = attr_from_proto(nd.attr[key])
        except (TypeError, ValueError) as e:
            raise ValueError(f"Node '{nd.name}': attr '{key}': {e}") from None
        ad = d.attrs.get(key)
        if ad is None:
            if is_zero(value):
                continue
            raise ValueError(f"NodeDef mentions attr '{key}' not in {signature(d)}{where}")
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
                raise ValueError(f"NodeDef missing attr '{key}' from {signature(d)}{where}")
            attrs[key] = ad.default
    return attrs


def expected_input_dtypes(node: Node) -> list:
    out = []
    for arg in node.op_def.inputs:
        if arg.type_list_attr:
            out.extend(node.attrs[arg.type_list_attr])
            continue
        dt = arg.dtype or node.attrs[arg.type_attr]
        out.extend([dt] * (node.attrs[arg.number_attr] if arg.number_attr else 1))
    return out


def output_arg_offsets(node: Node) -> dict:
    """Output arg name -> (flat index of its first tensor, tensor count), from the OpDef's
    ArgDefs (`number_attr` and `type_list_attr` args hold several tensors)."""
    out, k = {}, 0
    for arg in node.op_def.outputs:
        n = arg_tensor_count(arg, node.attrs)
        out[arg.name] = (k, n)
        k += n
    return out


def parse_node(nd, resolve=None) -> Node:
    """A NodeDef checked against its OpDef; `resolve(attr_value, key, node_name)` turns a
    `func` attr into a function graph (None: func attrs are an error)."""
    d = op_defs.lookup(nd.op)  # NotFoundError: "Op type not registered '...'"
    attrs = convert_attrs(nd, d, resolve)
    inputs, controls = [], []
    for inp in nd.input:
        if inp.startswith("^"):
            controls.append(inp[1:])
        elif controls:
            raise ValueError(f"Node '{nd.name}': Control dependencies must come after regular "
                             "dependencies")
        else:
            inputs.append(parse_tensor_name(inp) + (inp,))
    try:
        out_dtypes = output_dtypes(d, attrs)
    except (KeyError, TypeError) as e:
        raise ValueError(f"Node '{nd.name}': cannot derive output types of {nd.op}: {e}") \
            from None
    return Node(nd.name, d, attrs, inputs, controls, nd.device, out_dtypes)


def topological_order(nodes: dict, mapped: set) -> list:
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


def check_edges(nodes: dict, mapped: dict, scope: str) -> None:
    prefix = scope + "/" if scope else ""
    for n in nodes.values():
        expected = expected_input_dtypes(n)
        if len(expected) != len(n.inputs):
            want = ", ".join(dtype_name(t) for t in expected)
            raise ValueError(f"NodeDef expected inputs '{want}' do not match "
                             f"{len(n.inputs)} inputs specified; {signature(n.op_def)}; "
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


def build(graph: Graph, scope: str, order: list, nodes: dict, mapped: dict) -> dict:
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
