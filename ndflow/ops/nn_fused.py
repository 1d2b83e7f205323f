"""Fused ops produced by the remapper pass (ndflow/passes/remapper.py); never built by users.

- `_FusedConv2D`, `_FusedConv3D` and `_FusedMatMul` are TensorFlow's internal ops of the same
  names, with TensorFlow's inputs and attrs (`fused_ops` such as ["BiasAdd", "Relu"],
  `num_args`, `epsilon`, `leakyrelu_alpha`, plus the convolution's or MatMul's attrs), so
  graphs compare with
  grappler's output node by node. ndflow also accepts float64 in `_FusedMatMul` (TF's CPU
  kernel does not), because the remapper fuses float64 graphs too.
- `_FusedBatchNormEx` is TensorFlow's internal op (FusedBatchNormV3's inputs plus
  `num_side_inputs` side inputs added before the activation; `activation_mode` "Identity"
  or "Relu"; the six outputs of FusedBatchNormV3). ndflow also accepts T/U double, as its
  FusedBatchNormV3 does, so fused graphs can be checked in float64.
- `_MatMulAddScaled(a, b, y, scale)` = `a @ b + y * scale` (scale a scalar) is
  ndflow-internal: the gradient of a weight with L2 regularization, `AddN(MatMul(..),
  Mul(w, c))`, in one GEMM plus one in-place multiply-add on the GEMM's own output.
- `_MatMulApplyGradientDescent(var, alpha, a, b)`: `var -= alpha * (a @ b)` is
  ndflow-internal: a weight's gradient product that only feeds its plain SGD update
  (`ResourceApplyGradientDescent`, or `assign_sub(lr * g)` written by hand) becomes one GEMM
  accumulating into a copy of the weight, instead of a GEMM writing the gradient, a scaling
  pass and an update pass over weight-sized buffers.
- `_MatMulApplyMomentum(var, accum, lr, a, b, scale, momentum)` is ndflow-internal: a large
  weight's momentum update (TF's or, with `keras`, Keras' form; not Nesterov) of the gradient
  `a @ b + scale * var` (scale 0: no L2 term), the product accumulated into the accumulator
  by the GEMM (`beta` = momentum), then one pass applying the L2 term and the accumulator to
  the weight: the gradient is never written, two passes over weight-sized buffers fewer.
- `_ResourceApplyMomentumWithDecay` is ndflow-internal: a (Keras) momentum update whose
  gradient is `grad + scale * var`, the L2 term of the weight read in the update itself.
- `_ResourceApplyMomentumWithCastDecay` is the same for the auto-mixed-precision rewrite's
  form of that gradient: the L2 term cast to the gradient's 16-bit type, the sum taken there
  and cast back (`T(Tgrad(Tgrad(scale * var) + grad))`, each step rounded as those ops round).
- `_CastDecayedGradient(grad, x, scale)` is that gradient alone, where no update takes it
  (a loss-scale step's, which its If's branch applies).
- `_GroupedApplyMomentum` and `_GroupedApplyAdam` are ndflow-internal (made by
  ndflow/passes/grouped_updates.py): N (Keras) momentum updates (`decay[i]`: of grad + scale
  * var), or N `ResourceApplyAdam`s, applied by one op, so a model of many small variables
  pays one kernel call, and one launch or ATen's multi-tensor (`_foreach`) calls, instead
  of one call and several ATen calls per variable; `_GroupedSparseApplyKerasAdam` the same
  for N `_ResourceSparseApplyKerasAdam`s (Keras' Adam of Embedding tables).
- `_MaxPoolWithIndices` / `_MaxPoolGradWithIndices` are ndflow-internal (no TensorFlow
  counterpart): a MaxPool that also returns ATen's argmax indices (int64, flat positions in
  each (n, c) plane of the possibly padded input) and the MaxPoolGrad that scatters with
  them instead of recomputing the argmax. The index format is ATen's and differs from TF's
  MaxPoolWithArgmax; the indices never leave the optimized graph.
- `_Conv2DBiasReluMaxPool(input, filter, bias)` is ndflow-internal: Conv2D (stride 1) +
  BiasAdd + Relu + a 2x2 stride-2 MaxPool (`pool_padding` SAME or VALID), NHWC float32 or
  bfloat16 (computed in float32 from the bfloat16 values, rounded once at the end),
  returning the pooled values and a uint8 code per pooled value: the winning window position
  (0..3, row-major) or 4 where the pooled value is not > 0 (where ReluGrad zeroes the
  gradient). `_Conv2DBiasReluMaxPoolGrad(input, grad, codes)` returns the filter and bias
  gradients from the gradient of the pooled values, ReluGrad applied through the codes
  (`filter_shape` is the conv's HWIO filter shape). The full-resolution activation never
  exists.

- `_DropoutSelect(u, x)` is ndflow-internal (passes/dropout_fusion.py): `x * scale` where
  `u >= rate`, else 0, in one pass: a dropout's `SelectV2(GreaterEqual(u, rate), Mul(x,
  scale), 0)`, and its gradient's `Mul(SelectV2(GreaterEqual(u, rate), dy, 0), scale)`.

None of these ops has a gradient (`gradient_undefined`, as TensorFlow's fused ops): the
remapper runs on graphs whose gradients are already built.
"""

