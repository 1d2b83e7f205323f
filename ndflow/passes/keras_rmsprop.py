"""Remapper: Keras' RMSprop update of one variable, written as ops, becomes one op.

Keras' RMSprop without momentum (ndflow/keras/optimizers/rmsprop.py, as Keras 3 writes it)
emits for each variable

    AssignVariableOp(ms, AddV2(Mul(rho, ReadVariableOp(ms)), Mul(1 - rho, Square(g))))
    AssignSubVariableOp(var, RealDiv(Mul(lr, g), Sqrt(AddV2(<that sum>, epsilon))))

with rho, 1 - rho and epsilon scalar Consts: twelve ops, each a small kernel call. A match
becomes one `_GroupedApplyKerasRMSProp` of N=1 (its kernel: kernels/training_rmsprop.py, the
same ATen ops in the same order, so bit for bit), in the place of the AssignSubVariableOp;
the grouping pass (grouped_updates.py) then merges runs of them as it does momentum and Adam
updates. Only where nothing else can see the difference: every value in between is read by
the pattern alone (not fetched, no control edges), and the accumulator `ms` is touched by
nothing but its one read and its one assignment.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ndflow.core import dtypes
from ndflow.core.graph import Graph, Operation
from ndflow.ops import nn_fused
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.grouped_updates import resource_root
from ndflow.passes.pass_context import PassContext, op_name_of


@dataclass
class _Match:
    update: Operation        # the AssignSubVariableOp, replaced by the fused op
    assign: Operation        # the AssignVariableOp of ms, absorbed
    inputs: list             # var, ms, lr, rho, one_minus_rho, epsilon, grad
    absorbed: list           # the ops in between


def _only_reader(t, reader: Operation) -> bool:
    return [c for c in t.consumers()] == [reader]


def _op(t, op_type: str):
    return t.op if t.op.type == op_type else None


def _scalar_const(t) -> bool:
    return t.op.type == "Const" and np.asarray(t.op.attrs["value"]).ndim == 0


def _match(update: Operation, users: dict) -> _Match | None:
    """The pattern of the module doc ending in `update`, or None. `users`: each resource
    root's consumers (the ops taking the handle, through Identity ops too)."""
    dt = update.attrs.get("dtype")
    if dt not in (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64):
        return None
    q = update.inputs[1]
    div = _op(q, "RealDiv")
    if div is None or not _only_reader(q, update):
        return None
    lg, s = div.inputs
    mul_lr, sqrt = _op(lg, "Mul"), _op(s, "Sqrt")
    if mul_lr is None or sqrt is None or not (_only_reader(lg, div) and _only_reader(s, div)):
        return None
    lr, g = mul_lr.inputs
    add_eps = _op(sqrt.inputs[0], "AddV2")
    if add_eps is None or not _only_reader(sqrt.inputs[0], sqrt):
        return None
    vel, eps = add_eps.inputs
    add = _op(vel, "AddV2")
    if add is None or not _scalar_const(eps):
        return None
    assigns = [c for c in vel.consumers() if c is not add_eps]
    if len(assigns) != 1 or assigns[0].type != "AssignVariableOp" or \
            assigns[0].inputs[1] is not vel or len(vel.consumers()) != 2:
        return None
    assign = assigns[0]
    m1, m2 = _op(add.inputs[0], "Mul"), _op(add.inputs[1], "Mul")
    if m1 is None or m2 is None or not (_only_reader(add.inputs[0], add)
                                        and _only_reader(add.inputs[1], add)):
        return None
    rho, read = m1.inputs
    omr, sq = m2.inputs
    square = _op(sq, "Square")
    if (read.op.type != "ReadVariableOp" or square is None or square.inputs[0] is not g
            or not (_scalar_const(rho) and _scalar_const(omr))
            or not (_only_reader(read, m1) and _only_reader(sq, m2))):
        return None
    ms = resource_root(assign.inputs[0])
    if resource_root(read.op.inputs[0]) is not ms or \
            set(users.get(ms, ())) != {read.op, assign}:
        return None
    absorbed = [read.op, m1, square, m2, add, assign, add_eps, sqrt, mul_lr, div]
    if any(op.control_inputs for op in absorbed + [update]) or \
            any(t.dtype != dt for t in (lr, rho, omr, eps, g, vel)):
        return None
    return _Match(update, assign, [update.inputs[0], assign.inputs[0], lr, rho, omr, eps, g],
                  absorbed)


def _resource_users(graph: Graph, ignored: set) -> dict:
    """Each resource root's consumers, but Identity ops and the `ignored` ones."""
    users: dict = {}
    for op in graph.get_operations():
        if op.type == "Identity" or op in ignored:
            continue
        for t in op.inputs:
            if t.dtype == dtypes.resource:
                users.setdefault(resource_root(t), []).append(op)
    return users


def fuse_keras_rmsprop(graph: Graph, ctx: PassContext) -> Graph:
    """Each match of the module doc's pattern as one `_GroupedApplyKerasRMSProp`; `graph`
    itself when there is none."""
    # Fetched or fed values must stay. Targets need not: a function's stateful ops (reads
    # and assignments) are its plan's targets only to run in program order, which the fused
    # op keeps (it runs at the update's place, and nothing in between touches `ms`); absorbed
    # targets are renamed to it, as grouped_updates.py renames the updates it merges.
    visible = {op_name_of(ctx.current_name(n)) for n in ctx.fetches + ctx.feeds}
    ops = graph.get_operations()
    # a read nobody uses, fetches or waits for never runs (the value an assignment returns,
    # with a control edge from it): not a user of its variable, dropped with a match
    waited_for = {c for op in ops for c in op.control_inputs}
    dead_reads = {op for op in ops
                  if op.type == "ReadVariableOp" and not op.outputs[0].consumers()
                  and op.name not in visible and op not in waited_for}
    controlling = {c for op in ops if op not in dead_reads for c in op.control_inputs}
    users = _resource_users(graph, dead_reads)
    matches = [m for op in ops if op.type == "AssignSubVariableOp"
               for m in [_match(op, users)] if m is not None]
    matches = [m for m in matches
               if not any(op.name in visible or op in controlling for op in m.absorbed)]
    if not matches:
        return graph
    by_update = {m.update: m for m in matches}
    owner = {op: m.update for m in matches for op in m.absorbed}   # absorbed op -> update
    dropped = {d: owner.get(c, c) for d in dead_reads for c in d.control_inputs
               if c in owner or c in by_update}
    rw = GraphRewriter(graph)
    for op in ops:
        m = by_update.get(op)
        if m is not None:
            rw.map[op] = rw.add_op(nn_fused.GroupedApplyKerasRMSProp,
                                   [rw.mapped(t) for t in m.inputs],
                                   {"N": 1, "T": op.attrs["dtype"]}, [], op.name, (), op.device)
        elif op not in owner and op not in dropped:
            rw.copy_op(op)
    # the fused op has the update's name: what it absorbed, and the dropped reads, take it
    for gone, update in [*owner.items(), *dropped.items()]:
        ctx.rename(gone.name, update.name)
    return rw.graph
