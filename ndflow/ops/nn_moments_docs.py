"""The docstrings of nn_moments.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "sufficient_statistics": """Sufficient statistics of the mean and variance over `axes`.

    Args:
      x: a float tensor.
      axes: the axes to reduce.
      shift: optional shift for numerical stability (None: no shift).
      keepdims: if True, the reduced dimensions stay as size 1.
      name: optional name for the operation.

    Returns:
      A tuple `(count, mean_ss, variance_ss, shift)`: the element count, the sum of (x -
      shift), the sum of (x - shift) ** 2, and the shift (or None).

    Example:
      >>> [float(t) for t in tf.nn.sufficient_statistics([1.0, 2.0, 3.0], [0])[:3]]
      [3.0, 6.0, 14.0]
    """,
    "sufficient_statistics_v1": """The sufficient statistics of `x` over `axes` (TF1 signature).

    See `tf.nn.sufficient_statistics`; `keep_dims` is the deprecated alias of `keepdims`.

    Args:
      x: a float tensor.
      axes: the axes to reduce.
      shift: optional shift.
      keep_dims: deprecated alias of `keepdims`.
      name: optional name for the operation.
      keepdims: keep the reduced dimensions as size 1.

    Returns:
      A tuple `(count, mean_ss, variance_ss, shift)`.

    Example:
      >>> float(tf.compat.v1.nn.sufficient_statistics([1.0, 2.0], [0])[0])
      2.0
    """,
    "normalize_moments": """The mean and variance from sufficient statistics.

    Args:
      counts: the element count.
      mean_ss: the sum of (x - shift).
      variance_ss: the sum of (x - shift) ** 2.
      shift: the shift used, or None.
      name: optional name for the operation.

    Returns:
      A tuple `(mean, variance)`.

    Example:
      >>> [float(t) for t in tf.nn.normalize_moments(3.0, 6.0, 14.0, None)]
      [2.0, 0.6666669845581055]
    """,
    "weighted_moments": """The frequency-weighted mean and variance of `x` over `axes`.

    Args:
      x: a float tensor.
      axes: the axes to reduce.
      frequency_weights: weights broadcastable to x.
      keepdims: if True, the reduced dimensions stay as size 1.
      name: optional name for the operation.

    Returns:
      A tuple `(mean, variance)`.

    Example:
      >>> [float(t) for t in tf.nn.weighted_moments([1.0, 3.0], [0], [1.0, 3.0])]
      [2.5, 0.75]
    """,
    "weighted_moments_v1": """The frequency-weighted mean and variance of `x` (TF1 signature).

    See `tf.nn.weighted_moments`; `keep_dims` is the deprecated alias of `keepdims`.

    Args:
      x: a float tensor.
      axes: the axes to reduce.
      frequency_weights: weights broadcastable to x.
      name: optional name for the operation.
      keep_dims: deprecated alias of `keepdims`.
      keepdims: keep the reduced dimensions as size 1.

    Returns:
      A tuple `(mean, variance)`.

    Example:
      >>> [float(t) for t in tf.compat.v1.nn.weighted_moments([1.0, 3.0], [0], [1.0, 1.0])]
      [2.0, 1.0]
    """,
    "batch_norm_with_global_normalization": """Batch normalization with given moments (a legacy op).

    Computes (input - mean) / sqrt(variance + variance_epsilon) * gamma + beta (gamma only
    with scale_after_normalization).

    Args:
      input: a 4-D float tensor.
      mean: a 1-D tensor of per-channel means.
      variance: a 1-D tensor of per-channel variances.
      beta: a 1-D tensor of offsets.
      gamma: a 1-D tensor of scales.
      variance_epsilon: a small float avoiding division by 0.
      scale_after_normalization: whether to multiply by gamma.
      name: optional name for the operation.

    Returns:
      A tensor of input's shape.

    Example:
      >>> x, c = tf.ones([1, 1, 1, 1]), tf.constant([1.0])
      >>> y = tf.nn.batch_norm_with_global_normalization(x, c, c, c * 0.5, c, 0.0, True)
      >>> y[0, 0, 0].numpy()
      array([0.5], dtype=float32)
    """,
    "batch_norm_with_global_normalization_v1": """Batch normalization with given moments (TF1).

    See `tf.nn.batch_norm_with_global_normalization`; `t`, `m` and `v` are TF1's names for
    `input`, `mean` and `variance`.

    Args:
      t: the input.
      m: the means.
      v: the variances.
      beta: the offsets.
      gamma: the scales.
      variance_epsilon: a small float.
      scale_after_normalization: whether to multiply by gamma.
      name: optional name for the operation.
      input: the same as `t`.
      mean: the same as `m`.
      variance: the same as `v`.

    Returns:
      A tensor of the input's shape.

    Example:
      >>> x, c = tf.ones([1, 1, 1, 1]), tf.constant([1.0])
      >>> tf.compat.v1.nn.batch_norm_with_global_normalization(x, c, c, c, c, 0.0, True).shape
      TensorShape([1, 1, 1, 1])
    """,
}
