"""Gradients of If/StatelessIf, Case/StatelessCase and While/StatelessWhile.

`If` gradient (TF's cond_v2 construction, simplified): an `If` on the same predicate over
two gradient branches (`Case`: a `Case` on the same index over N gradient branches). Each
gradient branch takes the forward op's inputs plus the output gradients, re-traces its
forward branch from those inputs (rematerialization: the ops the outputs depend on by data
are copied in; stateful-only ops such as variable updates are not) and takes symbolic
gradients inside. The forward op therefore needs no extra outputs (TF instead exports the
intermediates as outputs); the price is recomputing the taken branch's forward ops in the
backward pass, and random ops inside a branch being sampled anew there. Inputs a branch
does not use get zeros from it; resource inputs (captured variables) get the gradient of
the variable's value, as ReadVariableOp's gradient does.
"""

from __future__ import annotations

from ndflow.autodiff.backprop import is_differentiable
from ndflow.autodiff.gradients import gradients
from ndflow.core import context, dtypes
from ndflow.core.graph import upstream_ops
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import EagerTensor
from ndflow.ops.apply import apply_op, capture_into
from ndflow.ops.arithmetic import add_n
from ndflow.ops.array_core import constant, identity
from ndflow.ops.array_fill import zeros_like
from ndflow.ops.control_flow import (
    Case,
    If,
    StatelessCase,
    StatelessIf,
    StatelessWhile,
    While,
)
from ndflow.ops.forward_copies import ForwardCopy
from ndflow.ops.list_ops import (
    empty_tensor_list,
    tensor_list_pop_back,
    tensor_list_push_back,
)
from ndflow.ops.state import read_variable_op
from ndflow.passes import loop_forward_reuse
from ndflow.runtime.concrete_function import ConcreteFunction
from ndflow.runtime.control_flow import (
    finish_inputs,
    trace_function,
    union_captures,
    while_loop,
)
from ndflow.runtime.control_flow_kernels import compile_function
from ndflow.runtime.func_graph import FuncGraph, tracing_scope
from ndflow.runtime.state import EAGER_CONTEXT


def copy_function_body(fg: FuncGraph, args: list, outputs: list) -> list:
    """Copies the ops `outputs` need by data from `fg` into the default graph, its inputs
    bound to `args`; returns the copies of `outputs` (control inputs on ops not copied are
    dropped: this is rematerialization of values, not a re-run of side effects). Gradient
    functions of the copies see `fg`'s tensors as their copies, other ops of `fg` being
    copied when they first ask for one (ops/forward_copies.py)."""
    g = context.get_default_graph()
    mapping: dict = dict(zip(fg.inputs, args))

    def rematerialize(t):
        return _copy_needed(fg, g, mapping, copies, [t])[0]

    copies = ForwardCopy(fg, mapping, rematerialize=rematerialize)
    return _copy_needed(fg, g, mapping, copies, outputs)


def _copy_needed(fg: FuncGraph, g, mapping: dict, copies: ForwardCopy, outputs: list) -> list:
    """Copies into `g` the ops of `fg` that `outputs` need and `mapping` lacks."""
    need = upstream_ops([t.op for t in outputs if t not in mapping],
                        lambda op: [t.op for t in op.inputs if t not in mapping])
    for op in fg.get_operations():
        if op not in need:
            continue
        new = g.create_op(op.op_def, [mapping[t] for t in op.inputs], op.attrs,
                          [(t.dtype, t.shape) for t in op.outputs], g.unique_name(op.name),
                          [mapping[c] for c in op.control_inputs if c in mapping],
                          op.device or None)
        new.forward_copy = copies.of(op)
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


def _fill_missing(fgs: list, all_grads: list) -> None:
    """Zeros (built in each branch's graph) for the inputs only other branches have a
    gradient for."""
    for i in range(len(all_grads[0])):
        other = next((g[i] for g in all_grads if g[i] is not None), None)
        if other is None:
            continue
        for fg, g in zip(fgs, all_grads):
            if g[i] is not None:
                continue
            x = fg.arg_inputs[i]
            with tracing_scope(fg):
                g[i] = zeros_like(read_variable_op(x, other.dtype)) \
                    if x.dtype is dtypes.resource else zeros_like(x)


