"""Arithmetic simplifications, as TensorFlow grappler's ArithmeticOptimizer (and the identity
rewrites its ConstantFolding/DependencyOptimizer make) do them.

Each rewrite either forwards an op's input to its consumers (the op disappears) or replaces
the op by a cheaper one under the same name. The rules, with TF's stage names:

- RemoveRedundantCast: `Cast` with SrcT == DstT.
- RemoveIdentityTranspose: `Transpose(x, perm)` with a constant identity perm, and
  `Transpose(Transpose(x, p1), p2)` whose perms compose to the identity.
- RemoveRedundantReshape: `Reshape(Reshape(x, s1), s2)` -> `Reshape(x, s2)`; a Reshape whose
  input already has the output's static shape (both fully known) is `x`.
- Reduction then reshape (ndflow's own): `Reshape(Sum(x, axes, keep_dims=True), s)` whose
  output is the reduction's shape without the kept dims is `Sum(x, axes, keep_dims=False)`
  (Mean, Max, Min, Prod, All and Any alike): the bias gradient of `x @ w + b`, once per
  layer of a Keras model.
- RemoveInvolution: `f(f(x))` -> `x` for Neg, Reciprocal, Conj, LogicalNot, Invert.
- ReplaceMulWithSquare: `Mul(x, x)` -> `Square(x)`.
- Neutral elements (TF's constant folding, SimplifyArithmeticOperations): `x * 1`, `1 * x`,
  `x + 0`, `0 + x`, `x - 0`, `x / 1` with a constant of ones/zeros are `x` only when the
  broadcast cannot change x's shape (a scalar constant; a constant whose dims are all 1 and
  whose rank is at most x's; or both static shapes fully known and equal).
- ReluGrad through MaxPoolGrad (ndflow's own): `ReluGrad(MaxPoolGrad(F, P, g), F)` with
  `P = MaxPool(F)` (same window) is `MaxPoolGrad(F, P, ReluGrad(g, P))`. MaxPoolGrad's output
  is nonzero only at each window's argmax p, where F[p] = P[window]; so masking by F > 0
  there is masking g by P > 0 (NaN and ties alike), on the pooled size instead of the full
  one (the Relu -> MaxPool of every CNN: one pass over the conv-sized gradient fewer).
- BiasAddGrad through MaxPoolGrad (ndflow's own): `BiasAddGrad(MaxPoolGrad(F, P, g))` is
  `BiasAddGrad(g)` when both take the channels on the same axis and the padding is SAME or
  VALID: MaxPoolGrad adds each element of g at one position of its channel (its window's
  argmax, never padding), so the per-channel sums are g's, read on the pooled size (a conv's
  bias gradient before a pool: one read of the conv-sized gradient fewer; the sums' order
  changes, as any reassociation does).
- Broadcast instead of Tile (ndflow's own): a broadcasting binary op (Mul, Add, Sub, Div)
  whose operand is `Tile(x, multiples)`, possibly through ExpandDims, Cast, Neg and
  arithmetic with a scalar constant, each read only by the next, reads the chain computed on
  `x` itself when the broadcast gives the same output shape for every size of the unknown
  dimensions (Keras' batch): every element of the tile is a copy, so the values are the same,
  and the Tile is gone. A Mean's gradient is such a chain
  (`Tile(Reshape(g, [1]), [n]) / n`, expanded and multiplied into the loss's gradient): with
  a loss scale g is a variable, not a constant to fold, and the Tile cost the MNIST
  loss-scale step 50-80 us.
- A reduction over no axes (`Sum(x, [])`, what a gradient's broadcast axes become once the
  shapes are known: passes/shape_specialization.py) is x, as grappler's SimplifyReduction has
  it.
- Identity forwarding (TF's dependency optimizer): `Identity`/`StopGradient` (after gradients
  were built they only pass the value on) on the same device as their input.

Never rewritten: preserved ops (fetch/feed producers, targets), ops with control inputs
(their consumers would lose the ordering), ops whose inputs are resources or variants, and
constants that are fed. An op that other ops depend on by control edge hands that role to
the producer of the forwarded value. Ops left without consumers are removed at the end (the
dead code the rewrites leave). Matching reads the output graph built so far, so chains
collapse in one pass (`Identity(Neg(Identity(Neg(x))))` -> `x`). Switched by the
RewriterConfig toggle `arithmetic_optimization`.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.graph import Graph, Operation, SymbolicTensor
from ndflow.core.shapes import TensorShape
from ndflow.ops.math import Square
from ndflow.ops.op_def import REDUCTION, tagged
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.pass_context import PassContext
from ndflow.passes.prune import needed_ops

_INVOLUTIONS = frozenset({"Neg", "Reciprocal", "Conj", "LogicalNot", "Invert"})
_FORWARDING = frozenset({"Identity", "StopGradient"})
_ADD = frozenset({"AddV2", "Add"})
_DIV = frozenset({"RealDiv", "Div"})
_STATE_DTYPES = (dtypes.resource, dtypes.variant)
_REDUCTIONS = tagged(REDUCTION)


class _Ctx:
    def __init__(self, rw: GraphRewriter, ctx: PassContext):
        self.rw = rw
        self.fed = ctx.fed_tensor_names()
        self.preserved = ctx.preserved_op_names()

    def src(self, t: SymbolicTensor) -> SymbolicTensor:
        """`t` in the output graph built so far."""
        return self.rw.map[t]

    def const_value(self, t: SymbolicTensor):
        """The value of an output-graph tensor produced by a (not fed) Const, else None."""
        op = t.op
        if op.type != "Const" or t.name in self.fed:
            return None
        return np.asarray(op.attrs["value"])

    def producer(self, t: SymbolicTensor, types) -> Operation | None:
        """The output-graph producer of `t` when it is one of `types` and `t` is not fed."""
        op = t.op
        return op if op.type in types and t.name not in self.fed else None


def _numeric(dtype) -> bool:
    return dtype.is_numeric or dtype.is_complex


def _full_shape_equal(a, b) -> bool:
    return a.is_fully_defined() and b.is_fully_defined() and a.as_list() == b.as_list()


def _keeps_shape(x: SymbolicTensor, out: SymbolicTensor, const: np.ndarray) -> bool:
    """Broadcasting `x` with `const` gives `x`'s shape."""
    if x.dtype is not out.dtype:
        return False
    if const.ndim == 0:
        return True
    if x.shape.rank is not None and const.ndim <= x.shape.rank and all(d == 1 for d in
                                                                       const.shape):
        return True
    return _full_shape_equal(x.shape, out.shape) and all(
        d == 1 or d == s for d, s in zip(const.shape[::-1], x.shape.as_list()[::-1]))


