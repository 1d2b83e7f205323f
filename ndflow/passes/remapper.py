"""Remapper: TensorFlow grappler's op fusions, as a pure graph pass — a table of
(pattern, replacement) rules applied by the matcher in ndflow/passes/pattern.py.

Every inner op of a pattern must have exactly one consumer, no control edges out, must not be
fetched, fed or a target, and every op of a pattern must be on the same device. The rules:

- `Conv2D -> BiasAdd [-> Relu | Relu6 | Elu | LeakyRelu]` becomes `_FusedConv2D` with
  `fused_ops=["BiasAdd"(, act)]`, `num_args=1` (TF's op and attrs). NHWC and NCHW; the
  BiasAdd must use the conv's data_format.
- `Conv3D -> BiasAdd [-> activation]` (NDHWC; float32, float16, bfloat16) becomes
  `_FusedConv3D`, as grappler fuses it on CPUs: ATen's convolution adds the bias as it writes.
- `Conv2D -> Mul(·, scale) -> Add(·, bias) [-> activation]` with a per-output-channel scale
  and bias (NHWC; Keras' BatchNormalization in inference, written by Keras as
  `x * inv + (beta - mean * inv)`) becomes `_FusedConv2D(x, Mul(filter, scale), bias)`: the
  scale folded into the filter, as grappler's MulConvPushDown and oneDNN's inference
  fusion do, so the convolution writes the normalized, activated output in one pass (ResNet-50
  inference at batch 32: two passes over 53 activations fewer). Folded only where the
  filter has no more elements than the output (scaling the filter costs a pass over it).
- `MatMul -> BiasAdd [-> activation]` becomes `_FusedMatMul` (TF's op and attrs). ndflow
  also fuses `MatMul -> AddV2/Add` whose other operand is a rank-1 tensor as long as the
  last dimension (a bias written `x @ w + b`, as in the MNIST example). TensorFlow leaves
  that one unfused; it is the same broadcast add, so the values are the same.
- `AddN/AddV2(MatMul(a, b), Mul(y, s))` with a scalar `s` (in either order; the gradient of
  an L2-regularized weight) becomes the ndflow-internal `_MatMulAddScaled(a, b, y, s)`: the
  scaled term is added in place into the product, saving two passes over the weight-sized
  gradient and one allocation.
- `ResourceApplyGradientDescent(var, alpha, MatMul(a, b))` and
  `AssignSubVariableOp(var, Mul(MatMul(a, b), alpha))` (scalar `alpha`, either order: plain
  SGD written by hand) become the ndflow-internal `_MatMulApplyGradientDescent(var, alpha, a,
  b)`: a weight gradient that only feeds its update is accumulated into the new weight by
  the GEMM itself (two fewer passes over weight-sized buffers, one allocation fewer).
- `ResourceApplyMomentum(var, accum, lr, AddN(g, Mul(ReadVariableOp(var), s)), momentum)`
  (and the Keras form; `s` a scalar, the sum in either order: the gradient of an
  L2-regularized weight) becomes the ndflow-internal `_ResourceApplyMomentumWithDecay(var,
  accum, lr, g, s, momentum)`, when nothing else in the graph writes the variable (so its
  value at the update is the value read): the L2 term is read inside the update's one pass
  over memory (kernels/momentum_numba.py), four passes over weight-sized buffers fewer.
  The auto-mixed-precision rewrite's form of that sum, `Cast(AddN(g, Cast(Mul(...))))` with g
  and the sum in bfloat16 or float16, becomes `_ResourceApplyMomentumWithCastDecay(var,
  accum, lr, g, s, momentum)` under the same conditions: one pass reading the 16-bit g
  instead of five ops' passes (MNIST's fc1 under the bfloat16 rewrite: its decayed gradient
  and update 1.5 -> 0.5 ms in the step). Where no update takes that sum (a loss-scale
  step's If does), it becomes `_CastDecayedGradient(g, x, s)`, one pass instead of four.
- `MaxPool` whose output feeds a `MaxPoolGrad` with the same `orig_input` (and the same
  window attrs) becomes the ndflow-internal `_MaxPoolWithIndices` (value + ATen argmax
  indices), and each such MaxPoolGrad becomes `_MaxPoolGradWithIndices(orig_input, grad,
  indices)`: the backward pass no longer recomputes the argmax.

- `Relu(FusedBatchNormV3)` and `Relu(Add(FusedBatchNormV3, side))` become `_FusedBatchNormEx`
  (ndflow/passes/batch_norm_fusion.py: it is emitted at the batch norm, not at the root).
- A conv with few input channels + bias + Relu + 2x2 stride-2 MaxPool (the `_FusedConv2D`
  and `_MaxPoolWithIndices` the rules above made) and, in a training graph, its
  ReluGrad/MaxPoolGrad/Conv2DBackpropFilter/BiasAddGrad become the ndflow-internal
  `_Conv2DBiasReluMaxPool` and `_Conv2DBiasReluMaxPoolGrad` (ndflow/passes/conv_pool_fusion.py:
  matched on this pass's output, as a CNN's first block).
- Keras' RMSprop without momentum, written as ops (twelve a variable), becomes one
  `_GroupedApplyKerasRMSProp` a variable (ndflow/passes/keras_rmsprop.py).
- Last (ndflow/passes/grouped_updates.py), runs of momentum, Adam or RMSprop updates that no
  op between them touches become one `_GroupedApplyMomentum` / `_GroupedApplyAdam` /
  `_GroupedApplyKerasRMSProp`: one kernel call, and one launch or ATen's multi-tensor calls,
  for an optimizer's many small variables.

A fused op takes the name of the last op it replaces (`Relu`, `MaxPool`, ...), so fetches
of that op's output and consumers such as ReluGrad (which reads the Relu output, equal to
the fused op's output) keep working; its control inputs are the union of the fused ops'.
Switched off by the RewriterConfig toggle `remapping` (a Session's
`rewrite_options.remapping = OFF`, or `tf.config.optimizer.set_experimental_options(
{'remapping': False})`), resolved into the PassConfig; each step (STEPS) is a pipeline pass
of its own, switched off alone by its name (`set_experimental_options({'grouped_updates':
False})`, `PassConfig(disabled_passes=...)`).

A new fusion is one `Rule` in `RULES` (its pattern, an optional condition and an emitter).
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.graph import Graph, Operation
from ndflow.ops import arithmetic, nn_fused
from ndflow.passes.arithmetic_optimizer import remove_dead_ops
from ndflow.passes.batch_norm_fusion import fuse_batch_norm_activation
from ndflow.passes.conv_pool_fusion import fuse_conv_bias_relu_pool
from ndflow.passes.dropout_fusion import RULES as DROPOUT_RULES
from ndflow.passes.dynamic_loss_scale import fuse_dynamic_loss_scale
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.grouped_updates import group_updates
from ndflow.passes.keras_rmsprop import fuse_keras_rmsprop
from ndflow.passes.pass_context import PassContext
from ndflow.passes.pattern import Any as AnyTensor
from ndflow.passes.pattern import GraphView, Match, P, Rule, control_inputs, rewrite

_FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
MOMENTUM_UPDATES = ("ResourceApplyMomentum", "ResourceApplyKerasMomentum")
_READERS = ("ReadVariableOp", "VariableShape")

# g + var * s: the gradient of an L2-regularized weight (`var` the weight's handle)
DECAYED_GRAD = P({"AddN", "AddV2", "Add"}, AnyTensor("grad"),
                 P({"Mul"}, P({"ReadVariableOp"}, AnyTensor("var"), name="read", shared=True),
                   AnyTensor("scale"), name="decay", commutative=True),
                 name="add", commutative=True)
_POOL_ATTRS = ("ksize", "strides", "padding", "explicit_paddings", "data_format")


def momentum_with_decay_attrs(apply: Operation) -> dict:
    """`_ResourceApplyMomentumWithDecay`'s attrs for the update `apply` it replaces."""
    return {"T": apply.attrs["T"], "use_locking": bool(apply.attrs.get("use_locking", False)),
            "use_nesterov": bool(apply.attrs.get("use_nesterov", False)),
            "keras": apply.type == "ResourceApplyKerasMomentum"}


