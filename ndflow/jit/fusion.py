"""XLA's fusion rules: which ops of a compiled cluster become one generated kernel.

`plan_fusions(ops, live_outputs)` splits a cluster's ops (topological order) into
`FusionGroup`s and the `Operation`s that stay library calls (MatMul, Conv2D, pooling, ...),
following the reference's section 4 rules, applied consumer-first as XLA's instruction
fusion does:

- *loop* fusions: elementwise chains with the broadcasts, reshapes and casts between them, one
  loop over the output;
- *input* fusions: a reduction (Sum/Mean/Max/Min/Prod/All/Any over constant axes) is the root
  ("hero") and its elementwise producers are fused in; a reduction is never fused into its
  consumers, but for row kernels. Sibling reductions over the same input space that share a
  read of it become one kernel (mean and variance), unrelated ones do not (see
  _share_a_read);
- *row* kernels (XLA's reduction epilogue fusion, `--xla_gpu_enable_reduction_epilogue_fusion`,
  on by default): a loop fusion takes in the reductions over its own innermost dimensions
  that it reads back (LayerNorm's mean and variance) and the per-row math on them, so a row
  is reduced and normalized while it is in L1, and the column sums of the values it reads
  (a LayerNorm gradient's gamma and beta sums of the upstream gradient) (see
  _merge_row_producers);
- an expensive producer (exp, log, tanh, sqrt, divide, pow, erf, ...) is never computed twice:
  it is not fused where the consumer reuses its elements (a broadcast), and a producer with
  users in several places is fused into one group that also writes it out (XLA's
  producer-consumer multi-output fusion) rather than recomputed elsewhere;
- the bandwidth guard: a producer whose inputs are larger than its output is never copied
  into several groups (it may still be computed once, by one group writing it out);
- an op belongs to at most one group, and merging never creates a cycle between units;
- then cheap values are recomputed, not stored (rematerialize.py): a group reading a value
  that a cheap elementwise producer computes in another group copies that producer (and the
  cheap ones behind it) and reads what they read, so a group writes only what library calls,
  the cluster's outputs and other groups' expensive or unaffordable recomputations need. A
  LayerNorm + GELU block's forward kernel writes tanh and the GELU output, not the eight
  intermediates its symbolic gradient reads.

The per-op predicates (element counts, broadcasts, the bandwidth guard, what may be
duplicated) are in `fusion_rules.py`. What the code generator can emit (op types, dtypes,
static axes) is asked of `ndflow.jit.codegen.emitters`, so the plan never holds a group that
codegen cannot compile for a reason the graph already shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ndflow.core.graph import Operation
from ndflow.jit import fusion_rules as rules
from ndflow.jit.codegen import emitters
from ndflow.jit.flags import xla_flags
from ndflow.jit.fusion_rules import (  # noqa: F401 - executable.py
    INPUT,
    LOOP,
    fusible,
    is_trivial,
)
from ndflow.jit.rematerialize import rematerialize


@dataclass(eq=False)
class FusionGroup:
    """Ops fused into one generated kernel.

    `ops` in topological order; `inputs`: tensors read from outside (first use order, static
    axis/shape constants excluded); `outputs`: tensors used outside the group or fetched;
    `kind`: "loop" (elementwise over the output) or "input" (reduction roots); `recomputed`:
    the ops of `ops` copied from other groups (cheap values recomputed here rather than read,
    see rematerialize.py): another group computes them too, and they are never outputs."""

    ops: list
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    kind: str = LOOP
    name: str = ""
    recomputed: list = field(default_factory=list)

    @property
    def roots(self) -> list:
        """The reductions of an input fusion (its heroes); empty for a loop fusion."""
        return rules.root_reductions(self.ops)

    def __repr__(self):
        return (f"<FusionGroup {self.name} {self.kind}: "
                f"{', '.join(op.type for op in self.ops)}>")


class _Group:
    """A group under construction."""

    def __init__(self, root: Operation):
        self.ops = {root}
        self.root = root
        self.reductions = [root] if emitters.is_reduction(root) else []

    @property
    def space(self):
        """A tensor whose shape is the group's iteration space."""
        return self.reductions[0].inputs[0] if self.reductions else self.root.outputs[0]


