"""Remapper: the L2 term of a gradient applied inside an `If` moves into the branch's update.

A loss-scale optimizer applies its inner optimizer's step in an `If` (the step is skipped
when a gradient is not finite), so an L2-regularized weight's gradient
`G = AddN(g, Mul(ReadVariableOp(var), s))` is summed outside the branch, read by the finite
check `_AllFinite(G)` and passed into the If, where the momentum update consumes it: the
remapper's `momentum_with_decay` fusion cannot see the sum. When

- G's only consumers are the If (G passed once) and `_AllFinite` ops; G is not fetched or
  fed, the sum's ops have no control inputs and the Mul is read by the sum only;
- the variable's handle `var` is also an input of the If, and nothing outside it writes that
  variable (every other consumer of the handle reads it), so the value read before the If is
  the value its update reads;
- in each branch the parameter standing for G is unused, or read only by a
  `ResourceApplyMomentum`/`ResourceApplyKerasMomentum` of the parameter standing for `var` as
  its `grad`, and no other op of that branch writes the variable (its other consumers read);

then the If takes g (in G's place) and s (one new input per distinct scale, unless the If
already takes it), each such update becomes `_ResourceApplyMomentumWithDecay(var, accum, lr,
g, s, momentum)` (the L2 term read inside the update's one pass over memory, as the
`momentum_with_decay` rule emits it), and each `_AllFinite(G)` becomes
`_AllFiniteAddScaled(g, ReadVariableOp(var), s)`: the same decision without writing G
(kernels/finite_numba.py). Both branches are rebuilt as new function graphs with the new
parameters (`<name>_with_decay`); the If's `Tin` follows. Values are the unfused graph's:
the fused kernels round `g + var * s` as Mul then AddN round it.

It runs as the remapper's first step, before the rules, while the graph still has the sum.
"""

from __future__ import annotations

from dataclasses import dataclass

from ndflow.core import dtypes
from ndflow.core.graph import Graph, Operation, SymbolicTensor
from ndflow.ops import comparison, nn_fused
from ndflow.passes.function_rebuild import rebuild_function
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.pass_context import PassContext
from ndflow.passes.pattern import Any as AnyTensor
from ndflow.passes.pattern import GraphView, Match, P, matches

FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
MOMENTUM_UPDATES = ("ResourceApplyMomentum", "ResourceApplyKerasMomentum")
READERS = ("ReadVariableOp", "VariableShape")
_IFS = ("If", "StatelessIf")
_BRANCHES = ("then_branch", "else_branch")

# g + var * s: the gradient of an L2-regularized weight (`var` the weight's handle)
DECAYED_GRAD = P({"AddN", "AddV2", "Add"}, AnyTensor("grad"),
                 P({"Mul"}, P({"ReadVariableOp"}, AnyTensor("var"), name="read", shared=True),
                   AnyTensor("scale"), name="decay", commutative=True),
                 name="add", commutative=True)


def momentum_with_decay_attrs(apply: Operation) -> dict:
    """`_ResourceApplyMomentumWithDecay`'s attrs for the update `apply` it replaces."""
    return {"T": apply.attrs["T"], "use_locking": bool(apply.attrs.get("use_locking", False)),
            "use_nesterov": bool(apply.attrs.get("use_nesterov", False)),
            "keras": apply.type == "ResourceApplyKerasMomentum"}


def only_reads(consumers, writer: Operation | None = None) -> bool:
    """Whether every op among a handle's `consumers` but `writer` only reads the variable."""
    return all(op is writer or op.type in READERS for op in consumers)


@dataclass
class _Sink:
    """A decayed gradient G, data input `index` of an If, to be passed as its parts."""

    index: int
    match: Match
    updates: dict         # branch attr -> the momentum update reading G's parameter there

    @property
    def grad(self) -> SymbolicTensor:
        return self.match.tensors["grad"]

    @property
    def scale(self) -> SymbolicTensor:
        return self.match.tensors["scale"]

    @property
    def read(self) -> SymbolicTensor:
        return self.match.ops["read"].outputs[0]


def _positions(t, tensors) -> list:
    """Where `t` is in `tensors`, by identity (`==` on tensors may build an op)."""
    return [k for k, x in enumerate(tensors) if x is t]


def _sum_is_private(view: GraphView, cond: Operation, m: Match) -> bool:
    """G is read by `cond` once and otherwise only by `_AllFinite`s; nobody else sees it."""
    add, decay = m.ops["add"], m.ops["decay"]
    g_sum = add.outputs[0]
    readers = view.consumers[g_sum]
    return (sum(op is cond for op in readers) == 1
            and all(op is cond or op.type == "_AllFinite" for op in readers)
            and g_sum.name not in view.fetched and g_sum.name not in view.fed
            and add.name not in view.preserved and add not in view.control_sources
            and not add.control_inputs and not decay.control_inputs)


def _fits(apply: Operation, m: Match) -> bool:
    """A float update of the sum's dtype, a scalar scale, g of the sum's known shape."""
    t = apply.attrs.get("T")
    grad, scale, g_sum = m.tensors["grad"], m.tensors["scale"], m.ops["add"].outputs[0]
    return (t in FLOATS and scale.dtype is t and grad.dtype is t and scale.shape.rank == 0
            and grad.shape == g_sum.shape and g_sum.shape.is_fully_defined())


