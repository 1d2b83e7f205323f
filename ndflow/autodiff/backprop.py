"""Reverse-mode accumulation shared by `tf.gradients` (graph) and `GradientTape` (eager).

Both hand over the forward ops in execution order plus gradient seeds; each op's registered
gradient function emits ops in the current mode (graph nodes or eager ops), so the backward
pass is itself a graph the passes can optimize, and higher-order gradients fall out of tapes
recording the backward ops.
"""

from __future__ import annotations

import contextlib

from ndflow.core import dtypes
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import add_n
from ndflow.ops.array_fill import zeros_like
from ndflow.ops.forward_copies import differentiating
from ndflow.ops.gradient_registry import gradient_function
from ndflow.ops.indexed_slices import IndexedSlices, aggregate_indexed_slices


def is_differentiable(dtype) -> bool:
    """Gradients flow through floating and complex tensors and resource handles (to
    variables)."""
    return (dtype.is_floating or dtype.is_complex or dtype is dtypes.resource
            or dtype is dtypes.variant)


def aggregate(grads):
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    if any(isinstance(g, IndexedSlices) for g in grads):
        sparse = aggregate_indexed_slices(grads)
        if sparse is not None:
            return sparse
        grads = [convert_to_tensor(g) for g in grads]  # a dense one among them: densify
    return add_n(grads)


def backprop(ops, seeds: dict, sources, stop=frozenset(), scope=None,
             needs_grad=None) -> list:
    """Gradients of the seeded tensors w.r.t. `sources` through `ops` (forward order).

    `seeds` maps tensor -> gradient. Tensors in `stop` receive gradients (they may be
    sources) but do not pass them on to the ops that produced them (`stop_gradients`).
    `scope(op)` returns a context manager to build each op's gradient in (graph name scopes
    such as `gradients/MatMul_grad`). `needs_grad(tensor)`, for eager ops, says whether an
    input leads back to a source; the others are passed to gradient functions as
    `op.skip_input_indices` so they need not be computed (graphs prune them instead). The
    gradient function of a copied op runs with its `forward_copy` active, so tensors of the
    graph it was copied from stand for their copies (ops/forward_copies.py).
    """
    pending: dict = {}
    for t, g in seeds.items():
        pending.setdefault(t, []).append(g)
    keep = set(sources)
    for op in reversed(ops):
        outs = op.outputs
        out_grads = []
        live = False
        for t in outs:
            if t in keep:
                gs = pending.get(t)
                if gs is not None and len(gs) > 1:
                    gs = pending[t] = [aggregate(gs)]
            else:
                gs = pending.pop(t, None)
            if gs is None or t in stop:
                out_grads.append(None)
            else:
                out_grads.append(gs[0] if len(gs) == 1 else aggregate(gs))
                live = True
        if not live:
            continue
        found, grad_fn = gradient_function(op)
        if not found:
            if op.op_def.not_differentiable:
                continue
            grad_fn = op.op_def.gradient()
        elif grad_fn is None:  # tf.no_gradient
            continue
        if grad_fn is None and getattr(op, "_eager", False):   # TF's eager tape says so
            raise LookupError(f"gradient registry has no entry for: {op.type}")
        if grad_fn is None:
            raise LookupError(f"No gradient defined for operation '{op.name}' (op type: "
                              f"{op.type}). In general every operation must have an "
                              "associated `@tf.RegisterGradient` for correct autodiff.")
        if needs_grad is not None and getattr(op, "_eager", False):
            op.skip_input_indices = tuple(
                i for i, t in enumerate(op.inputs) if not needs_grad(t)) or None
        with scope(op) if scope is not None else contextlib.nullcontext(), \
                differentiating(getattr(op, "forward_copy", None)):
            out_grads = [g if g is not None or not (t.dtype.is_floating or t.dtype.is_complex)
                         else zeros_like(t)
                         for t, g in zip(outs, out_grads)]
            in_grads = grad_fn(op, *out_grads)
        if in_grads is None or not isinstance(in_grads, (list, tuple)):
            in_grads = [in_grads]
        if len(in_grads) != len(op.inputs):
            raise ValueError(f"Gradient function for {op.type} returned {len(in_grads)} "
                             f"gradients, expected {len(op.inputs)}")
        for t, g in zip(op.inputs, in_grads):
            if g is None or not is_differentiable(t.dtype):
                continue
            pending.setdefault(t, []).append(g)
    return [aggregate(pending.get(s)) for s in sources]
