"""Docstrings of `tf.keras.backend`'s Keras 1/2 neural-network functions
(backend_legacy_nn.py). Attached by `ndflow.keras.docstrings.attach`; the examples run as
doctests."""

from __future__ import annotations

from ndflow.keras.docstrings import sections

_FORMAT = """data_format: "channels_last" (channels on the last axis) or "channels_first"; None
        means `keras.backend.image_data_format()`."""
_PADDING = 'padding: "valid" (no padding) or "same" (output size = ceil(input / stride)).'
_CONV_RAISES = """Raises:
      ValueError: an unknown `data_format` or `padding`."""


def _conv(rank: int, layout: str, kernel: str, extra_args: str = "") -> str:
    return f"""{rank}-D convolution of `x` with `kernel` (cross-correlation, as in every
    deep-learning framework).

    Args:
      x: the input, of shape {layout} (channels last) or with the channels axis second.
      kernel: the filters, of shape {kernel}.
      strides: the stride along each spatial axis (an int or a tuple of {rank}).
      {_PADDING}
      {_FORMAT}
      dilation_rate: the dilation along each spatial axis.{extra_args}

    Returns:
      A tensor of `x`'s rank with `out_channels` channels.

    {_CONV_RAISES}
    """


def _crossentropy(kind: str, target: str, output: str, extra: str = "",
                  example: str = "") -> str:
    doc = f"""{kind} cross-entropy between `target` and `output` (Keras 2's formula:
    probabilities are clipped to [epsilon, 1 - epsilon], `keras.backend.epsilon()`).

    Args:
      target: {target}
      output: {output}
      from_logits: whether `output` holds logits rather than probabilities.{extra}

    Returns:
      The loss per element (binary) or per sample (categorical), a float tensor.
    """
    return sections(doc, example=example)


def _fold(direction: str, order: str, start: str) -> str:
    return f"""Reduces `elems` along its first axis with `fn`, {direction}.

    Args:
      fn: a callable `fn(accumulator, element)` returning the new accumulator.
      elems: a tensor (or nest of tensors) sliced along its first axis, {order}.
      initializer: the first accumulator; None starts from the {start} element.
      name: optional name for the operation.

    Returns:
      The final accumulator.
    """


def _spatial_padding(rank: int, default: str) -> str:
    return f"""Zero-pads the {rank} spatial axes of a {rank + 2}-D tensor.

    Args:
      x: a tensor of rank {rank + 2}, (batch, spatial..., channels) or channels first.
      padding: {rank} pairs `(before, after)`, one per spatial axis (default {default}).
      {_FORMAT}

    Returns:
      The padded tensor.

    Raises:
      ValueError: `padding` is not {rank} pairs of ints, or `data_format` is unknown.
    """


def _pool(rank: int) -> str:
    return f"""{rank}-D max or average pooling.

    Args:
      x: a tensor of rank {rank + 2}, (batch, spatial..., channels) or channels first.
      pool_size: a tuple of {rank} ints, the window size.
      strides: a tuple of {rank} ints.
      {_PADDING}
      {_FORMAT}
      pool_mode: "max" or "avg".

    Returns:
      The pooled tensor.

    Raises:
      ValueError: an unknown `pool_mode`, `padding` or `data_format`, or `pool_size` or
        `strides` without {rank} entries.
    """