def only_reads(consumers, writer: Operation | None = None) -> bool:
    """Whether every op among a handle's `consumers` but `writer` only reads the variable."""
    return all(op is writer or op.type in _READERS for op in consumers)


def _float_op(op: Operation) -> bool:
    return op.attrs.get("T") in _FLOATS


# -- patterns ------------------------------------------------------------------------------------

_CONV = P({"Conv2D"}, AnyTensor("input"), AnyTensor("filter"), name="root")
_MATMUL = P({"MatMul"}, AnyTensor("input"), AnyTensor("filter"), name="root")
_CONV_BIAS = P({"BiasAdd"}, _CONV, AnyTensor("bias"), name="add")
_CONV3D_BIAS = P({"BiasAdd"}, P({"Conv3D"}, AnyTensor("input"), AnyTensor("filter"),
                                name="root"), AnyTensor("bias"), name="add")
_MATMUL_BIAS = P({"BiasAdd"}, _MATMUL, AnyTensor("bias"), name="add")
_CONV_SCALE_BIAS = P({"AddV2", "Add"},
                     P({"Mul"}, _CONV, AnyTensor("scale"), name="scale_mul", commutative=True),
                     AnyTensor("bias"), name="add", commutative=True)
_MATMUL_ADD = P({"AddV2", "Add"}, _MATMUL, AnyTensor("bias"), name="add", commutative=True)


