"""Remapper: a dynamic loss scale's update, written as ops, becomes one op.

`DynamicLossScale.update` (ndflow/train/loss_scale.py, TensorFlow's rule; the loss-scale
optimizers of Keras and TF1 call it once a step) emits, from the step's finite flag `ok`:

    s = ReadVariableOp(scale)            n = ReadVariableOp(good_steps)
    n1 = AddV2(n, 1)                     grow = GreaterEqual(n1, period)
    grown = Mul(s, m)
    AssignVariableOp(good_steps, SelectV2(ok, SelectV2(grow, 0, n1), 0))
    AssignVariableOp(scale, SelectV2(ok, SelectV2(LogicalAnd(grow, IsFinite(grown)), grown, s),
                                     Maximum(RealDiv(s, m), 1.0)))

with `period` (int64), `m` (float32) and the 0, 1 and 1.0 as scalar Consts: fifteen kernel
calls on scalars, each paying 30-60 us for code the step's large kernels pushed out of the
caches (measured on the MNIST step: the update cost 2.5% of it). A match becomes one
`_UpdateDynamicLossScale(scale, good_steps, ok)` (kernels/loss_scale_update.py, bit for bit
the same values) in the place of the later assignment. Only where nothing else can see the
difference: each value in between is read by the pattern alone (not fetched, no control
edges), nothing else writes either variable, and no other read of them runs between the two
assignments. A read the pattern shares with other ops stays; the fused op reads the
variables itself, which hold the same values then.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ndflow.core import dtypes
from ndflow.core.graph import Graph, Operation
from ndflow.ops import loss_scale_fused
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.grouped_updates import resource_root
from ndflow.passes.pass_context import PassContext, op_name_of


@dataclass
class _Match:
    first: Operation        # the earlier assignment (dropped)
    last: Operation         # the later one, replaced by the fused op
    scale: object           # the handles and the flag: the fused op's inputs
    steps: object
    ok: object
    period: int
    multiplier: float
    absorbed: list          # every op the fused op replaces, the assignments included


def _op(t, op_type: str) -> Operation | None:
    return t.op if t.op.type == op_type else None


def _scalar(t, dtype, value=None):
    """The value of a scalar Const of `dtype` (equal to `value` if given), else None."""
    if t.op.type != "Const" or t.dtype is not dtype:
        return None
    v = np.asarray(t.op.attrs["value"])
    if v.ndim != 0 or (value is not None and v.item() != value):
        return None
    return v.item()


def _select(t, cond=None) -> Operation | None:
    op = _op(t, "SelectV2")
    if op is None or op.inputs[0].shape.rank != 0 or (cond is not None
                                                      and op.inputs[0] is not cond):
        return None
    return op


def _read(t, dtype) -> Operation | None:
    op = _op(t, "ReadVariableOp")
    if op is None or t.dtype is not dtype or t.shape.rank != 0:
        return None
    return op


def _match(assign: Operation) -> _Match | None:
    """The pattern of the module doc around the scale's assignment `assign`, or None."""
    if assign.attrs.get("dtype") is not dtypes.float32:
        return None
    outer = _select(assign.inputs[1])
    if outer is None:
        return None
    ok, kept, shrunk = outer.inputs
    inner, maximum = _select(kept), _op(shrunk, "Maximum")
    if inner is None or maximum is None or _scalar(maximum.inputs[1], dtypes.float32,
                                                   1.0) is None:
        return None
    both, grown, s = inner.inputs
    both, mul, div = _op(both, "LogicalAnd"), _op(grown, "Mul"), _op(maximum.inputs[0],
                                                                      "RealDiv")
    read_s = _read(s, dtypes.float32)
    if None in (both, mul, div, read_s) or mul.inputs[0] is not s or div.inputs[0] is not s:
        return None
    multiplier = _scalar(mul.inputs[1], dtypes.float32)
    if multiplier is None or _scalar(div.inputs[1], dtypes.float32, multiplier) is None:
        return None
    grow, finite = both.inputs
    finite, ge = _op(finite, "IsFinite"), _op(grow, "GreaterEqual")
    if finite is None or ge is None or finite.inputs[0] is not grown:
        return None
    n1, period = ge.inputs
    add, period = _op(n1, "AddV2"), _scalar(period, dtypes.int64)
    if add is None or period is None or _scalar(add.inputs[1], dtypes.int64, 1) is None:
        return None
    read_n = _read(add.inputs[0], dtypes.int64)
    counted = [c for c in grow.consumers() if c is not both]
    if read_n is None or len(counted) != 1:
        return None
    count = _select(counted[0].outputs[0], grow)
    if count is None or count.inputs[2] is not n1 or \
            _scalar(count.inputs[1], dtypes.int64, 0) is None:
        return None
    users = count.outputs[0].consumers()
    restart = _select(users[0].outputs[0], ok) if len(users) == 1 else None
    if restart is None or restart.inputs[1] is not count.outputs[0] or \
            _scalar(restart.inputs[2], dtypes.int64, 0) is None:
        return None
    assigns = restart.outputs[0].consumers()
    if len(assigns) != 1 or assigns[0].type != "AssignVariableOp" or \
            assigns[0].inputs[1] is not restart.outputs[0]:
        return None
    steps_assign = assigns[0]
    scale, steps = resource_root(assign.inputs[0]), resource_root(steps_assign.inputs[0])
    if resource_root(read_s.inputs[0]) is not scale or \
            resource_root(read_n.inputs[0]) is not steps or scale is steps:
        return None
    inner_ops = [outer, inner, maximum, both, mul, div, finite, ge, add, count, restart]
    # every value in between is read by the pattern alone
    within = set(inner_ops) | {assign, steps_assign}
    if any(c not in within for op in inner_ops for t in op.outputs for c in t.consumers()):
        return None
    first, last = sorted((assign, steps_assign), key=lambda op: op._id)
    absorbed = inner_ops + [steps_assign, assign]
    for read in (read_s, read_n):   # a read shared with other ops stays
        if all(c in within for c in read.outputs[0].consumers()):
            absorbed.append(read)
    return _Match(first, last, assign.inputs[0], steps_assign.inputs[0], ok, int(period),
                  float(multiplier), absorbed)


