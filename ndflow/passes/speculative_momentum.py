"""Remapper: a loss-scale optimizer's momentum updates computed before its `If`, with the
finite checks of their gradients, in one pass over each gradient.

A loss-scale optimizer checks every gradient (`_AllFinite(g)`, or `_AllFiniteAddScaled(g,
ReadVariableOp(var), s)` for an L2-regularized weight, ndflow/passes/branch_momentum_decay.py),
reduces the checks (`All(Pack(checks))`) and applies the inner optimizer's step in an `If` on
that predicate: each gradient is read twice from memory, by its check and by its update, and
a weight-sized gradient has long left the caches by then. When

- the If's predicate is `All(Pack(...))` of scalar bools, the Pack read only by that All;
- a Pack input is such a check, read only by the Pack, whose gradient g is read only by it
  and by the If (as one data input), none of them fetched, fed or with control edges;
- in the then-branch g's parameter is read only by a `ResourceApplyMomentum`,
  `ResourceApplyKerasMomentum` or `_ResourceApplyMomentumWithDecay` (with the check's
  scale and the check reading that variable) as its gradient, and the else-branch does not
  read it; the update has no control inputs;
- its var and accum are distinct handles each passed once into the If, that no op outside
  the If writes and no other op of either branch writes (all others only read them);
- its lr and momentum are computed in the branch from the If's inputs, constants, reads of
  variables nobody writes, and pure arithmetic (`HOISTABLE`), all of it from tensors made
  before the Pack;

those updates (of one dtype) become one `_SpeculativeApplyMomentum` op before the Pack: it
computes the new var and accum values into new buffers (the variables untouched) and
whether all these gradients are finite, in one pass over each gradient
(kernels/speculative_numba.py), and its flag replaces the checks in the Pack (an `All` of
the same values), or the `All` itself when every Pack input was such a check. The If takes
the new values instead of the gradients and its then-branch commits them with
`AssignVariableOp`s in the updates' place: nothing changes when any gradient is not finite,
as before, and the values are bit for bit the in-place updates'. The lr/momentum
computation is copied before the op (the branch keeps its own copy). Both branches are
rebuilt as new function graphs (`<name>_speculative`).

When the op's flag is the If's predicate itself and nothing could see the values early (no
other user of the var and accum handles after the Pack outside the If; in the then-branch
the update their only user, in the else-branch none), the op assigns the new values itself
when the flag is true (`commit`): the If no longer takes them and the then-branch keeps a
NoOp in each update's place. In the MNIST loss-scale step the If went from 118 to 48 us
(16 assignments fewer in its branch). When both branches are then left with the same
assignments of constants to the If's inputs and nothing else (Keras counts `iterations` in
both) and the If has no outputs, those assignments replace the If, the last one named as the
If was (the function's control outputs name it): one scalar AssignAdd instead of an If
running a branch's plan.

A gradient made by a plain MatMul of two matrices (a weight's gradient, x^T @ dy) that is
read only by its check and the If is computed by the op itself (`matmul`: the MatMul's
operands in its place, the MatMul dropped): a block of rows at a time, each block checked
and turned into the new values while it is in the cache (kernels/gemm_epilogue.py), so
the weight-sized gradient is never written to memory and read back. For MNIST's fc1 the
GEMM and the update went from 1.63-1.67 to 1.36-1.47 ms after a convolution's worth of
other work.

It runs as the remapper's second step, after branch_momentum_decay.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ndflow.core import dtypes
from ndflow.core.graph import Graph, Operation, SymbolicTensor
from ndflow.core.shapes import TensorShape
from ndflow.ops import nn_fused, state
from ndflow.ops.array_core import NoOp
from ndflow.passes.branch_momentum_decay import FLOATS, only_reads
from ndflow.passes.function_rebuild import rebuild_function
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.grouped_updates import MOMENTUM_UPDATES
from ndflow.passes.pass_context import PassContext
from ndflow.passes.pattern import GraphView

UPDATES = MOMENTUM_UPDATES   # type -> (input index of momentum, whether an L2 term)
CHECKS = {"_AllFinite": False, "_AllFiniteAddScaled": True}
# stateless ops the learning rate and momentum may be computed with in the branch
HOISTABLE = frozenset({"Identity", "Cast", "Mul", "RealDiv", "AddV2", "Add", "Sub", "Neg",
                       "Maximum", "Minimum", "Const"})


@dataclass
class _Entry:
    """One update made speculative: its gradient is data input `index` of the If."""

    index: int
    check: Operation
    update: Operation
    var_at: int
    accum_at: int

    @property
    def decay(self) -> bool:
        return self.update.type == "_ResourceApplyMomentumWithDecay"


def _at(t, tensors) -> list:
    """Where `t` is in `tensors`, by identity."""
    return [k for k, x in enumerate(tensors) if x is t]


class _Hoist:
    """Which branch tensors can be computed before the If, from the If's inputs."""

    def __init__(self, view: GraphView, cond: Operation):
        self.view, self.cond = view, cond
        self.branches = [cond.attrs["then_branch"], cond.attrs["else_branch"]]
        self.memo: dict = {}

    def param(self, t) -> int | None:
        at = _at(t, self.branches[0].inputs)
        return at[0] if at else None

    def handle_unwritten(self, k: int) -> bool:
        """The If's data input k is a handle passed once that nothing writes: outside the
        If and in both branches every other user only reads it."""
        h = self.cond.inputs[k + 1]
        return (len(_at(h, self.cond.inputs[1:])) == 1
                and only_reads(self.view.consumers[h], self.cond)
                and all(only_reads(fg.inputs[k].consumers()) for fg in self.branches))

    def ok(self, t) -> bool:
        if t not in self.memo:
            self.memo[t] = self._ok(t)
        return self.memo[t]

    def _ok(self, t) -> bool:
        if self.param(t) is not None:
            return True
        op = t.op
        if op.control_inputs:
            return False
        if op.type == "ReadVariableOp":
            k = self.param(op.inputs[0])
            return k is not None and self.handle_unwritten(k)
        return op.type in HOISTABLE and all(self.ok(x) for x in op.inputs)


