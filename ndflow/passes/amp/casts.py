"""The final mixed-precision pass: change ALLOW type attrs, add Casts at paint boundaries.

As AutoMixedPrecisionImpl::ChangeTypeAttrsAndAddCasts: every float32 type attribute painted
ALLOW becomes float16 / bfloat16; for each output port of a float32 type attribute and each
consumer input, a Cast is needed when exactly one side is ALLOW (to the low type iff the
consumer is ALLOW). At most one Cast per producer output port is made; all consumers that
need it read `cast:0`. The Cast is placed on the source node's device and named
`<src>-<port>-CastToFp16-<k>-AutoMixedPrecision` (`CastToBf16`, `CastToFp32`; k is the
first index giving a new name), attrs SrcT, DstT, Truncate=false.

EMULATE_FP16 (the CPU testing mode): ALLOW nodes keep float32; each of their painted inputs
passes a Cast(f16 -> f32) and each painted output a Cast(f32 -> f16), so values are rounded
to float16 at every op boundary as on a GPU.

The input graph is never modified: the result is built with `GraphRewriter`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ndflow.core import dtypes, logging
from ndflow.core.graph import Graph
from ndflow.ops.cast import Cast
from ndflow.passes.amp.graph import AmpNode, TypeGraph
from ndflow.passes.amp.painting import MODULE, AmpPaintError
from ndflow.passes.graph_rewriter import GraphRewriter

SUFFIX = "AutoMixedPrecision"
VARIABLE_OPS = frozenset({"Variable", "VariableV2", "AutoReloadVariable", "VarHandleOp",
                          "ReadVariableOp", "_VarHandlesOp", "_ReadVariablesOp"})


@dataclass
class CastStats:
    nodes_preop: int = 0
    changed: int = 0          # type attributes changed (TF's "nodes" count)
    casts_to_f16: int = 0     # excluding casts of Const and variable outputs

    def message(self, target) -> str:
        name = "float16" if target is dtypes.float16 else "bfloat16"
        return (f"Converted {self.changed}/{self.nodes_preop} nodes to {name} precision using "
                f"{self.casts_to_f16} cast(s) to {name} (excluding Const and Variable casts)")


def _is_const_or_variable(view: TypeGraph, node: AmpNode) -> bool:
    if node.type == "Const" or node.type in VARIABLE_OPS:
        return True
    if node.type == "Identity" and node.inputs:
        src = view.by_name.get(node.inputs[0][0])
        return src is not None and src.type in ("Variable", "VariableV2")
    return False


def cast_name(taken, src: str, port: int, what: str) -> str:
    """`<src>-<port>-<what>-<k>-AutoMixedPrecision` with the first k giving a fresh name."""
    k = 0
    while True:
        name = f"{src}-{port}-{what}-{k}-{SUFFIX}"
        if not taken(name):
            return name
        k += 1


def change_types_and_add_casts(graph: Graph, view: TypeGraph, allow: set[int], target,
                               emulate: bool = False) -> tuple[Graph, CastStats]:
    """The rewritten graph (see module doc) and the counts for the INFO line."""
    stats = CastStats(nodes_preop=len(view.nodes))
    low = "CastToFp16" if target is dtypes.float16 else "CastToBf16"
    # (src name, port) -> to_low; (dst name, in port) -> (src name, port) to read via cast.
    casts: dict[tuple[str, int], bool] = {}
    low_outputs: set[tuple[str, int]] = set()   # emulate: output ports that are logically low
    low_inputs: set[tuple[str, int]] = set()    # emulate: input ports that are logically low
    rewired: dict[tuple[str, int], tuple[str, int]] = {}
    for node in view.nodes:
        for ta, (in_ports, out_ports) in list(node.type_attrs.items()):
            v = view.vertex(node, ta)
            if node.dtype(ta) is not dtypes.float32:
                continue
            src_allow = v in allow
            if src_allow:
                logging.vlog(MODULE, 1, f"Changing type {ta.debug_string()} of {node.type} "
                                        f"node {node.name} to {target.name}")
                if emulate:
                    low_outputs.update((node.name, p) for p in out_ports)
                    low_inputs.update((node.name, p) for p in in_ports)
                elif not node.set_dtype(ta, target):
                    raise AmpPaintError("Failed to set type attribute")
                stats.changed += 1
            for port in sorted(out_ports):
                for dst, dst_port in view.consumers.get((node.name, port), []):
                    dst_allow = view.input_vertex(dst, dst_port) in allow
                    if src_allow == dst_allow:
                        continue
                    key = (node.name, port)
                    if key not in casts:
                        casts[key] = dst_allow
                        logging.vlog(MODULE, 1, "Inserting cast to "
                                     f"{target.name if dst_allow else 'DT_FLOAT'} at "
                                     f"{node.type} {node.name}:{port}")
                        if dst_allow and not _is_const_or_variable(view, node):
                            stats.casts_to_f16 += 1
                    rewired[(dst.name, dst_port)] = key
    return _emit(graph, view, casts, rewired, low_outputs, low_inputs, target, low), stats


def _emit(graph: Graph, view: TypeGraph, casts: dict, rewired: dict, low_outputs: set,
          low_inputs: set, target, low: str) -> Graph:
    rw = GraphRewriter(graph)
    source_names = {op.name for op in graph.get_operations()}

    def taken(name: str) -> bool:
        if name in source_names:
            return True
        try:
            rw.graph.get_operation_by_name(name)
            return True
        except KeyError:
            return False

    def add_cast(tensor, src_t, dst_t, name: str, device: str):
        attrs = {"SrcT": src_t, "DstT": dst_t, "Truncate": False}
        return rw.add_op(Cast, [tensor], attrs, [(dst_t, tensor.shape)], name,
                         device=device).outputs[0]

    produced: dict[tuple[str, int], object] = {}   # logical output tensors
    via_cast: dict[tuple[str, int], object] = {}
    for node in view.nodes:
        op = node.op
        inputs = []
        for port, key in enumerate(node.inputs):
            t = via_cast[key] if (node.name, port) in rewired else produced[key]
            if (node.name, port) in low_inputs:
                t = add_cast(t, target, dtypes.float32,
                             cast_name(taken, node.name, port, "EmulateCastToFp32"), node.device)
            inputs.append(t)
        specs = []
        for port, t in enumerate(op.outputs):
            ta = node.out_types[port]
            specs.append((node.dtype(ta) if ta.name else t.dtype, t.shape))
        controls = [rw.map[c] for c in op.control_inputs]
        new = rw.add_op(node.op_def, inputs, node.attrs, specs, node.name, controls, op.device)
        rw.map[op] = new
        for port, t in enumerate(new.outputs):
            key = (node.name, port)
            if key in low_outputs:
                t = add_cast(t, dtypes.float32, target,
                             cast_name(taken, node.name, port, "Emulate" + low), node.device)
            produced[key] = t
            rw.map[op.outputs[port]] = t
            if key in casts:
                to_low = casts[key]
                src_t, dst_t = (dtypes.float32, target) if to_low else (target, dtypes.float32)
                what = low if to_low else "CastToFp32"
                via_cast[key] = add_cast(t, src_t, dst_t, cast_name(taken, node.name, port, what),
                                         node.device)
    return rw.graph
