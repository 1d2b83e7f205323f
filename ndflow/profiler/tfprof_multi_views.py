"""tfprof's views whose rows aggregate several graph nodes (TensorFlow's tfprof_op.cc,
tfprof_show_multi.cc): the 'op' view, one row per op type, with the cumulative and own
percentages of the selected statistics, and its MultiGraphNodeProto chain."""

from __future__ import annotations

from ndflow.core.protos import tfprof_pb
from ndflow.profiler.tfprof_stats import ROOT, format_memory, format_number, format_time
from ndflow.profiler.tfprof_views import (
    _MULTI_STATS,
    ShowNode,
    _full_match,
    _name_shown,
    _time_legends,
    below_totals,
    sort_nodes,
)


class MultiNode:
    """The graph nodes of one op type (TFMultiGraphNode + ShowMultiNode)."""

    def __init__(self, name: str, nodes: list):
        self.name = name
        self.nodes = sorted(nodes, key=lambda n: n.name)
        self.proto = tfprof_pb.MultiGraphNodeProto()
        self.account = False
        self.snapshot: list = []

    def reinit(self, type_regexes: list) -> bool:
        if not type_regexes:
            picked = []
        elif type_regexes == [".*"]:
            picked = list(self.nodes)
        else:
            picked = [n for r in type_regexes for n in self.nodes
                      if any(_full_match(r, t) for t in n.op_types)]
        by_name = {n.name: n for n in picked}
        self.snapshot = [by_name[k] for k in sorted(by_name)]
        p = self.proto
        del p.graph_nodes[:]
        self.op_types = set()
        for n in self.snapshot:
            self.op_types |= n.op_types
            s = ShowNode(n)
            s.add_self()
            p.graph_nodes.add().MergeFrom(s.proto)
        p.name = self.name
        for s in _MULTI_STATS:
            setattr(p, s, 0)
        p.float_ops = sum(n.float_ops for n in picked)
        p.parameters = sum(n.parameters() for n in picked)
        if not picked:
            return type_regexes == [".*"]
        return True

    def reset_totals(self) -> None:
        for s in _MULTI_STATS:
            setattr(self.proto, "total_" + s, 0)
        del self.proto.children[:]

    def add_self(self) -> None:
        p = self.proto
        for s in _MULTI_STATS:
            setattr(p, "total_" + s, getattr(p, "total_" + s) + getattr(p, s))

    def aggregate(self, other) -> None:
        p, q = self.proto, other.proto
        for s in _MULTI_STATS:
            setattr(p, "total_" + s, getattr(p, "total_" + s) + getattr(q, "total_" + s))


def _should_show(node, opts, depth: int) -> bool:
    p = node.proto
    if (below_totals(p, opts) or p.total_parameters < opts.min_params
            or p.total_float_ops < opts.min_float_ops or depth > opts.max_depth):
        return False
    return _name_shown(node.name, opts)


def _pct_cell(text: str, total: int, own: int, root_total: int, gate: int) -> str:
    accu = pct = 0.0
    if gate > 0:
        accu, pct = 100.0 * total / root_total, 100.0 * own / root_total
    return f"{f'{text} ({accu:.2f}%, {pct:.2f}%)':>30}"


def _format_op_node(node: MultiNode, root: MultiNode, opts) -> str:
    p, r, attrs = node.proto, root.proto, []
    for sel, attr in (("bytes", "requested_bytes"), ("peak_bytes", "peak_bytes"),
                      ("residual_bytes", "residual_bytes"), ("output_bytes", "output_bytes")):
        if opts.has(sel):
            own = getattr(p, attr)
            attrs.append(_pct_cell(format_memory(own), getattr(p, "total_" + attr), own,
                                   getattr(r, "total_" + attr), own))
    for legend in _time_legends(opts):
        attr = {"total execution time": "exec_micros",
                "accelerator execution time": "accelerator_exec_micros",
                "cpu execution time": "cpu_exec_micros"}[legend]
        total = getattr(p, "total_" + attr)
        attrs.append(_pct_cell(format_time(getattr(p, attr)), total, getattr(p, attr),
                               getattr(r, "total_" + attr), total))
    if opts.has("params"):
        attrs.append(_pct_cell(format_number(p.parameters) + " params", p.total_parameters,
                               p.parameters, r.total_parameters, p.total_parameters))
    if opts.has("float_ops"):
        attrs.append(_pct_cell(format_number(p.float_ops) + " float_ops", p.total_float_ops,
                               p.float_ops, r.total_float_ops, p.total_float_ops))
    if opts.has("device"):
        attrs.append("|".join(sorted({n.device for n in node.snapshot})))
    if opts.has("op_types"):
        attrs.append("|".join(sorted(node.op_types)))
    if opts.has("occurrence"):
        attrs.append(f"{f'0|{len(p.graph_nodes)}':>10}")
    line = f"{node.name:<25}{', '.join(attrs)}\n"
    if opts.has("input_shapes"):
        shapes = _format_input_shapes(p)
        if shapes:
            line = f"{line}\n{shapes}\n\n"
    return line


