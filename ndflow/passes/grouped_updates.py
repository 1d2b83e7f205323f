"""Remapper: an optimizer's updates of many variables applied by one op.

Keras' `apply_gradients` and TF1's `minimize` emit one update per variable. Each is a kernel
call whose fixed cost (checks, scalars read to the host, several ATen calls: ~15 us for a
momentum update, ~85 for Adam's) is most of the work for a small variable: a model of a
hundred variables spent 2 ms a step in momentum updates (TensorFlow 1 ms) and 8.8 ms in
Adam's (TensorFlow 6). Runs of updates of one family become one op:
- momentum (`ResourceApplyKerasMomentum`, `ResourceApplyMomentum`, the remapper's
  `_ResourceApplyMomentumWithDecay`) -> `_GroupedApplyMomentum`;
- Adam (`ResourceApplyAdam`) -> `_GroupedApplyAdam`;
- Keras' Adam of embeddings (`_ResourceSparseApplyKerasAdam`) ->
  `_GroupedSparseApplyKerasAdam` (one launch for all the tables' rows);
- Keras' RMSprop without momentum (`_GroupedApplyKerasRMSProp`s of one variable each, made
  by keras_rmsprop.py from Keras' ops) -> one `_GroupedApplyKerasRMSProp`;
whose kernels (kernels/training_grouped.py) update the variables sharing their scalars in
one launch or with ATen's multi-tensor calls, bit for bit as the separate updates.

The ops are walked in creation order (the program order of stateful ops), once per family.
Updates join the pending run, which is emitted, at the latest, just before the first later
op that

- reads or writes a pending update's variable or slot (takes its handle, or an Identity of
  it, as an input), or
- has a control input from a pending update, or
- is a py_func (it may touch any variable from Python) or a mutex lock or release (a
  `tf.CriticalSection`'s bounds: an update inside one stays inside), or
- is an update that cannot join (another dtype or device, a handle already in the run);

so every other op keeps its order relative to each update: each update only moves later,
past ops that do not touch its variables. An update alone in its run stays as it is. The
run's control inputs are its updates' own; ops that depended on an update depend on the
run, and so do targets (a function's updates are its plan's targets): the run takes its last
update's name and the others are renamed to it.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.graph import Graph, Operation, SymbolicTensor
from ndflow.ops import nn_fused
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.pass_context import PassContext

# momentum update type -> (input index of momentum, whether it carries an L2 scale input)
MOMENTUM_UPDATES = {"ResourceApplyMomentum": (4, False),
                    "ResourceApplyKerasMomentum": (4, False),
                    "_ResourceApplyMomentumWithDecay": (5, True)}
PY_FUNCS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})
MUTEX_OPS = frozenset({"MutexLock", "ConsumeMutexLock"})


def resource_root(t: SymbolicTensor) -> SymbolicTensor:
    """The handle a resource tensor passes on (through Identity ops)."""
    while t.op.type == "Identity" and t.dtype == dtypes.resource:
        t = t.op.inputs[0]
    return t


def _handles(op: Operation) -> tuple:
    """The handles an update writes (its resource inputs: the variable and its slots)."""
    return tuple(resource_root(t) for t in op.inputs if t.dtype == dtypes.resource)


class _Run:
    """The pending updates (source ops) and the handles they write."""

    def __init__(self):
        self.ops: list = []
        self.handles: set = set()

    def joins(self, op: Operation) -> bool:
        first = self.ops[0] if self.ops else op
        return (op.attrs["T"] == first.attrs["T"] and op.device == first.device
                and op.attrs.get("Tindices") == first.attrs.get("Tindices")
                and not self.handles.intersection(_handles(op)))

    def add(self, op: Operation) -> None:
        self.ops.append(op)
        self.handles.update(_handles(op))

    def blocks(self, op: Operation) -> bool:
        """Whether `op` must run after the pending updates (see the module doc)."""
        return (op.type in PY_FUNCS or op.type in MUTEX_OPS
                or any(c in self.ops for c in op.control_inputs)
                or any(resource_root(t) in self.handles for t in op.inputs
                       if t.dtype == dtypes.resource))


def _momentum_op(rw: GraphRewriter, ops: list):
    t = ops[0].attrs["T"]
    zero = None   # the scale input of updates without an L2 term (not read)
    if not all(MOMENTUM_UPDATES[op.type][1] for op in ops):
        zero = rw.scalar_const(0, t, f"{ops[0].name}/no_decay", ops[0].device)
    column = {name: [] for name in ("var", "accum", "lr", "grad", "scale", "momentum")}
    for op in ops:
        at_momentum, decay = MOMENTUM_UPDATES[op.type]
        for name, k in (("var", 0), ("accum", 1), ("lr", 2), ("grad", 3)):
            column[name].append(rw.mapped(op.inputs[k]))
        column["scale"].append(rw.mapped(op.inputs[4]) if decay else zero)
        column["momentum"].append(rw.mapped(op.inputs[at_momentum]))
    attrs = {"N": len(ops), "T": t,
             "use_nesterov": [int(bool(op.attrs.get("use_nesterov", False))) for op in ops],
             "keras": [int(op.type == "ResourceApplyKerasMomentum"
                           or bool(op.attrs.get("keras", False))) for op in ops],
             "decay": [int(MOMENTUM_UPDATES[op.type][1]) for op in ops]}
    return nn_fused.GroupedApplyMomentum, sum(column.values(), []), attrs


def _adam_op(rw: GraphRewriter, ops: list):
    """ResourceApplyAdam's inputs (var, m, v, six scalars, grad), column by column."""
    columns = [[rw.mapped(op.inputs[k]) for op in ops] for k in range(10)]
    attrs = {"N": len(ops), "T": ops[0].attrs["T"],
             "use_nesterov": [int(bool(op.attrs.get("use_nesterov", False))) for op in ops]}
    return nn_fused.GroupedApplyAdam, sum(columns, []), attrs