def _all(value: np.ndarray | None, neutral) -> bool:
    return value is not None and value.size > 0 and bool(np.all(value == neutral))


def _neutral_operand(c: _Ctx, op: Operation, a: SymbolicTensor, b: SymbolicTensor):
    """x for `x*1`, `1*x`, `x+0`, `0+x`, `x-0`, `x/1` (see module doc), else None."""
    out = op.outputs[0]
    if not _numeric(out.dtype):
        return None
    candidates = []  # (x, constant, neutral value)
    if op.type == "Mul":
        candidates = [(a, b, 1), (b, a, 1)]
    elif op.type in _ADD:
        candidates = [(a, b, 0), (b, a, 0)]
    elif op.type == "Sub":
        candidates = [(a, b, 0)]
    elif op.type in _DIV:
        candidates = [(a, b, 1)]
    for x, k, neutral in candidates:
        value = c.const_value(k)
        if _all(value, neutral) and _keeps_shape(x, out, value):
            return x
    return None


def _is_identity_perm(perm) -> bool:
    return perm is not None and perm.ndim == 1 and list(perm) == list(range(perm.size))


def _transpose_source(c: _Ctx, x: SymbolicTensor, perm: SymbolicTensor):
    p2 = c.const_value(perm)
    if p2 is None or p2.ndim != 1:
        return None
    if _is_identity_perm(p2):
        return x
    inner = c.producer(x, {"Transpose"})
    if inner is None:
        return None
    p1 = c.const_value(inner.inputs[1])
    if p1 is None or p1.shape != p2.shape:
        return None
    composed = np.asarray(p1)[np.asarray(p2)]  # out[i] = x[p1[p2[i]]]
    return inner.inputs[0] if _is_identity_perm(composed) else None


