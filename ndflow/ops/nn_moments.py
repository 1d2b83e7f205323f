"""Moment helpers TensorFlow builds from other ops: `tf.nn.sufficient_statistics`,
`tf.nn.normalize_moments`, `tf.nn.weighted_moments` (`tf.nn.moments` is in nn_norm.py) and
`tf.nn.batch_norm_with_global_normalization`."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.ops import nn_moments_docs
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import (
    add,
    div_no_nan,
    multiply,
    reciprocal,
    squared_difference,
    subtract,
)
from ndflow.ops.array_core import constant, rank, shape, squeeze
from ndflow.ops.array_fill import zeros_like
from ndflow.ops.array_gather import gather
from ndflow.ops.cast import cast
from ndflow.ops.math import square
from ndflow.ops.nn_norm import batch_normalization
from ndflow.ops.reduction import reduce_prod, reduce_sum


@tf_export("nn.sufficient_statistics", v1=[])
def sufficient_statistics(x, axes, shift=None, keepdims: bool = False,
                          name: str | None = None) -> tuple:
    """`tf.nn.sufficient_statistics`: (count, sum(x - shift), sum((x - shift)^2), shift)
    over `axes`; the count is a constant when the reduced dims are known."""
    axes = list(set(axes))
    with name_scope(name, "sufficient_statistics"):
        x = convert_to_tensor(x, name="x")
        dims = x.shape.as_list() if x.shape.rank is not None else None
        if dims is not None and all(dims[d] is not None for d in axes):
            count = 1
            for d in axes:
                count *= dims[d]
            counts = constant(count, dtype=x.dtype)
        else:
            r = rank(x)
            positive = [add(a, r) if a < 0 else a for a in axes]
            counts = reduce_prod(gather(cast(shape(x), x.dtype), positive), name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, name="shift")
            m_ss = subtract(x, shift)
            v_ss = squared_difference(x, shift)
        else:
            m_ss, v_ss = x, square(x)
        m_ss = reduce_sum(m_ss, axes, keepdims=keepdims, name="mean_ss")
        v_ss = reduce_sum(v_ss, axes, keepdims=keepdims, name="var_ss")
    return counts, m_ss, v_ss, shift


@tf_export(v1=["nn.sufficient_statistics"])
def sufficient_statistics_v1(x, axes, shift=None, keep_dims=None, name: str | None = None,
                             keepdims=None) -> tuple:
    """`tf.compat.v1.nn.sufficient_statistics` (`keep_dims`: TF1's name)."""
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    return sufficient_statistics(x, axes, shift, bool(keepdims), name)


@tf_export("nn.normalize_moments")
def normalize_moments(counts, mean_ss, variance_ss, shift, name: str | None = None) -> tuple:
    """`tf.nn.normalize_moments`: (mean, variance) from sufficient statistics."""
    with name_scope(name, "normalize"):
        divisor = reciprocal(counts, name="divisor")
        if shift is not None:
            shifted_mean = multiply(mean_ss, divisor, name="shifted_mean")
            mean = add(shifted_mean, shift, name="mean")
        else:
            shifted_mean = multiply(mean_ss, divisor, name="mean")
            mean = shifted_mean
        variance = subtract(multiply(variance_ss, divisor), square(shifted_mean),
                            name="variance")
    return mean, variance


@tf_export("nn.weighted_moments", v1=[])
def weighted_moments(x, axes, frequency_weights, keepdims: bool = False,
                     name: str | None = None) -> tuple:
    """`tf.nn.weighted_moments`: frequency-weighted (mean, variance) over `axes` (two-pass;
    float16 computed in float32; 0 where the weights sum to 0)."""
    with name_scope(name, "weighted_moments"):
        x = convert_to_tensor(x, name="x")
        w = convert_to_tensor(frequency_weights, name="frequency_weights")
        needs_cast = x.dtype is dtypes.float16
        if needs_cast:
            x = cast(x, dtypes.float32)
        if w.dtype is not x.dtype:
            w = cast(w, x.dtype)
        weighted_sum = reduce_sum(multiply(w, x), axes, keepdims=True,
                                  name="weighted_input_sum")
        # Weights need only broadcast against x: sum them at x's shape.
        sum_of_weights = reduce_sum(add(w, zeros_like(x)), axes, keepdims=True,
                                    name="sum_of_weights")
        mean = div_no_nan(weighted_sum, sum_of_weights)
        distsq = reduce_sum(multiply(w, squared_difference(x, mean)), axes, keepdims=True,
                            name="weighted_distsq")
        variance = div_no_nan(distsq, sum_of_weights)
        if not keepdims:
            mean = squeeze(mean, axes)
            variance = squeeze(variance, axes)
        if needs_cast:
            mean = cast(mean, dtypes.float16)
            variance = cast(variance, dtypes.float16)
        return mean, variance


@tf_export(v1=["nn.weighted_moments"])
def weighted_moments_v1(x, axes, frequency_weights, name: str | None = None, keep_dims=None,
                        keepdims=None) -> tuple:
    """`tf.compat.v1.nn.weighted_moments` (`keep_dims`: TF1's name)."""
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    return weighted_moments(x, axes, frequency_weights, bool(keepdims), name)


@tf_export(v1=["nn.batch_norm_with_global_normalization"])
def batch_norm_with_global_normalization_v1(t=None, m=None, v=None, beta=None, gamma=None,
                                            variance_epsilon=None,
                                            scale_after_normalization=None,
                                            name: str | None = None, input=None,  # noqa: A002
                                            mean=None, variance=None):
    """`tf.compat.v1.nn.batch_norm_with_global_normalization`: batch_normalization with
    `gamma` applied only when `scale_after_normalization`."""
    t = deprecated_argument_lookup("input", input, "t", t)
    m = deprecated_argument_lookup("mean", mean, "m", m)
    v = deprecated_argument_lookup("variance", variance, "v", v)
    return batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None,
                               variance_epsilon, name)


@tf_export("nn.batch_norm_with_global_normalization", v1=[])
def batch_norm_with_global_normalization(input, mean, variance, beta, gamma,  # noqa: A002
                                         variance_epsilon, scale_after_normalization,
                                         name: str | None = None):
    """`tf.nn.batch_norm_with_global_normalization` (TF2's argument names)."""
    return batch_norm_with_global_normalization_v1(input, mean, variance, beta, gamma,
                                                   variance_epsilon, scale_after_normalization,
                                                   name)


attach(globals(), nn_moments_docs.DOCS)