def _check_of(view: GraphView, pack: Operation, c: SymbolicTensor) -> Operation | None:
    op = c.op
    if (op.type not in CHECKS or view.consumers[c] != [pack] or op.control_inputs
            or op in view.control_sources or c.name in view.fetched
            or op.name in view.preserved):
        return None
    return op


def _entry(view: GraphView, cond: Operation, check: Operation, hoist: _Hoist):
    """The check's gradient as an entry, if its update qualifies (see the module doc)."""
    then_fg, else_fg = hoist.branches
    g = check.inputs[0]
    at = _at(g, cond.inputs[1:])
    if (len(at) != 1 or sorted(map(id, view.consumers[g])) != sorted([id(cond), id(check)])
            or g.name in view.fetched or g.name in view.fed):
        return None
    k = at[0]
    param = then_fg.inputs[k]
    users = param.consumers()
    if (len(users) != 1 or users[0].type not in UPDATES or _at(param, users[0].inputs) != [3]
            or _at(param, then_fg.outputs) or else_fg.inputs[k].consumers()
            or _at(else_fg.inputs[k], else_fg.outputs)):
        return None
    update = users[0]
    mom_at, decay = UPDATES[update.type]
    var_at, accum_at = hoist.param(update.inputs[0]), hoist.param(update.inputs[1])
    if (decay != CHECKS[check.type] or update.control_inputs or var_at is None
            or accum_at is None or var_at == accum_at or update.attrs["T"] not in FLOATS
            or update.attrs["T"] is not check.attrs["T"]
            or not all(_only_update(hoist, i, update) for i in (var_at, accum_at))
            or not (hoist.ok(update.inputs[2]) and hoist.ok(update.inputs[mom_at]))):
        return None
    if decay:
        s_at, read = hoist.param(update.inputs[4]), check.inputs[1]
        if (s_at is None or cond.inputs[s_at + 1] is not check.inputs[2]
                or read.op.type != "ReadVariableOp"
                or read.op.inputs[0] is not cond.inputs[var_at + 1]):
            return None
    return _Entry(k, check, update, var_at, accum_at)


