"""Common-subexpression elimination: identical ops are computed once.

Two ops are merged when they have the same type, attrs, inputs (after earlier merges;
order-free for commutative ops), control inputs (as a set), device and output signature.
The first one in creation order is kept and the later one's consumers read from it.
Never merged, as TensorFlow's grappler dedup: stateful ops, placeholders, ops reading a
resource or variant (its value may change between reads), and preserved ops (fetch and
feed producers, targets) — so names the caller looks up stay valid.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.dtypes import DType
from ndflow.core.graph import Graph, Operation
from ndflow.core.shapes import TensorShape
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.pass_context import PassContext

_STATE_DTYPES = (dtypes.resource, dtypes.variant)
_MAX_HASHED_ELEMENTS = 1 << 20  # larger constants are not compared byte by byte


class _Unhashable(Exception):
    pass


def _freeze(v):
    """A hashable, type-exact key for an attr value."""
    if isinstance(v, (bool, int, float, str, bytes, DType, TensorShape)) or v is None:
        return (type(v).__name__, v)
    if isinstance(v, (list, tuple)):
        return ("list", tuple(_freeze(x) for x in v))
    if isinstance(v, (np.ndarray, np.generic)):
        arr = np.asarray(v)
        if arr.dtype == object or arr.size > _MAX_HASHED_ELEMENTS:
            raise _Unhashable
        return ("ndarray", arr.dtype.str, arr.shape, arr.tobytes())
    raise _Unhashable


def _key(op: Operation, rw: GraphRewriter):
    inputs = [(id(rw.map[t].op), rw.map[t].value_index) for t in op.inputs]
    if op.op_def.is_commutative:  # TF's SetIsCommutative: input order does not matter
        inputs.sort()
    attrs = tuple(sorted((k, _freeze(v)) for k, v in op.attrs.items()))
    controls = frozenset(id(rw.map[c]) for c in op.control_inputs)
    outputs = tuple((t.dtype, t.shape) for t in op.outputs)
    return (op.type, attrs, tuple(inputs), controls, op.device, outputs)


def _can_dedup(op: Operation, preserved: set) -> bool:
    if op.is_stateful or op.type.startswith("Placeholder") or op.name in preserved:
        return False
    # Reading a resource may see a different value each time (TF: IsFreeOfSideEffect).
    return not any(t.dtype in _STATE_DTYPES for t in op.inputs)


def cse(graph: Graph, ctx: PassContext) -> Graph:
    """Merges duplicate ops, keeping the first (see module doc)."""
    preserved = ctx.preserved_op_names()
    rw = GraphRewriter(graph)
    seen: dict = {}
    for op in graph.get_operations():
        key = None
        if _can_dedup(op, preserved):
            try:
                key = _key(op, rw)
            except _Unhashable:
                key = None
        rep = seen.get(key) if key is not None else None
        if rep is not None:
            rw.replace_outputs(op, rep.outputs, control_op=rep)
            continue
        new = rw.copy_op(op)
        if key is not None:
            seen[key] = new
    return rw.graph
