"""A small pattern matcher for graph rewrites: a pass is a table of (pattern, replacement) rules.

A pattern describes an op and, recursively, the ops producing its inputs; it is matched
upwards from a root op (the last op of the pattern, whose outputs the replacement takes
over):

    MATMUL = P({"MatMul"}, Any("a"), Any("b"), name="matmul")
    Rule("matmul_bias", P({"BiasAdd"}, MATMUL, Any("bias"), name="bias_add"), emit_fused)

- `P(types, *inputs)` matches an op of one of `types` with exactly those inputs;
  `commutative=True` also tries its two inputs swapped. `Any(name)` matches any tensor and
  captures it; a name used twice must capture the same tensor.
- An inner op is absorbed by the replacement, so it must be private to the pattern: its
  single output read only by its parent in the pattern, not fetched, fed, a target or a
  control input, and on the root's device. `shared=True` matches an op that others also
  read; it stays in the graph (and another rule may replace it).
- `Rule.where(view, match)` adds conditions (dtypes, attrs, shapes); `Rule.emit(rw, match)`
  adds the replacement to the output graph and returns it. Rules are tried in table order at
  every op, from the last op of the graph to the first, so a longer pattern claims its ops
  before a shorter one inside it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ndflow.core.graph import Graph, Operation, SymbolicTensor
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.pass_context import PassContext


@dataclass(frozen=True)
class Pat:
    """An op pattern (`types` set) or, with `types` None, a leaf capturing any tensor."""

    types: frozenset | None
    inputs: tuple = ()
    name: str | None = None
    commutative: bool = False
    shared: bool = False


def P(types, *inputs: Pat, name: str | None = None, commutative: bool = False,
      shared: bool = False) -> Pat:
    return Pat(frozenset(types), tuple(inputs), name, commutative, shared)


def Any(name: str) -> Pat:  # noqa: N802 - reads as a pattern constructor, like P
    return Pat(None, (), name)


@dataclass
class Match:
    """A matched pattern: named ops and tensors, and the inner ops it absorbs."""

    root: Operation
    ops: dict = field(default_factory=dict)
    tensors: dict = field(default_factory=dict)
    absorbed: list = field(default_factory=list)

    def all_ops(self) -> list:
        return self.absorbed + [self.root]


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: Pat
    emit: Callable[[GraphRewriter, Match], Operation]
    where: Callable[[GraphView, Match], bool] = lambda view, match: True


@dataclass
class GraphView:
    """Who reads what in the graph being rewritten, and what the caller must still see."""

    consumers: dict
    control_sources: set
    fetched: set
    fed: set
    preserved: set

    @classmethod
    def of(cls, graph: Graph, ctx: PassContext) -> GraphView:
        consumers: dict = defaultdict(list)
        controls: set = set()
        for op in graph.get_operations():
            for t in op.inputs:
                consumers[t].append(op)
            controls.update(op.control_inputs)
        return cls(consumers, controls, ctx.fetched_tensor_names(), ctx.fed_tensor_names(),
                   ctx.preserved_op_names())

    def is_private(self, t: SymbolicTensor, consumer: Operation) -> bool:
        """`t` is read by `consumer` only, and nobody else can see its op."""
        op = t.op
        return (len(op.outputs) == 1 and self.consumers[t] == [consumer]
                and t.name not in self.fetched and t.name not in self.fed
                and op.name not in self.preserved and op not in self.control_sources)


def matches(view: GraphView, pat: Pat, op: Operation) -> Iterator[Match]:
    """Every way `op` matches `pat` as its root."""
    if op.type not in pat.types:
        return
    yield from _match_op(view, pat, op, op, Match(op))


def _match_op(view, pat, op, root, m) -> Iterator[Match]:
    if len(op.inputs) != len(pat.inputs):
        return
    orders = [pat.inputs]
    if pat.commutative and len(pat.inputs) == 2:
        orders.append(pat.inputs[::-1])
    for order in orders:
        yield from _match_inputs(view, list(zip(order, op.inputs)), op, root,
                                 _bind(m, pat.name, op, "ops"))


def _match_inputs(view, pairs, parent, root, m) -> Iterator[Match]:
    if m is None:
        return
    if not pairs:
        yield m
        return
    (pat, t), rest = pairs[0], pairs[1:]
    if pat.types is None:
        yield from _match_inputs(view, rest, parent, root, _bind(m, pat.name, t, "tensors"))
        return
    op = t.op
    if op.type not in pat.types or op.device != root.device:
        return
    if not pat.shared and not view.is_private(t, parent):
        return
    for inner in _match_op(view, pat, op, root, _copy(m)):
        if not pat.shared:
            inner.absorbed.append(op)
        yield from _match_inputs(view, rest, parent, root, inner)


def _copy(m: Match) -> Match:
    return Match(m.root, dict(m.ops), dict(m.tensors), list(m.absorbed))


def _bind(m: Match | None, name: str | None, value, kind: str) -> Match | None:
    if m is None or name is None:
        return m
    table = getattr(m, kind)
    if name in table:
        return m if table[name] is value else None
    m = _copy(m)
    getattr(m, kind)[name] = value
    return m


def rewrite(graph: Graph, ctx: PassContext, rules: list) -> Graph:
    """Applies the first matching rule at each op (last op first); `graph` itself if none."""
    view = GraphView.of(graph, ctx)
    chosen: dict = {}       # root -> (rule, match)
    claimed: set = set()
    for op in reversed(graph.get_operations()):
        if op in claimed:
            continue
        found = _first_match(view, rules, op, claimed)
        if found is not None:
            chosen[op] = found
            claimed.update(found[1].all_ops())
    if not chosen:
        return graph
    absorbed = {o for _, m in chosen.values() for o in m.absorbed}
    rw = GraphRewriter(graph)
    for op in graph.get_operations():
        if op in absorbed:
            continue
        if op not in chosen:
            rw.copy_op(op)
            continue
        rule, m = chosen[op]
        new = rule.emit(rw, m)
        rw.map[op] = new
        for old_t, new_t in zip(op.outputs, new.outputs):
            rw.map[old_t] = new_t
    return rw.graph


def _first_match(view, rules, op, claimed):
    for rule in rules:
        for m in matches(view, rule.pattern, op):
            if not claimed.intersection(m.absorbed) and rule.where(view, m):
                return rule, m
    return None


def control_inputs(rw: GraphRewriter, m: Match) -> list:
    """The replacement's control inputs: those of every op it replaces."""
    return [rw.map[c] for op in m.all_ops() for c in op.control_inputs]
