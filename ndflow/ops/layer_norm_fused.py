"""ndflow's fused layer normalization: `_LayerNorm` and its gradient `_LayerNormGrad`
(TensorFlow has no such op: its Keras builds the moments and the normalization from ops,
about nine forward and fifteen backward; oneDNN builds of TF fuse the pattern only for
inference, `_MklLayerNorm`).

`_LayerNorm(x, gamma, beta)` normalizes over the axes from `begin_norm_axis` on: y = (x -
mean) * rstd * gamma + beta, rstd = 1 / sqrt(biased variance + epsilon), gamma and beta
shaped like those axes (`scale` / `center` False: no such input is read, pass zeros([0])).
Outputs y and, for the gradient, mean and rstd (x's shape with the normalized axes 1).
Keras' LayerNormalization runs it (keras/layers/normalization_layers.py) except while a
SavedModel is written, which keeps Keras' ops for TensorFlow to load.

`_LayerNormGrad(dy, x, mean, rstd, gamma)` gives dx, dgamma, dbeta (zeros([0]) where the
layer has no such parameter); its own gradient differentiates the same arithmetic written
as ops (`layer_norm_backward`), so gradients of gradients (penalties) still work.
"""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.shapes import TensorShape
from ndflow.ops import arithmetic, math, reduction
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import op_def

_ATTRS = ["T: {float, double}", "epsilon: float = 0.001", "begin_norm_axis: int = -1",
          "scale: bool = true", "center: bool = true"]


def _stats_shape(x: TensorShape, begin: int) -> TensorShape:
    if x.rank is None:
        return TensorShape(None)
    begin %= max(x.rank, 1)
    return TensorShape(list(x.dims[:begin]) + [1] * (x.rank - begin))


def _param_shape(x: TensorShape, begin: int, present: bool) -> TensorShape:
    if not present:
        return TensorShape([0])
    return TensorShape(None) if x.rank is None else TensorShape(x.dims[begin % x.rank:])


LayerNorm = op_def(
    "_LayerNorm", inputs=["x: T", "gamma: T", "beta: T"],
    outputs=["y: T", "mean: T", "rstd: T"], attrs=_ATTRS,
    shape=lambda ctx: [ctx.shapes[0], *[_stats_shape(ctx.shapes[0],
                                                      ctx.attrs["begin_norm_axis"])] * 2],
    doc="Layer normalization over the axes from begin_norm_axis on, with its statistics.")

LayerNormGrad = op_def(
    "_LayerNormGrad", inputs=["dy: T", "x: T", "mean: T", "rstd: T", "gamma: T"],
    outputs=["dx: T", "dgamma: T", "dbeta: T"], attrs=_ATTRS,
    shape=lambda ctx: [ctx.shapes[1],
                       _param_shape(ctx.shapes[1], ctx.attrs["begin_norm_axis"],
                                    ctx.attrs["scale"]),
                       _param_shape(ctx.shapes[1], ctx.attrs["begin_norm_axis"],
                                    ctx.attrs["center"])],
    doc="_LayerNorm's gradient w.r.t. x, gamma and beta.")


def _attrs(op) -> dict:
    return {k: op.get_attr(k) for k in ("epsilon", "begin_norm_axis", "scale", "center")}


@LayerNorm.def_grad
def _layer_norm_grad(op, dy, _dmean, _drstd):
    attrs = _attrs(op)
    x, gamma = op.inputs[0], op.inputs[1]
    dx, dgamma, dbeta = apply_op(LayerNormGrad, [dy, x, op.outputs[1], op.outputs[2], gamma],
                                 attrs, name="LayerNormGrad").outputs
    return [dx, dgamma if attrs["scale"] else None, dbeta if attrs["center"] else None]


def _axes(x, begin: int):
    rank = x.shape.rank
    begin %= rank
    return list(range(begin, rank)), list(range(begin))


def layer_norm_backward(dy, x, gamma, epsilon: float, begin: int, scale: bool) -> tuple:
    """(dx, dgamma, dbeta) of _LayerNorm written as ops (differentiable again):
    dx = rstd (g - mean(g) - xhat mean(g xhat)) with g = dy gamma, xhat = (x - mean) rstd."""
    norm_axes, outer_axes = _axes(x, begin)
    mean = reduction.reduce_mean(x, norm_axes, keepdims=True)
    centered = x - mean
    variance = reduction.reduce_mean(centered * centered, norm_axes, keepdims=True)
    rstd = math.rsqrt(arithmetic.add(variance, epsilon))
    xhat = centered * rstd
    g = dy * gamma if scale else dy
    dx = rstd * (g - reduction.reduce_mean(g, norm_axes, keepdims=True)
                 - xhat * reduction.reduce_mean(g * xhat, norm_axes, keepdims=True))
    return (dx, reduction.reduce_sum(dy * xhat, outer_axes),
            reduction.reduce_sum(dy, outer_axes))


@LayerNormGrad.def_grad
def _layer_norm_grad_grad(op, *grads):
    """Differentiates `layer_norm_backward` at the op's inputs (as FusedBatchNormGradV3's
    gradient does TF's `_BatchNormGrad`)."""
    attrs = _attrs(op)
    scale, center = attrs["scale"], attrs["center"]
    dy, x, gamma = op.inputs[0], op.inputs[1], op.inputs[4]

    def backward(*args):
        dx, dgamma, dbeta = layer_norm_backward(args[0], args[1], args[2] if scale else None,
                                                attrs["epsilon"], attrs["begin_norm_axis"],
                                                scale)
        return [dx] + ([dgamma] if scale else []) + ([dbeta] if center else [])
    wanted = [grads[0]] + ([grads[1]] if scale else []) + ([grads[2]] if center else [])
    outs = context.hooks.vjp(backward, [dy, x, gamma] if scale else [dy, x], wanted)
    return [outs[0], outs[1], None, None, outs[2] if scale else None]