from __future__ import annotations

from ndflow.core.shapes import TensorShape
from ndflow.ops import linalg, nn_conv, nn_conv3d, nn_norm, nn_pool
from ndflow.ops.nn_common import (
    DATA_FORMAT,
    DILATIONS,
    EXPLICIT_PADDINGS,
    FLOAT_T,
    PADDING,
    PADDING_NO_EXPLICIT,
    check_rank,
)
from ndflow.ops.op_def import op_def

_FUSED_ATTRS = ["fused_ops: list(string) = []", "epsilon: float = 0.0001",
                "leakyrelu_alpha: float = 0.2"]
# Activations the remapper folds into a fused op, in TF's spelling of `fused_ops`.
ACTIVATIONS = ("Relu", "Relu6", "Elu", "LeakyRelu")


def _fused_conv_shape(ctx):
    return nn_conv.Conv2D.shape_fn(ctx)


def _fused_matmul_shape(ctx):
    return linalg.MatMul.shape_fn(ctx)


FusedConv2D = op_def(
    "_FusedConv2D",
    inputs=["input: T", "filter: T", "args: TArgs", "host_args: num_host_args * float"],
    outputs=["output: T"],
    attrs=[FLOAT_T, "TArgs: list(type)", "num_args: int >= 0", "num_host_args: int >= 0 = 0",
           "strides: list(int)", PADDING, EXPLICIT_PADDINGS,
           "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "filter_format: {'HWIO'} = 'HWIO'",
           DILATIONS, "use_cudnn_on_gpu: bool = true", *_FUSED_ATTRS],
    shape=_fused_conv_shape, gradient_undefined=True,
    doc="Conv2D + BiasAdd [+ activation] in one kernel (TensorFlow's internal op).")

FusedConv3D = op_def(
    "_FusedConv3D", inputs=["input: T", "filter: T", "args: num_args * T"],
    outputs=["output: T"],
    attrs=[*nn_conv3d.CONV3D_ATTRS, "num_args: int >= 0", "padding_list: list(int) = []",
           *_FUSED_ATTRS],
    shape=nn_conv3d.Conv3D.shape_fn, gradient_undefined=True,
    doc="Conv3D + BiasAdd [+ activation] in one kernel (TensorFlow's internal op, which "
        "grappler's remapper makes on CPUs).")

