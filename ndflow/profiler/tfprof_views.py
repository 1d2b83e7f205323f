"""tfprof's views of a graph's `GraphNode`s (TensorFlow's tfprof_scope/graph/op/code.cc):
'scope' (a tree by name scope), 'graph' (a tree by inputs), 'op' (one row per op type) and
'code' (a tree by Python call stack), each filtered, accounted, ordered and formatted as
TensorFlow's tfprof does, returning the root GraphNodeProto / MultiGraphNodeProto and the
report text.

The code view is reduced: its nodes are the frames of the call stack ndflow recorded for
each op (`Operation.traceback`, the user's frames), so its tree has the user's lines but not
TensorFlow's own library frames, and its rows use the scope view's format.
"""

from __future__ import annotations

import re

from ndflow.core.protos import tfprof_pb
from ndflow.profiler.tfprof_stats import (
    GRAPH_PARENT,
    ROOT,
    SCOPE_PARENT,
    GraphNode,
    format_memory,
    format_number,
    format_time,
)

_STATS = ("run_count", "exec_micros", "accelerator_exec_micros", "cpu_exec_micros",
          "requested_bytes", "peak_bytes", "residual_bytes", "output_bytes", "parameters",
          "float_ops")
_MULTI_STATS = _STATS[1:]
_ORDER = {"bytes": "total_requested_bytes", "peak_bytes": "total_peak_bytes",
          "residual_bytes": "total_residual_bytes", "output_bytes": "total_output_bytes",
          "micros": "total_exec_micros", "accelerator_micros": "total_accelerator_exec_micros",
          "cpu_micros": "total_cpu_exec_micros", "params": "total_parameters",
          "float_ops": "total_float_ops"}


def _full_match(regex: str, s: str) -> bool:
    return re.fullmatch(regex, s) is not None


def sort_nodes(nodes: list, opts) -> list:
    """TensorFlow's SortNodes: stable, by name or by a total, descending."""
    if not opts.order_by or not nodes:
        return list(nodes)
    attr = _ORDER.get(opts.order_by)
    if attr is None:
        return sorted(nodes, key=lambda n: n.name)
    return sorted(nodes, key=lambda n: -getattr(n.proto, attr))


class ShowNode:
    """A GraphNode with its displayed statistics (ShowNode)."""

    def __init__(self, node: GraphNode):
        self.node = node
        self.name = node.name
        self.proto = tfprof_pb.GraphNodeProto()
        self.account = False
        self.children: list[ShowNode] = []
        self.show_children: list[ShowNode] = []
        self.formatted_str = ""
        self.reinit()

    def reinit(self) -> None:
        p, n = self.proto, self.node
        p.name = self.name
        del p.devices[:]
        if n.device:
            p.devices.append(n.device)
        p.float_ops = n.float_ops
        p.input_shapes.clear()
        for idx, shape in n.input_shapes().items():
            proto_shape = p.input_shapes[idx]
            for d in shape:
                proto_shape.dim.add(size=d)
        p.parameters = n.parameters()

    def reset_totals(self) -> None:
        self.formatted_str = ""
        p = self.proto
        p.total_definition_count = p.total_run_count = 0
        for s in _STATS[1:]:
            setattr(p, "total_" + s, 0)
        del p.children[:]

    def add_self(self) -> None:
        p = self.proto
        p.total_definition_count += 1
        for s in _STATS:
            setattr(p, "total_" + s, getattr(p, "total_" + s) + getattr(p, s))

    def aggregate(self, other: ShowNode) -> None:
        p, q = self.proto, other.proto
        p.total_definition_count += q.total_definition_count
        for s in _STATS:
            setattr(p, "total_" + s, getattr(p, "total_" + s) + getattr(q, "total_" + s))


def _account(node, opts) -> bool:
    node.reinit()
    if opts.account_type_regexes == [".*"]:
        return True
    return any(_full_match(r, t) for r in opts.account_type_regexes
               for t in node.node.op_types)


def _should_show(node, opts, depth: int) -> bool:
    if node.name == ROOT:
        return True
    p = node.proto
    if (below_totals(p, opts) or p.parameters < opts.min_params
            or p.float_ops < opts.min_float_ops or p.run_count < opts.min_occurrence
            or depth > opts.max_depth):
        return False
    return _name_shown(node.name, opts)


def _show_with(node, children: list) -> None:
    """`node` shown with `children` under it, its totals its own plus theirs."""
    node.show_children = []
    node.reset_totals()
    node.add_self()
    for c in children:
        node.aggregate(c)
        node.show_children.append(c)