def _act(inner):
    return P(nn_fused.ACTIVATIONS, inner, name="act")


_SCALED_ADD = P({"AddN", "AddV2", "Add"}, _MATMUL,
                P({"Mul"}, AnyTensor("scaled"), AnyTensor("scale"), commutative=True),
                name="add", commutative=True)
_APPLY_MATMUL = P({"ResourceApplyGradientDescent"}, AnyTensor("var"), AnyTensor("alpha"), _MATMUL,
                  name="apply")
_ASSIGN_SUB_SCALED_MATMUL = P(
    {"AssignSubVariableOp"}, AnyTensor("var"),
    P({"Mul"}, _MATMUL, AnyTensor("alpha"), name="scale", commutative=True), name="apply")
_APPLY_MOMENTUM_DECAY = P(set(MOMENTUM_UPDATES), AnyTensor("var"), AnyTensor("accum"),
                          AnyTensor("lr"), DECAYED_GRAD, AnyTensor("momentum"), name="apply")


def _cast_decay(x):
    """`Cast(AddN(grad, Cast(Mul(x, scale))))`: the auto-mixed-precision rewrite's sum of a
    16-bit gradient and an L2 term, taken in the 16-bit type and cast back."""
    return P({"Cast"}, P({"AddN", "AddV2", "Add"}, AnyTensor("grad"), P(
        {"Cast"}, P({"Mul"}, x, AnyTensor("scale"), name="decay", commutative=True),
        name="narrow"), name="add", commutative=True), name="widen")


_CAST_DECAYED = _cast_decay(AnyTensor("x"))
_APPLY_MOMENTUM_CAST_DECAY = P(
    set(MOMENTUM_UPDATES), AnyTensor("var"), AnyTensor("accum"), AnyTensor("lr"),
    _cast_decay(P({"ReadVariableOp"}, AnyTensor("var"), name="read", shared=True)),
    AnyTensor("momentum"), name="apply")