FusedMatMul = op_def(
    "_FusedMatMul", inputs=["a: T", "b: T", "args: num_args * T"], outputs=["product: T"],
    attrs=["transpose_a: bool = false", "transpose_b: bool = false", FLOAT_T,
           "num_args: int >= 0", *_FUSED_ATTRS],
    shape=_fused_matmul_shape, gradient_undefined=True,
    doc="MatMul + BiasAdd [+ activation] in one kernel (TensorFlow's internal op).")


def _matmul_add_scaled_shape(ctx):
    out = linalg.MatMul.shape_fn(ctx)[0]
    y = ctx.shapes[2]
    if ctx.shapes[3].rank not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {ctx.shapes[3].rank}")
    if not out.is_compatible_with(y):
        raise ValueError(f"Incompatible shapes: {out} vs. {y}")
    return [out.merge_with(y)]


MatMulAddScaled = op_def(
    "_MatMulAddScaled", inputs=["a: T", "b: T", "y: T", "scale: T"], outputs=["output: T"],
    attrs=["transpose_a: bool = false", "transpose_b: bool = false", FLOAT_T],
    shape=_matmul_add_scaled_shape, gradient_undefined=True,
    doc="ndflow-internal: MatMul(a, b) + y * scale with a scalar scale, in place on the "
        "product.")


def _pool_with_indices_shape(ctx):
    out = nn_pool.MaxPool.shape_fn(ctx)[0]
    return [out, out]


def _pool_grad_with_indices_shape(ctx):
    x = check_rank(ctx.shapes[0], 4)
    g = check_rank(ctx.shapes[1], 4)
    i = check_rank(ctx.shapes[2], 4)
    for a, b in zip(g.dims or [], i.dims or []):
        if a is not None and b is not None and a != b:
            raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
    return [TensorShape(x.dims)]


def _check_ranks(ctx, ranks: tuple) -> list:
    """No outputs; each (input index, name, rank) of `ranks` must have that rank (the
    remapper builds these ops from valid ops, whose own shape rules already held)."""
    for i, what, rank in ranks:
        r = ctx.shapes[i].rank
        if r is not None and r != rank:
            raise ValueError(f"Shape must be rank {rank} but is rank {r} for "
                             f"'{ctx.op_name}' ({what})")
    return []


def _matmul_apply_shape(ctx):
    """alpha is a scalar and a, b are matrices."""
    return _check_ranks(ctx, ((1, "alpha", 0), (2, "a", 2), (3, "b", 2)))


MatMulApplyGradientDescent = op_def(
    "_MatMulApplyGradientDescent", inputs=["var: resource", "alpha: T", "a: T", "b: T"],
    outputs=[], attrs=["transpose_a: bool = false", "transpose_b: bool = false", FLOAT_T,
                       "use_locking: bool = false"],
    shape=_matmul_apply_shape, gradient_undefined=True, stateful=True,
    doc="ndflow-internal: var -= alpha * MatMul(a, b) in one GEMM.")


def _matmul_momentum_shape(ctx):
    """lr, scale and momentum are scalars and a, b matrices."""
    return _check_ranks(ctx, ((2, "lr", 0), (3, "a", 2), (4, "b", 2), (5, "scale", 0),
                              (6, "momentum", 0)))


MatMulApplyMomentum = op_def(
    "_MatMulApplyMomentum",
    inputs=["var: resource", "accum: resource", "lr: T", "a: T", "b: T", "scale: T",
            "momentum: T"],
    outputs=[],
    attrs=["transpose_a: bool = false", "transpose_b: bool = false", FLOAT_T,
           "use_locking: bool = false", "keras: bool = false"],
    shape=_matmul_momentum_shape, gradient_undefined=True, stateful=True,
    doc="ndflow-internal: the (Keras) momentum update of grad = MatMul(a, b) + scale * var, "
        "the product accumulated into accum by the GEMM itself.")


def _require_scalar(ctx, i: int, what: str) -> None:
    """Input i (named `what` in the message) must be a scalar."""
    r = ctx.shapes[i].rank
    if r is not None and r != 0:
        raise ValueError(f"Shape must be rank 0 but is rank {r} for '{ctx.op_name}' ({what})")


