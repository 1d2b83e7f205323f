"""Remapper: TensorFlow grappler's op fusions, as a pure graph pass.

Patterns (each intermediate must have exactly one consumer, no control edges out, must not
be fetched, fed or a target, and every op of a pattern must be on the same device):

- `Conv2D -> BiasAdd [-> Relu | Relu6 | Elu | LeakyRelu]` becomes `_FusedConv2D` with
  `fused_ops=["BiasAdd"(, act)]`, `num_args=1` (TF's op and attrs). NHWC and NCHW; the
  BiasAdd must use the conv's data_format.
- `MatMul -> BiasAdd [-> activation]` becomes `_FusedMatMul` (TF's op and attrs). ndflow
  also fuses `MatMul -> AddV2/Add` whose other operand is a rank-1 tensor as long as the
  last dimension (a bias written `x @ w + b`, as in the MNIST example). TensorFlow leaves
  that one unfused; it is the same broadcast add, so the values are the same.
- `AddN/AddV2(MatMul(a, b), Mul(y, s))` with a scalar `s` (in either order; the gradient of
  an L2-regularized weight) becomes the ndflow-internal `_MatMulAddScaled(a, b, y, s)`: the
  scaled term is added in place into the product, saving two passes over the weight-sized
  gradient and one allocation.
- `MaxPool` whose output feeds a `MaxPoolGrad` with the same `orig_input` (and the same
  window attrs) becomes the ndflow-internal `_MaxPoolWithIndices` (value + ATen argmax
  indices), and each such MaxPoolGrad becomes `_MaxPoolGradWithIndices(orig_input, grad,
  indices)`: the backward pass no longer recomputes the argmax.

A fused op takes the name of the last op it replaces (`Relu`, `MaxPool`, ...), so fetches
of that op's output and consumers such as ReluGrad (which reads the Relu output, equal to
the fused op's output) keep working; its control inputs are the union of the fused ops'.
Switched off by the RewriterConfig toggle `remapping` (a Session's
`rewrite_options.remapping = OFF`, or `tf.config.optimizer.set_experimental_options(
{'remapping': False})`), resolved into the PassConfig.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ndflow.core import dtypes
from ndflow.core.graph import Graph, Operation, SymbolicTensor
from ndflow.ops import nn_fused
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.pass_context import PassContext

_FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
_POOL_ATTRS = ("ksize", "strides", "padding", "explicit_paddings", "data_format")


@dataclass
class _Fusion:
    """One matched pattern: `ops` in data order, replaced by one op at `ops[-1]`."""

    kind: str                       # "conv", "matmul" or "scaled_add"
    ops: list
    bias: SymbolicTensor
    activation: Operation | None = None
    scaled: SymbolicTensor | None = None    # y of a "scaled_add" (its scale is `bias`)


@dataclass
class _Analysis:
    consumers: dict = field(default_factory=lambda: defaultdict(list))
    control_sources: set = field(default_factory=set)
    fetched: set = field(default_factory=set)
    fed: set = field(default_factory=set)
    preserved: set = field(default_factory=set)

    def is_private(self, t: SymbolicTensor, consumer: Operation) -> bool:
        """`t` is read by `consumer` only, and nobody else can see its op."""
        op = t.op
        return (len(op.outputs) == 1 and self.consumers[t] == [consumer]
                and t.name not in self.fetched and t.name not in self.fed
                and op.name not in self.preserved and op not in self.control_sources)


def _analyze(graph: Graph, ctx: PassContext) -> _Analysis:
    a = _Analysis(fetched=ctx.fetched_tensor_names(), fed=ctx.fed_tensor_names(),
                  preserved=ctx.preserved_op_names())
    for op in graph.get_operations():
        for t in op.inputs:
            a.consumers[t].append(op)
        a.control_sources.update(op.control_inputs)
    return a


def _float_op(op: Operation) -> bool:
    return op.attrs.get("T") in _FLOATS


def _bias_of_add(add: Operation, x: SymbolicTensor) -> SymbolicTensor | None:
    """The rank-1 operand of `add` = `x + b` (either order) that is a bias over x's last dim."""
    if add.type not in ("AddV2", "Add") or add.inputs.count(x) != 1:
        return None
    b = add.inputs[1] if add.inputs[0] is x else add.inputs[0]
    last = x.shape[-1] if x.shape.rank else None
    if b.dtype is not x.dtype or b.shape.rank != 1 or last is None or b.shape[0] != last:
        return None
    return b


