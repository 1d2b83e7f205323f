"""`tf.cond`, `tf.switch_case` and `tf.while_loop` (TF2 control flow v2).

Eagerly, `cond` and `switch_case` call the chosen Python branch and `while_loop` is a
Python loop, as TF2 eager does. While building a graph (inside `tf.function`, or a v1 graph: TF2's
control_flow_v2 behaviour) they trace their functions into `FuncGraph`s and emit one
functional op:

- `cond` -> `If` / `StatelessIf(pred, *captures)`: both branches take the union of the
  tensors either branch captures (in that order), and return one Identity per output.
- `switch_case` -> `Case` / `StatelessCase(branch_index, *captures)`: likewise over N
  branches (`default`, if given, is the last one: out-of-range indices run it).
- `while_loop` -> `While` / `StatelessWhile(loop_counter, maximum_iterations, *loop_vars,
  *captures)` as TF's while_v2: cond and body take all of them; the body returns the new
  counter, the limit, the new loop vars and the captures unchanged. `maximum_iterations`
  (-1 when None) is checked in the traced cond.

The stateless variants are used when no op inside is stateful. Kernels:
control_flow_kernels.py; gradients: control_flow_grad.py.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from ndflow.core import context, devices, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.doc_tables import attach
from ndflow.core.graph import Operation, SymbolicTensor
from ndflow.core.nest import flatten, is_nested, pack_sequence_as
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import identity, reshape, stop_gradient
from ndflow.ops.comparison import less, logical_and
from ndflow.ops.control_flow import (
    Case,
    If,
    StatelessCase,
    StatelessIf,
    StatelessWhile,
    While,
)
from ndflow.ops.tensor_array_ops import TensorArray, from_flow, to_flow
from ndflow.runtime import (
    control_flow_docs,
    control_flow_kernels,  # noqa: F401 - registers the kernels
)
from ndflow.runtime.func_graph import FuncGraph, tracing_scope

_ids = itertools.count(1)


def _new_graph(name: str) -> FuncGraph:
    outer = context.get_default_graph()
    fg = FuncGraph(f"{name}_{next(_ids)}", outer)
    fg.seed = outer.seed
    fg._device_stack = [devices.DeviceSpec.from_string(outer._current_device())]
    fg._collections = outer._collections  # cond_v2/while_v2 share the outer collections
    return fg


def _to_outputs(fg: FuncGraph, result) -> list:
    """Graph outputs for the leaves of `result` (Identity copies, as TF returns)."""
    outs = []
    for leaf in flatten(result):
        if leaf is None or isinstance(leaf, Operation):
            continue
        t = convert_to_tensor(to_flow(leaf))
        if not (isinstance(t, SymbolicTensor) and t.graph is fg):
            t = fg.capture(t)
        outs.append(identity(t))
    return outs


def trace_function(fn: Callable, name: str, specs: list, pack: Callable | None = None):
    """Traces `fn(*pack(placeholders))` into a new FuncGraph; returns (graph, result)."""
    fg = _new_graph(name)
    with tracing_scope(fg):
        phs = [fg.add_placeholder(d, s, "placeholder") for d, s in specs]
        result = fn(*pack(phs)) if pack is not None else fn()
    fg.arg_inputs = phs
    for var in fg.variables:
        for tape in context.active_tapes():
            tape.variable_accessed(var)
    return fg, result


def finish_inputs(fg: FuncGraph, externals: list) -> None:
    """Makes `fg.inputs` its arguments followed by one placeholder per external tensor."""
    fg.arg_inputs = fg.arg_inputs + [fg.capture(e) for e in externals]
    fg._captures = {}


def union_captures(*graphs: FuncGraph) -> list:
    seen: dict = {}
    for fg in graphs:
        for e in fg.external_captures:
            seen.setdefault(id(e), e)
    return list(seen.values())


def _is_stateful(*graphs: FuncGraph) -> bool:
    return any(op.op_def.is_stateful for fg in graphs for op in fg.get_operations())


def _dtype_repr(d) -> str:
    return f"<dtype: '{d.name}'>"


# -- cond ------------------------------------------------------------------------------------

def _check_same_outputs(graphs: list, results: list, op_name: str, names: list) -> None:
    for b in range(1, len(graphs)):
        def error(detail: str, b=b):
            raise TypeError(
                f"{names[0]} and {names[b]} arguments to {op_name} must have the same number, "
                f"type, and overall structure of return values.\n\n{names[0]} output: "
                f"{results[0]}\n{names[b]} output: {results[b]}\n\nError details:\n{detail}")
        if _structure(results[0]) != _structure(results[b]):
            error("The two structures don't have the same nested structure.")
        for a, o in zip(graphs[0].outputs, graphs[b].outputs):
            if a.dtype is not o.dtype:
                error(f"{a} and {o} have different types")


def _structure(x):
    if isinstance(x, dict):
        return ("dict", tuple(sorted((k, _structure(v)) for k, v in x.items())))
    if isinstance(x, (list, tuple)):
        return ("seq", tuple(_structure(v) for v in x))
    return "leaf" if x is not None and not isinstance(x, Operation) else None


def _pred_tensor(pred) -> Tensor:
    if isinstance(pred, bool):
        raise TypeError("pred must not be a Python bool")
    pred = convert_to_tensor(pred)
    if pred.dtype is not dtypes.bool:
        raise TypeError(f"Input 'pred' passed {pred.dtype.name} expected bool")
    if pred.shape.rank is not None and pred.shape.num_elements() != 1:
        raise ValueError(f"Shape must be rank 0 but is rank {pred.shape.rank} for 'pred' "
                         f"of tf.cond (shape {pred.shape}).")
    if pred.shape.rank != 0:  # cond_v2 squeezes: the If kernel reads a [1] tensor as non-empty
        pred = reshape(pred, [])
    return pred


@tf_export("cond", v1=[])
def cond(pred, true_fn: Callable | None = None, false_fn: Callable | None = None,
         name: str | None = None):
    """`tf.cond`: `true_fn()` if `pred` else `false_fn()` (both must return the same
    structure of tensors with the same dtypes)."""
    if not callable(true_fn):
        raise TypeError("'true_fn' must be callable.")
    if not callable(false_fn):
        raise TypeError("'false_fn' must be callable.")
    if context.executing_eagerly():
        value = convert_to_tensor(pred).numpy()
        return true_fn() if bool(value) else false_fn()
    pred = _pred_tensor(pred)
    base = name or "cond"
    graphs, results, externals, shapes = _trace_branches(
        [true_fn, false_fn], pred, [f"{base}_true", f"{base}_false"], "tf.cond",
        ["true_fn", "false_fn"])
    op_def = If if _is_stateful(*graphs) else StatelessIf
    op = apply_op(op_def, [pred, externals],
                  {"Tout": [t.dtype for t in graphs[0].outputs], "then_branch": graphs[0],
                   "else_branch": graphs[1], "output_shapes": shapes}, name=base)
    return _branch_outputs(op, results[0])


def _trace_branches(fns: list, selector: Tensor, fn_names: list, op_name: str, names: list):
    """Traces each branch function (no arguments) into a FuncGraph; checks they return the
    same structure and dtypes, and gives all of them the union of their captures as inputs.
    Returns (graphs, Python results, external captures, merged output shapes)."""
    traced = [trace_function(lambda fn=fn: _Traced(fn, selector), fn_name, [])
              for fn, fn_name in zip(fns, fn_names)]
    graphs = [fg for fg, _ in traced]
    results = [t.result for _, t in traced]
    _check_same_outputs(graphs, results, op_name, names)
    externals = union_captures(*graphs)
    for fg in graphs:
        finish_inputs(fg, externals)
    shapes = [t.shape for t in graphs[0].outputs]
    for fg in graphs[1:]:
        shapes = [s.most_specific_compatible_shape(t.shape) for s, t in zip(shapes, fg.outputs)]
    return graphs, results, externals, shapes


def _branch_outputs(op: Operation, structure):
    """One Identity per output of the functional op, packed like the branch result."""
    with context.get_default_graph().name_scope(op.name + "/"):
        outs = [identity(t) for t in op.outputs]
    return _pack_result(structure, outs)


class _Traced:
    """Runs a branch inside its trace and records its outputs on the graph. An Operation the
    branch returns becomes an output `identity(selector)` (the predicate or branch index)
    control-dependent on it (cond_v2's `op_return_value`), so `cond` returns a bool tensor
    that runs the op when fetched."""

    def __init__(self, fn: Callable, selector: Tensor):
        fg = context.get_default_graph()
        self.result = _ops_to_tensors(fn(), fg, selector)
        fg.outputs = _to_outputs(fg, self.result)
        fg.structured_outputs = self.result


def _ops_to_tensors(result, fg: FuncGraph, pred: Tensor):
    if not any(isinstance(leaf, Operation) for leaf in flatten(result)):
        return result

    def convert(leaf):
        if not isinstance(leaf, Operation):
            return leaf
        captured = fg.capture(pred)
        with fg.control_dependencies([leaf]):
            return identity(captured)
    return pack_sequence_as(result, [convert(leaf) for leaf in flatten(result)])


def _pack_result(structure, outs: list):
    if structure is None or isinstance(structure, Operation):
        return None
    it = iter(outs)
    return pack_sequence_as(structure, [
        None if leaf is None or isinstance(leaf, Operation) else from_flow(leaf, next(it))
        for leaf in flatten(structure)])


# -- switch_case ---------------------------------------------------------------------------------

def _canonical_branches(branch_fns, default, branch_index) -> list:
    """TF's checks and order: the branch callables by key, then `default` if given."""
    if not isinstance(branch_index, Tensor):
        raise TypeError(f"'branch_index' must be a Tensor, got {type(branch_index)}")
    if not branch_index.dtype.is_integer:
        raise TypeError(f"'branch_index' must be an integer Tensor, got "
                        f"{_dtype_repr(branch_index.dtype)}")
    if not branch_fns:
        raise ValueError("Must provide at least one item in 'branch_fns'")
    if not isinstance(branch_fns, (list, tuple, dict)):
        raise TypeError("'branch_fns' must be a list, tuple, or dict")
    pairs = list(branch_fns.items()) if isinstance(branch_fns, dict) else list(branch_fns)
    if all(callable(fn) for fn in pairs):
        pairs = list(enumerate(pairs))
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'branch_fns' must be a 2-tuple. Received {pair}.")
        key, fn = pair
        if not isinstance(key, int):
            raise TypeError(f"key must be a Python `int`, got {type(key)}")
        if not callable(fn):
            raise TypeError(f"fn for key {key} must be callable.")
    keys = [k for k, _ in pairs]
    if min(keys) < 0 or max(keys) >= len(keys) or len(set(keys)) != len(keys):
        raise ValueError(f"branch indices (keys) must form contiguous range of [0 to "
                         f"{len(keys)}) but found {{{','.join(map(str, sorted(keys)))}}}")
    fns = [fn for _, fn in sorted(pairs, key=lambda p: p[0])]
    return fns + [default] if default is not None else fns


@tf_export("switch_case")
def switch_case(branch_index, branch_fns, default: Callable | None = None,
                name: str = "switch_case"):
    """`tf.switch_case`: runs `branch_fns[branch_index]()` (a list of callables, a dict or
    (key, fn) pairs with keys 0..N-1); an index out of range runs `default`, or the last
    branch when `default` is None. Graphs get one `Case`/`StatelessCase` op."""
    fns = _canonical_branches(branch_fns, default, branch_index)
    if context.executing_eagerly():
        i = int(branch_index.numpy())
        return fns[i if 0 <= i < len(fns) else -1]()
    g = context.get_default_graph()
    base = name or "switch_case"
    with g.name_scope(base) as scope:
        prefix = scope.rstrip("/").replace("/", "_") + "_indexed_case"
        graphs, results, externals, shapes = _trace_branches(
            fns, branch_index, [f"{prefix}_branch{b}" for b in range(len(fns))],
            "tf.switch_case", [f"branches[{b}]" for b in range(len(fns))])
        op_def = Case if _is_stateful(*graphs) else StatelessCase
        op = apply_op(op_def, [branch_index, externals],
                      {"Tout": [t.dtype for t in graphs[0].outputs], "branches": graphs,
                       "output_shapes": shapes}, name="indexed_case")
    return _branch_outputs(op, results[0])


# -- while_loop --------------------------------------------------------------------------------

def _check_body_result(loop_vars, result, flat_in: list, invariants: list) -> list:
    if isinstance(loop_vars, (list, tuple)) and len(loop_vars) == 1 and \
            not isinstance(result, (list, tuple)):
        result = type(loop_vars)([result]) if not hasattr(loop_vars, "_fields") else result
    if _structure(loop_vars) != _structure(result):
        raise ValueError("The two structures don't have the same nested structure.\n\n"
                         f"First structure: {result}\n\nSecond structure: {loop_vars}")
    flat = [convert_to_tensor(to_flow(x)) for x in flatten(result)]
    for x, out, inv in zip(flat_in, flat, invariants):
        if out.dtype is not x.dtype:
            raise TypeError(f"Loop var {x.name} enters the loop with type {_dtype_repr(x.dtype)}"
                            f" but has type {_dtype_repr(out.dtype)} after 1 iteration. "
                            f"{x.name} type should remain constant.")
        if not _less_specific(inv, out.shape):
            raise ValueError(
                f"Input tensor `{x.name}` enters the loop with shape {inv}, but has shape "
                f"{out.shape} after one iteration. To allow the shape to vary across "
                "iterations, use the `shape_invariants` argument of tf.while_loop to specify "
                "a less-specific shape.")
    return flat


def _less_specific(a: TensorShape, b: TensorShape) -> bool:
    """Whether `a` allows every shape `b` allows (TF's _shape_less_specific_than)."""
    if a.rank is None:
        return True
    if b.rank != a.rank:
        return False
    return all(d is None or d == e for d, e in zip(a.as_tuple(), b.as_tuple()))


def _invariants(flat: list, shape_invariants) -> list:
    if shape_invariants is None:
        return [t.shape for t in flat]
    shapes = flatten(shape_invariants) if is_nested(shape_invariants) and not \
        all(isinstance(d, (int, type(None))) for d in shape_invariants) else [shape_invariants]
    if len(shapes) != len(flat):
        raise ValueError("The two structures don't have the same number of elements. "
                         "(loop_vars and shape_invariants)")
    out = []
    for t, s in zip(flat, shapes):
        s = TensorShape(s) if not isinstance(s, TensorShape) else s
        if not _less_specific(s, t.shape):
            raise ValueError(f"The shape invariant specified for {t.name} is not compatible "
                             f"with the initial shape of the loop variable. It enters the "
                             f"loop with shape {t.shape}, but the specified shape invariant "
                             f"is {s}.")
        out.append(s)
    return out


_KEPT = (Tensor, TensorArray, CompositeTensor)


def _eager_while(cond_fn, body_fn, loop_vars, maximum_iterations):
    nested = is_nested(loop_vars)
    args = loop_vars if nested else (loop_vars,)
    n = 0
    while (maximum_iterations is None or n < int(maximum_iterations)) and \
            bool(convert_to_tensor(cond_fn(*args)).numpy()):
        result = body_fn(*args)
        if nested and len(loop_vars) == 1 and not isinstance(result, (list, tuple)):
            result = type(loop_vars)([result])
        if not nested:
            result = (result,)
        if _structure(result) != _structure(args):
            raise ValueError("The two structures don't have the same nested structure.\n\n"
                             f"First structure: {args}\n\nSecond structure: {result}")
        args = result
        n += 1
    # TF returns tensors: Python numbers among the loop variables are converted
    args = pack_sequence_as(args, [x if isinstance(x, _KEPT) else convert_to_tensor(x)
                                   for x in flatten(args)])
    return args if nested else args[0]


@tf_export("while_loop", v1=[])
def while_loop(cond: Callable, body: Callable, loop_vars, shape_invariants=None,
               parallel_iterations: int = 10, back_prop: bool = True,
               swap_memory: bool = False, maximum_iterations=None, name: str | None = None):
    """`tf.while_loop`: repeat `loop_vars = body(*loop_vars)` while `cond(*loop_vars)`."""
    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    if parallel_iterations < 1:
        raise TypeError("'parallel_iterations' must be a positive integer.")
    if is_nested(loop_vars) and not flatten(loop_vars):
        raise ValueError("'loop_vars' must be provided.")
    if context.executing_eagerly():
        return _eager_while(cond, body, loop_vars, maximum_iterations)
    nested = is_nested(loop_vars)
    structure = loop_vars if nested else [loop_vars]
    flat_orig = flatten(structure)  # a TensorArray travels as its flow (TF's while_v2)
    flat_in = [convert_to_tensor(to_flow(x)) for x in flat_orig]
    invariants = _invariants(flat_in, shape_invariants)
    base = name or "while"
    g = context.get_default_graph()
    with g.name_scope(base):
        counter = convert_to_tensor(0, dtypes.int32, name="loop_counter")
        limit = convert_to_tensor(-1 if maximum_iterations is None else maximum_iterations,
                                  dtypes.int32, name="maximum_iterations")
    specs = [(dtypes.int32, TensorShape(())), (dtypes.int32, TensorShape(()))] + \
        [(t.dtype, s) for t, s in zip(flat_in, invariants)]

    def pack(phs):
        return phs[:2], pack_sequence_as(
            structure, [from_flow(x, p) for x, p in zip(flat_orig, phs[2:])])

    def cond_fn(fixed, lv):
        pred = convert_to_tensor(cond(*lv) if nested else cond(lv[0]))
        if maximum_iterations is not None:
            pred = logical_and(less(fixed[0], fixed[1]), pred)
        fg = context.get_default_graph()
        fg.outputs = _to_outputs(fg, pred)
        return pred

    def body_fn(fixed, lv):
        result = body(*lv) if nested else body(lv[0])
        if not nested:
            result = [result]
        flat = _check_body_result(structure, result, flat_in, invariants)
        fg = context.get_default_graph()
        fg.outputs = _to_outputs(fg, [fixed[0] + 1, fixed[1]] + flat)
        return result

    cond_fg, _ = trace_function(lambda *a: cond_fn(*a), f"{base}_cond",
                                specs, lambda phs: pack(phs))
    body_fg, _ = trace_function(lambda *a: body_fn(*a), f"{base}_body",
                                specs, lambda phs: pack(phs))
    if cond_fg.outputs[0].dtype is not dtypes.bool:
        raise TypeError(f"cond of tf.while_loop must return a bool tensor, got "
                        f"{cond_fg.outputs[0].dtype.name}")
    externals = union_captures(cond_fg, body_fg)
    for fg in (cond_fg, body_fg):
        finish_inputs(fg, externals)
    body_fg.outputs = body_fg.outputs + body_fg.arg_inputs[len(specs):]
    inputs = [counter, limit] + flat_in + externals
    out_shapes = [s for _, s in specs] + [convert_to_tensor(e).shape for e in externals]
    op_def = While if _is_stateful(cond_fg, body_fg) else StatelessWhile
    op = apply_op(op_def, [inputs], {"cond": cond_fg, "body": body_fg,
                                     "output_shapes": out_shapes,
                                     "parallel_iterations": parallel_iterations}, name=base)
    with g.name_scope(op.name + "/"):
        outs = [identity(t) if back_prop else stop_gradient(t)
                for t in op.outputs[2:2 + len(flat_in)]]
    result = pack_sequence_as(structure, [from_flow(x, t) for x, t in zip(flat_orig, outs)])
    return result if nested else result[0]


# -- tf.compat.v1 signatures ---------------------------------------------------------------------

def _unpack_if_singleton(x):
    return x[0] if isinstance(x, (list, tuple)) and len(x) == 1 else x


@tf_export(v1=["cond"])
def cond_v1(pred, true_fn: Callable | None = None, false_fn: Callable | None = None,
            strict: bool = False, name: str | None = None, fn1: Callable | None = None,
            fn2: Callable | None = None):
    """`tf.compat.v1.cond`: legacy `fn1`/`fn2` names; without `strict`, a branch result that
    is a one-element list or tuple comes back unpacked."""
    if fn1 is not None:
        if true_fn is not None:
            raise TypeError("cond(): true_fn and fn1 may not be set simultaneously.")
        true_fn = fn1
    if fn2 is not None:
        if false_fn is not None:
            raise TypeError("cond(): false_fn and fn2 may not be set simultaneously.")
        false_fn = fn2
    result = cond(pred, true_fn, false_fn, name)
    return result if strict else _unpack_if_singleton(result)


@tf_export(v1=["while_loop"])
def while_loop_v1(cond: Callable, body: Callable, loop_vars, shape_invariants=None,
                  parallel_iterations: int = 10, back_prop: bool = True,
                  swap_memory: bool = False, name: str | None = None,
                  maximum_iterations=None, return_same_structure: bool = False):
    """`tf.compat.v1.while_loop`: one loop variable in a list comes back as a bare tensor
    unless `return_same_structure`."""
    result = while_loop(cond, body, loop_vars, shape_invariants, parallel_iterations,
                        back_prop, swap_memory, maximum_iterations, name)
    return result if return_same_structure else _unpack_if_singleton(result)


def smart_cond(pred, true_fn: Callable, false_fn: Callable, name: str | None = None):
    """TF's `smart_cond`: a Python bool picks its branch at trace time, anything else is
    `cond(pred, true_fn, false_fn)`."""
    if isinstance(pred, bool):
        return true_fn() if pred else false_fn()
    return cond(pred, true_fn, false_fn, name)


attach(globals(), control_flow_docs.DOCS)
