"""Losses TensorFlow builds from other ops: `tf.nn.weighted_cross_entropy_with_logits`,
`tf.nn.log_poisson_loss`, and the weight/batch-size checks of `tf.nn.compute_average_loss`
(which lives in ndflow/distribute/loss_scaling.py: it reads the replica count).
"""

from __future__ import annotations

import math as _pymath

from ndflow.core.api_export import tf_export
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.arithmetic import add, log, multiply, subtract, where
from ndflow.ops.array_core import expand_dims, squeeze
from ndflow.ops.array_fill import zeros_like
from ndflow.ops.comparison import composite_name, greater_equal, less_equal, logical_and
from ndflow.ops.math import abs as _abs
from ndflow.ops.math import exp, log1p
from ndflow.ops.nn_activation import relu


def _same_shape(a: Tensor, b: Tensor, what: str) -> None:
    if not a.shape.is_compatible_with(b.shape):
        raise ValueError(f"{what} must have the same shape, received ({b.shape} vs {a.shape}).")


@tf_export("nn.weighted_cross_entropy_with_logits", v1=[])
def weighted_cross_entropy_with_logits(labels, logits, pos_weight,
                                       name: str | None = None) -> Tensor:
    """`tf.nn.weighted_cross_entropy_with_logits`: sigmoid cross entropy whose positive term
    is weighted by `pos_weight`, in TF's stable form
    (1 - z) * x + (1 + (q - 1) * z) * (log1p(exp(-|x|)) + max(-x, 0))."""
    with composite_name(name, "logistic_loss") as final:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        _same_shape(labels, logits, "`logits` and `labels`")
        log_weight = 1 + (pos_weight - 1) * labels  # Python numbers stay Python numbers
        softplus_neg = add(log1p(exp(-_abs(logits))), relu(-logits))
    return add((1 - labels) * logits, log_weight * softplus_neg, name=final)


@tf_export(v1=["nn.weighted_cross_entropy_with_logits"])
def weighted_cross_entropy_with_logits_v1(labels=None, logits=None, pos_weight=None,
                                          name: str | None = None, targets=None) -> Tensor:
    """`tf.compat.v1.nn.weighted_cross_entropy_with_logits` (`targets`: TF1's `labels`)."""
    labels = deprecated_argument_lookup("labels", labels, "targets", targets)
    return weighted_cross_entropy_with_logits(labels, logits, pos_weight, name)


@tf_export("nn.log_poisson_loss")
def log_poisson_loss(targets, log_input, compute_full_loss: bool = False,
                     name: str | None = None) -> Tensor:
    """`tf.nn.log_poisson_loss`: exp(c) - z * c, plus Stirling's term
    z * log(z) - z + 0.5 * log(2 pi z) where z > 1 when `compute_full_loss`."""
    with name_scope(name, "log_poisson_loss"):
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, name="targets")
        if not targets.shape.is_compatible_with(log_input.shape):
            raise ValueError(f"`log_input` and `targets` must have the same shape, received "
                             f"({log_input.shape} vs {targets.shape}).")
        result = subtract(exp(log_input), multiply(log_input, targets))
        if compute_full_loss:
            half = convert_to_tensor(0.5, dtype=targets.dtype)
            two_pi = convert_to_tensor(2 * _pymath.pi, dtype=targets.dtype)
            stirling = add(subtract(multiply(targets, log(targets)), targets),
                           multiply(half, log(multiply(two_pi, targets))))
            zeros = zeros_like(targets)
            ones = add(zeros, 1)
            cond = logical_and(greater_equal(targets, zeros), less_equal(targets, ones))
            result = add(result, where(cond, zeros, stirling))
        return result


def match_weight_rank(losses: Tensor, weight: Tensor) -> Tensor:
    """Keras' squeeze_or_expand_dimensions for the weight (static ranks)."""
    lr, wr = losses.shape.rank, weight.shape.rank
    if lr is None or wr is None or wr == 0:
        return weight
    if wr - lr == 1:
        return squeeze(weight, [-1])
    if lr - wr == 1:
        return expand_dims(weight, -1)
    return weight


def check_global_batch_size(value) -> None:
    """TF's assert_scalar / assert_integer / assert_non_negative on a known value."""
    t = convert_to_tensor(value)
    if t.shape.rank is not None and t.shape.rank != 0:
        raise ValueError(f"global_batch_size must be scalar..  Expected scalar shape, saw "
                         f"shape: {t.shape}.")
    if not t.dtype.is_integer:
        raise TypeError(f"global_batch_size must be an integer..  Expected \"x\" to be integer "
                        f"type.  Found: tensor of dtype {t.dtype}")
    v = constant_value(t)
    if v is not None and int(v) < 0:
        raise InvalidArgumentError(None, None, "global_batch_size must be non-negative.")