def _branches_grad(op, grads: tuple, branches: list, names: list, make_op) -> list:
    """The gradient of a branching op (input 0 selects, inputs 1.. feed every branch):
    `make_op(grad_branches, inputs, attrs, stateful, name)` builds the same kind of op over
    gradient branches, each rematerializing its forward branch."""
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
    traced = [_grad_branch(fwd, f"{base}_{n}", in_specs, out_idx, grad_specs)
              for fwd, n in zip(branches, names)]
    fgs = [fg for fg, _ in traced]
    all_grads = [list(g) for _, g in traced]
    _fill_missing(fgs, all_grads)
    keep = [i for i, g in enumerate(all_grads[0]) if g is not None]
    if not keep:
        return [None] * len(op.inputs)
    for fg, g in zip(fgs, all_grads):
        with tracing_scope(fg):
            fg.outputs = [identity(g[i]) for i in keep]
    externals = union_captures(*fgs)
    for fg in fgs:
        finish_inputs(fg, externals)
    shapes = [t.shape for t in fgs[0].outputs]
    for fg in fgs[1:]:
        shapes = [s.most_specific_compatible_shape(t.shape) for s, t in zip(shapes, fg.outputs)]
    stateful = any(o.op_def.is_stateful for fg in fgs for o in fg.get_operations())
    gop = make_op(fgs, [op.inputs[0], inputs + grad_ins + externals],
                  {"Tout": [t.dtype for t in fgs[0].outputs], "output_shapes": shapes},
                  stateful, base)
    result = [None] * len(op.inputs)
    for j, i in enumerate(keep):
        result[1 + i] = gop.outputs[j]
    return result


def _if_grad(op, *grads):
    def make_op(fgs, inputs, attrs, stateful, name):
        attrs.update(then_branch=fgs[0], else_branch=fgs[1])
        return apply_op(If if stateful else StatelessIf, inputs, attrs, name)
    return _branches_grad(op, grads, [op.attrs["then_branch"], op.attrs["else_branch"]],
                          ["true", "false"], make_op)


def _case_grad(op, *grads):
    def make_op(fgs, inputs, attrs, stateful, name):
        attrs["branches"] = fgs
        return apply_op(Case if stateful else StatelessCase, inputs, attrs, name)
    branches = op.attrs["branches"]
    return _branches_grad(op, grads, branches,
                          [f"branch{b}" for b in range(len(branches))], make_op)


for _d in (If, StatelessIf):
    _d.def_grad(_if_grad)
for _d in (Case, StatelessCase):
    _d.def_grad(_case_grad)


# -- While ---------------------------------------------------------------------------------------
#
# `While` gradient, O(N) in the trip count N as TF's while_v2: a copy of the forward loop
# (same cond and body, same inputs) also pushes the state each iteration starts from onto
# TensorList accumulators (one per loop variable the body changes, counter included); a
# backward loop of N steps then pops the states in reverse, re-runs the body once from each
# (its intermediates are rematerialized, not stored: TF stacks the intermediates themselves)
# and applies the body's vector-Jacobian product to the loop-carried gradients, adding the
# gradients of loop-invariant inputs (captures) to accumulators. The forward op needs no
# extra outputs (TF rewrites it in place; ndflow's graphs are append-only), so the forward
# loop is built twice; in a graph, passes/loop_forward_reuse.py lets the copy take the
# original's place: 2N body evaluations, not 3N (TF's backward reads stacked intermediates:
# N). Side-effect-only ops of the body are not re-run and random ops are sampled anew (see
# copy_function_body). Eagerly (a While run by a tf.function a tape watches) the backward
# graph runs as one compiled plan, or op by op on the tapes when a tape watches its inputs,
# so that gradients of gradients reach them.