# a momentum update of MatMul(a, b) [+ var * s]: MatMul as the gradient, or inside the sum
_APPLY_MATMUL_MOMENTUM = P(set(MOMENTUM_UPDATES), AnyTensor("var"), AnyTensor("accum"),
                           AnyTensor("lr"), _MATMUL, AnyTensor("momentum"), name="apply")
_APPLY_MATMUL_MOMENTUM_DECAY = P(
    set(MOMENTUM_UPDATES), AnyTensor("var"), AnyTensor("accum"), AnyTensor("lr"),
    P({"AddN", "AddV2", "Add"}, _MATMUL,
      P({"Mul"}, P({"ReadVariableOp"}, AnyTensor("var"), name="read", shared=True),
        AnyTensor("scale"), name="decay", commutative=True), name="add", commutative=True),
    AnyTensor("momentum"), name="apply")
_POOL = P({"MaxPool"}, AnyTensor("input"), name="pool", shared=True)
_POOL_GRAD = P({"MaxPoolGrad"}, AnyTensor("input"), _POOL, AnyTensor("grad"), name="pool_grad")
_POOL_ROOT = P({"MaxPool"}, AnyTensor("input"), name="pool")


# -- conditions ----------------------------------------------------------------------------------

def _conv_bias(view: GraphView, m: Match) -> bool:
    conv, add = m.ops["root"], m.ops["add"]
    return (_float_op(conv) and conv.attrs.get("data_format") in ("NHWC", "NCHW")
            and add.attrs.get("data_format") == conv.attrs["data_format"])


def _conv3d_bias(view: GraphView, m: Match) -> bool:
    """A channels-last Conv3D of a type TF's `_FusedConv3D` takes (not float64), its bias
    added over the channels (grappler's remapper fuses it on CPUs)."""
    conv, add = m.ops["root"], m.ops["add"]
    return (conv.attrs.get("T") in _FLOATS[:3] and conv.attrs.get("data_format") == "NDHWC"
            and add.attrs.get("data_format") == "NHWC")


def _conv_scale_bias(view: GraphView, m: Match) -> bool:
    """An NHWC float conv whose output is scaled and shifted per output channel (rank-1
    scale and bias as long as the filter's last dimension, of its dtype), where scaling the
    filter costs no more than scaling the output would (an unknown batch counts as 1)."""
    conv, w = m.ops["root"], m.tensors["filter"]
    scale, bias, y = m.tensors["scale"], m.tensors["bias"], conv.outputs[0]
    if not (_float_op(conv) and conv.attrs.get("data_format") == "NHWC"
            and w.shape.is_fully_defined() and w.shape.rank == 4 and y.shape.rank == 4):
        return False
    channels = w.shape[3]
    if not all(t.dtype is y.dtype and t.shape.rank == 1 and t.shape[0] == channels
               for t in (scale, bias)):
        return False
    per_image = y.shape[1:]
    return (per_image.is_fully_defined()
            and w.shape.num_elements() <= per_image.num_elements() * (y.shape[0] or 1))


def _matmul_bias(view: GraphView, m: Match) -> bool:
    return _float_op(m.ops["root"])


def _matmul_add_bias(view: GraphView, m: Match) -> bool:
    """`x + b` (either order) with `b` a bias over x's last dimension."""
    x, b = m.ops["root"].outputs[0], m.tensors["bias"]
    last = x.shape[-1] if x.shape.rank else None
    return (_float_op(m.ops["root"]) and b is not x and b.dtype is x.dtype
            and b.shape.rank == 1 and last is not None and b.shape[0] == last)


def _scaled_add(view: GraphView, m: Match) -> bool:
    out, y, s = m.ops["add"].outputs[0], m.tensors["scaled"], m.tensors["scale"]
    product = m.ops["root"].outputs[0]
    return (_float_op(m.ops["add"]) and s.shape.rank == 0 and y.shape.is_fully_defined()
            and product.shape == y.shape and y.shape == out.shape and y.dtype is out.dtype)


