"""The per-op and per-edge predicates of XLA's fusion rules (reference section 4), shared by the
fusion planner (`fusion.py`) and the rematerializer (`rematerialize.py`): element counts,
which operands an op reads as values, whether a consumer reuses a producer's elements (a
broadcast), XLA's bandwidth guard, which producers may be computed twice, and which groups
have nothing to fuse."""

from __future__ import annotations

import math

from ndflow.core.graph import Operation
from ndflow.jit.codegen import emitters

LOOP, INPUT = "loop", "input"     # fusion kinds: elementwise over the output; reduction roots

# Ops that only relabel a value (ATen views); a group with one op besides these has nothing to
# fuse, so its generated kernel would cost a compile (about a second) to do what one ATen call
# does as fast.
VIEW_OPS = frozenset({"Const", "Identity", "Snapshot", "StopGradient", "PreventGradient",
                      "Reshape", "ExpandDims", "Squeeze"})


def root_reductions(ops) -> list:
    return emitters.root_reductions(ops)


def fusion_kind(ops) -> str:
    return INPUT if emitters.root_reductions(ops) else LOOP


def computing_ops(ops) -> int:
    """How many of `ops` compute something (views and constants excluded)."""
    return sum(op.type not in VIEW_OPS for op in ops)


def is_trivial(ops) -> bool:
    """A group with at most one computing op: run through the registry, not compiled."""
    return computing_ops(ops) <= 1


def numel(t) -> int | None:
    d = dims(t)
    if d is None or any(x is None for x in d):
        return None
    return math.prod(d)


def dims(t):
    return t.shape.as_list() if t.shape.rank is not None else None


def same_numel(a, b) -> bool:
    """Same element count: known sizes equal, or the same dims with the same unknown ones (a
    batch dimension left open by tf.function). Codegen checks the real shapes again."""
    na, nb = numel(a), numel(b)
    if na is not None or nb is not None:
        return na == nb
    da = dims(a)
    return da is not None and da == dims(b)


def fusible(op: Operation) -> bool:
    return emitters.can_emit(op)


def data_inputs(op: Operation) -> list:
    """Inputs read as values (static axis/shape operands of fused ops excluded)."""
    static = emitters.static_input_indices(op) if fusible(op) else ()
    return [t for i, t in enumerate(op.inputs) if i not in static]


def broadcasts(producer_out, consumer: Operation) -> bool:
    """Whether `consumer` reads `producer_out`'s elements more than once (a broadcast) in a way
    that recomputes it: a value broadcast only along inner dimensions ([N, 1] into [N, C]) is
    computed once per outer index, since codegen hoists it out of the inner loops."""
    if emitters.is_reduction(consumer) or not consumer.outputs:
        return False
    if consumer.type in emitters.SHAPE_OPS and consumer.type not in emitters.BROADCAST_OPS:
        return False  # a reshape or transpose reads each element once
    p, c = producer_out.shape, consumer.outputs[0].shape
    if p.rank is None or c.rank is None:
        return True
    pd, cd = p.as_list(), c.as_list()
    if pd == cd:
        return False  # unknown dims in the same places: taken as the same (batch) size
    if len(pd) != len(cd):
        return math.prod(d or 2 for d in pd) > 1  # broadcast over new outer dimensions
    k = 0
    while k < len(pd) and pd[k] == cd[k]:
        k += 1
    return not all(d == 1 for d in pd[k:])


def bandwidth_heavy(op: Operation) -> bool:
    """XLA's bandwidth guard: a non-unary op with an input larger than its output."""
    ins = data_inputs(op)
    if len(ins) < 2 or not op.outputs:
        return False
    out = numel(op.outputs[0])
    sizes = [numel(t) for t in ins]
    if out is None or any(s is None for s in sizes):
        return False
    return any(s * t.dtype.size > out * op.outputs[0].dtype.size for s, t in zip(sizes, ins))


def duplicable(op: Operation) -> bool:
    """Whether `op` may be computed a second time, in another kernel (rule 5): a cheap
    elementwise or shape op (broadcasts and casts included), never an expensive one (exp, log,
    tanh, sqrt, rsqrt, divide, pow, erf, ...) nor a reduction, nor one the bandwidth guard
    (rule 6) keeps to a single group. A division by a constant counts as cheap: XLA's
    algebraic simplifier makes it a multiply before fusion (the kernel still divides)."""
    return (fusible(op) and op.type != "Const" and not emitters.is_reduction(op)
            and (not emitters.is_expensive(op) or _divides_by_constant(op))
            and not bandwidth_heavy(op) and not op.control_inputs and len(op.outputs) == 1)


def _divides_by_constant(op: Operation) -> bool:
    return op.type in ("RealDiv", "Div") and op.inputs[1].op.type == "Const"
