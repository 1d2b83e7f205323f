"""Docstrings of keras.ops.nn's convolutions, pooling, space/depth rearrangements and CTC
loss (nn_conv_functions.py). Attached by `ndflow.keras.docstrings.attach`; the examples run
as doctests."""

from __future__ import annotations

_INPUTS = """inputs: a tensor of rank N + 2: (batch, spatial..., channels) for
        "channels_last", (batch, channels, spatial...) for "channels_first"; N is 1, 2
        or 3."""
_FORMAT = """data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`)."""
_PADDING = """padding: "valid" (no padding) or "same" (zero padding so that the output
        size is ceil(input / stride))."""
_STRIDES = "strides: an int or a tuple of N ints."
_DILATION = "dilation_rate: an int or a tuple of N ints (spacing between kernel taps)."
_RAISES = """Raises:
      ValueError: an unknown `padding` or `data_format`, or a tuple argument without N
        entries."""


def _pool(kind: str) -> str:
    return f"""{kind} pooling over windows of `pool_size`.

    Args:
      {_INPUTS}
      pool_size: an int or a tuple of N ints, the window size.
      strides: an int or a tuple of N ints (default `pool_size`).
      {_PADDING}
      {_FORMAT}

    Returns:
      A tensor of `inputs`' rank and channels, with pooled spatial sizes.

    {_RAISES}
    """


def _adaptive(kind: str) -> str:
    return f"""Adaptive {kind} pooling to a fixed output size: output cell i pools the
    inputs from `floor(i * L / n)` to `ceil((i + 1) * L / n)` along each spatial axis (L
    the input size, n the output size), as PyTorch does.

    Args:
      {_INPUTS} The spatial sizes must be known statically.
      output_size: an int or a tuple of N ints.
      {_FORMAT}

    Returns:
      A tensor with spatial sizes `output_size`.

    Raises:
      ValueError: a spatial size unknown statically, or a bad `data_format`.
    """


def _space(summary: str, shape: str) -> str:
    return f"""{summary}

    Args:
      x: a 4-D tensor, (batch, height, width, channels) or channels first.
      block_size: the side of the square blocks (an int >= 2).
      data_format: "channels_last" (the default here) or "channels_first".

    Returns:
      A tensor of shape {shape} (channels last).
    """


