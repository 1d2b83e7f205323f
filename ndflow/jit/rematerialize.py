"""Rematerialization: cheap values are recomputed where they are read, not stored.

XLA duplicates a cheap elementwise producer into every fusion that consumes it (rule 5 of the
reference's section 4): only expensive values (exp, log, tanh, rsqrt, sqrt, divide, pow, erf,
reductions) and the inputs and outputs of library calls cross memory between kernels. The
planner's groups come out of `fusion.py` with every value another group reads as an output;
a symbolic backward pass reads many forward intermediates (a LayerNorm + GELU block's
normalized value, `0.5 * h`, `h * h`, `1 + tanh(...)`, ...), so the forward kernel would write
eight tensors for the one it reads. `rematerialize` rewrites the plan instead:

- for each group G (in plan order) and each tensor t that G reads from another group P, where
  t's producer is cheap (`fusion_rules.duplicable`) and t is not needed in memory anyway
  (fetched, read by a library call or by a group of views only), G gets a copy of t's
  producer and, recursively, of the cheap producers inside P that it reads, down to what P
  reads itself or to P's expensive values (which P then writes, when it did not);
- bounded: at most `MAX_TREE_OPS` computing ops copied per tensor and `MAX_GROUP_OPS` per
  group (compile time and FLOPs), never where G reads t more than once per element (a
  broadcast would recompute it per use), and only when the bytes the copy reads that G did not
  read already (plus P's new writes) stay within `BANDWIDTH_SLACK` times t's own bytes:
  recomputing must not move more memory than reading t did;
- then every group writes only what some unit still reads (or the cluster returns), drops the
  ops nothing needs, and a group left with no outputs disappears.

Groups keep the copies in `ops` (topological order) and list them in `recomputed`. The plan's
order stays topological: a copy reads only what its original group read or wrote.
"""

from __future__ import annotations

import math

from ndflow.core.graph import Operation
from ndflow.jit import fusion_rules as rules
from ndflow.jit.codegen import emitters

MAX_TREE_OPS = 16       # computing ops copied to recompute one tensor
MAX_GROUP_OPS = 48      # computing ops copied into one group
BANDWIDTH_SLACK = 1.25  # bytes a copy may newly read, in units of the tensor it replaces
UNKNOWN_DIM = 1024      # what an unknown dimension counts for in those bytes


def rematerialize(units: list, live: set, order: dict) -> list:
    """`units` (FusionGroups and Operations in topological order, boundaries set) with cheap
    values recomputed by the groups reading them; `live`: tensors the cluster returns or ops
    outside it read; `order`: op -> topological index."""
    groups = [u for u in units if not isinstance(u, Operation)]
    provider = {t: g for g in groups for t in g.outputs}
    # values in memory whatever the groups do: fetched, read by a library call, or read by a
    # group of views only (a reshape of a value in memory costs nothing; computing the value
    # there instead would write it)
    forced = set(live)
    for u in units:
        if isinstance(u, Operation) or not rules.computing_ops(u.ops):
            forced.update(u.inputs)
    state = _State(provider, forced, {g: _space(g) for g in groups})
    for g in groups:
        if rules.computing_ops(g.ops):
            _recompute_into(g, state, order)
    return _finish(units, live)


def _bytes(t) -> int:
    """`t`'s size in bytes, an unknown dimension (a batch left open) counted as the same size
    `UNKNOWN_DIM` everywhere, as the planner takes equal unknown dimensions as equal."""
    d = rules.dims(t)
    n = 1
    for x in d if d is not None else [UNKNOWN_DIM]:
        n *= UNKNOWN_DIM if x is None else x
    return n * t.dtype.size


class _State:
    def __init__(self, provider, forced, space):
        self.provider = provider    # tensor -> the group writing it
        self.forced = forced
        self.space = space          # group -> a tensor of its iteration space's size
        self.new_outputs: dict = {}  # group -> values it must now write