_FUNCTIONAL = {"If": ("then_branch", "else_branch"), "StatelessIf": ("then_branch", "else_branch"),
               "Case": ("branches",), "StatelessCase": ("branches",),
               "While": ("body",), "StatelessWhile": ("body",)}


def _read_dtype(ph):
    """The dtype a resource placeholder is read as, looking into nested If/Case/While
    functions it is passed to (None if it is never read)."""
    for c in ph.consumers():
        if c.type == "ReadVariableOp":
            return c.attrs["dtype"]
        for attr in _FUNCTIONAL.get(c.type, ()):
            fgs = c.attrs[attr] if isinstance(c.attrs[attr], list) else [c.attrs[attr]]
            offset = 0 if c.type.endswith("While") else 1  # If/Case: input 0 selects
            for i, t in enumerate(c.inputs):
                if t is ph and i >= offset:
                    for fg in fgs:
                        found = _read_dtype(fg.inputs[i - offset])
                        if found is not None:
                            return found
    return None


def _zeros_for_resource(body_fg: FuncGraph, k: int, handle):
    """Zeros shaped like the variable behind capture `k` (None if the body never reads it)."""
    dtype = _read_dtype(body_fg.inputs[k])
    return None if dtype is None else zeros_like(read_variable_op(handle, dtype))


def _has_gradient(dtype) -> bool:
    return dtype.is_floating or dtype is dtypes.variant


def _here(t):
    """`t` usable in the graph being built (captured from an enclosing one if needed)."""
    g = context.get_default_graph()
    return t if getattr(t, "graph", None) is g else capture_into(g, t)


def _accumulating_loop(op, s: list, stacked: list) -> list:
    """The forward loop again, from `s`, pushing the state each iteration starts from for
    the inputs `stacked`; returns the accumulators (TensorLists, last state on top)."""
    cond_fg, body_fg = op.attrs["cond"], op.attrs["body"]
    n_in = len(s)
    shapes = [t.shape for t in op.outputs]
    accs = [empty_tensor_list(None, s[k].dtype) for k in stacked]

    def cond(*st):
        return copy_function_body(cond_fg, list(st[:n_in]), cond_fg.outputs)[0]

    def body(*st):
        cur = list(st[:n_in])
        outs = copy_function_body(body_fg, cur, body_fg.outputs)
        return outs + [tensor_list_push_back(a, cur[k]) for a, k in zip(st[n_in:], stacked)]

    res = while_loop(cond, body, list(s) + accs,
                     shape_invariants=shapes + [TensorShape(())] * len(accs),
                     name=op.name.replace("/", "_") + "_accumulate")
    # passes/loop_forward_reuse.py lets this loop replace `op` (in the same graph)
    res[0].op.inputs[0].op.attrs[loop_forward_reuse.TAG] = op.name
    return list(res[n_in:])


def _reached_inputs(fg: FuncGraph, outputs: list) -> set:
    """Indices of the inputs of `fg` that `outputs` depend on by data."""
    index = {id(t): k for k, t in enumerate(fg.inputs)}
    found, seen, stack = set(), set(), list(outputs)
    while stack:
        t = stack.pop()
        if id(t) in index:
            found.add(index[id(t)])
            continue
        if t.op in seen:
            continue
        seen.add(t.op)
        stack.extend(t.op.inputs)
    return found


def _watched(tensors: list) -> bool:
    """Whether an active tape watches one of `tensors` (eager mode)."""
    return any(tape.watches(t) for tape in context.active_tapes()
               if hasattr(tape, "watches") for t in tensors)