DOCS = {
    "conv": f"""N-D convolution of `inputs` with `kernel` (a cross-correlation, as in every
    deep-learning framework).

    Args:
      {_INPUTS}
      kernel: a tensor of shape (spatial..., in_channels / groups, out_channels); when
        its in-channel size divides the input's, the channels are split into groups.
      {_STRIDES}
      {_PADDING}
      {_FORMAT}
      {_DILATION}

    Returns:
      A tensor of `inputs`' rank with `out_channels` channels.

    Raises:
      ValueError: a kernel of the wrong rank, input channels not divisible by the
        kernel's, or a bad `padding`/`data_format`.

    Example:

    >>> tf.keras.ops.conv(tf.ones((1, 5, 5, 3)), tf.ones((3, 3, 3, 8))).shape
    TensorShape([1, 3, 3, 8])
    """,
    "depthwise_conv": f"""1-D or 2-D depthwise convolution: each input channel convolved with
    its own `channel_multiplier` filters.

    Args:
      inputs: a 3-D or 4-D tensor (channels last, or first per `data_format`).
      kernel: a tensor of shape (spatial..., in_channels, channel_multiplier).
      {_STRIDES}
      {_PADDING}
      {_FORMAT}
      {_DILATION}

    Returns:
      A tensor with `in_channels * channel_multiplier` channels.

    Raises:
      ValueError: `inputs` is not 3-D or 4-D, or a bad `padding`/`data_format`.
    """,
    "separable_conv": f"""1-D or 2-D separable convolution: a depthwise convolution followed
    by a 1x1 convolution that mixes the channels.

    Args:
      inputs: a 3-D or 4-D tensor (channels last, or first per `data_format`).
      depthwise_kernel: (spatial..., in_channels, channel_multiplier).
      pointwise_kernel: (1..., in_channels * channel_multiplier, out_channels).
      {_STRIDES}
      {_PADDING}
      {_FORMAT}
      {_DILATION}

    Returns:
      A tensor with `out_channels` channels.

    {_RAISES}
    """,
    "conv_transpose": f"""N-D transposed convolution (the gradient of `conv` with respect to
    its input), which upsamples by `strides`.

    Args:
      {_INPUTS}
      kernel: a tensor of shape (spatial..., out_channels, in_channels).
      {_STRIDES}
      {_PADDING}
      output_padding: optional int or tuple of N ints, extra rows/columns added to one
        side of the output (below the stride), to pick among the sizes that convolve back
        to the input's.
      {_FORMAT}
      {_DILATION}

    Returns:
      A tensor with `out_channels` channels; for "same" padding without
      `output_padding`, each spatial size is `input * stride`.

    {_RAISES}

    Example:

    >>> tf.keras.ops.conv_transpose(tf.ones((1, 4, 4, 3)), tf.ones((3, 3, 8, 3)),
    ...                             strides=2, padding="same").shape
    TensorShape([1, 8, 8, 8])
    """,
    "max_pool": _pool("Max"),
    "average_pool": _pool("Average"),
    "adaptive_average_pool": _adaptive("average"),
    "adaptive_max_pool": _adaptive("max"),
    "depth_to_space": _space(
        "Moves channel blocks into space: each pixel's channels become a `block_size` x "
        "`block_size` patch.",
        "(batch, height * b, width * b, channels / b**2)"),
    "space_to_depth": _space(
        "Moves spatial blocks into channels: each `block_size` x `block_size` patch becomes "
        "one pixel with its values stacked on the channels axis.",
        "(batch, height / b, width / b, channels * b**2)"),
    "ctc_loss": """Connectionist temporal classification loss, one value per sample: the
    negative log-likelihood of the label sequence summed over all its alignments.

    Args:
      target: int labels of shape (batch, max_label_length) (the padding is ignored).
      output: logits of shape (batch, max_time, classes), before softmax.
      target_length: int lengths of the label sequences, shape (batch,).
      output_length: int lengths of the logit sequences, shape (batch,).
      mask_index: the class index of the blank.

    Returns:
      A float tensor of shape (batch,) (float32 at least).
    """,
    "unfold": """Extracts sliding blocks of a batch of images into columns (PyTorch's
    `unfold`, im2col).

    Args:
      x: a tensor of shape (N, C, H, W) (always channels first).
      kernel_size: the block size, an int or (kh, kw).
      dilation: the spacing between block elements.
      padding: zero padding added on both sides of each spatial axis.
      stride: the step between blocks.

    Returns:
      A tensor of shape (N, C * kh * kw, L), L the number of blocks; the block elements
      are ordered channel, then row, then column.

    Example:

    >>> tf.keras.ops.unfold(tf.zeros((1, 2, 4, 4)), kernel_size=2, stride=2).shape
    TensorShape([1, 8, 4])
    """,
    "fold": """Combines columns of sliding blocks back into images, summing where blocks
    overlap (PyTorch's `fold`, the adjoint of `unfold`).

    Args:
      x: a tensor of shape (N, C * kh * kw, L), as `unfold` makes.
      output_size: the images' (H, W).
      kernel_size: the block size, an int or (kh, kw).
      dilation: the spacing between block elements.
      padding: the padding `unfold` added (removed again).
      stride: the step between blocks.

    Returns:
      A tensor of shape (N, C, H, W).
    """,
    "ctc_decode": """Decodes CTC logits into label sequences, by best path (greedy) or beam
    search.

    Args:
      inputs: logits or probabilities, shape (batch, max_time, classes).
      sequence_lengths: the valid length of each sequence, shape (batch,).
      strategy: "greedy" or "beam_search".
      beam_width: the beam size of "beam_search".
      top_paths: how many best paths "beam_search" returns.
      merge_repeated: whether "greedy" merges repeated labels (beam search never does,
        as Keras' TensorFlow backend).
      mask_index: the blank class index.

    Returns:
      A tuple (decoded, scores): decoded of shape (top_paths, batch, max_time), int32,
      padded with -1 (top_paths is 1 for "greedy"); scores of shape (batch, top_paths):
      for "greedy" the negative sum of each step's best logit, for "beam_search" the
      path's log-probability (TensorFlow's decoders' values).

    Raises:
      ValueError: an unknown `strategy`.
    """,
}