def _space(g):
    roots = rules.root_reductions(g.ops)
    if roots:
        return roots[0].inputs[0]
    return max(g.outputs, key=lambda t: _bytes(t) // t.dtype.size)  # a row kernel writes row values


def _recompute_into(g, state: _State, order: dict) -> None:
    budget = MAX_GROUP_OPS
    while True:
        inside = set(g.ops)
        reads = set(g.inputs)
        computed = {t for op in g.ops for t in op.outputs}
        best = None
        for t in g.inputs:
            p = state.provider.get(t)
            if p is None or t in state.forced or not rules.duplicable(t.op):
                continue
            if any(rules.broadcasts(t, c) for c in t.consumers() if c in inside):
                continue  # read more than once per element: recomputed per read
            tree = _tree(t, p, reads, computed, state)
            if tree is None:
                continue
            ops, leaves, writes, cost = tree
            n = rules.computing_ops(ops)
            if n > budget or cost > BANDWIDTH_SLACK * _bytes(t):
                continue
            if best is None or cost < best[0]:
                best = (cost, t, p, ops, leaves, writes, n)
        if best is None:
            return
        _, t, p, ops, leaves, writes, n = best
        budget -= n
        g.ops = sorted(set(g.ops) | set(ops), key=order.__getitem__)
        g.recomputed = sorted(set(g.recomputed) | set(ops), key=order.__getitem__)
        g.inputs = [x for x in g.inputs if x is not t] + leaves
        for x in writes:
            state.new_outputs.setdefault(p, set()).add(x)
            state.provider[x] = p


def _writable(x, p, space) -> bool:
    """Whether group `p`'s kernel can write its value `x` too: one of its iteration space's
    size, or in a row kernel (fusion.py) a per-row value (its row reductions included)."""
    rows = emitters.row_reductions(p.ops)
    if rows:
        space_dims = rules.dims(rows[0].inputs[0])
        k = min(emitters.static_axes(rows[0]) or [0]) % max(len(space_dims), 1)
        n_rows = math.prod(space_dims[:k]) if None not in space_dims[:k] else None
        return n_rows is not None and rules.numel(x) == n_rows
    return not emitters.is_reduction(x.op) and rules.same_numel(x, space)


def _tree(t, p, reads: set, computed: set, state: _State):
    """What recomputing `t` (written by group `p`) inside a group that reads `reads` and
    computes `computed` takes: (ops to copy in topological order, tensors to read, values `p`
    must newly write, bytes newly moved), or None when it cannot or may not be done."""
    p_ops, p_inputs = set(p.ops), set(p.inputs)
    written = set(p.outputs) | state.new_outputs.get(p, set())
    ops, leaves, writes, seen, copied = [], [], [], set(), []
    cost = 0

    def visit(x) -> bool:
        nonlocal cost
        if x in seen or x is not t and (x in computed or x in reads):
            return True
        seen.add(x)
        op = x.op
        if op not in p_ops or x in p_inputs:        # p reads it from outside: so do we
            leaves.append(x)
            cost += _bytes(x)
            return True
        if op.type == "Const":                      # a literal baked into p's kernel
            ops.append(op)
            return True
        if x is not t and (x in state.forced or not rules.duplicable(op)):
            leaves.append(x)                        # stays in memory: read it
            cost += _bytes(x)
            if x not in written:
                if not _writable(x, p, state.space[p]):
                    return False                    # p's kernel cannot write it
                writes.append(x)
                cost += _bytes(x)
            return True
        copied.append(op)                           # counted before its producers
        if rules.computing_ops(copied) > MAX_TREE_OPS:
            return False
        if not all(visit(y) for y in rules.data_inputs(op)):
            return False
        ops.append(op)
        return True

    if not visit(t):
        return None
    return ops, leaves, writes, cost


def _finish(units: list, live: set) -> list:
    """Every group writes what some unit reads (or the cluster returns) and keeps the ops those
    need; groups writing nothing are dropped, until nothing changes."""
    alive = list(units)
    while True:
        read = set(live)
        for u in alive:
            read.update(u.inputs)
        changed = False
        for u in alive:
            if isinstance(u, Operation):
                continue
            copies = set(u.recomputed)
            outputs = [t for op in u.ops if op not in copies for t in op.outputs if t in read]
            if len(outputs) != len(u.outputs) or any(a is not b for a, b in
                                                     zip(outputs, u.outputs)):
                u.outputs = outputs
                changed = True
            changed |= _prune(u)
        kept = [u for u in alive if isinstance(u, Operation) or u.outputs]
        if len(kept) == len(alive) and not changed:
            return kept
        alive = kept


def _prune(g) -> bool:
    """Drops the ops of `g` that none of its outputs needs; its inputs follow. Whether
    anything changed."""
    inside = set(g.ops)
    need, stack = set(), [t.op for t in g.outputs]
    while stack:
        op = stack.pop()
        if op in need:
            continue
        need.add(op)
        stack.extend(x.op for x in op.inputs if x.op in inside)
    if len(need) != len(g.ops):
        g.ops = [op for op in g.ops if op in need]
        g.recomputed = [op for op in g.recomputed if op in need]
        g.kind = rules.fusion_kind(g.ops)
    inputs, seen = [], set()
    for op in g.ops:
        for x in rules.data_inputs(op):
            if x.op not in need and x not in seen:
                seen.add(x)
                inputs.append(x)
    changed = len(inputs) != len(g.inputs) or any(a is not b for a, b in zip(inputs, g.inputs))
    g.inputs = inputs
    return changed
