"""The graph the mixed-precision painter works on: one vertex per (node, type attribute).

As TensorFlow's NodeTypeAttrMap + GraphTypeTopologyView (auto_mixed_precision.cc). A type
attribute is `TypeAttr("T")`, an element of a type list `TypeAttr("T", 1)` (shown "T[1]"),
or a fixed type `TypeAttr(fixed=int32)` for ports with a fixed dtype. Every input and output
port maps to one; ports of `N * T` args repeat T. Edges run from a producer output's type
attr to the consumer input's; control edges are ignored.

    nodes = [AmpNode.of(op) for op in graph.get_operations()]
    view = TypeGraph(nodes)
    view.index[("conv", TypeAttr("T"))]   # -> vertex id; view.fanin[i], view.fanout[i]

`AmpNode` is a mutable stand-in for an input Operation (type, OpDef, attrs copy, device),
so the painter can rename FusedBatchNorm -> FusedBatchNormV2 without touching the input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from ndflow.core import dtypes
from ndflow.core.graph import Graph, Operation
from ndflow.ops import op_def as op_defs


class AmpGraphError(ValueError):
    """The graph cannot be analysed (TF: InvalidArgument while building the type map)."""


class TypeAttr(NamedTuple):
    name: str = ""
    index: int = -1
    fixed: object = None     # a DType for fixed-type ports

    def debug_string(self) -> str:
        if self.name:
            return self.name if self.index < 0 else f"{self.name}[{self.index}]"
        return getattr(self.fixed, "name", str(self.fixed))


@dataclass(eq=False)
class AmpNode:
    """One node of the graph being rewritten (the input op is never modified)."""

    op: Operation
    name: str
    type: str
    op_def: object
    attrs: dict
    device: str
    inputs: list = field(default_factory=list)     # [(producer AmpNode name, port)]
    in_types: list = field(default_factory=list)   # TypeAttr per input port
    out_types: list = field(default_factory=list)  # TypeAttr per output port
    type_attrs: dict = field(default_factory=dict)  # TypeAttr -> (in ports, out ports)

    @classmethod
    def of(cls, op: Operation) -> AmpNode:
        return cls(op, op.name, op.type, op.op_def, dict(op.attrs), op.device or "",
                   [(t.op.name, t.value_index) for t in op.inputs])

    def dtype(self, ta: TypeAttr):
        """The dtype of type attribute `ta` now (None when it is absent)."""
        if not ta.name:
            return ta.fixed
        value = self.attrs.get(ta.name)
        if ta.index < 0:
            return value
        if not isinstance(value, (list, tuple)) or not 0 <= ta.index < len(value):
            return None
        return value[ta.index]

    def set_dtype(self, ta: TypeAttr, dtype) -> bool:
        if not ta.name or ta.name not in self.attrs:
            return False
        if ta.index < 0:
            self.attrs[ta.name] = dtype
            return True
        value = list(self.attrs[ta.name])
        if not 0 <= ta.index < len(value):
            return False
        value[ta.index] = dtype
        self.attrs[ta.name] = value
        return True

    def is_float32(self, ta: TypeAttr) -> bool:
        return self.dtype(ta) is dtypes.float32

    def allowed_types(self, ta: TypeAttr) -> tuple | None:
        """The OpDef's allowed dtypes for `ta` (None: any type)."""
        if not ta.name:
            return (ta.fixed,)
        attr_def = self.op_def.attrs.get(ta.name)
        if attr_def is None:
            return ()
        return attr_def.allowed


def _arg_ports(node: AmpNode, arg) -> list[TypeAttr]:
    if arg.type_list_attr is not None:
        types = node.attrs.get(arg.type_list_attr)
        if types is None:
            raise AmpGraphError(f"Type attribute {arg.type_list_attr} is not present in node "
                                f"{node.name}")
        return [TypeAttr(arg.type_list_attr, i) for i in range(len(types))]
    if arg.type_attr is not None:
        if arg.type_attr not in node.attrs:
            raise AmpGraphError(f"Type attribute {arg.type_attr} is not present in node "
                                f"{node.name}")
        ta = TypeAttr(arg.type_attr)
    else:
        ta = TypeAttr(fixed=arg.dtype)
    repeat = 1
    if arg.number_attr is not None and arg.number_attr in node.attrs:
        repeat = int(node.attrs[arg.number_attr])
    return [ta] * repeat