def _activation(a: _Analysis, t: SymbolicTensor, device: str) -> Operation | None:
    cons = a.consumers[t]
    if len(cons) != 1:
        return None
    act = cons[0]
    if act.type not in nn_fused.ACTIVATIONS or act.device != device or not a.is_private(t, act):
        return None
    return act


def _match_bias_chain(a: _Analysis, root: Operation) -> _Fusion | None:
    """Conv2D/MatMul `root` -> bias add [-> activation]."""
    kind = "conv" if root.type == "Conv2D" else "matmul"
    if not _float_op(root):
        return None
    if kind == "conv" and root.attrs.get("data_format") not in ("NHWC", "NCHW"):
        return None
    y = root.outputs[0]
    cons = a.consumers[y]
    if len(cons) != 1 or not a.is_private(y, cons[0]) or cons[0].device != root.device:
        return None
    add = cons[0]
    if add.type == "BiasAdd" and add.inputs[0] is y:
        if kind == "conv" and add.attrs.get("data_format") != root.attrs["data_format"]:
            return None
        bias = add.inputs[1]
    elif kind == "matmul":
        bias = _bias_of_add(add, y)
    else:
        bias = None
    if bias is None:
        return None
    act = _activation(a, add.outputs[0], root.device)
    ops = [root, add] + ([act] if act is not None else [])
    return _Fusion(kind, ops, bias, act)


def _match_scaled_add(a: _Analysis, add: Operation) -> _Fusion | None:
    """AddN/AddV2(MatMul(a, b), Mul(y, s)), s a scalar -> ops [MatMul, Mul, add]."""
    if add.type not in ("AddN", "AddV2", "Add") or len(add.inputs) != 2 or not _float_op(add):
        return None
    out = add.outputs[0]
    for m, u in (add.inputs, add.inputs[::-1]):
        mm, mul = m.op, u.op
        if mm.type != "MatMul" or mul.type != "Mul" or mm is mul:
            continue
        if not (a.is_private(m, add) and a.is_private(u, add)):
            continue
        if mm.device != add.device or mul.device != add.device:
            continue
        for y, sc in (mul.inputs, mul.inputs[::-1]):
            if sc.shape.rank == 0 and y.shape.is_fully_defined() and m.shape == y.shape \
                    and y.shape == out.shape and y.dtype is out.dtype:
                return _Fusion("scaled_add", [mm, mul, add], sc, scaled=y)
    return None


def _fused_attrs(op_def, src: Operation, fusion: _Fusion) -> dict:
    attrs = {k: v for k, v in src.attrs.items() if k in op_def.attrs}
    act = fusion.activation
    attrs.update({
        "T": src.attrs["T"], "num_args": 1, "epsilon": 0.0001,
        "fused_ops": ["BiasAdd"] + ([act.type] if act is not None else []),
        "leakyrelu_alpha": float(act.attrs.get("alpha", 0.2))
        if act is not None and act.type == "LeakyRelu" else 0.2,
    })
    if op_def is nn_fused.FusedConv2D:
        attrs.update({"TArgs": [src.attrs["T"]], "num_host_args": 0, "filter_format": "HWIO"})
        for name, d in op_def.attrs.items():
            if name not in attrs and d.has_default:
                attrs[name] = d.default
    return attrs