def plan_fusions(ops: list, live_outputs=None) -> list:
    """`ops` (topological order) as a list of FusionGroups and Operations, in topological
    order. `live_outputs`: tensors fetched from the cluster (default: the graph's `outputs`);
    a tensor read by an op outside `ops` is live too."""
    ops = list(ops)
    if not ops:
        return []
    op_set = set(ops)
    if live_outputs is None:
        live_outputs = getattr(ops[0].graph, "outputs", None) or []
    live = set(live_outputs)
    for op in ops:
        for t in op.outputs:
            if any(c not in op_set for c in t.consumers()):
                live.add(t)
    order = {op: i for i, op in enumerate(ops)}
    group_of: dict = {}
    groups: list[_Group] = []

    def consumers(op):
        return [c for t in op.outputs for c in t.consumers() if c in op_set]

    def value_consumers(op):
        """Consumers reading op's outputs as values (not as a static axis/shape)."""
        out = []
        for t in op.outputs:
            for c in t.consumers():
                if c in op_set and any(x is t for x in rules.data_inputs(c)):
                    out.append(c)
        return out

    for op in reversed(ops):
        if not rules.fusible(op):
            continue
        if op.type == "Const":
            users = value_consumers(op)
            targets = {group_of.get(c) for c in users}
            if (len(targets) == 1 and None not in targets and emitters.is_small_const(op)
                    and not any(t in live for t in op.outputs)):
                g = targets.pop()
                g.ops.add(op)
                group_of[op] = g
            continue
        users = value_consumers(op)
        is_live = any(t in live for t in op.outputs)
        static_only = [c for c in consumers(op) if c not in users]
        target = None
        if users and not emitters.is_reduction(op) and not static_only:
            target = _choose_target(op, users, is_live, group_of, order,
                                    lambda g, op=op: not _creates_cycle(g, op, op_set, group_of))
        if target is not None:
            target.ops.add(op)
            group_of[op] = target
            continue
        g = _Group(op)
        groups.append(g)
        group_of[op] = g

    _merge_siblings(groups, group_of, op_set)
    if xla_flags().xla_gpu_enable_reduction_epilogue_fusion:
        _merge_row_producers(groups, group_of, op_set)
    return rematerialize(_assemble(ops, groups, group_of, live, op_set), live, order)


def _choose_target(op, users, is_live, group_of, order, acyclic):
    """The group `op` fuses into, or None (it starts its own). `acyclic(g)`: whether adding
    `op` to `g` keeps the units acyclic."""
    user_groups = []
    for c in users:
        g = group_of.get(c)
        if g is not None and g not in user_groups:
            user_groups.append(g)
    all_inside = (len(user_groups) == 1 and not is_live
                  and all(group_of.get(c) is user_groups[0] for c in users))
    out = op.outputs[0]
    expensive = emitters.is_expensive(op)
    if all_inside:
        g = user_groups[0]
        if expensive and any(rules.broadcasts(out, c) for c in users):
            return None  # rule 5: a consumer reusing elements would recompute it
        return g if acyclic(g) else None
    # Multi-output: fuse into one consumer's group and write the value out for the others;
    # the group's iteration space must be the value's (same element count). The group that
    # runs first is tried first: the others then read the value it wrote. This computes the
    # value once, reading its inputs once, so rule 6's bandwidth guard (which keeps a
    # producer with inputs larger than its output from being copied into several consumers)
    # does not refuse it: dropout's `GreaterEqual(uniform, rate)` is fused into the forward
    # select, which writes the 1-byte mask the gradient reads, rather than run on its own.
    for g in sorted(user_groups, key=lambda g: order[g.root]):
        if not rules.same_numel(out, g.space):
            continue
        if any(rules.broadcasts(out, c) for c in users if group_of.get(c) is g):
            continue
        if acyclic(g):
            return g
    return None


def _creates_cycle(group: _Group, op, op_set, group_of) -> bool:
    """Whether adding `op` to `group` makes some path leave the group and come back."""
    members = set(group.ops) | {op}
    return _path_back(members, op_set, group_of)


