"""Shape specialization: a plan for the shapes a graph is run with.

A traced function or a Keras step has unknown dimensions (Keras' batch is None), so its
gradient carries the shape arithmetic that broadcasting needs at run time (`Shape`,
`BroadcastGradientArgs`, `Sum` over the broadcast axes and `Reshape` back, a Mean's
`Prod`/`FloorDiv` divisor): TensorFlow runs those as C++ kernels for a few microseconds each,
ndflow's plan pays a Python step for each. When a run's feeds have fully known shapes
(`ctx.feed_specs` with `ctx.specialize`: the arguments a `tf.function` is called with again
and again, runtime/shape_plans.py), this pass gives each fed placeholder its run's shape and
infers every op's output shapes again from its inputs, in creation order, as graph
construction did: constant folding then folds the shape arithmetic into constants and the
other passes see static shapes (what XLA gets by compiling each cluster for its input
shapes). A shape function that fails or disagrees leaves that op's shapes as they were; the
kernels check the values at run time as before.
"""

from __future__ import annotations

from ndflow.core.graph import Graph
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.ops.apply import infer_shapes
from ndflow.passes.constant_folding import constant_folding
from ndflow.passes.pass_context import PassContext

# shape arithmetic folded, shapes inferred from the constants, folded again: a gradient's
# chains (Shape -> BroadcastGradientArgs -> Sum axes) settle in two or three rounds
_FOLDING_ROUNDS = 4


def _refined_feeds(graph: Graph, ctx: PassContext) -> dict:
    """Fed tensor -> its run's shape, where that says more than the static shape."""
    out = {}
    for name, (_, shape) in ctx.feed_specs.items():
        try:
            t = graph.get_tensor_by_name(ctx.current_name(name))
        except (KeyError, ValueError):
            continue
        given = as_shape(shape)
        if (not given.is_fully_defined() or t.shape.is_fully_defined()
                or not t.shape.is_compatible_with(given)):
            continue   # nothing to learn, or the run fails where TF's would
        out[t] = t.shape.merge_with(given)
    return out


def _infer_again(graph: Graph, changed: set, every: bool = False) -> None:
    """Infers the output shapes of the ops reading a tensor in `changed` (of every op with
    `every`) again, in creation order, tightening them in place; adds what tightened. (In
    the graph's context: some shape functions give up when called eagerly.)"""
    with graph.as_default():
        for op in graph.get_operations():
            if op.op_def.is_functional or not (every or changed.intersection(op.inputs)):
                continue
            for t, shape in zip(op.outputs, _inferred(op)):
                if shape.rank is None or not t.shape.is_compatible_with(shape):
                    continue
                merged = t.shape.merge_with(shape)
                if t.shape.rank is None or merged.as_list() != t.shape.as_list():
                    t.set_shape(merged)
                    changed.add(t)


def _inferred(op) -> list:
    """The op's output shapes from its inputs' (unknown where that cannot say)."""
    if op.type == "ResourceGather" and not op.get_attr("batch_dims"):
        # the variable's shape is not known here, but the output's trailing dimensions, set
        # when the op was built, are its row shape: indices' shape + params.shape[1:]
        idx, old = op.inputs[1].shape, op.outputs[0].shape
        if idx.rank is None or old.rank is None:
            return [TensorShape(None)]
        return [TensorShape(idx.as_list() + old.as_list()[idx.rank:])]
    try:
        return infer_shapes(op.op_def, op.name, op.inputs, op.attrs, len(op.outputs), False)
    except (ValueError, TypeError, IndexError, KeyError):
        return [TensorShape(None)] * len(op.outputs)


def specialize_shapes(graph: Graph, ctx: PassContext) -> Graph:
    """The graph with its feeds' run shapes, every shape inferred again and the shape
    arithmetic folded, until folding finds nothing more (module doc)."""
    refined = _refined_feeds(graph, ctx) if ctx.specialize else None
    if not refined:
        return graph
    out, mapping = graph.copy()
    for t, shape in refined.items():
        mapping[t].set_shape(shape)
    _infer_again(out, {mapping[t] for t in refined})
    if ctx.config.pass_enabled("constant_folding", "constant_folding", None):
        for _ in range(_FOLDING_ROUNDS):
            before = len(out.get_operations())
            out = constant_folding(out, ctx)
            _infer_again(out, set(), every=True)
            if len(out.get_operations()) == before:
                break
    return out