def _simplify(c: _Ctx, op: Operation):
    """('forward', output-graph tensor), ('replace', emit function) or None."""
    ins = [c.src(t) for t in op.inputs]
    out = op.outputs[0] if op.outputs else None
    kind = op.type
    if kind in _FORWARDING:
        return ("forward", ins[0]) if ins[0].op.device == op.device else None
    if kind == "Cast":
        return ("forward", ins[0]) if op.attrs.get("SrcT") == op.attrs.get("DstT") else None
    if kind in _INVOLUTIONS:
        inner = c.producer(ins[0], {kind})
        return ("forward", inner.inputs[0]) if inner is not None else None
    if kind == "Transpose":
        x = _transpose_source(c, ins[0], ins[1])
        return ("forward", x) if x is not None else None
    if kind == "Reshape":
        return _reshape(c, op, ins, out)
    if kind in _REDUCTIONS and len(ins) == 2:
        axes = c.const_value(ins[1])
        if axes is not None and axes.size == 0 and _full_shape_equal(ins[0].shape, out.shape):
            return ("forward", ins[0])   # over no axes (a gradient's broadcast axes): x
    if kind == "ReluGrad":
        return _relu_grad_through_pool_grad(c, op, ins, out)
    if kind == "BiasAddGrad":
        return _bias_grad_through_pool_grad(c, op, ins, out)
    if kind in ("Mul", "Sub") or kind in _ADD or kind in _DIV:
        x = _neutral_operand(c, op, ins[0], ins[1])
        if x is not None:
            return ("forward", x)
        untiled = _broadcast_instead_of_tile(c, op, out)
        if untiled is not None:
            return untiled
        if kind == "Mul" and ins[0] is ins[1] and _numeric(out.dtype):
            return ("replace", lambda rw: rw.add_op(
                Square, [ins[0]], {"T": op.attrs["T"]},
                [(out.dtype, out.shape)], op.name, [], op.device))
    return None


_SCALAR_ARITHMETIC = frozenset({"Mul", "AddV2", "Add", "Sub", "RealDiv", "Div"})
_SHAPE_KEEPING = frozenset({"Cast", "Neg"})


def _chain_link(c: _Ctx, t: SymbolicTensor):
    """(the op making input-graph tensor `t`, the index of its chain operand) when the op can
    run on an untiled input (see the module doc) and `t` is read by one op only, else None."""
    op = t.op
    if (len(t.consumers()) != 1 or t.name in c.fed or op.name in c.preserved
            or op.control_inputs or len(op.outputs) != 1):
        return None
    if op.type in _SHAPE_KEEPING or op.type == "ExpandDims":
        return op, 0
    if op.type in _SCALAR_ARITHMETIC:
        for k in (0, 1):
            value = c.const_value(c.src(op.inputs[1 - k]))
            if value is not None and value.ndim == 0:
                return op, k
    return None


def _broadcast_instead_of_tile(c: _Ctx, op: Operation, out: SymbolicTensor):
    """('replace', emit) running `op`'s tiled operand chain on the untiled tensor, or None."""
    if out.shape.rank is None:
        return None
    for k in (0, 1):
        other = op.inputs[1 - k]
        if other.shape.rank is None:
            continue
        chain, t = [], op.inputs[k]
        link = _chain_link(c, t)
        while link is not None and link[0].type != "Tile":
            chain.append(link)
            t = link[0].inputs[link[1]]
            link = _chain_link(c, t) if t.op.type != "Tile" else (t.op, 0)
        tile = t.op
        if (tile.type != "Tile" or len(t.consumers()) != 1 or t.name in c.fed
                or tile.name in c.preserved or tile.control_inputs):
            continue
        multiples = c.const_value(c.src(tile.inputs[1]))
        x = c.src(tile.inputs[0])
        if multiples is None or x.shape.rank is None or multiples.size != x.shape.rank:
            continue
        shapes, shape, mult = [], x.shape.as_list(), [int(m) for m in multiples.reshape(-1)]
        for link_op, _ in reversed(chain):
            if link_op.type == "ExpandDims":
                axis = c.const_value(c.src(link_op.inputs[1]))
                if axis is None or axis.size != 1:
                    break
                a = int(axis.reshape(-1)[0])
                a = a + len(shape) + 1 if a < 0 else a
                if not 0 <= a <= len(shape):
                    break
                shape, mult = shape[:a] + [1] + shape[a:], mult[:a] + [1] + mult[a:]
            shapes.append(list(shape))
        else:
            if _broadcast_gives_the_tile(shape, mult, other.shape.as_list(),
                                         out.shape.rank):
                return ("replace", _emit_untiled(c, op, k, x, chain[::-1], shapes, out))
    return None