def _matmul_update(view: GraphView, m: Match) -> bool:
    """A float product of known matrix shape and a scalar alpha of its dtype; for the
    hand-written form, the variable's dtype is the product's."""
    product, alpha = m.ops["root"].outputs[0], m.tensors["alpha"]
    apply = m.ops["apply"]
    dtype_ok = (apply.attrs.get("dtype", product.dtype) is product.dtype
                if apply.type == "AssignSubVariableOp" else apply.attrs["T"] is product.dtype)
    return (_float_op(m.ops["root"]) and alpha.shape.rank == 0 and alpha.dtype is product.dtype
            and dtype_ok)


def _momentum_with_decay(view: GraphView, m: Match) -> bool:
    """A float update whose L2 term reads the updated variable, a scalar scale of its dtype,
    and no other op writing that variable (every other reader of the handle only reads)."""
    apply, grad, scale = m.ops["apply"], m.tensors["grad"], m.tensors["scale"]
    decayed = m.ops["decay"].outputs[0]
    return (_float_op(apply) and scale.shape.rank == 0 and scale.dtype is apply.attrs["T"]
            and grad.dtype is apply.attrs["T"] and grad.shape == decayed.shape
            and decayed.shape.is_fully_defined()
            and only_reads(view.consumers[m.tensors["var"]], apply))


def _cast_decayed(view: GraphView, m: Match) -> bool:
    """`_cast_decay`'s casts between a float type T and a 16-bit one (no truncation), the
    gradient and the sum of the 16-bit type, the product and a scalar scale of type T."""
    add, narrow, widen, decay = (m.ops[k] for k in ("add", "narrow", "widen", "decay"))
    grad, scale, decayed = m.tensors["grad"], m.tensors["scale"], decay.outputs[0]
    low, t = add.attrs.get("T"), widen.attrs.get("DstT")
    return (low in (dtypes.float16, dtypes.bfloat16) and t in _FLOATS and low is not t
            and narrow.attrs.get("SrcT") is t and narrow.attrs.get("DstT") is low
            and widen.attrs.get("SrcT") is low and not narrow.attrs.get("Truncate")
            and not widen.attrs.get("Truncate") and decay.attrs.get("T") is t
            and grad.dtype is low and scale.shape.rank == 0 and scale.dtype is t
            and decayed.shape.is_fully_defined() and grad.shape == decayed.shape)


def _momentum_with_cast_decay(view: GraphView, m: Match) -> bool:
    """`_cast_decayed` as an update's gradient, of the update's type, with nothing else
    writing the variable (`_momentum_with_decay`'s condition)."""
    apply = m.ops["apply"]
    return (_cast_decayed(view, m) and apply.attrs["T"] is m.ops["widen"].attrs.get("DstT")
            and only_reads(view.consumers[m.tensors["var"]], apply))


# Weights from this size get their gradient accumulated by the GEMM (a smaller one's update
# is grouped with the model's other small ones instead: grouped_updates.py).
MATMUL_MOMENTUM_MIN = 1 << 16


def _matmul_momentum(view: GraphView, m: Match) -> bool:
    """A non-Nesterov float update of a large weight whose gradient is the product (plus the
    L2 term of the weight itself, a scalar scale of its dtype), with nothing else writing
    the variable."""
    apply, product = m.ops["apply"], m.ops["root"].outputs[0]
    shape = product.shape
    if not (_float_op(apply) and _float_op(m.ops["root"])
            and product.dtype is apply.attrs["T"] and not apply.attrs.get("use_nesterov")
            and shape.is_fully_defined() and shape.num_elements() >= MATMUL_MOMENTUM_MIN):
        return False
    if "decay" in m.ops:
        scale = m.tensors["scale"]
        if not (scale.shape.rank == 0 and scale.dtype is product.dtype
                and m.ops["decay"].outputs[0].shape == shape):
            return False
    return only_reads(view.consumers[m.tensors["var"]], apply)


