"""Gradients of the random samplers TensorFlow differentiates: Gamma samples in their
concentration (TF's _RandomGammaGrad, _StatelessRandomGammaV2Grad: the implicit
reparameterization gradient RandomGammaGrad, summed over the sample dimensions)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.ops import random_gamma_poisson as rgp
from ndflow.ops.apply import apply_op
from ndflow.ops.arithmetic import multiply
from ndflow.ops.array_core import reshape, shape
from ndflow.ops.array_fill import ones
from ndflow.ops.array_range import range as tf_range
from ndflow.ops.array_slicing import concat
from ndflow.ops.reduction import reduce_sum


@rgp.RandomGamma.def_grad
def _random_gamma_grad(op, grad):
    sample_shape, alpha, sample = op.inputs[0], op.inputs[1], op.outputs[0]
    rank = shape(sample_shape)[0]
    # alpha with `rank` leading unit dimensions broadcasts against the samples
    leading = ones(reshape(rank, [1]), dtypes.int32)
    alpha_b = reshape(alpha, concat([leading, shape(alpha)], 0))
    partial = apply_op(rgp.RandomGammaGrad, [alpha_b, sample]).outputs[0]
    return [None, reduce_sum(multiply(grad, partial), axis=tf_range(rank))]


@rgp.StatelessRandomGammaV2.def_grad
def _stateless_gamma_grad(op, grad):
    alpha, sample = op.inputs[2], op.outputs[0]
    partial = apply_op(rgp.RandomGammaGrad, [alpha, sample]).outputs[0]
    return [None, None, multiply(grad, partial)]
