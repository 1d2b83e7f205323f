"""The docstrings of nn_conv.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

# The Args lines of `padding` and `dilations` every convolution shares (nn_conv_nd_docs too).
PADDING = """padding: "VALID" (no padding) or "SAME" (pad so the output size is ceil(input /
        stride))."""
DILATIONS = ("dilations: an int or list: the spacing between filter taps in each spatial "
             "dimension (1:\n        none).")


def transpose(title: str, details: str, inputs: tuple[str, str], shape: str, strides: str,
              formats: str, example: str, raises: str = "") -> str:
    """The docstring of a transposed convolution (conv1d/conv2d_transpose, conv_transpose):
    `inputs` describe `input` and `filters`; `example` holds the example's lines."""
    details = f"\n    {details}\n" if details else ""
    return f"""{title}
{details}
    Args:
      input: {inputs[0]}
      filters: {inputs[1]}
      output_shape: {shape}
      strides: {strides}
      {PADDING}
      data_format: {formats}
      {DILATIONS}
      name: optional name for the operation.

    Returns:
      A tensor of shape `output_shape`.
{raises}
    Example:
      >>> {example}
    """


def backprop(wrt: str, call: str, depthwise: bool = False) -> str:
    """The docstring of the raw gradient op of conv2d (or depthwise conv2d) with respect to
    its `wrt` ("filter" or "input"), whose example calls tf.<call>."""
    conv = "convolution" if depthwise else "conv2d"
    if wrt == "filter":
        last = "multiplier" if depthwise else "out"
        inputs = (f"input: the {conv} input, 4-D.",
                  f"filter_sizes: the filter shape [h, w, in, {last}].")
        example = ("x, dy = tf.ones([1, 3, 3, 1]), tf.ones([1, 2, 2, 1])",
                   "x, [2, 2, 1, 1]", "[2, 2, 1, 1]")
    else:
        inputs = ("input_sizes: the input shape, 4 ints.",
                  f"filter: the {'depthwise' if depthwise else 'conv2d'} filter.")
        example = ("w, dy = tf.ones([2, 2, 1, 1]), tf.ones([1, 2, 2, 1])",
                   "[1, 3, 3, 1], w", "[1, 3, 3, 1]")
    sizes = inputs[0 if wrt == "input" else 1].split(":")[0]
    if depthwise:
        title = f"Depthwise conv2d's {wrt} gradient (raw op)."
        middle = "data_format: \"NHWC\" or \"NCHW\".\n      dilations: a list of 4 ints."
        output, tail = "output", ""
    else:
        title = f"The gradient of conv2d with respect to its {wrt} (the raw op)."
        middle = f"""use_cudnn_on_gpu: ignored.
      explicit_paddings: the paddings for padding="EXPLICIT".
      data_format: "NHWC" or "NCHW".
      {DILATIONS}"""
        output = "conv2d output"
        tail = "\n      filters: the TF2 name of `filter`." if wrt == "input" else ""
    return f"""{title}

    Args:
      {inputs[0]}
      {inputs[1]}
      out_backprop: the gradient with respect to the {output}.
      strides: a list of 4 ints.
      {PADDING}
      {middle}
      name: optional name for the operation.{tail}

    Returns:
      A tensor of shape `{sizes}`.

    Example:
      >>> {example[0]}
      >>> tf.{call}({example[1]}, dy, [1] * 4, 'VALID').shape
      TensorShape({example[2]})
    """