def _while_grad(op, *grads):
    body_fg = op.attrs["body"]
    s0 = list(op.inputs)
    n_in = len(s0)
    changing = [k for k in range(n_in) if body_fg.outputs[k] is not body_fg.inputs[k]]
    carried = [k for k in changing if k >= 2 and _has_gradient(s0[k].dtype)]
    seeds = [grads[k] for k in carried]
    if all(g is None for g in seeds):
        return [None] * n_in
    # Only the inputs the carried outputs read are stacked and differentiated.
    needed = _reached_inputs(body_fg, [body_fg.outputs[k] for k in carried])
    invariant = [k for k in range(2, n_in) if k not in changing and k in needed
                 and (_has_gradient(s0[k].dtype) or s0[k].dtype is dtypes.resource)]
    stacked = [k for k in changing if k in needed and s0[k].dtype is not dtypes.resource]
    shapes = [t.shape for t in op.outputs]
    ins = s0 + [op.outputs[0] - s0[0]] + [g if g is not None else zeros_like(op.outputs[k])
                                          for g, k in zip(seeds, carried)]

    def backward(*args):
        s, trips, gs = list(args[:n_in]), args[n_in], list(args[n_in + 1:])
        stacks = _accumulating_loop(op, s, stacked) if stacked else []
        accs, acc_pos = [], []
        for k in invariant:
            z = zeros_like(s[k]) if s[k].dtype is not dtypes.resource else \
                _zeros_for_resource(body_fg, k, s[k])
            if z is not None:
                accs.append(z)
                acc_pos.append(k)

        def step(j, g_carried, acc, lists):
            state = [_here(t) if k in needed else None for k, t in enumerate(s)]
            rest = []
            for a, k in zip(lists, stacked):
                a, state[k] = tensor_list_pop_back(a, s[k].dtype, element_shape=shapes[k])
                rest.append(a)
            outs = copy_function_body(body_fg, state, [body_fg.outputs[k] for k in carried])
            read = [k for k in carried if k in needed]
            dx = gradients(outs, [state[k] for k in read + acc_pos], grad_ys=list(g_carried))
            by_k = dict(zip(read, dx))
            new_g = [by_k.get(k) if by_k.get(k) is not None else zeros_like(g)
                     for k, g in zip(carried, g_carried)]
            new_acc = [add_n([a, d]) if d is not None else a
                       for a, d in zip(acc, dx[len(read):])]
            return j + 1, new_g, new_acc, rest

        # an incoming gradient may know less of its shape than the loop output it seeds
        invariants = [TensorShape(()), [shapes[k].most_specific_compatible_shape(g.shape)
                                        for k, g in zip(carried, gs)],
                      [a.shape for a in accs], [TensorShape(())] * len(stacks)]
        _, g_final, acc_final, _ = while_loop(lambda j, g, a, lists: j < trips, step,
                                              [constant(0), gs, accs, stacks],
                                              shape_invariants=invariants)
        return list(g_final) + list(acc_final), acc_pos

    if context.executing_eagerly():
        specs = [(t.dtype, t.shape) for t in ins]
        box: dict = {}

        def traced(*phs):
            outs, box["pos"] = backward(*phs)
            context.get_default_graph().outputs = [identity(t) for t in outs]
            return outs

        fg, _ = trace_function(traced, f"{op.name}_grad".replace("/", "_"), specs,
                               lambda phs: phs)
        externals = union_captures(fg)
        finish_inputs(fg, externals)
        args = ins + externals
        if _watched(args):   # a higher order: the backward loop is recorded op by op
            res = ConcreteFunction(fg, [(t.dtype, t.shape) for t in fg.inputs],
                                   list(fg.outputs)).run_ops_eagerly(args)
        else:
            plan = compile_function(fg, EAGER_CONTEXT)
            vals = plan.run([t._value for t in args])
            res = [EagerTensor(v, t.dtype) for v, t in zip(vals, fg.outputs)]
        acc_pos = box["pos"]
    else:
        res, acc_pos = backward(*ins)
    result: list = [None] * n_in
    for k, g in zip(carried + acc_pos, res):
        extra = grads[k] if k in acc_pos else None
        result[k] = add_n([g, extra]) if extra is not None else g
    return result


for _d in (While, StatelessWhile):
    _d.def_grad(_while_grad)