def _only_update(hoist: _Hoist, k: int, update: Operation) -> bool:
    """Handle input k is passed once, only read outside the If and in the else-branch, and
    in the then-branch written by `update` alone."""
    h = hoist.cond.inputs[k + 1]
    then_fg, else_fg = hoist.branches
    return (len(_at(h, hoist.cond.inputs[1:])) == 1
            and only_reads(hoist.view.consumers[h], hoist.cond)
            and only_reads(then_fg.inputs[k].consumers(), update)
            and only_reads(else_fg.inputs[k].consumers()))


@dataclass
class _Plan:
    pack: Operation
    entries: list
    hoist: _Hoist
    early: list        # source ops made after the Pack, to emit before it
    whole: bool        # every Pack input is a speculated check: All(Pack) is the flag
    commit: bool       # the op assigns the new values itself (see _commits_in_op)
    products: list     # per entry, the MatMul making its gradient that the op absorbs, or None


def _plan(view: GraphView, cond: Operation, order: dict) -> _Plan | None:
    pred = cond.inputs[0]
    red = pred.op
    if red.type != "All" or pred.shape.rank != 0 or red.control_inputs:
        return None
    pack = red.inputs[0].op
    if (pack.type != "Pack" or view.consumers[pack.outputs[0]] != [red]
            or pack.outputs[0].name in view.fetched or pack in view.control_sources):
        return None
    then_fg, else_fg = cond.attrs["then_branch"], cond.attrs["else_branch"]
    if not len(then_fg.inputs) == len(else_fg.inputs) == len(cond.inputs) - 1:
        return None
    hoist = _Hoist(view, cond)
    entries, seen = [], set()
    for c in pack.inputs:
        check = _check_of(view, pack, c)
        entry = _entry(view, cond, check, hoist) if check is not None else None
        if entry is not None and entry.check not in seen:
            seen.add(entry.check)
            entries.append(entry)
    if not entries:
        return None
    # one dtype per op: the most common
    dtypes_ = [e.update.attrs["T"] for e in entries]
    t = max(set(dtypes_), key=dtypes_.count)
    entries = [e for e in entries if e.update.attrs["T"] is t]
    # every outer tensor the op reads must exist before the Pack (sources made later, such
    # as a function's captured handles, are moved up)
    needed = [cond.inputs[1 + k] for e in entries for k in (e.index, e.var_at, e.accum_at)]
    needed += [e.check.inputs[2] for e in entries if e.decay]
    needed += [cond.inputs[1 + k] for k in _hoisted_params(hoist, entries)]
    late = {x.op for x in needed if order[x.op] > order[pack]}
    if any(op.inputs or op.control_inputs for op in late):
        return None
    whole = (len(entries) == len(pack.inputs) and pred.name not in view.fetched
             and red not in view.control_sources and red.name not in view.preserved)
    commit = whole and all(_commits_in_op(view, hoist, e, order[pack], order)
                           for e in entries)
    products = [_absorbed_product(view, cond.inputs[1 + e.index]) for e in entries]
    return _Plan(pack, entries, hoist, sorted(late, key=order.get), whole, commit, products)


def _absorbed_product(view: GraphView, g: SymbolicTensor) -> SymbolicTensor | None:
    """`g` when a plain MatMul of two matrices makes it and the op can compute it instead
    (the entry already has g read only by its check and the If, both replaced)."""
    op = g.op
    if (op.type != "MatMul" or op.control_inputs or op in view.control_sources
            or op.name in view.preserved or len(op.outputs) != 1
            or any(x.shape.rank != 2 for x in op.inputs)):
        return None
    return g