def _momentum_with_decay_shape(ctx):
    """No outputs; lr, scale and momentum are scalars, grad has var's shape (the remapper
    builds this op from a valid ResourceApplyMomentum, whose own shape rule already held)."""
    for i, what in ((2, "lr"), (4, "scale"), (5, "momentum")):
        _require_scalar(ctx, i, what)
    return []


ResourceApplyMomentumWithDecay = op_def(
    "_ResourceApplyMomentumWithDecay",
    inputs=["var: resource", "accum: resource", "lr: T", "grad: T", "scale: T", "momentum: T"],
    outputs=[], attrs=[FLOAT_T, "use_locking: bool = false", "use_nesterov: bool = false",
                       "keras: bool = false"],
    shape=_momentum_with_decay_shape, gradient_undefined=True, stateful=True,
    doc="ndflow-internal: ResourceApplyMomentum (ResourceApplyKerasMomentum with `keras`) "
        "of the gradient grad + scale * var, in one pass.")

def _cast_decayed_shape(ctx):
    """grad's shape (x has it: the remapper builds this op from a valid AddN)."""
    _require_scalar(ctx, 2, "scale")
    return [ctx.shapes[0]]


CastDecayedGradient = op_def(
    "_CastDecayedGradient", inputs=["grad: Tgrad", "x: T", "scale: T"], outputs=["y: T"],
    attrs=[FLOAT_T, "Tgrad: {half, bfloat16}"], shape=_cast_decayed_shape,
    gradient_undefined=True,
    doc="ndflow-internal: T(Tgrad(Tgrad(x * scale) + grad)) in one pass (the mixed-precision "
        "rewrite's sum of a 16-bit gradient and a weight's L2 term, cast back).")


ResourceApplyMomentumWithCastDecay = op_def(
    "_ResourceApplyMomentumWithCastDecay",
    inputs=["var: resource", "accum: resource", "lr: T", "grad: Tgrad", "scale: T",
            "momentum: T"],
    outputs=[], attrs=[FLOAT_T, "Tgrad: {half, bfloat16}", "use_locking: bool = false",
                       "use_nesterov: bool = false", "keras: bool = false"],
    shape=_momentum_with_decay_shape, gradient_undefined=True, stateful=True,
    doc="ndflow-internal: ResourceApplyMomentum (ResourceApplyKerasMomentum with `keras`) "
        "of the gradient T(Tgrad(Tgrad(scale * var) + grad)), in one pass.")


_MOMENTUM_SCALARS = ((2, "lr"), (4, "scale"), (5, "momentum"))


def _check_update_scalars(ctx, scalars=_MOMENTUM_SCALARS) -> int:
    """N updates' scalar inputs (`scalars`: (column, name); by default the momentum ops'
    lr, scale and momentum of var, accum, lr, grad, scale, momentum, N of each) must be
    scalars; returns N."""
    n = ctx.attrs["N"]
    for k, what in scalars:
        for i in range(k * n, (k + 1) * n):
            _require_scalar(ctx, i, what)
    return n


def _grouped_update(name, inputs, attrs, doc, scalars=_MOMENTUM_SCALARS):
    """An ndflow-internal op without outputs applying N updates together; its shape function
    checks that the `scalars` inputs (see `_check_update_scalars`) are scalars."""
    def shape(ctx):
        _check_update_scalars(ctx, scalars)
        return []

    return op_def(name, inputs=inputs, outputs=[], attrs=["N: int >= 1", FLOAT_T, *attrs],
                  shape=shape, gradient_undefined=True, stateful=True, doc=doc)


GroupedApplyMomentum = _grouped_update(
    "_GroupedApplyMomentum",
    ["var: N * resource", "accum: N * resource", "lr: N * T", "grad: N * T", "scale: N * T",
     "momentum: N * T"],
    ["use_nesterov: list(int)", "keras: list(int)", "decay: list(int)"],
    "ndflow-internal: N momentum updates (of grad + scale * var where `decay`) applied "
    "together.")
