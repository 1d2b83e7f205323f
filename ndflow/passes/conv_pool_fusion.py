"""The remapper's fusion of a CNN's first block: a conv with few input channels, its bias and
relu, and the 2x2 stride-2 max pool after it (ndflow's own; TensorFlow has no such op).

Matched on the remapper's output (the rules of passes/remapper.py ran first):

    forward   C = _FusedConv2D(x, w, b)  [fused_ops BiasAdd, Relu]
              P = _MaxPoolWithIndices(C)            (MaxPool in a graph without gradients)
    backward  R = ReluGrad(dy, P:0)                  (the arithmetic optimizer's pooled form)
              G = _MaxPoolGradWithIndices(C, R, P:1)
              F = Conv2DBackpropFilter(x, sizes, G)
              B = BiasAddGrad(R)                    (optional)

becomes `_Conv2DBiasReluMaxPool(x, w, b)` named P (its output 0 is P's, its output 1 the
window codes) and, with gradients, `_Conv2DBiasReluMaxPoolGrad(x, dy, codes)` named F, whose
outputs replace F's and B's (ops/nn_fused.py, kernels/conv_pool_numba.py): the conv-sized
activation and its gradient never exist. The grad op is emitted where R was, so every
consumer of F and B finds it.

Conditions: float32 or bfloat16 (the mixed-precision rewrite's; computed in float32 from the
bfloat16 values, each result rounded once, so a pool window whose two largest values round to
one bfloat16 value may pick another winner than the unfused bfloat16 ops), all ops of one
type; NHWC, on the CPU; conv stride and dilation 1, SAME or VALID padding; input channels
known and at most MAX_INPUT_CHANNELS (larger convs are oneDNN's, at GEMM speed); output
channels a multiple of 16 (the kernel's vector width); a 2x2 stride-2 pool,
SAME or VALID. Every intermediate has exactly the consumers the fusion accounts for (C: P and
G; P:1: G; R: G and B; G: F) and is not fetched, fed, preserved or a control input, and no
op of the pattern has control inputs. Otherwise the graph is left as it is. F's output must
have the filter's static shape. A pipeline pass of the remapper's group, switched off alone
by its name "conv_pool_fusion" (for measuring it against the unfused ops in one process).
"""

from __future__ import annotations

from ndflow.core import devices, dtypes
from ndflow.core.graph import Graph, Operation
from ndflow.ops import nn_fused
from ndflow.passes.arithmetic_optimizer import remove_dead_ops
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.pass_context import PassContext
from ndflow.passes.pattern import GraphView

MAX_INPUT_CHANNELS = 4
_ONES = [1, 1, 1, 1]
_POOL = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "data_format": "NHWC"}
_CONV_ATTRS = ("strides", "padding", "dilations", "data_format")


class _Fusion:
    """One matched block: the forward ops and, with gradients, the backward ones."""

    def __init__(self, conv: Operation, pool: Operation):
        self.conv, self.pool = conv, pool
        self.relu_grad = self.pool_grad = self.filter_grad = self.bias_grad = None

    def absorbed(self) -> list:
        ops = [self.conv, self.pool_grad, self.filter_grad, self.bias_grad]
        return [op for op in ops if op is not None]


def _on_cpu(op: Operation) -> bool:
    """Whether `op` runs on the CPU: placed there, or on no device (ndflow runs unplaced ops
    on the CPU, also beside a GPU)."""
    return not op.device or devices.device_type(op.device).upper() == "CPU"


def _float32(op: Operation) -> bool:
    """float32, or bfloat16 (the mixed-precision rewrite's conv1: the kernels compute in
    float32 from the bfloat16 values and round the results once)."""
    return op.attrs.get("T") in (dtypes.float32, dtypes.bfloat16)


def _hidden(view: GraphView, op: Operation) -> bool:
    """Nobody outside the pattern can see `op`: not preserved, fetched, fed, no control
    edges in or out."""
    return (op.name not in view.preserved and not op.control_inputs
            and op not in view.control_sources
            and not any(t.name in view.fetched or t.name in view.fed for t in op.outputs))


def _conv(view: GraphView, pool: Operation) -> Operation | None:
    conv = pool.inputs[0].op
    if conv.type != "_FusedConv2D" or len(conv.inputs) != 3:
        return None
    x, w = conv.inputs[0], conv.inputs[1]
    if (list(conv.attrs.get("fused_ops") or []) != ["BiasAdd", "Relu"] or not _float32(conv)
            or conv.attrs.get("data_format") != "NHWC"
            or conv.attrs.get("padding") not in ("SAME", "VALID")
            or list(conv.attrs.get("strides")) != _ONES
            or list(conv.attrs.get("dilations")) != _ONES
            or conv.device != pool.device or not _on_cpu(conv) or not _hidden(view, conv)):
        return None
    if x.shape.rank != 4 or x.shape[3] is None or x.shape[3] > MAX_INPUT_CHANNELS:
        return None
    if not w.shape.is_fully_defined() or w.shape[2] != x.shape[3] or w.shape[3] % 16:
        return None
    return conv


def _pool(op: Operation) -> bool:
    return (op.type in ("MaxPool", "_MaxPoolWithIndices") and _float32(op)
            and op.attrs.get("padding") in ("SAME", "VALID")
            and not op.attrs.get("explicit_paddings")
            and all(list(op.attrs.get(k)) == v if isinstance(v, list) else op.attrs.get(k) == v
                    for k, v in _POOL.items()))