def _commits_in_op(view: GraphView, hoist: _Hoist, entry: _Entry, at: int,
                   order: dict) -> bool:
    """Whether the op may assign entry's new values itself, before the If, when its flag
    (then the If's predicate) is true: nothing could see the earlier assignment. Outside the
    If every other user of the var and accum handles comes before the Pack (the op's
    place; plans run stateful ops in creation order); in the then-branch the update is
    their only user, and the else-branch does not use them."""
    then_fg, else_fg = hoist.branches
    for k in (entry.var_at, entry.accum_at):
        h = hoist.cond.inputs[k + 1]
        if (any(order[op] > at for op in view.consumers[h] if op is not hoist.cond)
                or then_fg.inputs[k].consumers() != [entry.update]
                or else_fg.inputs[k].consumers()):
            return False
    return True


def _scalars(entry: _Entry) -> tuple:
    u = entry.update
    return u.inputs[2], u.inputs[UPDATES[u.type][0]]


def _hoisted_params(hoist: _Hoist, entries: list) -> set:
    """The If inputs the lr/momentum computations read."""
    found: set = set()
    stack = [t for e in entries for t in _scalars(e)]
    while stack:
        t = stack.pop()
        k = hoist.param(t)
        if k is not None:
            found.add(k)
        else:
            stack.extend(t.op.inputs)
    return found


def _emit_hoisted(rw: GraphRewriter, hoist: _Hoist, t, made: dict) -> SymbolicTensor:
    """Branch tensor `t` computed in the outer graph (copies of the branch's ops)."""
    k = hoist.param(t)
    if k is not None:
        return rw.mapped(hoist.cond.inputs[k + 1])
    if t in made:
        return made[t]
    op = t.op
    if op.type == "Const":   # one copy per value (each update has its own momentum Const)
        value = np.asarray(op.attrs["value"])
        key = (op.attrs["dtype"], value.shape, value.tobytes())
        if key in made:
            made[t] = made[key]
            return made[t]
    inputs = [_emit_hoisted(rw, hoist, x, made) for x in op.inputs]
    new = rw.add_op(op.op_def, inputs, op.attrs, [(x.dtype, x.shape) for x in op.outputs],
                    rw.fresh_name(f"{hoist.cond.name}/{op.name}"), (), hoist.cond.device)
    made.update(zip(op.outputs, new.outputs))
    if op.type == "Const":
        made[key] = made[t]
    return made[t]


def _emit_speculation(rw: GraphRewriter, plan: _Plan) -> Operation:
    """The `_SpeculativeApplyMomentum` op of the plan's entries, its flag in the checks'
    place."""
    cond, entries, made = plan.hoist.cond, plan.entries, {}
    t = entries[0].update.attrs["T"]
    scalars = [[_emit_hoisted(rw, plan.hoist, x, made) for x in _scalars(e)] for e in entries]
    zero = None   # the scale input of updates without an L2 term (not read)
    if not all(e.decay for e in entries):
        zero = rw.scalar_const(0, t, f"{cond.name}/no_decay", cond.device)
    scales = [rw.mapped(e.check.inputs[2]) if e.decay else zero for e in entries]
    grads = [cond.inputs[1 + e.index] for e in entries]
    products = [p.op if p is not None else None for p in plan.products]
    inputs = ([rw.mapped(cond.inputs[1 + e.var_at]) for e in entries]
              + [rw.mapped(cond.inputs[1 + e.accum_at]) for e in entries]
              + [s[0] for s in scalars]
              + [rw.mapped(mm.inputs[0] if mm is not None else g)
                 for g, mm in zip(grads, products)]
              + scales + [s[1] for s in scalars]
              + [rw.mapped(mm.inputs[1]) for mm in products if mm is not None])
    attrs = {"N": len(entries), "T": t,
             "use_nesterov": [int(bool(e.update.attrs.get("use_nesterov", False)))
                              for e in entries],
             "keras": [int(e.update.type == "ResourceApplyKerasMomentum"
                           or bool(e.update.attrs.get("keras", False))) for e in entries],
             "decay": [int(e.decay) for e in entries], "commit": plan.commit,
             "M": sum(mm is not None for mm in products),
             "matmul": [int(mm is not None) for mm in products],
             "transpose_a": [int(bool(mm is not None and mm.attrs["transpose_a"]))
                             for mm in products],
             "transpose_b": [int(bool(mm is not None and mm.attrs["transpose_b"]))
                             for mm in products]}
    specs = [(dtypes.bool, TensorShape([]))] + [(t, g.shape) for g in grads] * 2
    op = rw.add_op(nn_fused.SpeculativeApplyMomentum, inputs, attrs, specs,
                   rw.fresh_name(f"{cond.name}/speculative_momentum"), (),
                   entries[0].check.device)
    for e in entries:
        rw.map[e.check] = op
        rw.map[e.check.outputs[0]] = op.outputs[0]
    return op