def _reuses_argmax(grad: Operation, pool: Operation) -> bool:
    """A MaxPoolGrad of `pool` that can scatter with the pool's argmax indices."""
    return (grad.inputs[1] is pool.outputs[0] and grad.inputs[0] is pool.inputs[0]
            and grad.device == pool.device and grad.attrs.get("T") == pool.attrs.get("T")
            and all(grad.attrs.get(k) == pool.attrs.get(k) for k in _POOL_ATTRS))


def _pool_with_grads(view: GraphView, m: Match) -> bool:
    pool = m.ops["pool"]
    y = pool.outputs[0]
    return (_float_op(pool) and y.name not in view.fed
            and any(c.type == "MaxPoolGrad" and _reuses_argmax(c, pool)
                    for c in view.consumers[y]))


def _pool_grad(view: GraphView, m: Match) -> bool:
    return _pool_with_grads(view, m) and _reuses_argmax(m.ops["pool_grad"], m.ops["pool"])


# -- replacements --------------------------------------------------------------------------------

def _fused_attrs(op_def, src: Operation, act: Operation | None) -> dict:
    attrs = {k: v for k, v in src.attrs.items() if k in op_def.attrs}
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


def _emit(rw: GraphRewriter, m: Match, op_def, inputs: list, attrs: dict) -> Operation:
    """`op_def` on `inputs` (tensors of the output graph) replacing the pattern's root: its
    name, output and device, the union of the replaced ops' control inputs."""
    out = m.root.outputs[0]
    return rw.add_op(op_def, inputs, attrs, [(out.dtype, out.shape)], m.root.name,
                     control_inputs(rw, m), m.root.device)


def _emit_bias_fusion(op_def):
    def emit(rw: GraphRewriter, m: Match) -> Operation:
        src = m.ops["root"]
        inputs = [rw.mapped(m.tensors[k]) for k in ("input", "filter", "bias")]
        return _emit(rw, m, op_def, inputs, _fused_attrs(op_def, src, m.ops.get("act")))
    return emit


def _emit_conv_scale_bias(rw: GraphRewriter, m: Match) -> Operation:
    conv = m.ops["root"]
    w = m.tensors["filter"]
    folded = rw.add_op(arithmetic.Mul, [rw.mapped(w), rw.mapped(m.tensors["scale"])],
                       {"T": w.dtype}, [(w.dtype, w.shape)], f"{conv.name}/folded_filter", [],
                       conv.device)
    inputs = [rw.mapped(m.tensors["input"]), folded.outputs[0], rw.mapped(m.tensors["bias"])]
    return _emit(rw, m, nn_fused.FusedConv2D, inputs,
                 _fused_attrs(nn_fused.FusedConv2D, conv, m.ops.get("act")))


def _emit_scaled_add(rw: GraphRewriter, m: Match) -> Operation:
    src = m.ops["root"]
    inputs = [rw.mapped(m.tensors[k]) for k in ("input", "filter", "scaled", "scale")]
    return _emit(rw, m, nn_fused.MatMulAddScaled, inputs,
                 {k: src.attrs[k] for k in ("transpose_a", "transpose_b", "T")})


def _emit_matmul_update(rw: GraphRewriter, m: Match) -> Operation:
    mm, apply = m.ops["root"], m.ops["apply"]
    inputs = [rw.mapped(m.tensors[k]) for k in ("var", "alpha", "input", "filter")]
    attrs = {k: mm.attrs[k] for k in ("transpose_a", "transpose_b", "T")}
    attrs["use_locking"] = bool(apply.attrs.get("use_locking", False))
    return rw.add_op(nn_fused.MatMulApplyGradientDescent, inputs, attrs, [], apply.name,
                     control_inputs(rw, m), apply.device)


