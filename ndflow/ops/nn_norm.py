"""Batch normalization: FusedBatchNormV3 / FusedBatchNormGradV3 and the composite wrappers
`tf.nn.batch_normalization`, `tf.nn.moments`, `tf.compat.v1.nn.fused_batch_norm`.

FusedBatchNormV3's outputs are TF's CPU ones: y, batch_mean, batch_variance (Bessel-corrected,
blended with the incoming statistics by `exponential_avg_factor` when it is not 1),
reserve_space_1 = batch mean, reserve_space_2 = biased batch variance, reserve_space_3 = [0].
Deviation from TF: T and U also accept double (TF: T {half, bfloat16, float}, U {bfloat16,
float}) so gradients can be checked in float64.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import arithmetic, array_core, math, reduction
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.cast import cast
from ndflow.ops.nn_common import spatial_dims
from ndflow.ops.op_def import op_def

_T = "T: {half, bfloat16, float, double}"
_U = "U: {bfloat16, float, double}"
_BN_ATTRS = ["epsilon: float = 0.0001", "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
             "is_training: bool = true"]


def _channels(ctx, x: TensorShape):
    if x.rank is None:
        return None
    if x.rank != 4:
        raise ValueError(f"Shape must be rank 4 but is rank {x.rank}")
    return x[spatial_dims(ctx.attrs["data_format"])[2]]


def _vector(s: TensorShape, c, name: str, allow_empty: bool = False):
    if s.rank is None:
        return c
    if s.rank != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {s.rank}")
    d = s[0]
    if d is None or (allow_empty and d == 0):
        return c
    if c is not None and d != c:
        raise ValueError(f"Dimensions must be equal, but are {c} and {d}")
    return d


def _fused_bn_shape(ctx):
    x = ctx.shapes[0]
    c = _channels(ctx, x)
    training = ctx.attrs["is_training"]
    for i, name in ((1, "scale"), (2, "offset"), (3, "mean"), (4, "variance")):
        c = _vector(ctx.shapes[i], c, name, allow_empty=training and i >= 3)
    x = x if x.rank is not None else TensorShape([None] * 4)
    vec = TensorShape([c])
    return [x, vec, vec, vec, vec, TensorShape([0])]


def _fused_bn_grad_shape(ctx):
    x = ctx.shapes[1].merge_with(ctx.shapes[0]) if ctx.shapes[0].rank is not None \
        else ctx.shapes[1]
    c = _channels(ctx, x)
    for i in (2, 3, 4):
        c = _vector(ctx.shapes[i], c, "")
    x = x if x.rank is not None else TensorShape([None] * 4)
    vec = TensorShape([c])
    return [x, vec, vec, TensorShape([0]), TensorShape([0])]


FusedBatchNormV3 = op_def(
    "FusedBatchNormV3", inputs=["x: T", "scale: U", "offset: U", "mean: U", "variance: U"],
    outputs=["y: T", "batch_mean: U", "batch_variance: U", "reserve_space_1: U",
             "reserve_space_2: U", "reserve_space_3: U"],
    attrs=[_T, _U, "epsilon: float = 0.0001", "exponential_avg_factor: float = 1.0",
           "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "is_training: bool = true"],
    shape=_fused_bn_shape)
FusedBatchNormGradV3 = op_def(
    "FusedBatchNormGradV3",
    inputs=["y_backprop: T", "x: T", "scale: U", "reserve_space_1: U", "reserve_space_2: U",
            "reserve_space_3: U"],
    outputs=["x_backprop: T", "scale_backprop: U", "offset_backprop: U", "reserve_space_4: U",
             "reserve_space_5: U"],
    attrs=[_T, "U: {float, double}", *_BN_ATTRS], shape=_fused_bn_grad_shape)


@tf_export(v1=["nn.fused_batch_norm"])
def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon: float = 0.001,
                     data_format: str = "NHWC", is_training: bool = True,
                     name: str | None = None, exponential_avg_factor: float = 1.0) -> tuple:
    """`tf.compat.v1.nn.fused_batch_norm`: (y, running_mean, running_var)."""
    x = convert_to_tensor(x, name="input")
    scale = convert_to_tensor(scale, name="scale")
    offset = convert_to_tensor(offset, name="offset")
    u = scale.dtype
    if mean is None:
        mean = array_core.constant([], dtype=u)
    if variance is None:
        variance = array_core.constant([], dtype=u)
    epsilon = max(epsilon, 1.001e-5)  # TF's min_epsilon (cuDNN's CUDNN_BN_MIN_EPSILON + eps)
    op = apply_op(FusedBatchNormV3, [x, scale, offset, mean, variance],
                  {"epsilon": float(epsilon), "data_format": data_format,
                   "is_training": is_training,
                   "exponential_avg_factor": float(exponential_avg_factor)},
                  name=name or "FusedBatchNormV3")
    return op.outputs[0], op.outputs[1], op.outputs[2]


@tf_export("nn.batch_normalization")
def batch_normalization(x, mean, variance, offset, scale, variance_epsilon,
                        name: str | None = None) -> Tensor:
    """`tf.nn.batch_normalization`: (x - mean) * scale / sqrt(variance + eps) + offset."""
    with name_scope(name, "batchnorm"):
        x = convert_to_tensor(x)
        inv = math.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        shift = offset - mean * inv if offset is not None else -mean * inv
        return x * cast(inv, x.dtype) + cast(shift, x.dtype)


@tf_export("nn.moments", v1=[])
def moments(x, axes, shift=None, keepdims: bool = False, name: str | None = None) -> tuple:
    """`tf.nn.moments` (TF2): (mean, variance) over `axes`; float16 computed in float32."""
    with name_scope(name, "moments"):
        x = convert_to_tensor(x)
        y = cast(x, dtypes.float32) if x.dtype is dtypes.float16 else x
        mean = reduction.reduce_mean(y, axes, keepdims=True, name="mean")
        variance = reduction.reduce_mean(
            arithmetic.squared_difference(y, array_core.stop_gradient(mean)), axes,
            keepdims=True, name="variance")
        if not keepdims:
            mean = array_core.squeeze(mean, axes)
            variance = array_core.squeeze(variance, axes)
        if x.dtype is dtypes.float16:
            return cast(mean, dtypes.float16), cast(variance, dtypes.float16)
        return mean, variance


@tf_export(v1=["nn.moments"])
def moments_v1(x, axes, shift=None, name: str | None = None, keep_dims=None,
               keepdims=None) -> tuple:
    """`tf.compat.v1.nn.moments`."""
    keep = keepdims if keepdims is not None else bool(keep_dims)
    return moments(x, axes, shift, keep, name)
