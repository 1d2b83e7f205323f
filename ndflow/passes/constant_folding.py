"""Constant folding: ops whose inputs are all constants become `Const` ops.

A foldable op is run once through its CPU kernel from the kernel registry and replaced by a
`Const` holding the result. A single-output op keeps its node name, so fetches by name
still resolve; the outputs of a folded multi-output op become `ConstantFolding/<op>-<i>`
constants (recorded in `ctx.rename`). The constant inherits the folded op's control inputs
and those of the constants it consumed, so control dependencies survive folding. Ops whose
value is known statically without their inputs' values (an op with a `constant_value`
rule, e.g. the shape of a fully defined tensor; OnesLike and ZerosLike of a fully defined
shape, as grappler materializes them) fold too, with no dependency on those inputs.

Never folded, as in TensorFlow's grappler: stateful ops, placeholders, ops without inputs,
functional ops (If, While, Case),
ops on strings/resources/variants, ops without a CPU kernel, ops downstream of a fed tensor,
multi-output target ops, and results larger than `max_constant_size_in_bytes` (default 10
MiB). A kernel failure leaves the op in place so the error surfaces, naming it, at run time.
Constants and stateless ops left without consumers are removed unless preserved.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core import dtypes, narrow_dtypes
from ndflow.core.graph import Graph, Operation
from ndflow.core.shapes import TensorShape
from ndflow.kernels import denormals, registry
from ndflow.ops.apply import constant_value, numpy_to_torch
from ndflow.ops.constant_op import Const
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.pass_context import PassContext

_UNFOLDABLE_DTYPES = (dtypes.string, dtypes.resource, dtypes.variant)
_CPU = torch.device("cpu")


def _is_placeholder(op: Operation) -> bool:
    return op.type.startswith("Placeholder")


def _nbytes(shape: TensorShape, dtype) -> int | None:
    n = shape.num_elements()
    return None if n is None else n * max(dtype.size, 1)


def _can_fold(op: Operation, targets: set, limit: int) -> bool:
    if op.type == "Const" or _is_placeholder(op) or op.is_stateful:
        return False
    if not op.inputs or not op.outputs or op.op_def.is_functional:
        return False
    if len(op.outputs) > 1 and op.name in targets:
        return False
    if any(t.dtype in _UNFOLDABLE_DTYPES for t in list(op.inputs) + op.outputs):
        return False
    if not registry.has_kernel(op.op_def, "CPU"):
        return False
    for t in op.outputs:  # statically too big: do not even compute it
        size = _nbytes(t.shape, t.dtype)
        if size is not None and size > limit:
            return False
    return True


def _to_numpy(value: torch.Tensor, expected) -> np.ndarray | None:
    if not isinstance(value, torch.Tensor) or value.dtype != expected.torch_dtype:
        return None
    value = value.detach().cpu()
    if value.dtype == torch.bfloat16:  # ndflow's bfloat16 constants hold float32 arrays
        value = value.float()
    if expected in dtypes.NARROW:   # float8, int4 & co: ml_dtypes arrays
        return narrow_dtypes.storage_to_numpy(value, expected).copy()
    return value.numpy().copy()


def _run_kernel(op: Operation, values: list) -> list | None:
    """The op's outputs as NumPy arrays, computed on CPU (subnormals flushed, as TF folds
    and runs them), or None if it cannot be folded."""
    flushed = False
    try:
        inputs = [numpy_to_torch(np.asarray(v), t.dtype, _CPU)
                  for v, t in zip(values, op.inputs)]
        node = registry.NodeInfo.for_op(op, _CPU)
        kernel = registry.kernel_for(node, "CPU")(node)
        flushed = denormals.enter()
        result = kernel(*inputs)
    except Exception:  # noqa: BLE001 - left unfolded; the runtime reports it naming the node
        return None
    finally:
        if flushed:
            denormals.leave()
    results = [result] if len(op.outputs) == 1 else list(result or ())
    if len(results) != len(op.outputs):
        return None
    out = [_to_numpy(r, t.dtype) for r, t in zip(results, op.outputs)]
    return None if any(v is None for v in out) else out


# Ops whose value is one number everywhere, known from the shape alone (grappler's
# MaterializeConstantValuedNode): the gradient's seed `OnesLike(loss)` no longer reads the
# loss, so nothing computed for the gradient waits for the loss's value.
_VALUE_FROM_SHAPE = {"OnesLike": 1, "ZerosLike": 0}


def _static_value(op: Operation) -> list | None:
    """The op's value from its `constant_value` rule, or from its shape (OnesLike,
    ZerosLike), when its inputs are not all constant."""
    if len(op.outputs) != 1:
        return None
    t = op.outputs[0]
    if op.type in _VALUE_FROM_SHAPE:
        if not t.shape.is_fully_defined() or not (t.dtype.is_floating or t.dtype.is_integer
                                                   or t.dtype.is_bool):
            return None
        np_type = np.float32 if t.dtype is dtypes.bfloat16 else t.dtype.np_dtype
        return [np.full(t.shape.as_list(), _VALUE_FROM_SHAPE[op.type], np_type)]
    if op.op_def.constant_value is None:
        return None
    try:
        v = constant_value(t)
    except Exception:  # noqa: BLE001 - a best-effort static rule
        return None
    if v is None or t.dtype.np_dtype is None and t.dtype is not dtypes.bfloat16:
        return None
    v = np.asarray(v)
    want = t.dtype.np_dtype if t.dtype.np_dtype is not None else np.dtype(np.float32)
    cast = v.astype(want)
    if cast.dtype != v.dtype and not np.array_equal(cast, v):
        return None
    return [cast]


def _valid(op: Operation, values: list, limit: int) -> bool:
    return all(t.shape.is_compatible_with(v.shape) and v.nbytes <= limit
               for t, v in zip(op.outputs, values))


def _evaluate(graph: Graph, ctx: PassContext, limit: int):
    """Folded op -> values, and folded op -> the control inputs its constants carry."""
    fed = ctx.fed_tensor_names()
    targets = {ctx.current_name(n) for n in ctx.targets}
    known: dict = {}       # tensor -> constant value
    folded: dict = {}      # op -> [values]
    controls: dict = {}    # Const or folded op -> control inputs its constant carries
    tainted: set = set()   # ops downstream of a fed non-placeholder tensor
    for op in graph.get_operations():
        if any(t.name in fed for t in op.outputs) and not _is_placeholder(op):
            tainted.add(op)
        if any(t.op in tainted for t in op.inputs):
            tainted.add(op)
        if op in tainted:
            continue
        if op.type == "Const":
            known[op.outputs[0]] = op.attrs["value"]
            controls[op] = list(op.control_inputs)
            continue
        if not _can_fold(op, targets, limit):
            continue
        if all(t in known for t in op.inputs):
            values = _run_kernel(op, [known[t] for t in op.inputs])
            inherited = [c for t in op.inputs for c in controls.get(t.op, ())]
        else:
            values = _static_value(op)
            inherited = []
        if values is None or not _valid(op, values, limit):
            continue
        folded[op] = values
        known.update(zip(op.outputs, values))
        controls[op] = list(dict.fromkeys(list(op.control_inputs) + inherited))
    return folded, controls


def _liveness(graph: Graph, ctx: PassContext, folded: dict, controls: dict):
    """Live ops and, for folded multi-output ops, which outputs are still consumed."""
    preserved = ctx.preserved_op_names()
    fetched = ctx.fetched_tensor_names()
    alive: set = set()
    used: dict = {op: set() for op in folded}
    for op in reversed(graph.get_operations()):
        if op.is_stateful or _is_placeholder(op) or op.name in preserved:
            alive.add(op)
        if op not in alive:
            continue
        if op in folded:
            needs = controls[op]
            for t in op.outputs:
                if t.name in fetched:
                    used[op].add(t.value_index)
        else:
            needs = list(op.control_inputs)
            for t in op.inputs:
                needs.append(t.op)
                if t.op in folded:
                    used[t.op].add(t.value_index)
        alive.update(needs)
    return alive, used


def constant_folding(graph: Graph, ctx: PassContext) -> Graph:
    """Folds constant subgraphs into `Const` ops (see module doc)."""
    limit = ctx.config.max_constant_size_in_bytes
    folded, controls = _evaluate(graph, ctx, limit)
    alive, used = _liveness(graph, ctx, folded, controls)
    rw = GraphRewriter(graph)
    for op in graph.get_operations():
        if op not in alive:
            continue
        if op not in folded:
            rw.copy_op(op)
            continue
        deps = [rw.map[c] for c in controls[op]]
        if len(op.outputs) == 1:
            outputs = [(0, op.name)]
        else:
            wanted = sorted(used[op]) or [0]
            outputs = [(i, rw.fresh_name(f"ConstantFolding/{op.name}-{i}")) for i in wanted]
        made = []
        for i, name in outputs:
            t, value = op.outputs[i], folded[op][i]
            new = rw.add_op(Const, [], {"value": value, "dtype": t.dtype},
                            [(t.dtype, TensorShape(value.shape))], name, deps, op.device)
            rw.map[t] = new.outputs[0]
            ctx.rename(t.name, new.outputs[0].name)
            made.append(new)
        rw.map[op] = made[0]
    return rw.graph
