"""Apply an optimizer step only when the gradients are finite — without control-flow ops.

TensorFlow skips the step of a loss-scaled optimizer with `smart_cond(should_apply, apply_fn,
no_op)`. Eagerly (and for a Python bool) ndflow does the same: a Python `if`. In graphs
(`tf.function`, Session), ndflow has no `Switch`/`Merge` or `If` op, so the step is written as
a transaction over the state it writes:

    old_i = ReadVariableOp(r_i)                 for every resource r_i the step may write
    <the optimizer's ordinary update ops>       (control-dependent on every old_i)
    AssignVariableOp(r_i, SelectV2(should_apply, ReadVariableOp(r_i), old_i))

Variable values are immutable tensors that assignments replace, so `old_i` stays the value
from before the step; on a skipped step every resource gets its old value back bit for bit,
on an applied step its new one. The resources are the variables, the optimizer's slots and
non-slot variables and the step counter; `always` names resources written in both branches
(a Keras optimizer's `iterations`), which keep their update. Any other resource written by
the step would escape the rollback, so building such a step raises instead of silently
updating it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ndflow.core import context, dtypes, scopes
from ndflow.core.graph import Operation
from ndflow.ops import math as math_ops
from ndflow.ops.array_core import group

# Ops that take a resource handle without writing the resource.
_READ_ONLY = frozenset({"ReadVariableOp", "VarIsInitializedOp", "VariableShape",
                        "ResourceGather", "ResourceGatherNd", "VarHandleOp"})


def _is_python_bool(x) -> bool:
    return isinstance(x, bool)


def _resource_key(handle, graph):
    """Identifies the resource behind `handle` in `graph` (a function's capture placeholder
    maps to the eager handle it captures)."""
    for external, internal in getattr(graph, "captures", ()):
        if internal is handle:
            return id(external)
    return id(handle)


def apply_if(should_apply, apply_fn: Callable[[], object], resources: Iterable,
             always: Iterable = (), skip_fn: Callable[[], object] | None = None,
             name: str = "conditional_apply"):
    """Runs `apply_fn()` when `should_apply` is true, else `skip_fn()` (if given).

    `should_apply` is a Python bool or a scalar bool tensor. Eagerly this is a Python `if`.
    In a graph `apply_fn`'s ops always run and are rolled back through `SelectV2` on
    `resources` when `should_apply` is false (`skip_fn` is not used there); `always` are
    resources `apply_fn` writes that keep their update either way. Returns the grouping op
    (graph) or the branch's result (eager).
    """
    if _is_python_bool(should_apply) or context.executing_eagerly():
        if bool(should_apply.numpy() if hasattr(should_apply, "numpy") else should_apply):
            return apply_fn()
        return skip_fn() if skip_fn is not None else None
    graph = context.get_default_graph()
    resources = _unique(resources)
    keys = {_resource_key(v.handle, graph) for v in resources}
    keys |= {_resource_key(v.handle, graph) for v in always if v is not None}
    with scopes.name_scope(name):
        with scopes.name_scope("snapshot"):
            old = [(v, v.value()) for v in resources]
    first = len(graph.get_operations())
    with graph.control_dependencies([t.op for _, t in old]):
        applied = apply_fn()
    writers = _writers(graph, graph.get_operations()[first:], keys)
    deps = writers + [x for x in _as_list(applied) if _is_op(x) and x not in writers]
    commits = []
    with scopes.name_scope(name), graph.control_dependencies(deps):
        for v, value in old:
            kept = math_ops.where(should_apply, v.value(), value)
            commits.append(v.assign(kept, read_value=False))
    return group(*(deps + commits))


def _is_op(x) -> bool:
    return isinstance(x, Operation)


def _writers(graph, new_ops, keys: set) -> list:
    """The new ops that write resources; raises if one writes a resource outside `keys`."""
    writers = []
    for op in new_ops:
        if op.type in _READ_ONLY:
            continue
        for t in op.inputs:
            if t.dtype is not dtypes.resource:
                continue
            if _resource_key(t, graph) not in keys:
                raise NotImplementedError(
                    f"A conditionally applied optimizer step writes a resource ({t.name}, via "
                    f"{op.type} node '{op.name}') that is not one of the optimizer's variables "
                    "or slots, so a skipped step could not leave it untouched.")
            if op not in writers:
                writers.append(op)
    return writers


def _unique(variables_) -> list:
    out, seen = [], set()
    for v in variables_:
        if v is not None and id(v) not in seen:
            seen.add(id(v))
            out.append(v)
    return out


def _as_list(x) -> list:
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]