def _broadcast_gives_the_tile(shape: list, multiples: list, other: list, rank: int) -> bool:
    """Whether broadcasting an operand of `shape` with `other` gives what broadcasting its
    tile by `multiples` does, for every run-time size of the unknown (None) dimensions: a
    dimension tiled once is the same either way; one tiled m > 1 times must be 1 and meet a
    dimension of `other` known to be m (a 1 or a missing one would leave 1 where the tile
    gives m). So Keras' unknown batch dimension does not stop the rewrite."""
    if len(shape) > rank or len(other) > rank or any(m < 1 for m in multiples):
        return False
    for i in range(1, len(shape) + 1):
        m = multiples[-i]
        if m == 1:
            continue
        if shape[-i] != 1 or i > len(other) or other[-i] != m:
            return False
    return True


def _emit_untiled(c: _Ctx, op: Operation, k: int, x, links: list, shapes: list, out):
    def emit(rw: GraphRewriter) -> Operation:
        t = x
        for (link_op, at), shape in zip(links, shapes):
            inputs = [t if i == at else c.src(v) for i, v in enumerate(link_op.inputs)]
            t = rw.add_op(link_op.op_def, inputs, link_op.attrs,
                          [(link_op.outputs[0].dtype, TensorShape(shape))],
                          rw.fresh_name(link_op.name + "/untiled"), [],
                          link_op.device).outputs[0]
        inputs = [t if i == k else c.src(v) for i, v in enumerate(op.inputs)]
        return rw.add_op(op.op_def, inputs, op.attrs, [(out.dtype, out.shape)], op.name, [],
                         op.device)
    return emit


def _reshape(c: _Ctx, op: Operation, ins: list, out: SymbolicTensor):
    reduction = _reduction_dropping_dims(c, op, ins, out)
    if reduction is not None:
        return reduction
    x = ins[0]
    inner = c.producer(x, {"Reshape"})
    if inner is not None:
        x = inner.inputs[0]
    if _full_shape_equal(x.shape, out.shape):
        return ("forward", x)
    if inner is None:
        return None
    return ("replace", lambda rw: rw.add_op(
        op.op_def, [x, ins[1]], op.attrs, [(out.dtype, out.shape)], op.name, [], op.device))


def _reduction_dropping_dims(c: _Ctx, op: Operation, ins: list, out: SymbolicTensor):
    """`Reshape(Sum(x, axes, keep_dims=True), s)` whose output is the reduction's shape
    without the kept dims (a bias gradient: `Reshape(Sum(g, [0], keep_dims=True), [n])`) is
    `Sum(x, axes, keep_dims=False)`: one op instead of two, the same values."""
    red = c.producer(ins[0], _REDUCTIONS)
    if (red is None or not red.attrs.get("keep_dims") or red.control_inputs
            or red.name in c.preserved or red.device != op.device
            or len(op.inputs[0].consumers()) != 1 or not out.shape.is_fully_defined()):
        return None
    x, axes = red.inputs[0], c.const_value(red.inputs[1])
    rank = x.shape.rank
    if axes is None or rank is None or axes.ndim > 1:
        return None
    dropped = {int(a) % max(rank, 1) for a in np.atleast_1d(axes)}
    kept = [d for i, d in enumerate(x.shape.as_list()) if i not in dropped]
    if kept != out.shape.as_list():
        return None
    attrs = dict(red.attrs, keep_dims=False)
    return ("replace", lambda rw: rw.add_op(red.op_def, list(red.inputs), attrs,
                                            [(out.dtype, out.shape)], op.name, [], op.device))


