"""Docstrings of keras.ops.nn's cross-entropies, normalizations, attention, psnr and polar
(nn_functions.py; the activations: nn_activation_docs.py). Attached by
`ndflow.keras.docstrings.attach`; the examples run as doctests."""

from __future__ import annotations

_CLIP = """Probabilities are clipped to [epsilon, 1 - epsilon] (`keras.config.epsilon()`)
    before the log, so the loss stays finite."""

DOCS = {
    "binary_crossentropy": f"""Elementwise binary cross-entropy
    `-(target * log(output) + (1 - target) * log(1 - output))`, not reduced.

    {_CLIP}

    Args:
      target: labels in [0, 1], of `output`'s shape (cast to its dtype).
      output: probabilities, or logits when `from_logits`.
      from_logits: whether `output` holds logits (then computed from them stably).

    Returns:
      A tensor of `output`'s shape.

    Raises:
      ValueError: the two shapes differ.

    Example:

    >>> tf.keras.ops.binary_crossentropy([1.0, 0.0], [0.5, 0.5]).numpy().round(4)
    array([0.6931, 0.6931], dtype=float32)
    """,
    "categorical_crossentropy": f"""Categorical cross-entropy `-sum(target * log(output))`
    over the classes axis, one value per sample.

    Without `from_logits`, `output` is first divided by its sum along `axis`. {_CLIP}

    Args:
      target: one-hot (or soft) labels, of `output`'s shape.
      output: class probabilities, or logits when `from_logits`.
      from_logits: whether `output` holds logits.
      axis: the classes axis (default last).

    Returns:
      A tensor of `output`'s shape without `axis`.

    Raises:
      ValueError: the shapes differ, or the inputs are scalars.

    Example:

    >>> tf.keras.ops.categorical_crossentropy([[0.0, 1.0]], [[0.5, 0.5]]).numpy().round(4)
    array([0.6931], dtype=float32)
    """,
    "sparse_categorical_crossentropy": f"""Categorical cross-entropy with integer class labels,
    one value per sample.

    Without `from_logits`, `output` is divided by its sum along the last axis. {_CLIP}

    Args:
      target: int class indices, of `output`'s shape without the last axis (a trailing
        axis of size 1 is accepted and dropped).
      output: class probabilities on the last axis, or logits when `from_logits`.
      from_logits: whether `output` holds logits.
      axis: must be the last axis (-1).

    Returns:
      A tensor of `target`'s shape.

    Raises:
      ValueError: `axis` is not the last axis, or the ranks do not fit.

    Example:

    >>> tf.keras.ops.sparse_categorical_crossentropy([1], [[0.5, 0.5]]).numpy().round(4)
    array([0.6931], dtype=float32)
    """,
    "moments": """The mean and variance of `x` over `axes`.

    float16 and bfloat16 inputs are computed in float32 and cast back (clipped to float16's
    range).

    Args:
      x: a float tensor or array-like.
      axes: an int or list of ints, the axes to reduce.
      keepdims: whether the reduced axes stay, with size 1.
      synchronized: accepted for Keras' signature (the statistics are always local to
        the replica here).

    Returns:
      A tuple (mean, variance) of tensors in `x`'s dtype.

    Example:

    >>> mean, var = tf.keras.ops.moments([1.0, 2.0, 3.0], axes=[0])
    >>> float(mean), round(float(var), 4)
    (2.0, 0.6667)
    """,
    "batch_normalization": """Normalizes `x` with given statistics:
    `(x - mean) / sqrt(variance + epsilon) * scale + offset`.

    Args:
      x: a float tensor.
      mean: a 1-D tensor, the mean of each feature along `axis`.
      variance: a 1-D tensor, likewise.
      axis: the features axis of `x` the statistics belong to.
      offset: optional 1-D shift (beta).
      scale: optional 1-D scale (gamma).
      epsilon: a small float added to the variance.

    Returns:
      A tensor of `x`'s shape and dtype.

    Example:

    >>> tf.keras.ops.batch_normalization([[1.0, 2.0]], mean=[1.0, 1.0],
    ...                                  variance=[1.0, 1.0], axis=-1, epsilon=0.0).numpy()
    array([[0., 1.]], dtype=float32)
    """,
    "normalize": """`x` divided by its `order`-norm along `axis` (L2 by default).

    Args:
      x: a float tensor or array-like (a scalar is treated as 1-D).
      axis: the axis (or axes) the norm is taken over.
      order: an int >= 1, the norm's order.
      epsilon: the smallest norm divided by (default `keras.config.epsilon()`), so zero
        vectors stay zero.

    Returns:
      A tensor of `x`'s shape.

    Raises:
      ValueError: `order` is not an int >= 1.

    Example:

    >>> tf.keras.ops.normalize([[3.0, 4.0]]).numpy()
    array([[0.6, 0.8]], dtype=float32)
    """,
    "layer_normalization": """Layer normalization: `x` standardized to zero mean and unit
    variance over `axis`, then scaled by `gamma` and shifted by `beta`.

    Computed in float32 at least; the result has `x`'s dtype.

    Args:
      x: a float tensor.
      gamma: optional scale, of the normalized axes' shape.
      beta: optional shift, likewise.
      axis: the axis or axes to normalize over (default last).
      epsilon: added to the variance (default `keras.config.epsilon()`).

    Returns:
      A tensor of `x`'s shape and dtype.
    """,
    "rms_normalization": """Root-mean-square normalization: `x / sqrt(mean(x**2) + epsilon)`
    over `axis`, times `scale`.

    Computed in float32 at least; the result has `x`'s dtype.

    Args:
      x: a float tensor (a scalar is treated as 1-D).
      scale: optional scale, broadcastable with `x`.
      axis: the axis or axes to normalize over (default last).
      epsilon: added to the mean square (default `keras.config.epsilon()`).

    Returns:
      A tensor of `x`'s shape and dtype.
    """,
    "psnr": """Peak signal-to-noise ratio between two images, in decibels:
    `20 * log10(max_val) - 10 * log10(mean((x1 - x2)**2))`.

    Args:
      x1: a tensor (e.g. an image batch).
      x2: a tensor of the same shape.
      max_val: the largest possible pixel value (e.g. 1.0 or 255).

    Returns:
      A scalar tensor (inf for identical inputs).

    Raises:
      ValueError: the shapes differ.

    Example:

    >>> round(float(tf.keras.ops.psnr([0.0, 1.0], [0.0, 0.9], max_val=1.0)), 2)
    23.01
    """,
    "polar": """Complex numbers from polar coordinates: `abs_ * (cos(angle) + i sin(angle))`.

    Args:
      abs_: the magnitudes (ints are taken as float32).
      angle: the angles in radians, broadcastable with `abs_`.

    Returns:
      A complex tensor (complex64 for float32 inputs) of the broadcast shape.
    """,
    "dot_product_attention": """Scaled dot-product attention:
    `softmax(query @ key^T * scale + bias, masked) @ value`, per batch and head.

    Args:
      query: a tensor of shape (batch, query_length, heads, head_dim).
      key: a tensor of shape (batch, key_length, kv_heads, head_dim); `kv_heads` is
        `heads`, or a divisor of it above 1 (grouped-query attention repeats the key and
        value heads; one shared head fails in the einsum, as in Keras' TF backend).
      value: a tensor of shape (batch, key_length, kv_heads, value_dim).
      bias: optional additive logits, broadcastable to (batch, heads, query_length,
        key_length).
      mask: optional bool tensor of that shape: False hides a key from a query.
      scale: the logits' scale (default `1 / sqrt(head_dim)`).
      is_causal: whether each query sees only the keys at or before its own position.
      flash_attention: must be None or False (no flash kernel on this backend).
      attn_logits_soft_cap: optional float c: logits become `c * tanh(logits / c)`.

    Returns:
      A tensor of shape (batch, query_length, heads, value_dim) in the inputs' dtype.

    Raises:
      ValueError: the inputs are not 4-D, or `flash_attention` is True.

    Example:

    >>> q = tf.ones((1, 3, 2, 4))
    >>> tf.keras.ops.dot_product_attention(q, q, q, is_causal=True).shape
    TensorShape([1, 3, 2, 4])
    """,
}