def below_totals(p, opts) -> bool:
    """Whether a node's total memory or time is under one of the options' minimums."""
    return (p.total_requested_bytes < opts.min_bytes or p.total_peak_bytes < opts.min_peak_bytes
            or p.total_residual_bytes < opts.min_residual_bytes
            or p.total_output_bytes < opts.min_output_bytes
            or p.total_exec_micros < opts.min_micros
            or p.total_accelerator_exec_micros < opts.min_accelerator_micros
            or p.total_cpu_exec_micros < opts.min_cpu_micros)


def _name_shown(name: str, opts) -> bool:
    if opts.show_name_regexes != [".*"] and not any(
            _full_match(r, name) for r in opts.show_name_regexes):
        return False
    return not any(_full_match(r, name) for r in opts.hide_name_regexes)


def _trimmed(node, opts) -> bool:
    return any(_full_match(r, node.name) for r in opts.trim_name_regexes)


def _self_total(node, value: int, total: str, fmt) -> str:
    return (fmt(value) + "/" if node.account else "--/") + total


def format_node(node: ShowNode, opts) -> str:
    """One row of the scope/graph/code views: `name (params, flops, ...)` (TFShow)."""
    p, info = node.proto, []
    if opts.has("params"):
        shape = "x".join(str(d) for d in node.node.shape)
        if shape:
            info.append(shape)
        info.append(_self_total(node, p.parameters,
                                format_number(p.total_parameters) + " params", format_number))
    if opts.has("float_ops"):
        info.append(_self_total(node, p.float_ops,
                                format_number(p.total_float_ops) + " flops", format_number))
    for sel, attr in (("bytes", "requested_bytes"), ("peak_bytes", "peak_bytes"),
                      ("residual_bytes", "residual_bytes"), ("output_bytes", "output_bytes")):
        if opts.has(sel):
            info.append(_self_total(node, getattr(p, attr),
                                    format_memory(getattr(p, "total_" + attr)), format_memory))
    times = []
    if opts.has("micros"):
        times = ["exec_micros", "accelerator_exec_micros", "cpu_exec_micros"]
    else:
        times = [t for sel, t in (("accelerator_micros", "accelerator_exec_micros"),
                                  ("cpu_micros", "cpu_exec_micros")) if opts.has(sel)]
    for t in times:
        info.append(_self_total(node, getattr(p, t), format_time(getattr(p, "total_" + t)),
                                format_time))
    if opts.has("device") and len(p.devices):
        info.append("|".join(p.devices))
    if opts.has("op_types"):
        info.append("|".join(sorted(node.node.op_types)))
    if opts.has("occurrence"):
        run = _self_total(node, p.run_count, format_number(p.total_run_count), format_number)
        definition = ("1/" if node.account else "--/") + format_number(
            p.total_definition_count)
        info.append(run + "|" + definition)
    if opts.has("input_shapes"):
        info.append("|".join(
            f"{i}:{'x'.join(str(d) for d in s)}" if s else f"{i}:unknown"
            for i, s in node.node.input_shapes().items()))
    return f"{node.name} ({', '.join(info)})"


def format_legend(opts) -> str:
    legends = []
    for sel, text in (("params", "# parameters"), ("float_ops", "# float_ops"),
                      ("bytes", "requested bytes"), ("peak_bytes", "peak bytes"),
                      ("residual_bytes", "residual bytes"), ("output_bytes", "output bytes")):
        if opts.has(sel):
            legends.append(text)
    legends += _time_legends(opts)
    for sel, text in (("device", "assigned devices"), ("op_types", "op types"),
                      ("occurrence", "op count (run|defined)"),
                      ("input_shapes", "input shapes")):
        if opts.has(sel):
            legends.append(text)
    return f"node name | {' | '.join(legends)}\n"


def _time_legends(opts) -> list:
    if opts.has("micros"):
        return ["total execution time", "accelerator execution time", "cpu execution time"]
    return [t for s, t in (("accelerator_micros", "accelerator execution time"),
                           ("cpu_micros", "cpu execution time")) if opts.has(s)]