def _safe(m: _Match, ops: list, visible: set, controlling: set) -> bool:
    """Nothing outside the match sees a value in between, waits for one of its ops, writes
    either variable, or reads one between the two assignments."""
    absorbed = set(m.absorbed)
    if any(op.name in visible for op in absorbed) or \
            any(op in controlling for op in absorbed - {m.first, m.last}) or \
            any(op.control_inputs for op in absorbed - {m.first, m.last}):
        return False
    handles = {resource_root(m.scale), resource_root(m.steps)}
    for op in ops:
        if op in absorbed or not any(t.dtype == dtypes.resource and resource_root(t) in handles
                                     for t in op.inputs):
            continue
        if op.type != "ReadVariableOp" or m.first._id < op._id < m.last._id:
            return False
    # an op made before the fused op cannot wait for it
    return not any(m.first in op.control_inputs for op in ops
                   if m.first._id < op._id < m.last._id)


def fuse_dynamic_loss_scale(graph: Graph, ctx: PassContext) -> Graph:
    """Each match of the module doc's pattern as one `_UpdateDynamicLossScale`; `graph`
    itself when there is none."""
    visible = {op_name_of(ctx.current_name(n)) for n in ctx.fetches + ctx.feeds}
    ops = graph.get_operations()
    controlling = {c for op in ops for c in op.control_inputs}
    matches = [m for op in ops if op.type == "AssignVariableOp"
               for m in [_match(op)] if m is not None and _safe(m, ops, visible, controlling)]
    if not matches:
        return graph
    by_last = {m.last: m for m in matches}
    owner = {op: m for m in matches for op in m.absorbed}
    rw = GraphRewriter(graph)
    for op in ops:
        m = by_last.get(op)
        if m is not None:
            controls = [rw.map[c] for a in (m.first, m.last) for c in a.control_inputs]
            fused = rw.add_op(loss_scale_fused.UpdateDynamicLossScale,
                              [rw.mapped(t) for t in (m.scale, m.steps, m.ok)],
                              {"increment_period": m.period, "multiplier": m.multiplier}, [],
                              op.name, controls, op.device)
            rw.map[m.first] = rw.map[m.last] = fused   # ops that wait for either assignment
        elif op not in owner:
            rw.copy_op(op)
    for m in matches:
        for gone in m.absorbed:
            if gone is not m.last:
                ctx.rename(gone.name, m.last.name)
    return rw.graph