def _path_back(members: set, op_set, group_of) -> bool:
    # Units outside the group are single ops or other groups; a path through any of them that
    # re-enters `members` is a cycle.
    frontier = []
    for m in members:
        for t in m.outputs:
            for c in t.consumers():
                if c in op_set and c not in members:
                    frontier.append(c)
    seen = set()
    while frontier:
        n = frontier.pop()
        if n in seen:
            continue
        seen.add(n)
        unit = group_of.get(n)
        nodes = unit.ops if unit is not None else {n}
        for u in nodes:
            seen.add(u)
            for t in u.outputs:
                for c in t.consumers():
                    if c in members:
                        return True
                    if c in op_set and c not in seen:
                        frontier.append(c)
    return False


def _merge_siblings(groups: list, group_of: dict, op_set) -> None:
    """Rule 3: input fusions reducing the same input space over the same axes become one
    multi-output kernel (one read for mean and variance), when they share a read of that
    space and no path joins them."""
    i = 0
    while i < len(groups):
        a = groups[i]
        if not a.reductions:
            i += 1
            continue
        for b in groups[i + 1:]:
            if not b.reductions or not _same_reduction(a.reductions[0], b.reductions[0]) \
                    or not _share_a_read(a, b):
                continue
            merged = a.ops | b.ops
            heroes = set(a.reductions + b.reductions)
            if any(t.op in heroes for op in merged for t in rules.data_inputs(op)):
                continue  # one needs the other's finished result: two kernels
            saved = {op: group_of[op] for op in merged}
            for op in merged:
                group_of[op] = a
            if _path_back(merged, op_set, group_of):
                group_of.update(saved)
                continue
            a.ops = merged
            a.reductions += b.reductions
            groups.remove(b)
        i += 1


def _share_a_read(a: _Group, b: _Group) -> bool:
    """Whether merging two sibling reductions saves memory traffic: both read one tensor of
    the reduced space's size, or one reads a value the other computes. Same-shaped
    reductions of unrelated data (the gamma gradients of four LayerNorms) gain nothing from
    one kernel, and it would run where the last of them is ready, reading the earlier ones'
    inputs again long after they left the caches."""
    space = a.space
    reads_a = {t for op in a.ops for t in rules.data_inputs(op) if t.op not in a.ops}
    reads_b = {t for op in b.ops for t in rules.data_inputs(op) if t.op not in b.ops}
    if any(t.op in b.ops for t in reads_a) or any(t.op in a.ops for t in reads_b):
        return True
    return any(rules.same_numel(t, space) for t in reads_a & reads_b)


# Reductions a row kernel computes per row (float accumulators, combined in any order).
_ROW_REDUCTIONS = ("Sum", "Mean", "Max", "Min")


def _merge_row_producers(groups: list, group_of: dict, op_set) -> None:
    """Row kernels: a loop fusion over [rows..., inner...] (or an input fusion reducing that
    space over its rows: column sums, as a LayerNorm gradient's bias and gamma gradients)
    takes in the groups that compute its per-row values, so LayerNorm's mean, variance and
    rsqrt are computed inside the kernel that normalizes, one row at a time while the row is
    in L1, instead of by three kernels each streaming the tensor (or a 1-element-per-row
    tensor) through memory:
    - input fusions reducing the kernel's own space over its innermost dimensions (the same
      ones for all; float sums, means, maxima, minima), with no expensive elementwise op
      over the whole space (the reduction's row loop and the kernel's main loop would both
      compute it: rule 5; one per row is computed once);
    - loop fusions over per-row values ([rows..., 1...] or [rows...]: `rsqrt(var + eps)`);
    - input fusions summing the kernel's space over the same rows (column sums) of values
      the kernel reads, when nothing in the kernel reads those sums: a LayerNorm gradient's
      gamma and beta sums of the upstream gradient, which the dx kernel reads anyway, so
      the upstream gradient is never written out (in benchmarks/jit_mlp.py 12 -> 8 kernels).
    The reduced values stay values of the kernel (codegen's RowReduce); those read elsewhere
    are written out, one per row. Merges that bring no row reduction are undone."""
    for y in list(groups):
        if y not in groups:
            continue
        space = rules.dims(y.space)
        if space is None or len(space) < 2 or any(d is None for d in space[1:]):
            continue
        split = _column_split(y, space) if y.reductions else None
        if y.reductions and split is None:
            continue
        split = split or None
        merged = []
        changed = True
        while changed:
            changed = False
            for x in _producer_groups(y, group_of, groups):
                k = _row_split(x, space, split)
                if k is None or _reads_a_column_sum(y.ops | x.ops):
                    continue
                for op in x.ops:
                    group_of[op] = y
                if _path_back(y.ops | x.ops, op_set, group_of):
                    for op in x.ops:
                        group_of[op] = x
                    continue
                y.ops |= x.ops
                groups.remove(x)
                merged.append(x)
                split = k or split
                changed = True
                break
        if merged and not any(x.reductions and not _column_sums(x, space)
                              for x in merged):   # no row reduction: undone
            for x in merged:
                y.ops -= x.ops
                groups.append(x)
                for op in x.ops:
                    group_of[op] = x


