"""tfprof's 'code' view (TensorFlow's tfprof_code.cc), reduced: a tree of the Python frames
that created each op (`file:line:function`, outermost first), each row the statistics of the
ops created under it as `name (self/total ...)`. The frames are those ndflow records for an
op (the user's, not TensorFlow's library frames); there is no pprof output."""

from __future__ import annotations

import os

from ndflow.profiler.tfprof_multi_views import MultiNode, _should_show
from ndflow.profiler.tfprof_stats import ROOT, format_number, format_time
from ndflow.profiler.tfprof_views import format_legend, sort_nodes


class _CodeNode(MultiNode):
    def __init__(self, name: str):
        super().__init__(name, [])
        self.children: dict[str, _CodeNode] = {}
        self.show_children: list = []
        self.formatted_str = ""


def _frame_name(frame) -> str:
    file, lineno, function, _ = frame
    return f"{os.path.basename(file)}:{lineno}:{function}"


class CodeView:
    def __init__(self, nodes: dict):
        self.root = _CodeNode(ROOT)
        for name in sorted(nodes):
            node = nodes[name]
            if not node.trace:
                continue
            cur = self.root
            for frame in node.trace:
                key = _frame_name(frame)
                cur = cur.children.setdefault(key, _CodeNode(key))
            cur.nodes.append(node)

    def _account(self, node: _CodeNode, opts) -> None:
        node.account = node.reinit(opts.account_type_regexes) or node is self.root
        node.reset_totals()
        node.add_self()
        for c in node.children.values():
            self._account(c, opts)
            node.aggregate(c)

    def _print(self, node: _CodeNode, opts, depth: int, ident: int) -> list:
        show = node is self.root or _should_show(node, opts, depth)
        cnodes = []
        if depth <= opts.max_depth:
            for c in node.children.values():
                cnodes += self._print(c, opts, depth + 1, ident + 2 if show else ident)
        if not show:
            return cnodes
        node.show_children = sort_nodes(cnodes, opts)
        node.formatted_str = " " * ident + _format(node, opts) + "\n"
        return [node]

    def show(self, opts) -> tuple[MultiNode, str]:
        self._account(self.root, opts)
        root = self._print(self.root, opts, 0, 0)[0]
        out = [format_legend(opts), root.formatted_str]
        _fill(root, out, root.proto)
        return root, "".join(out)


def _fill(node, out: list, proto) -> None:
    del proto.children[:]
    for c in node.show_children:
        out.append(c.formatted_str)
        child = proto.children.add()
        child.CopyFrom(c.proto)
        _fill(c, out, child)


def _format(node, opts) -> str:
    p, info = node.proto, []
    own = "" if node.name == ROOT else None
    for sel, attr, fmt, unit in (("params", "parameters", format_number, " params"),
                                 ("float_ops", "float_ops", format_number, " flops"),
                                 ("micros", "exec_micros", format_time, "")):
        if opts.has(sel):
            prefix = "--/" if own == "" else fmt(getattr(p, attr)) + "/"
            info.append(prefix + fmt(getattr(p, "total_" + attr)) + unit)
    return f"{node.name} ({', '.join(info)})"