GroupedApplyAdam = _grouped_update(
    "_GroupedApplyAdam",
    ["var: N * resource", "m: N * resource", "v: N * resource", "beta1_power: N * T",
     "beta2_power: N * T", "lr: N * T", "beta1: N * T", "beta2: N * T", "epsilon: N * T",
     "grad: N * T"],
    ["use_nesterov: list(int)"], "ndflow-internal: N ResourceApplyAdam updates applied together.",
    scalars=((3, "beta1_power"), (4, "beta2_power"), (5, "lr"), (6, "beta1"), (7, "beta2"),
             (8, "epsilon")))
GroupedSparseApplyKerasAdam = _grouped_update(
    "_GroupedSparseApplyKerasAdam",
    ["var: N * resource", "m: N * resource", "v: N * resource", "beta1_power: N * T",
     "beta2_power: N * T", "lr: N * T", "beta1: N * T", "beta2: N * T", "epsilon: N * T",
     "grad: N * T", "indices: N * Tindices"],
    ["Tindices: {int32, int64}"],
    "ndflow-internal: N `_ResourceSparseApplyKerasAdam` updates (a model's embeddings) "
    "applied together.",
    scalars=((3, "beta1_power"), (4, "beta2_power"), (5, "lr"), (6, "beta1"), (7, "beta2"),
             (8, "epsilon")))
GroupedApplyKerasRMSProp = _grouped_update(
    "_GroupedApplyKerasRMSProp",
    ["var: N * resource", "ms: N * resource", "lr: N * T", "rho: N * T",
     "one_minus_rho: N * T", "epsilon: N * T", "grad: N * T"],
    [], "ndflow-internal: N updates of Keras' RMSprop without momentum (ms = rho * ms + "
    "(1 - rho) * grad^2; var -= lr * grad / sqrt(ms + epsilon)), the ops Keras emits for "
    "each, applied together.",
    scalars=((2, "lr"), (3, "rho"), (4, "one_minus_rho"), (5, "epsilon")))


def _conv_pool_shape(ctx, x, kh, kw, depth) -> TensorShape:
    conv = nn_conv.conv_output_shape(ctx, x, kh, kw, depth)
    return nn_pool.pool_output_shape({"data_format": "NHWC", "ksize": [1, 2, 2, 1],
                                      "strides": [1, 2, 2, 1],
                                      "padding": ctx.attrs["pool_padding"]}, conv)


def _conv_bias_relu_pool_shape(ctx):
    x = check_rank(ctx.shapes[0], 4)
    f = check_rank(ctx.shapes[1], 4)
    if x[3] is not None and f[2] is not None and x[3] != f[2]:
        raise ValueError(f"Dimensions must be equal, but are {x[3]} and {f[2]}")
    out = _conv_pool_shape(ctx, x, f[0], f[1], f[3])
    return [out, out]


def _conv_bias_relu_pool_grad_shape(ctx):
    x = check_rank(ctx.shapes[0], 4)
    kh, kw, cin, cout = (int(d) for d in ctx.attrs["filter_shape"])
    pooled = _conv_pool_shape(ctx, x, kh, kw, cout)
    for t in ctx.shapes[1:3]:
        if not check_rank(t, 4).is_compatible_with(pooled):
            raise ValueError(f"Incompatible shapes: {t} vs. {pooled}")
    return [TensorShape([kh, kw, cin, cout]), TensorShape([cout])]


_CONV_POOL_ATTRS = ["T: {bfloat16, float}", "strides: list(int)", PADDING_NO_EXPLICIT,
                    "data_format: {'NHWC'} = 'NHWC'", DILATIONS,
                    "pool_padding: {'SAME', 'VALID'}"]