DOCS = {
    "conv2d": f"""A 2-D convolution of a batch of images with a filter bank.

    Each output pixel is the sum over the filter window and input channels of input *
    filter.

    Args:
      input: a float tensor of shape [batch, height, width, in_channels] (NHWC) or [batch,
        in_channels, height, width] (NCHW).
      filters: a tensor of shape [filter_height, filter_width, in_channels, out_channels].
      strides: an int or a list of 1, 2 or 4 ints: the step of the window in each dimension.
      {PADDING}
      data_format: "NHWC" or "NCHW".
      {DILATIONS}
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype: [batch, out_height, out_width, out_channels] for NHWC.

    Raises:
      ValueError or InvalidArgumentError: if the channel counts or shapes do not fit.

    Example:
      >>> x = tf.ones([1, 4, 4, 1])
      >>> tf.nn.conv2d(x, tf.ones([3, 3, 1, 2]), strides=1, padding='VALID').shape
      TensorShape([1, 2, 2, 2])
    """,
    "conv2d_v1": f"""A 2-D convolution (TF1 signature: `filter`, 4-element strides).

    See `tf.nn.conv2d`; `filters` is the TF2 name of `filter`, and `use_cudnn_on_gpu` is
    accepted for compatibility.

    Args:
      input: a float tensor in NHWC (or NCHW) layout.
      filter: a tensor of shape [filter_height, filter_width, in_channels, out_channels].
      strides: a list of 4 ints (1 in the batch and channel positions).
      {PADDING}
      use_cudnn_on_gpu: ignored.
      data_format: "NHWC" or "NCHW".
      {DILATIONS}
      name: optional name for the operation.
      filters: the same as `filter`.

    Returns:
      A tensor of input's dtype.

    Example:
      >>> x = tf.ones([1, 4, 4, 1])
      >>> tf.compat.v1.nn.conv2d(x, tf.ones([3, 3, 1, 2]), [1, 1, 1, 1], 'SAME').shape
      TensorShape([1, 4, 4, 2])
    """,
    "bias_add": """Adds a bias vector along the channel dimension.

    Args:
      value: a tensor of rank >= 2.
      bias: a 1-D tensor whose size is value's channel dimension.
      data_format: None or "N...C" (channels last), or "NC..." (channels second).
      name: optional name for the operation.

    Returns:
      A tensor of value's shape and dtype.

    Raises:
      ValueError or InvalidArgumentError: if bias does not match the channel dimension.

    Example:
      >>> tf.nn.bias_add([[1.0, 2.0]], [10.0, 20.0]).numpy()
      array([[11., 22.]], dtype=float32)
    """,
    "conv2d_transpose": transpose(
        "The transpose (gradient) of conv2d: upsamples with a filter bank.",
        "Often called deconvolution; the output has `output_shape`.",
        ("a float tensor [batch, height, width, in_channels] (NHWC).",
         "a tensor [filter_height, filter_width, output_channels, in_channels]."),
        "the 4-element shape of the result.", "an int or a list of 1, 2 or 4 ints.",
        '"NHWC" or "NCHW".',
        "x = tf.ones([1, 2, 2, 1])\n      >>> tf.nn.conv2d_transpose(x, tf.ones([3, 3, 1, 1]), "
        "[1, 4, 4, 1], strides=2).shape\n      TensorShape([1, 4, 4, 1])",
        raises="\n    Raises:\n      InvalidArgumentError: if `output_shape` is not consistent "
               "with the input, strides and\n        padding.\n"),
    "conv2d_transpose_v1": f"""The transpose of conv2d (TF1 signature: `value`, `filter`).

    See `tf.nn.conv2d_transpose`; `input` and `filters` are the TF2 names of `value` and
    `filter`.

    Args:
      value: the input.
      filter: the filter bank.
      output_shape: the 4-element shape of the result.
      strides: a list of 4 ints.
      {PADDING}
      data_format: "NHWC" or "NCHW".
      name: optional name for the operation.
      input: the same as `value`.
      filters: the same as `filter`.
      {DILATIONS}

    Returns:
      A tensor of shape `output_shape`.

    Example:
      >>> x, w = tf.ones([1, 2, 2, 1]), tf.ones([3, 3, 1, 1])
      >>> tf.compat.v1.nn.conv2d_transpose(x, w, [1, 4, 4, 1], [1, 2, 2, 1]).shape
      TensorShape([1, 4, 4, 1])
    """,
    "conv2d_backprop_filter": backprop("filter", "compat.v1.nn.conv2d_backprop_filter"),
    "conv2d_backprop_input": backprop("input", "compat.v1.nn.conv2d_backprop_input"),
    "depthwise_conv2d_native": f"""A depthwise 2-D convolution (the raw op).

    Each input channel is convolved with its own channel_multiplier filters.

    Args:
      input: a float tensor [batch, height, width, in_channels] (NHWC).
      filter: a tensor [filter_height, filter_width, in_channels, channel_multiplier].
      strides: a list of 4 ints.
      {PADDING}
      data_format: "NHWC" or "NCHW".
      dilations: a list of 4 ints.
      name: optional name for the operation.

    Returns:
      A tensor with in_channels * channel_multiplier channels.

    Example:
      >>> x = tf.ones([1, 4, 4, 1])
      >>> tf.compat.v1.nn.depthwise_conv2d_native(x, tf.ones([3, 3, 1, 2]), [1] * 4, 'VALID').shape
      TensorShape([1, 2, 2, 2])
    """,
    "depthwise_conv2d_v1": f"""A depthwise 2-D convolution (TF1 signature, with `rate`).

    See `tf.nn.depthwise_conv2d`; `rate` is TF1's name for `dilations`.

    Args:
      input: a 4-D float tensor.
      filter: a tensor [filter_height, filter_width, in_channels, channel_multiplier].
      strides: a list of 4 ints.
      {PADDING}
      rate: the dilation rate, 2 ints.
      name: optional name for the operation.
      data_format: "NHWC" or "NCHW".
      {DILATIONS}

    Returns:
      A tensor with in_channels * channel_multiplier channels.

    Example:
      >>> x = tf.ones([1, 4, 4, 1])
      >>> tf.compat.v1.nn.depthwise_conv2d(x, tf.ones([3, 3, 1, 2]), [1, 1, 1, 1], 'SAME').shape
      TensorShape([1, 4, 4, 2])
    """,
}