def _print_tree(roots: list, opts, depth: int, last_ident: int, visits: set | None) -> list:
    """PrintScope / PrintGraph: which nodes show, their children, totals and rows."""
    shown = []
    for node in roots:
        if visits is not None:
            if node.name in visits:
                continue
            visits.add(node.name)
        show = _should_show(node, opts, depth)
        ident = last_ident + 2 if show else last_ident
        cnodes = []
        if not _trimmed(node, opts) and depth <= opts.max_depth:
            cnodes = _print_tree(node.show_children, opts, depth + 1, ident, visits)
        if show:
            node.show_children = []
            if opts.account_displayed_op_only:
                node.reset_totals()
                node.add_self()
            for c in sort_nodes(cnodes, opts):
                node.show_children.append(c)
                if opts.account_displayed_op_only:
                    node.aggregate(c)
            node.formatted_str = " " * last_ident + format_node(node, opts) + "\n"
            shown.append(node)
        else:
            shown.extend(cnodes)
    return shown


def _format_tree(roots: list, out: list, proto) -> None:
    for node in roots:
        out.append(node.formatted_str)
        child = proto.children.add()
        child.MergeFrom(node.proto)
        _format_tree(node.show_children, out, child)


def _finish(root: ShowNode, roots: list, opts, visits) -> ShowNode:
    root.show_children = list(roots)
    root = _print_tree([root], opts, 1, 0, visits)[0]
    out = [format_legend(opts) + root.formatted_str]
    _format_tree(root.show_children, out, root.proto)
    root.formatted_str = "".join(out)
    return root


def _search_root(roots: list, regexes: list, visited: set | None) -> list:
    res = []
    for node in roots:
        if visited is not None:
            if node.name in visited:
                continue
            visited.add(node.name)
        if any(_full_match(r, node.name) for r in regexes):
            res.append(node)
        else:
            res.extend(_search_root(node.show_children, regexes, visited))
    return res


class ScopeView:
    """The name-scope tree (TFScope)."""

    def __init__(self, nodes: dict[str, GraphNode]):
        self.nodes: dict[str, ShowNode] = {}
        for name in sorted(nodes):
            self.nodes[name] = ShowNode(nodes[name])
            prefix = name
            while "/" in prefix:
                prefix = prefix.rsplit("/", 1)[0]
                if prefix not in self.nodes and prefix not in nodes:
                    self.nodes[prefix] = ShowNode(GraphNode(prefix, SCOPE_PARENT, -1))
        roots = []
        for name in sorted(self.nodes):
            node = self.nodes[name]
            if "/" in name:
                self.nodes[name.rsplit("/", 1)[0]].children.append(node)
            else:
                roots.append(node)
        self.root = ShowNode(GraphNode(ROOT, SCOPE_PARENT, -1))
        self.root.children = roots

    def _account(self, roots: list, opts) -> list:
        act = []
        for node in roots:
            node.reset_totals()
            act_children = self._account(node.children, opts)
            node.account = _account(node, opts)
            if node.account or act_children:
                _show_with(node, act_children)
                act.append(node)
        return act

    def show(self, opts) -> ShowNode:
        self.root.reset_totals()
        roots = self._account(self.root.children, opts)
        for n in roots:
            self.root.aggregate(n)
        if opts.start_name_regexes != [".*"]:
            roots = _search_root(roots, opts.start_name_regexes, None)
        return _finish(self.root, roots, opts, None)


class GraphView:
    """The dataflow tree: each node's children are its inputs (TFGraph)."""

    def __init__(self, nodes: dict[str, GraphNode]):
        self.nodes = {name: ShowNode(nodes[name]) for name in sorted(nodes)}
        nonroots = set()
        for node in self.nodes.values():
            for _, inp in sorted(node.node.inputs.items()):
                nonroots.add(inp)
                if inp in self.nodes:
                    node.children.append(self.nodes[inp])
        self.root = ShowNode(GraphNode(ROOT, GRAPH_PARENT, -1))
        self.root.children = [n for name, n in self.nodes.items() if name not in nonroots]

    def _account(self, roots: list, opts, visits: set) -> list:
        act = []
        for node in roots:
            if node.name in visits:
                continue
            visits.add(node.name)
            act_children = self._account(node.children, opts, visits)
            node.account = _account(node, opts)
            if node.account:
                _show_with(node, act_children)
                act.append(node)
            else:
                act.extend(act_children)
        return act

    def show(self, opts) -> ShowNode:
        self.root.reset_totals()
        self.root.show_children = []
        roots = self._account(self.root.children, opts, set())
        for n in roots:
            self.root.aggregate(n)
        if opts.start_name_regexes != [".*"]:
            roots = _search_root(roots, opts.start_name_regexes, set())
        return _finish(self.root, roots, opts, set())