Conv2DBiasReluMaxPool = op_def(
    "_Conv2DBiasReluMaxPool", inputs=["input: T", "filter: T", "bias: T"],
    outputs=["output: T", "codes: uint8"], attrs=_CONV_POOL_ATTRS,
    shape=_conv_bias_relu_pool_shape, gradient_undefined=True,
    doc="ndflow-internal: MaxPool 2x2/2 of Relu(Conv2D + BiasAdd), with window codes.")

Conv2DBiasReluMaxPoolGrad = op_def(
    "_Conv2DBiasReluMaxPoolGrad", inputs=["input: T", "grad: T", "codes: uint8"],
    outputs=["filter_backprop: T", "bias_backprop: T"],
    attrs=[*_CONV_POOL_ATTRS, "filter_shape: list(int)"],
    shape=_conv_bias_relu_pool_grad_shape, gradient_undefined=True,
    doc="ndflow-internal: filter and bias gradients of _Conv2DBiasReluMaxPool from the "
        "pooled gradient.")


_POOL_ATTRS = ["ksize: list(int)", "strides: list(int)", PADDING, EXPLICIT_PADDINGS,
               DATA_FORMAT, FLOAT_T]

MaxPoolWithIndices = op_def(
    "_MaxPoolWithIndices", inputs=["input: T"], outputs=["output: T", "indices: int64"],
    attrs=_POOL_ATTRS, shape=_pool_with_indices_shape, gradient_undefined=True,
    doc="ndflow-internal: MaxPool that also returns ATen's argmax indices (not TF's format).")

MaxPoolGradWithIndices = op_def(
    "_MaxPoolGradWithIndices", inputs=["orig_input: T", "grad: T", "indices: int64"],
    outputs=["output: T"], attrs=_POOL_ATTRS, shape=_pool_grad_with_indices_shape,
    gradient_undefined=True,
    doc="ndflow-internal: MaxPoolGrad scattering `grad` to `_MaxPoolWithIndices`' indices.")


def _fused_batch_norm_ex_shape(ctx):
    out = nn_norm.FusedBatchNormV3.shape_fn(ctx)
    for side in ctx.shapes[5:]:
        if not out[0].is_compatible_with(side):
            raise ValueError(f"Incompatible shapes: {out[0]} vs. {side}")
        out[0] = out[0].merge_with(side)
    return out


FusedBatchNormEx = op_def(
    "_FusedBatchNormEx",
    inputs=["x: T", "scale: U", "offset: U", "mean: U", "variance: U",
            "side_input: num_side_inputs * T"],
    outputs=["y: T", "batch_mean: U", "batch_variance: U", "reserve_space_1: U",
             "reserve_space_2: U", "reserve_space_3: U"],
    attrs=["T: {half, float, bfloat16, double}", "U: {float, double}",
           "epsilon: float = 0.0001", "exponential_avg_factor: float = 1.0",
           "num_side_inputs: int >= 0 = 0", "activation_mode: string = 'Identity'",
           "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "is_training: bool = true"],
    shape=_fused_batch_norm_ex_shape, gradient_undefined=True,
    doc="FusedBatchNormV3 [+ side input] + activation in one kernel (TensorFlow's internal "
        "op).")


def _dropout_select_shape(ctx):
    u, x = ctx.shapes
    if u.rank is not None and x.rank is not None and u.is_fully_defined() and \
            x.is_fully_defined() and u.as_list() != x.as_list():
        raise ValueError(f"Dimensions must be equal for '{ctx.op_name}': "
                         f"{u.as_list()} and {x.as_list()}")
    return [x]


DropoutSelect = op_def(
    "_DropoutSelect", inputs=["u: Tu", "x: T"], outputs=["y: T"],
    attrs=[FLOAT_T, "Tu: {half, bfloat16, float, double}", "rate: float", "scale: float"],
    shape=_dropout_select_shape, gradient_undefined=True,
    doc="ndflow-internal: x * scale where u >= rate, else 0 (u and x of one shape; rate "
        "rounded to u's type, scale to x's).")
