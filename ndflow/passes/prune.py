"""Prune: keep only the ops the fetches and targets need, cutting the graph at fed tensors.

Follows data and control edges backwards from the fetched tensors and the target ops; the
walk stops at fed tensors (their producers need not run). Every fed tensor becomes an input
of the pruned graph: a fed `Placeholder` stays as it is; any other fed tensor (a constant,
an intermediate) is replaced by a new `Placeholder` of its dtype and static shape, which
takes the producer's name when the producer is otherwise unneeded and has one output, or a
fresh name recorded in `ctx.rename` otherwise. Creation order is kept.
"""

from __future__ import annotations

from ndflow.core.graph import Graph, Operation, SymbolicTensor, upstream_ops
from ndflow.ops.array_core import Placeholder
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.pass_context import PassContext


def _tensor(graph: Graph, name: str, what: str) -> SymbolicTensor:
    try:
        return graph.get_tensor_by_name(name)
    except (KeyError, ValueError) as e:
        raise ValueError(f"Cannot prune the graph: {what} '{name}' is not a tensor of the "
                         f"graph ({e.args[0]})") from None


def _op(graph: Graph, name: str) -> Operation:
    try:
        return graph.get_operation_by_name(name)
    except KeyError as e:
        raise ValueError(f"Cannot prune the graph: target '{name}' is not an operation of the "
                         f"graph ({e.args[0]})") from None


def needed_ops(fetches, targets, fed: set) -> set:
    """Ops that must run for `fetches` and `targets` when the tensors in `fed` are fed. A
    control edge from a fed Placeholder is met by the feed (TF's FeedInputs moves such edges
    to the fed value's node), so it does not make the Placeholder run."""
    def inputs_of(op):
        return [t.op for t in op.inputs if t not in fed] + [
            c for c in op.control_inputs if not (c.type in _PLACEHOLDERS and c.outputs[0] in fed)]

    return upstream_ops([t.op for t in fetches if t not in fed] + list(targets), inputs_of)


_PLACEHOLDERS = ("Placeholder", "PlaceholderV2")


def _is_input_placeholder(op: Operation) -> bool:
    return op.type == "Placeholder" and not op.inputs


def prune(graph: Graph, ctx: PassContext) -> Graph:
    """The subgraph for `ctx.fetches`/`ctx.targets` given `ctx.feeds` (see module doc)."""
    fed = {_tensor(graph, ctx.current_name(n), "feed") for n in ctx.feeds}
    fetches = [_tensor(graph, ctx.current_name(n), "fetch") for n in ctx.fetches]
    targets = [_op(graph, ctx.current_name(n)) for n in ctx.targets]
    need = needed_ops(fetches, targets, fed)
    fed_by_op: dict = {}
    for t in fed:
        fed_by_op.setdefault(t.op, []).append(t)
        if _is_input_placeholder(t.op):
            need.add(t.op)

    rw = GraphRewriter(graph)
    for op in graph.get_operations():
        fed_outputs = [] if _is_input_placeholder(op) else fed_by_op.get(op, [])
        if op in need:
            rw.copy_op(op)
        if not fed_outputs:
            continue
        keep_name = op not in need and len(op.outputs) == 1
        for t in sorted(fed_outputs, key=lambda t: t.value_index):
            name = op.name if keep_name else rw.fresh_name(f"{op.name}/_fed_{t.value_index}")
            ph = rw.add_op(Placeholder, [], {"dtype": t.dtype, "shape": t.shape},
                           [(t.dtype, t.shape)], name, device=op.device)
            rw.map[t] = ph.outputs[0]
            ctx.rename(t.name, ph.outputs[0].name)
    return rw.graph