def build_type_map(node: AmpNode) -> None:
    """Fills `in_types`, `out_types` and `type_attrs` of `node` from its OpDef's ArgDefs
    (AmpGraphError when the node does not match its OpDef)."""
    op_def = node.op_def
    node.in_types = [ta for arg in op_def.inputs for ta in _arg_ports(node, arg)]
    node.out_types = [ta for arg in op_def.outputs for ta in _arg_ports(node, arg)]
    if len(node.in_types) != len(node.inputs):
        raise AmpGraphError(f"Expected {node.type} node {node.name} to have "
                            f"{len(node.in_types)} non-control input(s), but got "
                            f"{len(node.inputs)}")
    type_attrs: dict = {}
    for port, ta in enumerate(node.in_types):
        type_attrs.setdefault(ta, (set(), set()))[0].add(port)
    for port, ta in enumerate(node.out_types):
        type_attrs.setdefault(ta, (set(), set()))[1].add(port)
    for name, value in node.attrs.items():
        if name.startswith("_"):
            continue
        attr_def = op_def.attrs.get(name)
        if attr_def is None:
            raise AmpGraphError(f"AttrDef not found for attribute {name} of node {node.name}")
        if attr_def.kind == "type":
            type_attrs.setdefault(TypeAttr(name), (set(), set()))
        elif attr_def.kind == "list(type)":
            for i in range(len(value or ())):
                type_attrs.setdefault(TypeAttr(name, i), (set(), set()))
    node.type_attrs = type_attrs


class TypeGraph:
    """Vertices (node, type attr) in graph order with fan-in / fan-out vertex lists."""

    def __init__(self, nodes: list[AmpNode]):
        self.nodes = nodes
        self.by_name = {n.name: n for n in nodes}
        self.vertices: list[tuple[AmpNode, TypeAttr]] = []
        self.index: dict[tuple[str, TypeAttr], int] = {}
        for node in nodes:
            for ta in node.type_attrs:
                self.index[(node.name, ta)] = len(self.vertices)
                self.vertices.append((node, ta))
        self.fanin: list[list[int]] = [[] for _ in self.vertices]
        self.fanout: list[list[int]] = [[] for _ in self.vertices]
        # consumers[(producer name, port)] -> [(consumer AmpNode, input port)]
        self.consumers: dict[tuple[str, int], list] = {}
        for node in nodes:
            for port, (src_name, src_port) in enumerate(node.inputs):
                src = self.by_name.get(src_name)
                if src is None:
                    raise AmpGraphError(f"Node {node.name} has an input from unknown node "
                                        f"{src_name}")
                self.consumers.setdefault((src_name, src_port), []).append((node, port))
                a = self.index[(src_name, src.out_types[src_port])]
                b = self.index[(node.name, node.in_types[port])]
                self.fanout[a].append(b)
                self.fanin[b].append(a)

    def __len__(self) -> int:
        return len(self.vertices)

    def vertex(self, node: AmpNode, ta: TypeAttr) -> int | None:
        return self.index.get((node.name, ta))

    def input_vertex(self, node: AmpNode, port: int) -> int:
        return self.index[(node.name, node.in_types[port])]

    def add_edge(self, a: int, b: int) -> None:
        """An extra ("ephemeral") edge a -> b."""
        self.fanout[a].append(b)
        self.fanin[b].append(a)


def amp_nodes(graph: Graph, rename: dict | None = None) -> list[AmpNode]:
    """AmpNodes for the ops of `graph`, with op types renamed by `rename[node name]` (new
    type, extra attrs) before the type maps are built."""
    nodes = []
    for op in graph.get_operations():
        node = AmpNode.of(op)
        if rename and op.name in rename:
            new_type, extra = rename[op.name]
            node.type = new_type
            node.op_def = op_defs.lookup(new_type)
            node.attrs.update(extra)
        nodes.append(node)
    for node in nodes:
        build_type_map(node)
    return nodes
