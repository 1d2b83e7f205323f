"""A GraphDef's function library (`FunctionDef`s) back into function graphs.

`import_graph_def` resolves each `func` attr (If/StatelessIf `then_branch`/`else_branch`,
While/StatelessWhile `cond`/`body`) through a `FunctionLibrary`: the named FunctionDef is
rebuilt, once, as a `FunctionGraph` of the shape the control-flow runtime runs and
differentiates (the same interface as a traced `FuncGraph`, which lives in the runtime
layer and cannot be built from here):

- `inputs`: one Placeholder per signature input arg, in order (captured tensors are plain
  trailing inputs, as after tracing), with the arg's `_output_shapes` arg_attr when given;
- `outputs`: the tensors the `ret` map names, in signature output-arg order (a ret naming an
  input arg is that placeholder itself, as a traced while body's pass-through captures are);
- body ops rebuilt with the importer's checks; inputs in FunctionDef form are translated:
  `arg` -> the arg's placeholder, `node:out_arg:i` -> output (offset of `out_arg` among the
  node's OpDef output args, counting `number_attr`/`type_list_attr` lists) + i.

Nested functions resolve recursively. Only functions some node references are built; a
missing one is a `NotFoundError` naming the node and attr (TensorFlow imports such a graph
and fails when it runs; ndflow needs the function graph at import).
"""

from __future__ import annotations

from ndflow.core.errors import NotFoundError
from ndflow.core.graph import Graph
from ndflow.core.graph_def import dtype_from_enum, shape_from_proto
from ndflow.core.shapes import TensorShape
from ndflow.ops.array_core import Placeholder
from ndflow.ops.graph_def_nodes import (
    build,
    check_edges,
    output_arg_offsets,
    parse_node,
    topological_order,
)