def _rebuild_branch(fg, removed: set, entries: list, n_new: int, commit: bool):
    """Branch `fg` without the parameters at `removed`, with 2 * `n_new` new ones (the new
    var values, then the new accum values) and, in the then-branch (`commit`), each entry's
    update replaced by the assignments of its new values (with `n_new` 0: the op assigned
    them, and the update becomes a NoOp holding its control edges)."""
    updates = {e.update: i for i, e in enumerate(entries)} if commit else {}

    def replace(new, op, mapping, controls, extra):
        i = updates.get(op)
        if i is None:
            return None
        if not n_new:
            return new.create_op(NoOp, [], {}, [], op.name, controls, op.device)
        t = op.attrs["T"]
        first = new.create_op(state.AssignVariableOp, [mapping[op.inputs[0]], extra[i]],
                              {"dtype": t}, [], new.unique_name(f"{op.name}/commit_var"),
                              controls, op.device)
        return new.create_op(state.AssignVariableOp,
                             [mapping[op.inputs[1]], extra[n_new + i]], {"dtype": t}, [],
                             op.name, [first], op.device)
    params = [(fg.inputs[e.index].dtype, fg.inputs[e.index].shape, f"new_{kind}")
              for kind in ("var", "accum") for e in entries] if n_new else []
    return rebuild_function(fg, f"{fg.name}_speculative", params, replace, drop=removed)


_ASSIGNS = ("AssignAddVariableOp", "AssignSubVariableOp", "AssignVariableOp")
_DEAD_IF_UNUSED = frozenset({"ReadVariableOp", "VariableShape"}) | HOISTABLE


def _effects(fg) -> list | None:
    """A branch's effects when they are only assignments of constants to its parameters
    (anything else computed unused): [(op, parameter index, the Const)], else None."""
    if fg.outputs:
        return None
    ops = [op for op in fg.get_operations() if op.type != "Placeholder"]
    dead: set = set()
    for op in reversed(ops):
        if op.type in _DEAD_IF_UNUSED and all(c in dead for t in op.outputs
                                              for c in t.consumers()):
            dead.add(op)
    effects = []
    for op in ops:
        if op in dead or op.type in ("Const", "NoOp"):
            continue
        at = _at(op.inputs[0], fg.inputs) if op.type in _ASSIGNS else []
        if len(at) != 1 or op.inputs[1].op.type != "Const":
            return None
        effects.append((op, at[0], op.inputs[1].op))
    return effects


def _same(a: list, b: list) -> bool:
    def key(effect):
        op, k, const = effect
        value = np.asarray(const.attrs["value"])
        return (op.type, k, op.attrs.get("dtype"), value.dtype, value.shape, value.tobytes())
    return [key(e) for e in a] == [key(e) for e in b]


