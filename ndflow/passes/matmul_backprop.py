"""A layer's input gradient computed by its weight's momentum update.

After the remapper a large dense layer y = x @ W (MNIST's fc1: x 64x3136, W 3136x512, 6.4 MB)
trains with `_MatMulApplyMomentum(W, accum, lr, x, dy, scale, mu, transpose_a=True)`, which
computes W's gradient x^T @ dy a block of W's rows at a time and updates those rows while they
are in the cache. The layer's input gradient, `MatMul(dy, ReadVariableOp(W), transpose_b=True)`,
read W from memory once more. Here that MatMul becomes the update's `backprop` output
(`num_backprop=1`): each block of the update first computes its columns of dy @ W^T from the
rows it is about to update (kernels/gemm_epilogue.py), so W crosses memory once for both.
Not for plain SGD's `_MatMulApplyGradientDescent`: one `addmm` already updates W in a single
pass, and doing it by blocks of rows (small GEMMs, dy packed for each) made a batch-32
four-layer MLP's step 0.4-0.8 ms slower, not faster.

The update then runs where the MatMul ran (the plan runs ops in creation order), earlier than
before, so it applies only when that changes nothing any op sees:
- the MatMul: float32, `dy @ W^T` of the update's own dy (of static shape, at most
  MAX_DY_ELEMENTS) and a `ReadVariableOp` of the update's handle, on the update's device, its
  output neither fetched, fed nor preserved, and no control edges from it;
- the update: `transpose_a`, not `transpose_b`, no backprop yet;
- every other op on the variable's handle only reads it and comes before the MatMul or after
  the update (so it reads the value it read before: a read between the two would see the
  update early), and nothing else writes it (the value the MatMul read is the value the
  update starts from);
- the update's control inputs come before the MatMul, and each of its inputs does too or is
  made by an op that can be created there instead: one with no inputs (a Const; the
  VarHandleOp or captured handle of the momentum slot, which the optimizer creates after the
  gradients), or a ReadVariableOp of such a handle that nothing writes in between (Keras'
  learning rate).

Measured on MNIST's training step (two threads, AVX-512 Xeon): see README.md. Part of the
remapper (off with `remapping`), after its rules.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.graph import Graph, Operation
from ndflow.passes.arithmetic_optimizer import remove_dead_ops
from ndflow.passes.branch_momentum_decay import only_reads
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.pass_context import PassContext
from ndflow.passes.pattern import GraphView

# Each block of W (kernels/gemm_epilogue.py: BLOCK_ELEMENTS, 96K) has MKL pack dy anew for
# its two GEMMs, so dy must be small beside a block: MNIST's fc1 (dy 64x512) ran 0.4-1 ms
# faster; a layer like benchmarks/jit_mlp.py's (dy 256x1024: 2.7x the weight in packing)
# ran 2-3 ms slower with plain SGD's blocked form and is left alone.
MAX_DY_ELEMENTS = 48 * 1024
_INPUTLESS = ("Const", "VarHandleOp", "Placeholder")


def input_gradient_matmuls(view: GraphView, dy, handle):
    """The float32 MatMuls `dy @ ReadVariableOp(handle)^T` (a layer's input gradient; dy of
    static shape, at most MAX_DY_ELEMENTS) whose output is neither fetched, fed nor
    preserved and has no control edges out."""
    if not (dy.shape.is_fully_defined() and dy.shape.num_elements() <= MAX_DY_ELEMENTS):
        return
    for mm in view.consumers[dy]:
        if (mm.type != "MatMul" or mm.inputs[0] is not dy or mm.attrs.get("transpose_a")
                or not mm.attrs.get("transpose_b") or mm.attrs.get("T") is not dtypes.float32):
            continue
        read, out = mm.inputs[1].op, mm.outputs[0]
        if (read.type == "ReadVariableOp" and read.inputs[0] is handle
                and out.name not in view.fetched and out.name not in view.fed
                and mm.name not in view.preserved and mm not in view.control_sources):
            yield mm


def _input_gradient(view: GraphView, order: dict, update: Operation) -> Operation | None:
    """The MatMul computing `update`'s layer's input gradient, when it may be fused."""
    a = update.attrs
    if (not a.get("transpose_a") or a.get("transpose_b") or a.get("num_backprop", 0)
            or a.get("T") is not dtypes.float32):
        return None
    handle, dy = update.inputs[0], update.inputs[4]
    for mm in input_gradient_matmuls(view, dy, handle):
        if mm.device != update.device or order[mm] > order[update]:
            continue
        others = [op for op in view.consumers[handle] if op is not update]
        if only_reads(others) and not any(order[mm] < order[op] < order[update]
                                          for op in others):
            return mm
    return None


def made_early(view: GraphView, tensors, order: dict, at: int,
               pure: frozenset = frozenset()) -> list | None:
    """The ops making `tensors` after position `at`, to be created there instead (in
    creation order): input-less ones, reads of variables nothing writes meanwhile and ops
    of the types in `pure` of such inputs; None when one of them cannot move."""
    early: list = []

    def movable(op: Operation) -> bool:
        if order[op] < at or op in early:
            return True
        if op.control_inputs:
            return False
        if op.type in _INPUTLESS and not op.inputs:
            early.append(op)
            return True
        if op.type == "ReadVariableOp":   # (Keras' learning rate): nothing writes it meanwhile
            handle = op.inputs[0]
            between = [c for c in view.consumers[handle] if at <= order[c] < order[op]]
            if only_reads(between) and movable(handle.op):
                early.append(op)
                return True
        if op.type in pure and all(movable(t.op) for t in op.inputs):
            early.append(op)
            return True
        return False

    if not all(movable(t.op) for t in tensors):
        return None
    return sorted(early, key=order.get)


def emit_early(rw: GraphRewriter, early: list) -> None:
    """`made_early`'s ops, created now (the rewrite skips them at their own place)."""
    for op in early:
        if op not in rw.map:
            rw.copy_op(op)


def fuse_backprop_into_updates(graph: Graph, ctx: PassContext) -> Graph:
    """The rewrite of the module doc; `graph` itself when nothing matches."""
    view = GraphView.of(graph, ctx)
    ops = graph.get_operations()
    order = {op: i for i, op in enumerate(ops)}
    at_matmul: dict = {}
    for op in ops:
        if op.type == "_MatMulApplyMomentum":
            mm = _input_gradient(view, order, op)
            early = None if mm is None else made_early(view, op.inputs, order, order[mm])
            if early is not None and all(order[c] < order[mm] for c in op.control_inputs):
                at_matmul[mm] = (op, early)
    if not at_matmul:
        return graph
    fused = {update for update, _ in at_matmul.values()}
    rw = GraphRewriter(graph)
    for op in ops:
        if op in at_matmul:
            update, early = at_matmul[op]
            emit_early(rw, early)
            out = op.outputs[0]
            new = rw.add_op(update.op_def, [rw.map[t] for t in update.inputs],
                            {**update.attrs, "num_backprop": 1}, [(out.dtype, out.shape)],
                            update.name, [rw.map[c] for c in update.control_inputs],
                            update.device)
            rw.map[update] = new
            rw.map[out] = new.outputs[0]
        elif op not in fused and op not in rw.map:   # (an input-less op created early)
            rw.copy_op(op)
    return remove_dead_ops(rw.graph, ctx)