DOCS = {
    "elu": """Exponential linear unit: `x` where `x > 0`, `alpha * (exp(x) - 1)` elsewhere.

    Args:
      x: a float tensor.
      alpha: the scale of the negative part.

    Returns:
      A tensor of `x`'s shape and dtype.
    """,
    "softmax": """Softmax along `axis`: `exp(x)` normalized to sum to 1.

    Args:
      x: a float tensor of rank 2 or more.
      axis: the axis to normalize over (default the last).

    Returns:
      A tensor of `x`'s shape and dtype.

    Raises:
      ValueError: `x` is 1-D or a scalar.

    Example:

    >>> tf.keras.backend.softmax([[0.0, 0.0]]).numpy()
    array([[0.5, 0.5]], dtype=float32)
    """,
    "softplus": """Softplus `log(1 + exp(x))`, a smooth ReLU.

    Args:
      x: a float tensor.

    Returns:
      A tensor of `x`'s shape and dtype.
    """,
    "dropout": """Sets a random fraction `level` of `x`'s entries to zero and scales the others
    by `1 / (1 - level)`, so the expected sum stays.

    Args:
      x: a float tensor.
      level: the fraction to drop, in [0, 1).
      noise_shape: optional shape of the keep/drop mask, broadcast against `x` (e.g.
        (batch, 1, features) drops the same features at every step).
      seed: an int for a reproducible mask; None draws a fresh seed from NumPy.

    Returns:
      A tensor of `x`'s shape and dtype.
    """,
    "bias_add": """Adds `bias` along the channels axis of `x`.

    Args:
      x: a tensor of rank 2 or more.
      bias: a 1-D tensor of the channel count, or a tensor of rank `ndim(x) - 1` (a
        bias per position).
      {_FORMAT}

    Returns:
      A tensor of `x`'s shape.

    Raises:
      ValueError: `bias` has another rank, or `data_format` is unknown.
    """.replace("{_FORMAT}", _FORMAT),
    "batch_normalization": """Normalizes `x` with given statistics:
    `(x - mean) / sqrt(var + epsilon) * gamma + beta`.

    Args:
      x: a tensor.
      mean: the mean, broadcastable with `x`.
      var: the variance, broadcastable with `x`.
      beta: the offset (or None).
      gamma: the scale (or None).
      axis: accepted for Keras' signature; the statistics' shapes decide the axis.
      epsilon: a small float added to the variance.

    Returns:
      A tensor of `x`'s shape.
    """,
    "binary_crossentropy": _crossentropy(
        "Elementwise binary", "a float tensor of 0/1 labels (or soft labels).",
        "probabilities (or logits), the shape of `target`.",
        example=">>> tf.keras.backend.binary_crossentropy([1.0], [0.5]).numpy().round(4)\n"
                "    array([0.6931], dtype=float32)"),
    "binary_focal_crossentropy": _crossentropy(
        "Elementwise binary focal", "a float tensor of 0/1 labels.",
        "probabilities (or logits), the shape of `target`.",
        """
      apply_class_balancing: whether to weight positives by `alpha` and negatives by
        `1 - alpha`.
      alpha: the class-balancing weight.
      gamma: the focusing exponent: the loss is scaled by `(1 - p_t) ** gamma`, so
        well-classified examples count less."""),
    "categorical_crossentropy": _crossentropy(
        "Categorical", "one-hot (or soft) labels, of `output`'s shape.",
        "class probabilities (normalized to sum to 1 first) or logits.",
        """
      axis: the classes axis (default the last).

    Raises:
      ValueError: `target` and `output` have incompatible shapes."""),
    "categorical_focal_crossentropy": _crossentropy(
        "Categorical focal", "one-hot labels, of `output`'s shape.",
        "class probabilities (normalized to sum to 1 first) or logits.",
        """
      alpha: a weight on every class.
      gamma: the focusing exponent (`(1 - p) ** gamma` scales each class' term).
      axis: the classes axis (default the last)."""),
    "conv1d": _conv(1, "(batch, steps, channels)", "(width, in_channels, out_channels)").replace(
        _PADDING, _PADDING[:-1] + ', or "causal" (left padding only: outputs see no future '
        'steps).'),
    "conv2d": _conv(2, "(batch, height, width, channels)",
                    "(height, width, in_channels, out_channels)"),
    "conv3d": _conv(3, "(batch, depth, height, width, channels)",
                    "(depth, height, width, in_channels, out_channels)"),
    "conv2d_transpose": f"""2-D transposed convolution (the gradient of `conv2d` with respect
    to its input), which upsamples `x`.

    Args:
      x: the input, (batch, height, width, channels) or channels first.
      kernel: the filters, of shape (height, width, out_channels, in_channels).
      output_shape: the full output shape, batch included (None as batch means `x`'s).
      strides: the stride along each spatial axis.
      {_PADDING}
      {_FORMAT}
      dilation_rate: the dilation along each spatial axis.

    Returns:
      A tensor of shape `output_shape`.

    {_CONV_RAISES}
    """,
    "depthwise_conv2d": f"""2-D depthwise convolution: each input channel convolved with its
    own filters.

    Args:
      x: the input, (batch, height, width, channels) or channels first.
      depthwise_kernel: of shape (height, width, in_channels, channel_multiplier).
      strides: the stride along each spatial axis.
      {_PADDING}
      {_FORMAT}
      dilation_rate: the dilation along each spatial axis.

    Returns:
      A tensor with `in_channels * channel_multiplier` channels.

    {_CONV_RAISES}
    """,
    "separable_conv2d": f"""2-D separable convolution: a depthwise convolution, then a 1x1
    convolution that mixes the channels.

    Args:
      x: the input, (batch, height, width, channels) or channels first.
      depthwise_kernel: of shape (height, width, in_channels, channel_multiplier).
      pointwise_kernel: of shape (1, 1, in_channels * channel_multiplier, out_channels).
      strides: the stride along each spatial axis.
      {_PADDING}
      {_FORMAT}
      dilation_rate: the dilation along each spatial axis.

    Returns:
      A tensor with `out_channels` channels.

    {_CONV_RAISES}
    """,
    "pool2d": _pool(2),
    "pool3d": _pool(3),
    "temporal_padding": """Zero-pads the middle (time) axis of a 3-D tensor.

    Args:
      x: a tensor of shape (batch, steps, features).
      padding: a pair `(before, after)` of ints.

    Returns:
      A tensor of shape (batch, steps + before + after, features).

    Raises:
      ValueError: `padding` is not a pair.

    Example:

    >>> tf.keras.backend.temporal_padding(tf.ones((1, 2, 1)), (1, 0)).shape
    TensorShape([1, 3, 1])
    """,
    "spatial_2d_padding": _spatial_padding(2, "((1, 1), (1, 1))"),
    "spatial_3d_padding": _spatial_padding(3, "((1, 1), (1, 1), (1, 1))"),
    "map_fn": """Applies `fn` to each slice of `elems` along its first axis and stacks the
    results.

    Args:
      fn: a callable taking one slice.
      elems: a tensor (or nest of tensors) to slice along its first axis.
      name: optional name for the operation.
      dtype: the output dtype (or nest of dtypes) when it differs from `elems`'.

    Returns:
      The stacked results of `fn`.

    Example:

    >>> tf.keras.backend.map_fn(lambda v: v * 2, tf.constant([1, 2])).numpy()
    array([2, 4], dtype=int32)
    """,
    "foldl": _fold("from the first element to the last", "first to last", "first"),
    "foldr": _fold("from the last element to the first", "last to first", "last"),
    "gradients": """The symbolic gradients of `loss` with respect to `variables` (graph mode:
    inside a `tf.function` or a v1 graph; use `tf.GradientTape` eagerly).

    Args:
      loss: a scalar tensor (or a tensor, whose sum is differentiated).
      variables: a list of tensors or variables.

    Returns:
      A list of gradient tensors, one per variable (None where `loss` does not depend on
      it).
    """,
    "relu": """Rectified linear unit with Keras 2's options: `x` above `threshold`, capped at
    `max_value`, with slope `alpha` below the threshold.

    Args:
      x: a float tensor.
      alpha: the slope below the threshold (0: flat).
      max_value: optional cap on the output.
      threshold: the value below which the output is 0 (or sloped).

    Returns:
      A tensor of `x`'s shape and dtype.

    Example:

    >>> tf.keras.backend.relu(tf.constant([-1.0, 2.0, 8.0]), max_value=6.0).numpy()
    array([0., 2., 6.], dtype=float32)
    """,
    "hard_sigmoid": """Keras 2's piecewise-linear sigmoid: `clip(0.2 * x + 0.5, 0, 1)` (0 below
    -2.5, 1 above 2.5; `keras.activations.hard_sigmoid` uses Keras 3's slope 1/6).

    Args:
      x: a float tensor.

    Returns:
      A tensor of `x`'s shape and dtype.
    """,
    "sparse_categorical_crossentropy": """Categorical cross-entropy with integer targets, one
    value per sample (Keras 2's formula: probabilities clipped to [epsilon, 1 - epsilon]).

    Args:
      target: int class indices, of `output`'s shape without the classes axis.
      output: class probabilities (or logits with `from_logits`).
      from_logits: whether `output` holds logits.
      axis: the classes axis of `output` (default the last).
      ignore_class: optional class index whose targets get a loss of 0 (the result then
        carries a `_keras_mask` of the valid positions).

    Returns:
      A float tensor of `target`'s shape.
    """,
    "resize_images": """Scales a batch of images up by integer factors.

    Args:
      x: a 4-D tensor, (batch, height, width, channels) or channels first.
      height_factor: an int, the rows' factor.
      width_factor: an int, the columns' factor.
      data_format: "channels_last" or "channels_first" (required).
      interpolation: "nearest" (the default), "bilinear", "bicubic", "area", "lanczos3",
        "lanczos5", "gaussian" or "mitchellcubic".

    Returns:
      A tensor with height and width multiplied by the factors.

    Raises:
      ValueError: an unknown `data_format` or `interpolation`.

    Example:

    >>> tf.keras.backend.resize_images(tf.ones((1, 2, 3, 1)), 2, 2, "channels_last").shape
    TensorShape([1, 4, 6, 1])
    """,
    "resize_volumes": """Scales a batch of volumes up by integer factors, repeating each
    element along the depth, height and width axes.

    Args:
      x: a 5-D tensor, (batch, depth, height, width, channels) or channels first.
      depth_factor: an int.
      height_factor: an int.
      width_factor: an int.
      data_format: "channels_last" or "channels_first" (required).

    Returns:
      A tensor with the three spatial sizes multiplied by the factors.

    Raises:
      ValueError: an unknown `data_format`.
    """,
    "switch": """Chooses between two values by a condition: a branch for a scalar condition,
    elementwise for a tensor one.

    A scalar condition calls (or returns) `then_expression` or `else_expression` as a
    conditional (in a graph, only the chosen branch runs when they are callables). A
    tensor condition selects elementwise, broadcast over the expressions' trailing axes.

    Args:
      condition: a bool (or numeric, nonzero is True) scalar or tensor.
      then_expression: a tensor, or a callable returning one.
      else_expression: a tensor, or a callable returning one of the same shape.

    Returns:
      The selected tensor.

    Raises:
      ValueError: a tensor condition of higher rank than the expressions.

    Example:

    >>> tf.keras.backend.switch(tf.constant([True, False]), tf.constant([1, 2]),
    ...                         tf.constant([9, 9])).numpy()
    array([1, 9], dtype=int32)
    """,
}