def _emit_effects(rw: GraphRewriter, cond: Operation, effects: list) -> None:
    """The If replaced by its branches' common effects, in order, after its control inputs;
    the last takes the If's name (the function's control outputs name it)."""
    controls = [rw.map[c] for c in cond.control_inputs]
    last = None
    for k_effect, (op, k, const) in enumerate(effects):
        value = rw.add_op(const.op_def, [], const.attrs,
                          [(t.dtype, t.shape) for t in const.outputs],
                          rw.fresh_name(f"{cond.name}/{const.name}"), (), const.device)
        name = (cond.name if k_effect == len(effects) - 1
                else rw.fresh_name(f"{cond.name}/{op.name}"))
        last = rw.add_op(op.op_def, [rw.mapped(cond.inputs[1 + k]), value.outputs[0]],
                         op.attrs, [], name, controls if last is None else [last], cond.device)
    rw.map[cond] = last


def _emit_cond(rw: GraphRewriter, plan: _Plan, spec: Operation) -> None:
    """The If taking the new values in the gradients' place, its branches rebuilt; when the
    op commits every value and both branches are left with the same assignments of
    constants (Keras' `iterations += 1`), those assignments in the If's place instead."""
    cond, entries = plan.hoist.cond, plan.entries
    removed = {e.index for e in entries}
    n = 0 if plan.commit else len(entries)
    then_fg = _rebuild_branch(cond.attrs["then_branch"], removed, entries, n, True)
    else_fg = _rebuild_branch(cond.attrs["else_branch"], removed, entries, n, False)
    effects = _effects(then_fg) if not cond.outputs and not n else None
    others = _effects(else_fg) if effects else None
    if others is not None and _same(effects, others):
        kept = [k for k in range(len(cond.inputs) - 1) if k not in removed]
        _emit_effects(rw, cond, [(op, kept[k], c) for op, k, c in effects])
        return
    inputs = [rw.mapped(t) for k, t in enumerate(cond.inputs[1:]) if k not in removed]
    if n:
        inputs += list(spec.outputs[1:])
    attrs = dict(cond.attrs)
    attrs["Tin"] = [t.dtype for t in inputs]
    attrs["then_branch"] = then_fg
    attrs["else_branch"] = else_fg
    new = rw.add_op(cond.op_def, [rw.mapped(cond.inputs[0])] + inputs, attrs,
                    [(t.dtype, t.shape) for t in cond.outputs], cond.name,
                    [rw.map[c] for c in cond.control_inputs], cond.device)
    rw.map[cond] = new
    rw.map.update(zip(cond.outputs, new.outputs))


def speculate_momentum(graph: Graph, ctx: PassContext) -> Graph:
    """Loss-scale optimizers' momentum updates computed with their finite checks before
    their If (see the module doc); `graph` itself when there is none."""
    view = GraphView.of(graph, ctx)
    order = {op: i for i, op in enumerate(graph.get_operations())}
    plans = {}
    for op in graph.get_operations():
        if op.type == "If":
            plan = _plan(view, op, order)
            if plan is not None and plan.pack not in {p.pack for p in plans.values()}:
                plans[op] = plan
    if not plans:
        return graph
    by_pack = {p.pack: p for p in plans.values()}
    checks = {e.check for p in plans.values() for e in p.entries}
    absorbed = {g.op for p in plans.values() for g in p.products if g is not None}
    # All(Pack(flag, ..., flag)) is the flag itself
    reductions = {p.hoist.cond.inputs[0].op: p.pack for p in plans.values() if p.whole}
    specs: dict = {}
    early = {op for p in plans.values() for op in p.early}
    rw = GraphRewriter(graph)
    for op in graph.get_operations():
        if op in checks or op in absorbed or (op in early and op in rw.map):
            continue
        if op in by_pack:
            for source in by_pack[op].early:
                if source not in rw.map:
                    rw.copy_op(source)
            specs[op] = _emit_speculation(rw, by_pack[op])
            if not by_pack[op].whole:
                rw.copy_op(op)
        elif op in reductions:
            spec = specs[reductions[op]]
            rw.replace_outputs(op, [spec.outputs[0]], spec)
        elif op in plans:
            _emit_cond(rw, plans[op], specs[plans[op].pack])
        else:
            rw.copy_op(op)
    return rw.graph
