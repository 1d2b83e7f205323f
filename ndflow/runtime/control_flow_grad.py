"""Gradients of If/StatelessIf (and While, see below).

`If` gradient (TF's cond_v2 construction, simplified): an `If` on the same predicate over
two gradient branches. Each gradient branch takes the forward If's inputs plus the output
gradients, re-traces its forward branch from those inputs (rematerialization: the ops the
outputs depend on by data are copied in; stateful-only ops such as variable updates are
not) and takes symbolic gradients inside. The forward If therefore needs no extra outputs
(TF instead exports the intermediates as outputs); the price is recomputing the taken
branch's forward ops in the backward pass, and random ops inside a branch being sampled
anew there. Inputs one branch does not use get zeros from it; resource inputs (captured
variables) get the gradient of the variable's value, as ReadVariableOp's gradient does.
"""

from __future__ import annotations

from ndflow.autodiff.backprop import is_differentiable
from ndflow.autodiff.gradients import gradients
from ndflow.core import context, dtypes
from ndflow.ops.apply import apply_op
from ndflow.ops.array import identity, zeros_like
from ndflow.ops.control_flow import If, StatelessIf
from ndflow.ops.state import read_variable_op
from ndflow.runtime.control_flow import (
    finish_inputs,
    trace_function,
    union_captures,
)
from ndflow.runtime.func_graph import FuncGraph, tracing_scope


def copy_function_body(fg: FuncGraph, args: list, outputs: list) -> list:
    """Copies the ops `outputs` need by data from `fg` into the default graph, its inputs
    bound to `args`; returns the copies of `outputs` (control inputs on ops not copied are
    dropped: this is rematerialization of values, not a re-run of side effects)."""
    g = context.get_default_graph()
    mapping: dict = dict(zip(fg.inputs, args))
    need: set = set()
    stack = [t.op for t in outputs if t not in mapping]
    while stack:
        op = stack.pop()
        if op in need:
            continue
        need.add(op)
        stack.extend(t.op for t in op.inputs if t not in mapping)
    for op in fg.get_operations():
        if op not in need:
            continue
        new = g.create_op(op.op_def, [mapping[t] for t in op.inputs], op.attrs,
                          [(t.dtype, t.shape) for t in op.outputs], g.unique_name(op.name),
                          [mapping[c] for c in op.control_inputs if c in mapping],
                          op.device or None)
        mapping[op] = new
        mapping.update(zip(op.outputs, new.outputs))
    return [mapping[t] for t in outputs]


def _grad_branch(fwd: FuncGraph, name: str, in_specs: list, out_idx: list, grad_specs: list):
    n = len(in_specs)

    def fn(*phs):
        xs, gys = list(phs[:n]), list(phs[n:])
        outs = copy_function_body(fwd, xs, fwd.outputs)
        ys = [outs[i] for i in out_idx]
        return gradients(ys, xs, grad_ys=gys) if ys else [None] * n

    return trace_function(fn, name, in_specs + grad_specs, lambda phs: phs)


def _fill_missing(fg: FuncGraph, grads: list, other: list) -> list:
    """Zeros (built in `fg`) for the inputs only the other branch has a gradient for."""
    out = list(grads)
    with tracing_scope(fg):
        for i, (g, o) in enumerate(zip(grads, other)):
            if g is not None or o is None:
                continue
            x = fg.arg_inputs[i]
            if x.dtype is dtypes.resource:
                out[i] = zeros_like(read_variable_op(x, o.dtype))
            else:
                out[i] = zeros_like(x)
    return out


def _if_grad(op, *grads):
    then_fg, else_fg = op.attrs["then_branch"], op.attrs["else_branch"]
    inputs = list(op.inputs[1:])
    out_idx = [i for i, t in enumerate(op.outputs)
               if is_differentiable(t.dtype) and t.dtype is not dtypes.resource
               and grads[i] is not None]
    if not out_idx:
        return [None] * len(op.inputs)
    grad_ins = [grads[i] for i in out_idx]
    in_specs = [(t.dtype, t.shape) for t in inputs]
    grad_specs = [(g.dtype, g.shape) for g in grad_ins]
    base = op.name.replace("/", "_") + "_grad"
    t_fg, t_grads = _grad_branch(then_fg, f"{base}_true", in_specs, out_idx, grad_specs)
    e_fg, e_grads = _grad_branch(else_fg, f"{base}_false", in_specs, out_idx, grad_specs)
    t_grads = _fill_missing(t_fg, t_grads, e_grads)
    e_grads = _fill_missing(e_fg, e_grads, t_grads)
    keep = [i for i, g in enumerate(t_grads) if g is not None]
    if not keep:
        return [None] * len(op.inputs)
    with tracing_scope(t_fg):
        t_fg.outputs = [identity(t_grads[i]) for i in keep]
    with tracing_scope(e_fg):
        e_fg.outputs = [identity(e_grads[i]) for i in keep]
    externals = union_captures(t_fg, e_fg)
    for fg in (t_fg, e_fg):
        finish_inputs(fg, externals)
    shapes = [a.shape.most_specific_compatible_shape(b.shape)
              for a, b in zip(t_fg.outputs, e_fg.outputs)]
    stateful = any(o.op_def.is_stateful for fg in (t_fg, e_fg) for o in fg.get_operations())
    gop = apply_op(
        If if stateful else StatelessIf, [op.inputs[0], inputs + grad_ins + externals],
        {"Tout": [t.dtype for t in t_fg.outputs], "then_branch": t_fg, "else_branch": e_fg,
         "output_shapes": shapes}, base)
    result = [None] * len(op.inputs)
    for j, i in enumerate(keep):
        result[1 + i] = gop.outputs[j]
    return result


for _d in (If, StatelessIf):
    _d.def_grad(_if_grad)
