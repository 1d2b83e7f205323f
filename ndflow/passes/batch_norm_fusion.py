"""The remapper's batch-norm fusion: `Relu(FusedBatchNormV3(x, ...).y)` and
`Relu(Add(FusedBatchNormV3(...).y, side))` become TensorFlow's `_FusedBatchNormEx` with
`activation_mode="Relu"` (and `num_side_inputs=1`), as grappler's FindFusedBatchNormEx /
AddFusedBatchNormExNode do it.

Conditions (TF's): the root is a Relu; the batch norm is FusedBatchNormV3 with T float or
bfloat16 (ndflow also float64, see ops/nn_fused.py), U float (or double), data_format NHWC
or NCHW, in training or inference mode; its output 0 is read only by the Relu (or the Add),
and it is not preserved; no op of the pattern has control inputs or drives a control edge
(except the Relu, whose control role the fused op takes); the Add's two inputs have the
same fully known shape (it broadcasts, the fused op does not). TF fuses on CPU only with
oneDNN, and there without side inputs; ndflow's kernel does both on every device.

As in TF, the fused op takes the batch norm's name and all six of its outputs, so the
batch-norm gradient (FusedBatchNormGradV3 reads reserve_space_1..3) and the moving-average
updates (batch_mean, batch_variance) read the fused op. The Relu's consumers (ReluGrad
reads the Relu's output) read the fused op's output 0; a fetched Relu becomes an Identity
of it under its own name. The fused op is emitted where the batch norm was, so everything
created between the batch norm and the Relu still finds its inputs; a side input created
after the batch norm is not fused.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.graph import Graph, Operation, SymbolicTensor
from ndflow.ops import array_core, nn_fused
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.pass_context import PassContext
from ndflow.passes.pattern import GraphView

_T = (dtypes.float32, dtypes.bfloat16, dtypes.float64)
_U = (dtypes.float32, dtypes.float64)
_COPIED_ATTRS = ("T", "U", "epsilon", "exponential_avg_factor", "data_format", "is_training")


def _no_controls(view: GraphView, op: Operation) -> bool:
    return not op.control_inputs and op not in view.control_sources


def _valid_batch_norm(view: GraphView, t: SymbolicTensor, consumer: Operation) -> bool:
    bn = t.op
    return (bn.type == "FusedBatchNormV3" and t.value_index == 0
            and bn.attrs.get("T") in _T and bn.attrs.get("U") in _U
            and bn.attrs.get("data_format") in ("NHWC", "NCHW")
            and view.consumers[t] == [consumer] and t.name not in view.fetched
            and t.name not in view.fed and bn.name not in view.preserved
            and _no_controls(view, bn) and bn.device == consumer.device)


def _match(view: GraphView, relu: Operation, order: dict):
    """(batch norm, Add or None, side tensor or None) fused into `relu`, else None."""
    if relu.type != "Relu" or relu.control_inputs:
        return None
    src = relu.inputs[0]
    if _valid_batch_norm(view, src, relu):
        return src.op, None, None
    add = src.op
    if (add.type not in ("Add", "AddV2") or not view.is_private(src, relu)
            or not _no_controls(view, add) or add.device != relu.device):
        return None
    a, b = add.inputs
    if not (a.shape.is_fully_defined() and a.shape == b.shape):
        return None
    for bn_out, side in ((a, b), (b, a)):
        if (bn_out is not side and _valid_batch_norm(view, bn_out, add)
                and order[side.op] < order[bn_out.op]):
            return bn_out.op, add, side
    return None


def fuse_batch_norm_activation(graph: Graph, ctx: PassContext) -> Graph:
    """The rewrite of the module doc; `graph` itself when nothing matches."""
    view = GraphView.of(graph, ctx)
    ops = graph.get_operations()
    order = {op: i for i, op in enumerate(ops)}
    by_bn: dict = {}
    relu_of: dict = {}
    for op in ops:
        found = _match(view, op, order)
        if found is not None and found[0] not in by_bn:
            by_bn[found[0]] = (op, found[1], found[2])
            relu_of[op] = found[0]
    if not by_bn:
        return graph
    absorbed = {add for _, add, _ in by_bn.values() if add is not None}
    rw = GraphRewriter(graph)
    for op in ops:
        if op in by_bn:
            _emit_fused(rw, op, *by_bn[op])
        elif op in relu_of:
            _forward_relu(rw, view, op, rw.map[relu_of[op]])
        elif op not in absorbed:
            rw.copy_op(op)
    return rw.graph


def _emit_fused(rw: GraphRewriter, bn: Operation, relu: Operation, add, side) -> None:
    attrs = {k: bn.attrs[k] for k in _COPIED_ATTRS}
    attrs.update(num_side_inputs=0 if side is None else 1, activation_mode="Relu")
    inputs = [rw.map[t] for t in bn.inputs] + ([] if side is None else [rw.map[side]])
    specs = [(t.dtype, t.shape) for t in bn.outputs]
    specs[0] = (relu.outputs[0].dtype, relu.outputs[0].shape)
    new = rw.add_op(nn_fused.FusedBatchNormEx, inputs, attrs, specs, bn.name, [], bn.device)
    rw.map[bn] = new
    rw.map.update(zip(bn.outputs, new.outputs))


def _forward_relu(rw: GraphRewriter, view: GraphView, relu: Operation, fused) -> None:
    y = relu.outputs[0]
    if y.name in view.fetched or relu.name in view.preserved:
        ident = rw.add_op(array_core.Identity, [fused.outputs[0]], {"T": y.dtype},
                          [(y.dtype, y.shape)], relu.name, [], relu.device)
        rw.map[relu] = ident
        rw.map[y] = ident.outputs[0]
        return
    rw.replace_outputs(relu, [fused.outputs[0]], control_op=fused)