def _branch_update(fg, index: int, handles: list, m: Match):
    """The momentum update reading parameter `index` of branch `fg` as its gradient (None
    when nothing reads the parameter), or False when the parameter is read otherwise, is an
    output, or another op of the branch writes the variable (parameters `handles`)."""
    param = fg.inputs[index]
    if _positions(param, fg.outputs):
        return False
    users = param.consumers()
    if not users:
        return None
    apply = users[0]
    if (len(users) != 1 or apply.type not in MOMENTUM_UPDATES or len(apply.inputs) != 5
            or _positions(param, apply.inputs) != [3]
            or not any(apply.inputs[0] is h for h in handles) or not _fits(apply, m)
            or not all(only_reads(h.consumers(), apply) for h in handles)):
        return False
    return apply


def _sink(view: GraphView, cond: Operation, index: int) -> _Sink | None:
    """Data input `index` of `cond` as a sink, if it is a decayed gradient that qualifies
    (each way of reading it as g + var * s is tried: g may be another weight's term)."""
    g_sum = cond.inputs[index + 1]
    for m in matches(view, DECAYED_GRAD, g_sum.op):
        found = _qualifies(view, cond, index, m)
        if found is not None:
            return found
    return None


def _qualifies(view: GraphView, cond: Operation, index: int, m: Match) -> _Sink | None:
    if not _sum_is_private(view, cond, m):
        return None
    handle = m.tensors["var"]
    at = _positions(handle, cond.inputs[1:])
    if not at or not only_reads(view.consumers[handle], cond):
        return None
    updates = {}
    for key in _BRANCHES:
        fg = cond.attrs[key]
        if len(fg.inputs) != len(cond.inputs) - 1:
            return None
        update = _branch_update(fg, index, [fg.inputs[k] for k in at], m)
        if update is False:
            return None
        if update is not None:
            updates[key] = update
    return _Sink(index, m, updates) if updates else None


def _rebuild_branch(fg, key: str, sinks: list, scale_at: dict, new_scales: list):
    """Branch `fg` (the If's attr `key`) with a parameter per new scale after its own and
    each sink's update fused."""
    fused = {sink.updates[key]: sink for sink in sinks if key in sink.updates}

    def replace(new, op, mapping, controls, extra):
        sink = fused.get(op)
        if sink is None:
            return None
        inputs = [mapping[t] for t in op.inputs]
        scale = new.arg_inputs[scale_at[sink.scale]]
        return new.create_op(nn_fused.ResourceApplyMomentumWithDecay,
                             inputs[:4] + [scale, inputs[4]], momentum_with_decay_attrs(op),
                             [], op.name, controls, op.device)
    return rebuild_function(fg, f"{fg.name}_with_decay",
                            [(s.dtype, s.shape, "decay_scale") for s in new_scales], replace)


def _emit_cond(rw: GraphRewriter, cond: Operation, sinks: list) -> Operation:
    """The If taking each sink's g in G's place and its scale (a new trailing input unless
    the If takes it already), its branches rebuilt."""
    inputs = list(cond.inputs[1:])
    for sink in sinks:
        inputs[sink.index] = sink.grad
    scale_at: dict = {}
    new_scales: list = []
    for sink in sinks:
        s = sink.scale
        if s in scale_at:
            continue
        at = _positions(s, inputs)
        if not at:
            new_scales.append(s)
            inputs.append(s)
            at = [len(inputs) - 1]
        scale_at[s] = at[0]
    attrs = dict(cond.attrs)
    attrs["Tin"] = [t.dtype for t in inputs]
    for key in _BRANCHES:
        attrs[key] = _rebuild_branch(cond.attrs[key], key, sinks, scale_at, new_scales)
    new = rw.add_op(cond.op_def, [rw.mapped(t) for t in [cond.inputs[0]] + inputs], attrs,
                    [(t.dtype, t.shape) for t in cond.outputs], cond.name,
                    [rw.map[c] for c in cond.control_inputs], cond.device)
    rw.map[cond] = new
    rw.map.update(zip(cond.outputs, new.outputs))
    return new


def _emit_check(rw: GraphRewriter, check: Operation, sink: _Sink) -> None:
    """`_AllFinite(G)` as `_AllFiniteAddScaled(g, ReadVariableOp(var), s)`."""
    y = check.outputs[0]
    new = rw.add_op(comparison.AllFiniteAddScaled,
                    [rw.mapped(t) for t in (sink.grad, sink.read, sink.scale)],
                    {"T": check.attrs["T"]}, [(y.dtype, y.shape)], check.name,
                    [rw.map[c] for c in check.control_inputs], check.device)
    rw.map[check] = new
    rw.map[y] = new.outputs[0]


def fuse_decay_into_branches(graph: Graph, ctx: PassContext) -> Graph:
    """Passes the parts of decayed gradients into If ops whose branches apply them (see the
    module doc); `graph` itself when there is none."""
    view = GraphView.of(graph, ctx)
    plans: dict = {}
    for op in graph.get_operations():
        if op.type in _IFS:
            sinks = [s for s in (_sink(view, op, i) for i in range(len(op.inputs) - 1)) if s]
            if sinks:
                plans[op] = sinks
    if not plans:
        return graph
    dropped: set = set()
    checks: dict = {}
    for cond, sinks in plans.items():
        for sink in sinks:
            dropped.update((sink.match.ops["add"], sink.match.ops["decay"]))
            g_sum = sink.match.ops["add"].outputs[0]
            checks.update((op, sink) for op in view.consumers[g_sum] if op is not cond)
    rw = GraphRewriter(graph)
    for op in graph.get_operations():
        if op in dropped:
            continue
        if op in checks:
            _emit_check(rw, op, checks[op])
        elif op in plans:
            _emit_cond(rw, op, plans[op])
        else:
            rw.copy_op(op)
    return rw.graph