def _emit_fusion(rw: GraphRewriter, f: _Fusion) -> None:
    root, last = f.ops[0], f.ops[-1]
    inputs = [rw.mapped(root.inputs[0]), rw.mapped(root.inputs[1]), rw.mapped(f.bias)]
    if f.kind == "scaled_add":
        op_def = nn_fused.MatMulAddScaled
        inputs[2:] = [rw.mapped(f.scaled), rw.mapped(f.bias)]
        attrs = {k: root.attrs[k] for k in ("transpose_a", "transpose_b", "T")}
    else:
        op_def = nn_fused.FusedConv2D if f.kind == "conv" else nn_fused.FusedMatMul
        attrs = _fused_attrs(op_def, root, f)
    controls = [rw.map[c] for op in f.ops for c in op.control_inputs]
    out = last.outputs[0]
    new = rw.add_op(op_def, inputs, attrs, [(out.dtype, out.shape)], last.name, controls,
                    root.device)
    rw.map[last] = new
    rw.map[out] = new.outputs[0]


def _match_pools(a: _Analysis, op: Operation) -> list:
    """The MaxPoolGrads of MaxPool `op` that can reuse its argmax (empty: no fusion)."""
    if not _float_op(op) or op.outputs[0].name in a.fed:
        return []
    y = op.outputs[0]
    grads = [c for c in a.consumers[y] if c.type == "MaxPoolGrad" and c.inputs[1] is y
             and c.inputs[0] is op.inputs[0] and c.device == op.device
             and c.attrs.get("T") == op.attrs.get("T")
             and all(c.attrs.get(k) == op.attrs.get(k) for k in _POOL_ATTRS)]
    return grads


def _pool_attrs(op: Operation) -> dict:
    attrs = {k: op.attrs.get(k) for k in _POOL_ATTRS}
    attrs["explicit_paddings"] = list(attrs["explicit_paddings"] or [])
    attrs["T"] = op.attrs["T"]
    return attrs


def remapper(graph: Graph, ctx: PassContext) -> Graph:
    """Fuses Conv2D/MatMul + bias [+ activation], L2 gradient sums and MaxPool/MaxPoolGrad."""
    a = _analyze(graph, ctx)
    fusions: dict = {}          # last op of a pattern -> _Fusion
    absorbed: set = set()       # ops emitted as part of a later fused op
    pool_grads: dict = {}       # MaxPoolGrad -> its MaxPool
    for op in graph.get_operations():
        if op in absorbed:
            continue
        if op.type in ("Conv2D", "MatMul"):
            f = _match_bias_chain(a, op)
            if f is not None:
                fusions[f.ops[-1]] = f
                absorbed.update(f.ops[:-1])
        elif op.type in ("AddN", "AddV2", "Add"):
            f = _match_scaled_add(a, op)
            if f is not None and not any(o in absorbed or o in fusions for o in f.ops[:-1]):
                fusions[op] = f
                absorbed.update(f.ops[:-1])
        elif op.type == "MaxPool":
            for g in _match_pools(a, op):
                pool_grads[g] = op
    if not fusions and not pool_grads:
        return graph

    rw = GraphRewriter(graph)
    indices: dict = {}          # MaxPool -> indices tensor in the output graph
    pools = set(pool_grads.values())
    for op in graph.get_operations():
        if op in absorbed:
            continue
        if op in fusions:
            _emit_fusion(rw, fusions[op])
        elif op in pools:
            new = rw.add_op(nn_fused.MaxPoolWithIndices, [rw.mapped(op.inputs[0])],
                            _pool_attrs(op), [(t.dtype, t.shape) for t in op.outputs] +
                            [(dtypes.int64, op.outputs[0].shape)], op.name,
                            [rw.map[c] for c in op.control_inputs], op.device)
            rw.map[op] = new
            rw.map[op.outputs[0]] = new.outputs[0]
            indices[op] = new.outputs[1]
        elif op in pool_grads:
            pool = pool_grads[op]
            out = op.outputs[0]
            new = rw.add_op(nn_fused.MaxPoolGradWithIndices,
                            [rw.mapped(op.inputs[0]), rw.mapped(op.inputs[2]), indices[pool]],
                            _pool_attrs(op), [(out.dtype, out.shape)], op.name,
                            [rw.map[c] for c in op.control_inputs], op.device)
            rw.map[op] = new
            rw.map[out] = new.outputs[0]
        else:
            rw.copy_op(op)
    return rw.graph