class FunctionGraph(Graph):
    """A function rebuilt from a FunctionDef: `inputs` placeholders -> `outputs`."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name
        self.arg_inputs: list = []
        self.outputs: list = []
        self.structured_outputs = None
        self.variables: list = []

    @property
    def inputs(self) -> list:
        return list(self.arg_inputs)

    @property
    def captures(self) -> list:
        return []

    external_captures = internal_captures = captures

    def __repr__(self):
        return f"FunctionGraph(name={self.name}, ops={len(self._ops)})"


class FunctionLibrary:
    """The FunctionDefs of a `FunctionDefLibrary`, rebuilt on demand (each once)."""

    def __init__(self, library):
        self._defs = {fd.signature.name: fd for fd in library.function}
        self._built: dict = {}
        self._building: list = []

    def resolve(self, attr_value, key: str, node_name: str):
        """The function graph(s) of a `func` attr (a list attr gives a list)."""
        if attr_value.WhichOneof("value") == "func":
            return self.get(attr_value.func.name, key, node_name)
        return [self.get(f.name, key, node_name) for f in attr_value.list.func]

    def get(self, name: str, key: str, node_name: str) -> FunctionGraph:
        if name in self._built:
            return self._built[name]
        fd = self._defs.get(name)
        if fd is None:
            raise NotFoundError(None, None, f"Function '{name}' (attr '{key}' of node "
                                f"'{node_name}') is not in the GraphDef's function library")
        if name in self._building:
            chain = " -> ".join(self._building + [name])
            raise ValueError(f"Function '{name}' calls itself recursively ({chain}), which "
                             "is not supported")
        self._building.append(name)
        try:
            fg = _build_function(fd, self)
        except ValueError as e:
            raise ValueError(f"In function '{name}': {e}") from None
        finally:
            self._building.pop()
        self._built[name] = fg
        return fg


def _arg_shape(fd, i: int) -> TensorShape:
    attrs = fd.arg_attr[i].attr if i in fd.arg_attr else {}
    if "_output_shapes" in attrs and len(attrs["_output_shapes"].list.shape) == 1:
        return shape_from_proto(attrs["_output_shapes"].list.shape[0])
    return TensorShape(None)


def _add_args(fg: FunctionGraph, fd) -> dict:
    mapped = {}
    for i, arg in enumerate(fd.signature.input_arg):
        if arg.type_attr or arg.number_attr or arg.type_list_attr:
            raise ValueError(f"input arg '{arg.name}' has a polymorphic type, which is not "
                             "supported")
        dtype, shape = dtype_from_enum(arg.type), _arg_shape(fd, i)
        if arg.name in mapped:
            raise ValueError(f"Duplicated arg name '{arg.name}'")
        op = fg.create_op(Placeholder, [], {"dtype": dtype, "shape": shape}, [(dtype, shape)],
                          fg.unique_name(arg.name), device="")
        fg.arg_inputs.append(op.outputs[0])
        mapped[f"{arg.name}:0"] = op.outputs[0]
    return mapped


def _translate(raw: str, args: set, nodes: dict, where: str) -> tuple[str, int]:
    """A FunctionDef tensor reference as (source, flat output index)."""
    parts = raw.split(":")
    if len(parts) == 1:
        if raw not in args:
            raise ValueError(f"{where}: Unknown input '{raw}' (not an input arg; node "
                             "outputs are written 'node:output_arg:index' in a function)")
        return raw, 0
    if len(parts) == 2 and parts[0] in args and parts[1] == "0":
        return parts[0], 0
    if len(parts) not in (2, 3) or parts[0] not in nodes:
        raise ValueError(f"{where}: Unknown input node '{raw}'")
    src, arg_name = parts[0], parts[1]
    idx = parts[2] if len(parts) == 3 else "0"
    if not idx.isdigit():
        raise ValueError(f"{where}: Bad input index in '{raw}'")
    offsets = output_arg_offsets(nodes[src])
    if arg_name in offsets:
        start, n = offsets[arg_name]
    elif arg_name == "output" or len(offsets) == 1:  # written by position / renamed arg
        start, n = 0, len(nodes[src].out_dtypes)
    else:
        raise ValueError(f"{where}: Node '{src}' ({nodes[src].op_def.name}) has no output "
                         f"arg '{arg_name}' (has {', '.join(offsets) or 'none'})")
    if int(idx) >= n:
        raise ValueError(f"{where}: Output index {idx} of '{src}:{arg_name}' is out of range "
                         f"(it has {n} tensors)")
    return src, start + int(idx)


def _build_function(fd, library: FunctionLibrary) -> FunctionGraph:
    fg = FunctionGraph(fd.signature.name)
    mapped = _add_args(fg, fd)
    args = {a.name for a in fd.signature.input_arg}
    nodes: dict = {}
    for nd in fd.node_def:
        if nd.name in nodes or nd.name in args:
            raise ValueError(f"Node '{nd.name}' is not unique")
        nodes[nd.name] = parse_node(nd, library.resolve)
    for n in nodes.values():
        n.inputs = [_translate(raw, args, nodes, f"Node '{n.name}'") + (raw,)
                    for _, _, raw in n.inputs]
    check_edges(nodes, mapped, "")
    created = build(fg, "", topological_order(nodes, set(mapped)), nodes, mapped)
    outputs = []
    for arg in fd.signature.output_arg:
        if arg.name not in fd.ret:
            raise ValueError(f"Return value for output arg '{arg.name}' is missing")
        src, idx = _translate(fd.ret[arg.name], args, nodes, f"Output '{arg.name}'")
        t = mapped[f"{src}:0"] if src in args else created[src].outputs[idx]
        if arg.type and dtype_from_enum(arg.type) is not t.dtype:
            raise ValueError(f"Output arg '{arg.name}' is declared "
                             f"{dtype_from_enum(arg.type).name}, but its ret "
                             f"'{fd.ret[arg.name]}' is {t.dtype.name}")
        outputs.append(t)
    fg.outputs = outputs
    return fg
