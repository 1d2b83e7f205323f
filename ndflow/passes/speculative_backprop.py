"""Remapper, last step: a loss-scale step's large-layer update applied with the layer's input
gradient, when every gradient of the step is proven finite at run time.

In a plain step a large dense layer's input gradient `MatMul(dy, ReadVariableOp(W),
transpose_b)` is computed by W's update from each block of W as the update passes it
(passes/matmul_backprop.py: W crosses memory once for both). A loss-scale step cannot do
that: its updates wait for every gradient's finite check (`_SpeculativeApplyMomentum`,
passes/speculative_momentum.py), and that input gradient feeds the gradients checked after
it (MNIST's fc1: the convolutions' gradients). Unless those gradients are known to be finite
before they exist: each is computed from the input gradient by a few ops whose output is
bounded by their inputs' magnitudes —

    dx = dy @ W^T                       |dx| <= 2 K max|dy| max|W|
    Reshape, ReluGrad, MaxPoolGrad      |out| <= |in| (x2 x overlap for overlapping windows)
    BiasAddGrad, Sum over k terms       |out| <= 2 k |in|
    Conv2DBackpropFilter(x, _, g)       |out| <= 2 N OH OW max|x| |g|   (x 2^13: any algorithm)
    Conv2DBackpropInput(_, w, g)        |out| <= 2 KH KW O max|w| |g|   (x 2^13)
    MatMul(D, y) over K terms           |out| <= 2 K |D| max|y|
    Mul(D, y), Neg, AddN/AddV2 of n     |out| <= 2 |D| max|y|, |D|, 2 n max|terms|

(the 2 covers the float32 rounding of sums of up to 2^22 terms, kernels/value_bounds.py
`sum_factor`; 2^13 covers an FFT or Winograd convolution's intermediate values, kernels/
conv_fft.py's transforms being at most 64 x 64). The magnitudes of the forward tensors they
multiply by (the "leaves": activations, weights, the gradients made before dx) are measured
at run time, the weight's from its recorded bound (kernels/value_bounds.py). When every bound
of the chain, and each checked gradient's (with its L2 term, 2 (|g| + |s| max|var|)), stays
under value_bounds.LIMIT (far below float32's largest value), no value of the chain can
overflow, so none is infinite or NaN (those need an overflow or a non-finite input, whose
magnitude makes its bound fail): every gradient will pass its check, and the update may run
at once, in place, with dx computed from the same blocks of W (kernels/gemm_epilogue.py
`matmul_speculate` with `backprop`). A NaN or infinity anywhere makes a bound non-finite, and
the op computes dx alone, as the MatMul did.

So, when

- a `_SpeculativeApplyMomentum` that commits its values (float32) has an entry i whose
  gradient is the product a^T @ dy it computes (`matmul`, transpose_a), of a variable
  large enough for its update in place (speculative_numba.STREAM_MIN elements), and
- a float32 `MatMul(dy, ReadVariableOp(W_i), transpose_b)` (dy of at most
  matmul_backprop.MAX_DY_ELEMENTS) comes before it, its output neither fetched, fed nor
  preserved, and every other user of W_i's and its accumulator's handles comes before that
  MatMul or is the speculative op;
- every op on a path from the MatMul to the speculative op's gradients has a rule above
  (float32, static shapes), and the speculative op's other inputs do not depend on the
  MatMul; the leaves exist before the MatMul or can be created there (matmul_backprop
  `made_early`: input-less ops, unwritten variable reads, pure arithmetic — the learning
  rate, 1 / loss scale),

the MatMul becomes `_ProvenMatMulApplyMomentum(W_i, accum_i, lr, a, dy, scale, momentum,
leaves, leaf variables)` with the bound program as attrs (kernels/training_speculative.py
evaluates it): its first output is dx, its second whether it applied the update, which the
speculative op reads (`applied`, D = 1) to skip entry i. Every value is the unfused graph's:
the same update (matmul_speculate in place) and dx (the same GEMM per block). MNIST's
loss-scale step: see README.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ndflow.core import dtypes
from ndflow.core.graph import Graph, Operation, SymbolicTensor
from ndflow.core.shapes import TensorShape
from ndflow.kernels.speculative_numba import STREAM_MIN
from ndflow.kernels.value_bounds import sum_factor
from ndflow.ops import nn_fused
from ndflow.passes import matmul_backprop
from ndflow.passes.arithmetic_optimizer import remove_dead_ops
from ndflow.passes.branch_momentum_decay import only_reads
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.pass_context import PassContext
from ndflow.passes.pattern import GraphView
from ndflow.passes.speculative_momentum import HOISTABLE

CONV_SLACK = 2.0 ** 13   # an FFT's (or Winograd's) intermediates over the direct sum's bound
# ops whose outputs do not depend on their inputs' values
_SHAPE_ONLY = frozenset({"Shape", "ShapeN", "Size", "Rank", "VariableShape"})


def _numel(t: SymbolicTensor) -> int | None:
    return t.shape.num_elements() if t.shape.is_fully_defined() else None


# A rule: (op, positions of the bounded inputs) -> per output (factor, leaf input positions,
# term input positions), or None. An output's bound is factor * (the sum of the bounded
# inputs' bounds and the terms' magnitudes) * the product of the leaves' magnitudes.

def _passthrough(op, at):
    """|out| <= |input 0| (ReluGrad: its gradient or 0)."""
    return [(1.0, (), ())] if at == {0} else None


def _pool_grad(op, at):
    grad_at = 1 if op.type == "_MaxPoolGradWithIndices" else 2
    if at != {grad_at}:
        return None
    overlap = math.prod(-(-k // s) for k, s in zip(op.attrs["ksize"], op.attrs["strides"]))
    return [(1.0 if overlap == 1 else sum_factor(overlap), (), ())]


def _reduction(op, at):
    n_in, n_out = _numel(op.inputs[0]), _numel(op.outputs[0])
    if at != {0} or n_in is None or n_out is None:
        return None
    return [(sum_factor(n_in // max(n_out, 1)), (), ())]


def _matmul(op, at):
    a, b = op.inputs
    if at not in ({0}, {1}) or a.shape.rank != 2 or b.shape.rank != 2:
        return None
    k = a.shape[0] if op.attrs.get("transpose_a") else a.shape[1]
    if k is None:
        return None
    return [(sum_factor(k), (1 - next(iter(at)),), ())]


def _conv_input(op, at):
    w = op.inputs[1]
    if at not in ({1}, {2}) or not w.shape.is_fully_defined() or w.shape.rank != 4:
        return None
    kh, kw, _, o = w.shape.as_list()
    return [(CONV_SLACK * sum_factor(kh * kw * o), (3 - next(iter(at)),), ())]


def _conv_filter(op, at):
    g, out = op.inputs[2], op.outputs[0]
    n = _numel(g)
    if at not in ({0}, {2}) or n is None or not out.shape.is_fully_defined():
        return None
    terms = n // max(out.shape.as_list()[3], 1)     # N OH OW (the filter is HWIO)
    return [(CONV_SLACK * sum_factor(terms), (2 - next(iter(at)),), ())]


def _conv_pool_grad(op, at):
    g = op.inputs[1]
    if at != {1} or not g.shape.is_fully_defined() or g.shape.rank != 4:
        return None
    n, ph, pw, _ = g.shape.as_list()
    factor = CONV_SLACK * sum_factor(n * (2 * ph + 1) * (2 * pw + 1))   # conv positions
    return [(factor, (0,), ()), (factor, (), ())]


def _mul(op, at):
    return [(2.0, (1 - next(iter(at)),), ())] if at in ({0}, {1}) else None


def _sum(op, at):
    terms = tuple(k for k in range(len(op.inputs)) if k not in at)
    return [(sum_factor(len(op.inputs)), (), terms)]


RULES = {
    "Identity": _passthrough, "Snapshot": _passthrough, "Reshape": _passthrough,
    "ExpandDims": _passthrough, "Squeeze": _passthrough, "Neg": _passthrough,
    "ReluGrad": _passthrough, "MaxPoolGrad": _pool_grad, "_MaxPoolGradWithIndices": _pool_grad,
    "BiasAddGrad": _reduction, "Sum": _reduction, "MatMul": _matmul,
    "Conv2DBackpropInput": _conv_input, "Conv2DBackpropFilter": _conv_filter,
    "_Conv2DBiasReluMaxPoolGrad": _conv_pool_grad, "Mul": _mul,
    "AddN": _sum, "AddV2": _sum, "Add": _sum,
}


@dataclass
class _Program:
    """The bound program being built: steps over values (0: dx's bound) and leaves."""

    leaves: list = field(default_factory=list)       # tensors, then variable handles
    leaf_vars: list = field(default_factory=list)
    steps: list = field(default_factory=list)        # (factor, value indices, leaf indices)
    value_of: dict = field(default_factory=dict)     # bounded tensor -> value index

    def leaf(self, t: SymbolicTensor, variable: bool = False) -> tuple:
        pool = self.leaf_vars if variable else self.leaves
        for k, x in enumerate(pool):
            if x is t:
                return ("var" if variable else "t", k)
        pool.append(t)
        return ("var" if variable else "t", len(pool) - 1)

    def step(self, factor: float, values=(), leaves=()) -> int:
        self.steps.append((factor, list(values), list(leaves)))
        return len(self.steps)

    def attrs(self) -> dict:
        def index(leaf):   # variables after the tensors
            kind, k = leaf
            return k if kind == "t" else len(self.leaves) + k
        return {"L": len(self.leaves), "V": len(self.leaf_vars),
                "step_factors": [s[0] for s in self.steps],
                "step_values": [v for s in self.steps for v in s[1]],
                "step_value_counts": [len(s[1]) for s in self.steps],
                "step_leaves": [index(x) for s in self.steps for x in s[2]],
                "step_leaf_counts": [len(s[2]) for s in self.steps]}


@dataclass
class _Plan:
    spec: Operation
    entry: int
    matmul: Operation
    program: _Program
    early: list


def _is_float32(t: SymbolicTensor) -> bool:
    return t.dtype is dtypes.float32


def _bounded_ops(view: GraphView, order: dict, mm: Operation, spec: Operation,
                 sinks: list) -> list | None:
    """The ops between `mm` and `spec` on a path from mm to one of `sinks` (creation
    order), or None when one of spec's other inputs depends on mm."""
    reached, stack = {mm}, [mm]
    while stack:
        for t in stack.pop().outputs:
            for c in view.consumers[t]:
                if c not in reached and c is not spec and c.type not in _SHAPE_ONLY \
                        and order[c] < order[spec]:
                    reached.add(c)
                    stack.append(c)
    feeding, stack = set(), [t.op for t in sinks]
    while stack:
        op = stack.pop()
        if op in reached and op not in feeding:
            feeding.add(op)
            stack.extend(t.op for t in op.inputs)
    others = [t for t in spec.inputs if not any(t is s for s in sinks)]
    if any(t.op in reached for t in others):
        return None
    return sorted(feeding - {mm}, key=order.get)


def _bound_chain(program: _Program, ops: list, mm: Operation) -> bool:
    """Adds the steps bounding every output of `ops` (in order) to the program."""
    program.value_of[mm.outputs[0]] = 0
    for op in ops:
        at = {k for k, t in enumerate(op.inputs) if t in program.value_of}
        rule = RULES.get(op.type)
        outs = rule(op, at) if rule is not None and at else None
        if (outs is None or len(outs) != len(op.outputs)
                or not all(_is_float32(t) for t in op.outputs)
                or not all(_is_float32(op.inputs[k]) for k in at)):
            return False
        for t, (factor, leaves, terms) in zip(op.outputs, outs):
            values = [program.value_of[op.inputs[k]] for k in sorted(at)]
            values += [program.step(1.0, leaves=[program.leaf(op.inputs[k])]) for k in terms]
            program.value_of[t] = program.step(
                factor, values, [program.leaf(op.inputs[k]) for k in leaves])
    return True


def _operand_b(spec: Operation) -> dict:
    """Entry -> the input index of its product's second operand (`matmul` entries)."""
    n, matmul = spec.attrs["N"], list(spec.attrs.get("matmul") or [])
    return {i: 6 * n + k for k, i in enumerate(i for i in range(n) if matmul[i])}


def _gradient_bounds(program: _Program, spec: Operation, skip: int) -> bool:
    """Adds each of spec's gradients but entry `skip`'s (with its L2 term) to the program:
    from the chain where it depends on dx, else from its own magnitude (or its product's
    operands')."""
    a = spec.attrs
    n, matmul, ta = a["N"], list(a.get("matmul") or []), list(a.get("transpose_a") or [])
    operand_b = _operand_b(spec)

    def bound(t: SymbolicTensor) -> int:
        if t in program.value_of:
            return program.value_of[t]
        return program.step(1.0, leaves=[program.leaf(t)])

    for j in range(n):
        if j == skip:
            continue
        g = spec.inputs[3 * n + j]
        if matmul[j]:   # the product op(g) @ op(b) over k terms
            b = spec.inputs[operand_b[j]]
            k = g.shape[0 if ta[j] else 1] if g.shape.rank == 2 else None
            bounded = [t for t in (g, b) if t in program.value_of]
            if k is None or len(bounded) == 2:   # (two bounded operands: no rule)
                return False
            value = program.step(sum_factor(k), [program.value_of[t] for t in bounded],
                                 [program.leaf(t) for t in (g, b) if t not in bounded])
        else:
            value = bound(g)
        if a["decay"][j]:   # the check's g + var * s
            term = program.step(1.0, leaves=[program.leaf(spec.inputs[4 * n + j]),
                                             program.leaf(spec.inputs[j], variable=True)])
            program.step(2.0, [value, term])
    return True


def _plan(view: GraphView, order: dict, spec: Operation) -> _Plan | None:
    a = spec.attrs
    if not a.get("commit") or a.get("D") or a["T"] is not dtypes.float32:
        return None
    n, matmul = a["N"], list(a.get("matmul") or [])
    ta, tb = list(a.get("transpose_a") or []), list(a.get("transpose_b") or [])
    operand_b = _operand_b(spec)
    for i in range(n):
        size = _numel(spec.outputs[1 + i])    # the new var's
        if not matmul[i] or not ta[i] or tb[i] or size is None or size < STREAM_MIN:
            continue
        handle, accum, x, dy = (spec.inputs[i], spec.inputs[n + i], spec.inputs[3 * n + i],
                                spec.inputs[operand_b[i]])
        mm = _input_gradient(view, order, spec, handle, accum, dy)
        if mm is None:
            continue
        sinks = spec.inputs[3 * n:4 * n] + spec.inputs[6 * n:]
        ops = _bounded_ops(view, order, mm, spec, sinks)
        program = _Program()
        if ops is None or not _bound_chain(program, ops, mm) \
                or not _gradient_bounds(program, spec, i):
            continue
        # the leaf variables hold at the op what they hold at the checks (speculate_momentum
        # lets nothing outside the If write them; checked again, the proof rests on it)
        if any(not only_reads([op for op in view.consumers[h] if op is not spec])
               for h in program.leaf_vars):
            continue
        scalars = [spec.inputs[k * n + i] for k in (2, 4, 5)]
        needed = [handle, accum, x, dy, *scalars, *program.leaves, *program.leaf_vars]
        early = matmul_backprop.made_early(view, needed, order, order[mm], HOISTABLE)
        if early is not None:
            return _Plan(spec, i, mm, program, early)
    return None


def _input_gradient(view: GraphView, order: dict, spec: Operation, handle, accum,
                    dy) -> Operation | None:
    """The layer's input-gradient MatMul before `spec` when nothing else uses the variable
    or its accumulator between the two."""
    for mm in matmul_backprop.input_gradient_matmuls(view, dy, handle):
        if order[mm] > order[spec] or mm.device != spec.device:
            continue
        read = mm.inputs[1].op
        users = [op for h in (handle, accum) for op in view.consumers[h]
                 if op is not spec and op is not read]
        if all(order[op] < order[mm] for op in users):
            return mm
    return None


def _emit(rw: GraphRewriter, plan: _Plan) -> Operation:
    """The `_ProvenMatMulApplyMomentum` in the MatMul's place."""
    spec, i, n = plan.spec, plan.entry, plan.spec.attrs["N"]
    a = spec.attrs
    matmul_backprop.emit_early(rw, plan.early)
    inputs = [spec.inputs[k] for k in (i, n + i, 2 * n + i, 3 * n + i, _operand_b(spec)[i],
                                       4 * n + i, 5 * n + i)]
    inputs += plan.program.leaves + plan.program.leaf_vars
    out = plan.matmul.outputs[0]
    attrs = {"T": dtypes.float32, "use_nesterov": bool(a["use_nesterov"][i]),
             "keras": bool(a["keras"][i]), "decay": bool(a["decay"][i]),
             **plan.program.attrs()}
    op = rw.add_op(nn_fused.ProvenMatMulApplyMomentum, [rw.mapped(t) for t in inputs], attrs,
                   [(out.dtype, out.shape), (dtypes.bool, TensorShape([]))],
                   plan.matmul.name, [rw.map[c] for c in plan.matmul.control_inputs],
                   plan.matmul.device)
    rw.map[out] = op.outputs[0]
    return op


def speculate_backprop(graph: Graph, ctx: PassContext) -> Graph:
    """The rewrite of the module doc; `graph` itself when nothing matches."""
    if not ctx.config.pass_enabled("matmul_backprop", "remapping", "remapper"):
        return graph   # dx is computed by the update only with the backprop fusion
    view = GraphView.of(graph, ctx)
    ops = graph.get_operations()
    order = {op: k for k, op in enumerate(ops)}
    plans = [p for p in (_plan(view, order, op) for op in ops
                         if op.type == "_SpeculativeApplyMomentum") if p is not None]
    if not plans:
        return graph
    at_matmul = {p.matmul: p for p in plans}
    at_spec = {p.spec: p for p in plans}
    early = {op for p in plans for op in p.early}
    rw = GraphRewriter(graph)
    made: dict = {}
    for op in ops:
        if op in at_matmul:
            made[op] = _emit(rw, at_matmul[op])
        elif op in at_spec:
            plan = at_spec[op]
            new = rw.add_op(op.op_def, [rw.mapped(t) for t in op.inputs]
                            + [made[plan.matmul].outputs[1]],
                            {**op.attrs, "D": 1, "applied_entry": plan.entry},
                            [(t.dtype, t.shape) for t in op.outputs], op.name,
                            [rw.map[c] for c in op.control_inputs], op.device)
            rw.map[op] = new
            rw.map.update(zip(op.outputs, new.outputs))
        elif not (op in early and op in rw.map):
            rw.copy_op(op)
    return remove_dead_ops(rw.graph, ctx)