def _sparse_adam_op(rw: GraphRewriter, ops: list):
    """`_ResourceSparseApplyKerasAdam`'s inputs (var, m, v, six scalars, grad, indices),
    column by column."""
    columns = [[rw.mapped(op.inputs[k]) for op in ops] for k in range(11)]
    attrs = {"N": len(ops), "T": ops[0].attrs["T"], "Tindices": ops[0].attrs["Tindices"]}
    return nn_fused.GroupedSparseApplyKerasAdam, sum(columns, []), attrs


def _rmsprop_op(rw: GraphRewriter, ops: list):
    """`_GroupedApplyKerasRMSProp`s (keras_rmsprop.py makes them with N=1) merged: their
    seven input columns."""
    columns = [[rw.mapped(t) for op in ops for t in op.inputs[k * op.attrs["N"]:
                                                               (k + 1) * op.attrs["N"]]]
               for k in range(7)]
    attrs = {"N": sum(op.attrs["N"] for op in ops), "T": ops[0].attrs["T"]}
    return nn_fused.GroupedApplyKerasRMSProp, sum(columns, []), attrs


# a family: the update types it groups and how a run of them becomes one op
FAMILIES = ((frozenset(MOMENTUM_UPDATES), _momentum_op),
            (frozenset({"ResourceApplyAdam"}), _adam_op),
            (frozenset({"_ResourceSparseApplyKerasAdam"}), _sparse_adam_op),
            (frozenset({"_GroupedApplyKerasRMSProp"}), _rmsprop_op))


def _emit(rw: GraphRewriter, run: _Run, ctx: PassContext, make) -> None:
    ops = run.ops
    if len(ops) == 1:
        rw.copy_op(ops[0])
        return
    op_def, inputs, attrs = make(rw, ops)
    controls = [rw.map[c] for op in ops for c in op.control_inputs if c not in ops]
    group = rw.add_op(op_def, inputs, attrs, [], ops[-1].name, controls, ops[0].device)
    for op in ops:
        rw.map[op] = group
        ctx.rename(op.name, group.name)


def group_updates(graph: Graph, ctx: PassContext) -> Graph:
    """Runs of updates of each family as one grouped op (see the module doc); `graph` itself
    when no run has two updates."""
    for types, make in FAMILIES:
        graph = _group_family(graph, ctx, types, make)
    return graph


def _group_family(graph: Graph, ctx: PassContext, types: frozenset, make) -> Graph:
    candidates = {op for op in graph.get_operations() if op.type in types}
    if len(candidates) < 2:
        return graph
    rw, runs = GraphRewriter(graph), [_Run()]

    def flush():
        _emit(rw, runs[-1], ctx, make)
        runs.append(_Run())

    for op in graph.get_operations():
        run = runs[-1]
        if op in candidates:
            if run.ops and not run.joins(op):
                flush()
            runs[-1].add(op)
            continue
        if run.ops and run.blocks(op):
            flush()
        rw.copy_op(op)
    if runs[-1].ops:
        flush()
    return rw.graph if any(len(r.ops) > 1 for r in runs) else graph