def _row_kernel_axes(r, space: list):
    """The sorted axes of reduction `r` when a row kernel over `space` can compute it (a
    float32/float64 sum, mean, max or min of that space over constant axes), else None."""
    axes = emitters.static_axes(r)
    if (r.type not in _ROW_REDUCTIONS or rules.dims(r.inputs[0]) != space or axes is None
            or not r.outputs[0].dtype.is_floating or r.outputs[0].dtype.size < 4):
        return None
    return sorted({a % len(space) for a in axes})


def _column_split(y, space: list):
    """The rows of a row kernel built on input fusion `y` whose reductions sum (or average,
    maximize, minimize) its space over its leading dimensions — the LayerNorm gradient's bias
    and gamma gradients —, 0 when they reduce everything (a loss: the rows are the row
    reductions' to decide), or None."""
    k = None
    for r in y.reductions:
        axes = _row_kernel_axes(r, space)
        if axes is None:
            return None
        n = 0 if len(axes) == len(space) else len(axes)   # 0: a full reduction (any rows)
        if axes != list(range(len(axes))) or k not in (None, n):
            return None
        k = n
    return k


def _per_row(t, space: list, k: int) -> bool:
    """Whether `t` holds one value per row of `space` (or one in all): computed once per row."""
    d = rules.dims(t)
    if d is None:
        return False
    while d and d[-1] == 1:
        d = d[:-1]
    return len(d) <= k and d == space[:len(d)] if d else True


def _row_invariant(t, space: list, k: int, memo: dict) -> bool:
    """Whether `t` is one value per row: of a per-row shape, or elementwise (broadcasts
    included) on such values only — codegen computes it once per row either way (a mean's
    gradient divides the tiled row value by the count)."""
    if t not in memo:
        memo[t] = False   # (cycles cannot occur; a guard for the recursion)
        op = t.op
        memo[t] = _per_row(t, space, k) or (
            rules.fusible(op) and not emitters.is_reduction(op) and op.type != "Const"
            and all(_row_invariant(i, space, k, memo) for i in rules.data_inputs(op)))
    return memo[t]


def _producer_groups(y, group_of, groups) -> list:
    """The groups computing values that `y` reads."""
    out = []
    for op in y.ops:
        for t in rules.data_inputs(op):
            g = group_of.get(t.op)
            if g is not None and g is not y and g in groups and g not in out:
                out.append(g)
    return out


def _column_sums(x, space: list) -> bool:
    """Whether every reduction of group `x` reduces `space` over its leading dimensions
    (column sums: LayerNorm's gamma and beta gradients), the rows of a row kernel."""
    return bool(x.reductions) and _column_split(x, space) not in (None, 0)


def _reads_a_column_sum(ops: set) -> bool:
    """Whether an op of a would-be row kernel reads a column sum the kernel computes: that
    needs every row reduced first, which a kernel walking the rows once cannot give."""
    for op in ops:
        if not emitters.is_reduction(op):
            continue
        axes, rank = emitters.static_axes(op), op.inputs[0].shape.rank
        if axes is None or not rank or 0 not in {a % rank for a in axes}:
            continue
        if any(c in ops for c in op.outputs[0].consumers()):
            return True
    return False


def _row_reduction_split(x, space: list):
    """The rows of `space` when every reduction of group `x` reduces its innermost dimensions
    from the same one on (per-row values), else None."""
    k = None
    for r in x.reductions:
        axes = _row_kernel_axes(r, space)
        if not axes or axes[0] == 0 or axes != list(range(axes[0], len(space))):
            return None
        if k not in (None, axes[0]):
            return None
        k = axes[0]
    return k


