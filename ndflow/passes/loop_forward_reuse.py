"""A While loop whose gradient was taken runs once, not twice.

The gradient of a While (runtime/control_flow_grad.py) builds a copy of the forward loop that
also pushes each iteration's state onto TensorList accumulators: the copy's first outputs
are the forward loop's outputs, computed from the same inputs by the same body. TensorFlow's
while_v2 adds the accumulators to the forward op itself; ndflow's graphs are append-only,
so the copy is a second loop, tagged `_accumulates_for` with the forward loop's name, and
this pass lets it take the forward loop's place: the forward op's consumers read the copy's
outputs, and the forward op is gone. On a Keras LSTM with recurrent dropout (the generic
time loop, 50 steps) the forward loop was ~10 ms of a 41 ms step.

The copy computes what the forward loop computes only if copying the body kept all it does:
the copy rematerializes the ops the outputs need by data, so a body or cond with a stateful
op the outputs do not need (a variable update, a print) keeps its loop. Random ops in the
body draw once, in the copy, and the gradient sees those draws. A fetch or target naming the
forward loop is renamed to the copy. Kept: a forward loop whose outputs are fed, a copy fed
anything but the forward loop's own inputs, and a copy needing a stateful op created after
the forward loop (moving it earlier would reorder side effects). Switched off with TF's
`loop_optimization` toggle.
"""

from __future__ import annotations

from ndflow.core.graph import Graph, Operation, upstream_ops
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.pass_context import PassContext, op_name_of

TAG = "_accumulates_for"   # the attr naming the forward loop a copy reproduces
_LOOPS = ("While", "StatelessWhile")
_FUNCTIONS = ("cond", "body")


def _keeps_all_effects(loop: Operation) -> bool:
    """Whether every stateful op of the loop's cond and body is needed by their outputs."""
    for attr in _FUNCTIONS:
        fg = loop.attrs[attr]
        needed = upstream_ops([t.op for t in fg.outputs], lambda op: [t.op for t in op.inputs])
        if any(op.is_stateful and op not in needed and not op.type.startswith("Placeholder")
               for op in fg.get_operations()):
            return False
    return True


def _partners(graph: Graph, fed: set) -> dict:
    """forward loop -> (its accumulating copy, the ops created after the forward loop that
    the copy needs, in creation order)."""
    ops = graph.get_operations()
    order = {op: i for i, op in enumerate(ops)}
    by_name = {op.name: op for op in ops if op.type in _LOOPS}
    found: dict = {}
    for copy in ops:
        forward = by_name.get(copy.attrs.get(TAG)) if copy.type in _LOOPS else None
        if forward is None or forward in found or \
                any(op_name_of(name) == forward.name for name in fed):
            continue
        n = len(forward.inputs)   # the copy's loop variables: its counter, limit, then these
        if len(copy.inputs) < n + 2 or any(a is not b for a, b in
                                           zip(forward.inputs, copy.inputs[2:2 + n])):
            continue
        if not _keeps_all_effects(forward):
            continue
        later = upstream_ops([copy], lambda op: [t.op for t in op.inputs]
                             + list(op.control_inputs))
        later = sorted((op for op in later if order[op] > order[forward] and op is not copy),
                       key=order.__getitem__)
        if any(op is forward or op.is_stateful for op in later):
            continue
        found[forward] = (copy, later)
    return found


def loop_forward_reuse(graph: Graph, ctx: PassContext) -> Graph:
    """Replaces each forward loop by its accumulating copy (module doc)."""
    partners = _partners(graph, ctx.fed_tensor_names())
    if not partners:
        return graph
    rw = GraphRewriter(graph)
    moved: set = set()
    for op in graph.get_operations():
        if op in moved:
            continue
        if op not in partners:
            rw.copy_op(op)
            continue
        copy, later = partners[op]
        for early in later:      # what the copy needs, emitted before the forward's consumers
            rw.copy_op(early)
            moved.add(early)
        new = rw.copy_op(copy)
        moved.add(copy)
        rw.replace_outputs(op, new.outputs[2:2 + len(op.outputs)], control_op=new)
        _rename(ctx, op, new)
    return rw.graph


def _rename(ctx: PassContext, forward: Operation, copy: Operation) -> None:
    """A fetch of the forward loop's output k is the copy's output k + 2; a target naming the
    forward loop (a tf.function runs its stateful ops) is the copy."""
    for name in ctx.fetches + ctx.targets:
        current = ctx.current_name(name)
        if current == forward.name:
            ctx.rename(current, copy.name)
        elif op_name_of(current) == forward.name:
            ctx.rename(current, f"{copy.name}:{int(current.rpartition(':')[2]) + 2}")