def _only(view: GraphView, t, kind: str) -> Operation | None:
    readers = view.consumers[t]
    return readers[0] if len(readers) == 1 and readers[0].type == kind else None


def _match_backward(view: GraphView, f: _Fusion) -> bool:
    """Fills in the backward ops of `f`; False when they do not have the pattern's shape."""
    conv, pool = f.conv, f.pool
    grad = _only(view, pool.outputs[1], "_MaxPoolGradWithIndices")
    t = conv.attrs["T"]
    if (grad is None or grad.inputs[0] is not conv.outputs[0]
            or any(grad.attrs.get(k) != pool.attrs.get(k) for k in ("ksize", "strides",
                                                                    "padding", "T"))):
        return False
    relu_grad = grad.inputs[1].op
    if (relu_grad.type != "ReluGrad" or relu_grad.inputs[1] is not pool.outputs[0]
            or relu_grad.attrs.get("T") is not t):
        return False
    others = [op for op in view.consumers[relu_grad.outputs[0]] if op is not grad]
    bias_grad = others[0] if len(others) == 1 else None
    if len(others) > 1 or (bias_grad is not None and (
            bias_grad.type != "BiasAddGrad" or bias_grad.attrs.get("T") is not t
            or bias_grad.attrs.get("data_format", "NHWC") != "NHWC")):
        return False
    filter_grad = _only(view, grad.outputs[0], "Conv2DBackpropFilter")
    if (filter_grad is None or filter_grad.inputs[0] is not conv.inputs[0]
            or filter_grad.inputs[2] is not grad.outputs[0]
            or filter_grad.attrs.get("T") is not t
            or any(filter_grad.attrs.get(k) != conv.attrs.get(k) for k in _CONV_ATTRS)
            or filter_grad.attrs.get("explicit_paddings")
            or filter_grad.outputs[0].shape != conv.inputs[1].shape):
        return False
    backward = [relu_grad, grad, filter_grad] + ([bias_grad] if bias_grad else [])
    if any(op.device != conv.device or not _hidden(view, op) for op in backward):
        return False
    f.relu_grad, f.pool_grad, f.filter_grad, f.bias_grad = relu_grad, grad, filter_grad, \
        bias_grad
    return True


def _match(view: GraphView, pool: Operation) -> _Fusion | None:
    if not _pool(pool) or pool.control_inputs or pool in view.control_sources:
        return None
    conv = _conv(view, pool)
    if conv is None or conv.attrs["T"] is not pool.attrs["T"]:
        return None
    f = _Fusion(conv, pool)
    readers = view.consumers[conv.outputs[0]]
    if pool.type == "MaxPool":
        return f if readers == [pool] else None
    if pool.outputs[1].name in view.fetched or not _match_backward(view, f):
        return None
    return f if sorted(readers, key=id) == sorted([pool, f.pool_grad], key=id) else None


def _attrs(conv: Operation, pool: Operation) -> dict:
    attrs = {k: conv.attrs[k] for k in _CONV_ATTRS}
    attrs.update(T=conv.attrs["T"], pool_padding=pool.attrs["padding"])
    return attrs


def _emit_forward(rw: GraphRewriter, f: _Fusion) -> Operation:
    pool, conv = f.pool, f.conv
    y = pool.outputs[0]
    new = rw.add_op(nn_fused.Conv2DBiasReluMaxPool, [rw.map[t] for t in conv.inputs],
                    _attrs(conv, pool), [(y.dtype, y.shape), (dtypes.uint8, y.shape)],
                    pool.name, [], pool.device)
    rw.map[pool] = new
    rw.map[y] = new.outputs[0]
    return new


def _emit_backward(rw: GraphRewriter, f: _Fusion) -> None:
    conv, fg = f.conv, f.filter_grad
    w = conv.inputs[1].shape
    attrs = _attrs(conv, f.pool)
    attrs["filter_shape"] = [int(d) for d in w]
    inputs = [rw.map[conv.inputs[0]], rw.map[f.relu_grad.inputs[0]],
              rw.map[f.pool].outputs[1]]
    new = rw.add_op(nn_fused.Conv2DBiasReluMaxPoolGrad, inputs, attrs,
                    [(attrs["T"], w), (attrs["T"], w[3:])], fg.name, [], fg.device)
    rw.map[fg] = new
    rw.map[fg.outputs[0]] = new.outputs[0]
    if f.bias_grad is not None:
        rw.map[f.bias_grad] = new
        rw.map[f.bias_grad.outputs[0]] = new.outputs[1]


def fuse_conv_bias_relu_pool(graph: Graph, ctx: PassContext) -> Graph:
    """The rewrite of the module doc; `graph` itself when nothing matches."""
    view = GraphView.of(graph, ctx)
    fusions = [f for f in (_match(view, op) for op in graph.get_operations()) if f]
    if not fusions:
        return graph
    at_pool = {f.pool: f for f in fusions}
    at_relu_grad = {f.relu_grad: f for f in fusions if f.relu_grad is not None}
    skipped = {op for f in fusions for op in f.absorbed()}
    rw = GraphRewriter(graph)
    for op in graph.get_operations():
        if op in at_pool:
            _emit_forward(rw, at_pool[op])
        elif op in at_relu_grad:
            _emit_backward(rw, at_relu_grad[op])
        elif op not in skipped:
            rw.copy_op(op)
    return remove_dead_ops(rw.graph, ctx)