def _format_input_shapes(proto) -> str:
    counts: dict[str, int] = {}
    for g in proto.graph_nodes:
        vec = []
        for idx in sorted(g.input_shapes):
            dims = [d.size for d in g.input_shapes[idx].dim]
            vec.append(f"{idx}:{'x'.join(str(d) for d in dims)}" if dims else f"{idx}:unknown")
        key = "input_type: " + ",\t".join(vec)
        counts[key] = counts.get(key, 0) + 1
    # ordered by run count (all 0 without step stats: a stable sort keeps the key order)
    return "\n".join(f"{k}\t(run*0|defined*{n})\texec_time: 0us"
                     for k, n in sorted(counts.items()))


class OpView:
    """One row per op type (TFOp)."""

    def __init__(self, nodes: dict):
        by_type: dict[str, list] = {}
        for n in nodes.values():
            by_type.setdefault(n.op, []).append(n)
        self.cnodes = [MultiNode(t, by_type[t]) for t in sorted(by_type)]
        self.root = MultiNode(ROOT, [])
        self.root.proto.name = ROOT

    def show(self, opts) -> tuple[MultiNode, str]:
        root = self.root
        root.reset_totals()
        if not self.cnodes:
            return root, ""
        for n in self.cnodes:
            n.account = n.reinit(opts.account_type_regexes)
            n.reset_totals()
            n.add_self()
        nodes = sort_nodes(self.cnodes, opts)
        account_nodes, pre = [], None
        for n in reversed(nodes):
            if n.account:
                if pre is not None:
                    n.aggregate(pre)
                account_nodes.append(n)
                pre = n
        account_nodes.reverse()
        if pre is not None:
            root.aggregate(pre)
        start = 0
        if opts.start_name_regexes and opts.start_name_regexes != [".*"]:
            start = next((i for i, n in enumerate(account_nodes)
                          if any(_full_match(r, n.name) for r in opts.start_name_regexes)),
                         len(account_nodes))
        show_nodes = []
        for depth, n in enumerate(account_nodes[start:]):
            if any(_full_match(r, n.name) for r in opts.trim_name_regexes) or \
                    depth > opts.max_depth:
                break
            if _should_show(n, opts, depth):
                show_nodes.append(n)
        pre = None
        for n in reversed(show_nodes):
            if opts.account_displayed_op_only:
                n.reset_totals()
                n.add_self()
                if pre is not None:
                    n.aggregate(pre)
            pre = n
        if opts.account_displayed_op_only:
            root.reset_totals()
            if pre is not None:
                root.aggregate(pre)
        text = _multi_legend(opts) + "".join(_format_op_node(n, root, opts) for n in show_nodes)
        parent = root.proto
        for n in show_nodes:
            del parent.children[:]
            child = parent.children.add()
            child.CopyFrom(n.proto)
            parent = child
        return root, text


def _multi_legend(opts) -> str:
    legends = [t for s, t in (("bytes", "requested bytes"), ("peak_bytes", "peak bytes"),
                              ("residual_bytes", "residual bytes"),
                              ("output_bytes", "output bytes")) if opts.has(s)]
    legends += _time_legends(opts)
    legends += [t for s, t in (("params", "# parameters"), ("float_ops", "# float_ops"),
                               ("device", "assigned devices"), ("op_types", "op types"),
                               ("occurrence", "op occurrence (run|defined)"),
                               ("input_shapes", "input shapes")) if opts.has(s)]
    return f"node name | {' | '.join(legends)}\n"