def _emit_matmul_momentum(rw: GraphRewriter, m: Match) -> Operation:
    mm, apply = m.ops["root"], m.ops["apply"]
    var, accum, lr, a, b, mu = (rw.mapped(m.tensors[k]) for k in ("var", "accum", "lr", "input",
                                                                   "filter", "momentum"))
    scale = (rw.mapped(m.tensors["scale"]) if "decay" in m.ops else
             rw.scalar_const(0.0, apply.attrs["T"], f"{apply.name}/no_decay", apply.device))
    attrs = {k: mm.attrs[k] for k in ("transpose_a", "transpose_b", "T")}
    attrs.update(use_locking=bool(apply.attrs.get("use_locking", False)),
                 keras=apply.type == "ResourceApplyKerasMomentum")
    return rw.add_op(nn_fused.MatMulApplyMomentum, [var, accum, lr, a, b, scale, mu], attrs, [],
                     apply.name, control_inputs(rw, m), apply.device)


def _emit_momentum_with_decay(rw: GraphRewriter, m: Match) -> Operation:
    apply = m.ops["apply"]
    inputs = [rw.mapped(m.tensors[k]) for k in ("var", "accum", "lr", "grad", "scale",
                                                 "momentum")]
    return rw.add_op(nn_fused.ResourceApplyMomentumWithDecay, inputs,
                     momentum_with_decay_attrs(apply), [], apply.name, control_inputs(rw, m),
                     apply.device)


def _emit_momentum_with_cast_decay(rw: GraphRewriter, m: Match) -> Operation:
    apply = m.ops["apply"]
    inputs = [rw.mapped(m.tensors[k]) for k in ("var", "accum", "lr", "grad", "scale",
                                                 "momentum")]
    attrs = dict(momentum_with_decay_attrs(apply), Tgrad=m.tensors["grad"].dtype)
    return rw.add_op(nn_fused.ResourceApplyMomentumWithCastDecay, inputs, attrs, [],
                     apply.name, control_inputs(rw, m), apply.device)


def _emit_cast_decayed(rw: GraphRewriter, m: Match) -> Operation:
    y = m.root.outputs[0]
    inputs = [rw.mapped(m.tensors[k]) for k in ("grad", "x", "scale")]
    return rw.add_op(nn_fused.CastDecayedGradient, inputs,
                     {"T": y.dtype, "Tgrad": m.tensors["grad"].dtype}, [(y.dtype, y.shape)],
                     m.root.name, control_inputs(rw, m), m.root.device)


def _pool_attrs(op: Operation) -> dict:
    attrs = {k: op.attrs.get(k) for k in _POOL_ATTRS}
    attrs["explicit_paddings"] = list(attrs["explicit_paddings"] or [])
    attrs["T"] = op.attrs["T"]
    return attrs


def _emit_pool(rw: GraphRewriter, m: Match) -> Operation:
    pool = m.root
    y = pool.outputs[0]
    return rw.add_op(nn_fused.MaxPoolWithIndices, [rw.mapped(pool.inputs[0])],
                     _pool_attrs(pool), [(y.dtype, y.shape), (dtypes.int64, y.shape)],
                     pool.name, control_inputs(rw, m), pool.device)


def _emit_pool_grad(rw: GraphRewriter, m: Match) -> Operation:
    indices = rw.map[m.ops["pool"]].outputs[1]  # the pool was replaced first (graph order)
    inputs = [rw.mapped(m.tensors["input"]), rw.mapped(m.tensors["grad"]), indices]
    return _emit(rw, m, nn_fused.MaxPoolGradWithIndices, inputs, _pool_attrs(m.root))