_POOL_WINDOW = ("ksize", "strides", "padding", "explicit_paddings", "data_format", "T")


def _relu_grad_through_pool_grad(c: _Ctx, op: Operation, ins: list, out: SymbolicTensor):
    grad, features = ins
    pool_grad = c.producer(grad, {"MaxPoolGrad"})
    if pool_grad is None or pool_grad.inputs[0] is not features or pool_grad.control_inputs:
        return None
    pooled = pool_grad.inputs[1]
    pool = c.producer(pooled, {"MaxPool"})
    original = op.inputs[0]            # the MaxPoolGrad's output in the input graph
    if (pool is None or pool.inputs[0] is not features or original.name in c.fed
            or len(original.consumers()) != 1 or original.op.name in c.preserved
            or len({op.device, pool_grad.device, pool.device}) != 1
            or any(pool.attrs.get(k) != pool_grad.attrs.get(k) for k in _POOL_WINDOW)):
        return None

    def emit(rw: GraphRewriter) -> Operation:
        masked = rw.add_op(op.op_def, [pool_grad.inputs[2], pooled], op.attrs,
                           [(pooled.dtype, pooled.shape)], rw.fresh_name(op.name + "/pooled"), [],
                           op.device)
        return rw.add_op(pool_grad.op_def, [features, pooled, masked.outputs[0]],
                         pool_grad.attrs, [(out.dtype, out.shape)], op.name, [], op.device)
    return ("replace", emit)


def _bias_grad_through_pool_grad(c: _Ctx, op: Operation, ins: list, out: SymbolicTensor):
    pool_grad = c.producer(ins[0], {"MaxPoolGrad"})
    if (pool_grad is None or pool_grad.attrs.get("padding") not in ("SAME", "VALID")
            or pool_grad.attrs.get("data_format") != op.attrs.get("data_format", "NHWC")
            or pool_grad.device != op.device or pool_grad.inputs[2].shape.rank != 4):
        return None
    pooled_grad = pool_grad.inputs[2]
    return ("replace", lambda rw: rw.add_op(op.op_def, [pooled_grad], op.attrs,
                                            [(out.dtype, out.shape)], op.name, [], op.device))


def _rewritable(op: Operation, preserved: set) -> bool:
    return (op.name not in preserved and not op.control_inputs and len(op.outputs) == 1
            and not op.op_def.is_stateful
            and not any(t.dtype in _STATE_DTYPES for t in list(op.inputs) + op.outputs))


def arithmetic_optimizer(graph: Graph, ctx: PassContext) -> Graph:
    """Applies the simplifications of the module doc; `graph` itself when none applies."""
    preserved = ctx.preserved_op_names()
    rw = GraphRewriter(graph)
    c = _Ctx(rw, ctx)
    changed = False
    for op in graph.get_operations():
        action = _simplify(c, op) if _rewritable(op, preserved) else None
        if action is None:
            rw.copy_op(op)
            continue
        changed = True
        kind, what = action
        if kind == "forward":
            rw.replace_outputs(op, [what], control_op=what.op)
        else:
            new = what(rw)
            rw.map[op] = new
            rw.map.update(zip(op.outputs, new.outputs))
    if not changed:
        return graph
    return remove_dead_ops(rw.graph, ctx)


def remove_dead_ops(graph: Graph, ctx: PassContext) -> Graph:
    """The ops the fetches and targets still need (feeds cut the walk), in creation order;
    `graph` itself when there is nothing to remove or no fetch/target to anchor the walk."""
    if not ctx.fetches and not ctx.targets:
        return graph
    try:
        fed = {graph.get_tensor_by_name(ctx.current_name(n)) for n in ctx.feeds}
        fetches = [graph.get_tensor_by_name(ctx.current_name(n)) for n in ctx.fetches]
        targets = [graph.get_operation_by_name(ctx.current_name(n)) for n in ctx.targets]
    except (KeyError, ValueError):
        return graph
    need = needed_ops(fetches, targets, fed)
    need.update(t.op for t in fed)
    ops = graph.get_operations()
    if all(op in need for op in ops):
        return graph
    rw = GraphRewriter(graph)
    for op in ops:
        if op in need:
            rw.copy_op(op)
    return rw.graph