def _row_split(x, space: list, split):
    """How many leading dimensions of `space` are the rows when group `x` joins a row kernel
    over `space` (whose rows so far are `split`, None while unknown), 0 when `x` computes
    scalars only, or None when it cannot join. A group of column sums joins with its rows:
    the LayerNorm gradient's gamma/beta sums share the kernel that reads the same rows for
    the input gradient, instead of writing the upstream gradient out for it."""
    if x.reductions:
        k = _column_split(x, space) or _row_reduction_split(x, space)
        if k is None or split not in (None, k):
            return None
        memo: dict = {}
        if any(emitters.is_expensive(op) and not emitters.is_reduction(op)
               and not _row_invariant(op.outputs[0], space, k, memo) for op in x.ops):
            return None
        return k
    ks = set()
    for op in x.ops:
        for t in op.outputs:
            d = rules.dims(t)
            if d is None:
                return None
            if d == [1] * len(d):
                continue   # a scalar: per row too
            k = len(d)
            while k and d[k - 1] == 1:
                k -= 1
            if not 0 < k < len(space) or d[:k] != space[:k]:
                return None
            ks.add(k)
    if split is not None:
        ks.add(split)
    if not ks:
        return 0   # scalars only: a value of every row, whatever the rows turn out to be
    return ks.pop() if len(ks) == 1 else None


def _same_reduction(r1, r2) -> bool:
    d1, d2 = rules.dims(r1.inputs[0]), rules.dims(r2.inputs[0])
    if d1 is None or d1 != d2:
        return False
    return (emitters.static_axes(r1) == emitters.static_axes(r2)
            and r1.attrs.get("keep_dims") == r2.attrs.get("keep_dims"))


def _assemble(ops, groups, group_of, live, op_set) -> list:
    """FusionGroups (boundaries computed) and the remaining Operations, topologically sorted.
    A Const read only as a static axis/shape of fused ops is dropped: nothing reads its value."""
    units: list = []
    unit_of: dict = {}
    fusion_of: dict = {}
    for n, g in enumerate(groups):
        members = [op for op in ops if op in g.ops]
        fg = FusionGroup(members, kind=rules.fusion_kind(members),
                         name=f"fusion_{n}")
        fusion_of[g] = fg
    for op in ops:
        g = group_of.get(op)
        if g is not None:
            unit = fusion_of[g]
        else:
            if op.type == "Const" and _only_static_use(op, op_set, group_of, live):
                continue
            unit = op
        unit_of[op] = unit
        if not units or units[-1] is not unit and unit not in units:
            units.append(unit)
    for fg in fusion_of.values():
        inside = set(fg.ops)
        for op in fg.ops:
            for t in rules.data_inputs(op):
                if t.op not in inside and t not in fg.inputs:
                    fg.inputs.append(t)
            for t in op.outputs:
                if t in live or any(c in op_set and c not in inside for c in t.consumers()):
                    fg.outputs.append(t)
    units = [u for u in units if not isinstance(u, FusionGroup) or u.outputs]  # dead code
    return _toposort_units(units, unit_of)


def _only_static_use(op, op_set, group_of, live) -> bool:
    t = op.outputs[0]
    if t in live:
        return False
    cs = [c for c in t.consumers() if c in op_set]
    return bool(cs) and all(group_of.get(c) is not None and
                            not any(x is t for x in rules.data_inputs(c)) for c in cs)


def _toposort_units(units: list, unit_of: dict) -> list:
    """Kahn's sort of the units, stable in first-op order."""
    index = {id(u): i for i, u in enumerate(units)}
    deps: dict = {id(u): set() for u in units}
    for u in units:
        members = u.ops if isinstance(u, FusionGroup) else [u]
        for op in members:
            for t in list(op.inputs) + [c.outputs[0] for c in op.control_inputs if c.outputs]:
                p = unit_of.get(t.op)
                if p is not None and p is not u:
                    deps[id(u)].add(id(p))
            for c in op.control_inputs:
                p = unit_of.get(c)
                if p is not None and p is not u:
                    deps[id(u)].add(id(p))
    done: set = set()
    out: list = []
    remaining = list(units)
    while remaining:
        for u in remaining:
            if deps[id(u)] <= done:
                out.append(u)
                done.add(id(u))
                remaining.remove(u)
                break
        else:  # a cycle would be a planner bug: keep the original order rather than loop
            out.extend(sorted(remaining, key=lambda u: index[id(u)]))
            break
    return out