RULES: list[Rule] = [
    Rule("conv_bias_activation", _act(_CONV_BIAS), _emit_bias_fusion(nn_fused.FusedConv2D),
         _conv_bias),
    Rule("conv_bias", _CONV_BIAS, _emit_bias_fusion(nn_fused.FusedConv2D), _conv_bias),
    Rule("conv3d_bias_activation", _act(_CONV3D_BIAS), _emit_bias_fusion(nn_fused.FusedConv3D),
         _conv3d_bias),
    Rule("conv3d_bias", _CONV3D_BIAS, _emit_bias_fusion(nn_fused.FusedConv3D), _conv3d_bias),
    Rule("conv_scale_bias_activation", _act(_CONV_SCALE_BIAS), _emit_conv_scale_bias,
         _conv_scale_bias),
    Rule("conv_scale_bias", _CONV_SCALE_BIAS, _emit_conv_scale_bias, _conv_scale_bias),
    Rule("matmul_bias_activation", _act(_MATMUL_BIAS),
         _emit_bias_fusion(nn_fused.FusedMatMul), _matmul_bias),
    Rule("matmul_bias", _MATMUL_BIAS, _emit_bias_fusion(nn_fused.FusedMatMul), _matmul_bias),
    Rule("matmul_add_activation", _act(_MATMUL_ADD), _emit_bias_fusion(nn_fused.FusedMatMul),
         _matmul_add_bias),
    Rule("matmul_add", _MATMUL_ADD, _emit_bias_fusion(nn_fused.FusedMatMul), _matmul_add_bias),
    Rule("matmul_add_scaled", _SCALED_ADD, _emit_scaled_add, _scaled_add),
    Rule("matmul_momentum_with_decay", _APPLY_MATMUL_MOMENTUM_DECAY, _emit_matmul_momentum,
         _matmul_momentum),
    Rule("matmul_momentum", _APPLY_MATMUL_MOMENTUM, _emit_matmul_momentum, _matmul_momentum),
    Rule("momentum_with_decay", _APPLY_MOMENTUM_DECAY, _emit_momentum_with_decay,
         _momentum_with_decay),
    Rule("momentum_with_cast_decay", _APPLY_MOMENTUM_CAST_DECAY,
         _emit_momentum_with_cast_decay, _momentum_with_cast_decay),
    Rule("cast_decayed_gradient", _CAST_DECAYED, _emit_cast_decayed, _cast_decayed),
    Rule("matmul_apply_gradient_descent", _APPLY_MATMUL, _emit_matmul_update, _matmul_update),
    Rule("matmul_assign_sub_scaled", _ASSIGN_SUB_SCALED_MATMUL, _emit_matmul_update,
         _matmul_update),
    Rule("max_pool_grad_with_indices", _POOL_GRAD, _emit_pool_grad, _pool_grad),
    Rule("max_pool_with_indices", _POOL_ROOT, _emit_pool, _pool_with_grads),
    *DROPOUT_RULES,
]


def tf_fusions(graph: Graph, ctx: PassContext) -> Graph:
    """TensorFlow's own remapper fusions: the RULES, then batch norm + activation."""
    return fuse_batch_norm_activation(rewrite(graph, ctx, RULES), ctx)


# The remapper's steps in their order. Each is a pipeline pass of its own (passes/pipeline.py)
# in the group "remapper": the `remapping` toggle or the group's name switches all of them
# off, a step's name that step alone (PassConfig.disabled_passes; outside a Session
# `tf.config.optimizer.set_experimental_options({name: False})`).
STEPS: tuple = (
    ("dynamic_loss_scale", fuse_dynamic_loss_scale),
    ("remapper", tf_fusions),
    ("conv_pool_fusion", fuse_conv_bias_relu_pool),
    ("keras_rmsprop", fuse_keras_rmsprop),
    ("grouped_updates", group_updates),
    # the fused ops leave their replaced ops' constants (a dropout's rate, scale) dead
    ("remapper_dead_ops", remove_dead_ops),
)
GROUP = "remapper"


def remapper(graph: Graph, ctx: PassContext) -> Graph:
    """Every step of STEPS that `ctx.config` enables, in order (the pipeline runs them as
    passes of their own; this is for callers that want the remapper alone)."""
    for name, step in STEPS:
        if ctx.config.pass_enabled(name, "remapping", GROUP):
            graph = step(graph, ctx)
    return graph
