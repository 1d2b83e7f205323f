"""The docstrings of nn_conv_nd.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

from ndflow.ops.nn_conv_docs import DILATIONS, PADDING, backprop, transpose

DOCS = {
    "conv1d": f"""A 1-D convolution of a batch of sequences with a filter bank.

    Args:
      input: a float tensor [batch, width, in_channels] (NWC) or [batch, in_channels, width]
        (NCW).
      filters: a tensor [filter_width, in_channels, out_channels].
      stride: an int or a list of 1 or 3 ints.
      {PADDING}
      data_format: "NWC" or "NCW".
      {DILATIONS}
      name: optional name for the operation.

    Returns:
      A tensor [batch, out_width, out_channels] for NWC.

    Example:
      >>> tf.nn.conv1d(tf.ones([1, 5, 1]), tf.ones([3, 1, 2]), 1, 'VALID').shape
      TensorShape([1, 3, 2])
    """,
    "conv1d_v1": f"""A 1-D convolution (TF1 signature: `value`, `filters`).

    See `tf.nn.conv1d`.

    Args:
      value: the input, [batch, width, in_channels].
      filters: a tensor [filter_width, in_channels, out_channels].
      stride: an int.
      {PADDING}
      use_cudnn_on_gpu: ignored.
      data_format: "NWC" or "NCW".
      name: optional name for the operation.
      input: the same as `value`.
      {DILATIONS}

    Returns:
      A tensor [batch, out_width, out_channels] for NWC.

    Example:
      >>> tf.compat.v1.nn.conv1d(tf.ones([1, 5, 1]), tf.ones([3, 1, 2]), 1, 'SAME').shape
      TensorShape([1, 5, 2])
    """,
    "conv1d_transpose": transpose(
        "The transpose (gradient) of conv1d.", "",
        ("a float tensor [batch, width, in_channels] (NWC).",
         "a tensor [filter_width, output_channels, in_channels]."),
        "the 3-element shape of the result.", "an int or a list of 1 or 3 ints.",
        '"NWC" or "NCW".', "tf.nn.conv1d_transpose(tf.ones([1, 2, 1]), tf.ones([3, 1, 1]), "
        "[1, 4, 1], 2).shape\n      TensorShape([1, 4, 1])"),
    "conv_transpose": transpose(
        "The transpose of a 1-, 2- or 3-D convolution.",
        "The dimensionality follows the length of `output_shape`.",
        ("a float tensor of rank 3, 4 or 5.", "the filter bank [spatial..., output_channels, "
         "in_channels]."), "the shape of the result.", "an int or a list.",
        "the layout (channels last by default).",
        "tf.nn.conv_transpose(tf.ones([1, 2, 2, 1]), tf.ones([3, 3, 1, 1]), [1, 4, 4, 1], "
        "2).shape\n      TensorShape([1, 4, 4, 1])"),
    "convolution": f"""A 1-, 2- or 3-D convolution, chosen by the rank of `filters`.

    Args:
      input: a float tensor [batch, spatial..., in_channels] (channels last by default).
      filters: a tensor [spatial..., in_channels, out_channels].
      strides: an int or a list of one int per spatial dimension.
      {PADDING}
      data_format: None (channels last) or a format such as "NCHW".
      {DILATIONS}
      name: optional name for the operation.

    Returns:
      A tensor [batch, out_spatial..., out_channels] (channels last).

    Example:
      >>> tf.nn.convolution(tf.ones([1, 4, 4, 1]), tf.ones([3, 3, 1, 2])).shape
      TensorShape([1, 2, 2, 2])
    """,
    "convolution_v1": f"""A 1-, 2- or 3-D convolution (TF1 signature: `filter`, `dilation_rate`).

    See `tf.nn.convolution`.

    Args:
      input: a float tensor, channels last by default.
      filter: the filter bank.
      {PADDING}
      strides: the window steps.
      dilation_rate: TF1's name for `dilations`.
      name: optional name for the operation.
      data_format: the layout.
      filters: the same as `filter`.
      {DILATIONS}

    Returns:
      A tensor, channels last by default.

    Example:
      >>> tf.compat.v1.nn.convolution(tf.ones([1, 4, 4, 1]), tf.ones([3, 3, 1, 2]), 'SAME').shape
      TensorShape([1, 4, 4, 2])
    """,
    "atrous_conv2d": f"""A 2-D convolution with the filter dilated by `rate` (atrous convolution).

    The same as conv2d with dilations=rate and stride 1.

    Args:
      value: a float tensor [batch, height, width, in_channels].
      filters: a tensor [filter_height, filter_width, in_channels, out_channels].
      rate: the dilation rate (>= 1) in both spatial dimensions.
      {PADDING}
      name: optional name for the operation.

    Returns:
      A tensor [batch, out_height, out_width, out_channels].

    Example:
      >>> tf.nn.atrous_conv2d(tf.ones([1, 5, 5, 1]), tf.ones([3, 3, 1, 1]), 2, 'VALID').shape
      TensorShape([1, 1, 1, 1])
    """,
    "atrous_conv2d_transpose": f"""The transpose of atrous_conv2d.

    Args:
      value: a float tensor [batch, height, width, in_channels].
      filters: a tensor [filter_height, filter_width, out_channels, in_channels].
      output_shape: the 4-element shape of the result.
      rate: the dilation rate.
      {PADDING}
      name: optional name for the operation.

    Returns:
      A tensor of shape `output_shape`.

    Example:
      >>> x, w = tf.ones([1, 1, 1, 1]), tf.ones([3, 3, 1, 1])
      >>> tf.nn.atrous_conv2d_transpose(x, w, [1, 5, 5, 1], 2, 'VALID').shape
      TensorShape([1, 5, 5, 1])
    """,
    "depthwise_conv2d_native_backprop_filter": backprop(
        "filter", "nn.depthwise_conv2d_backprop_filter", depthwise=True),
    "depthwise_conv2d_native_backprop_input": backprop(
        "input", "nn.depthwise_conv2d_backprop_input", depthwise=True),
    "pool": f"""N-D max or average pooling.

    Args:
      input: a float tensor [batch, spatial..., channels] (channels last by default).
      window_shape: the window size in each spatial dimension.
      pooling_type: "MAX" or "AVG".
      strides: the window step in each spatial dimension (default 1).
      {PADDING}
      data_format: the layout.
      {DILATIONS}
      name: optional name for the operation.

    Returns:
      A tensor [batch, out_spatial..., channels].

    Raises:
      ValueError: for another pooling type.

    Example:
      >>> tf.nn.pool(tf.ones([1, 4, 4, 1]), [2, 2], 'MAX', strides=[2, 2]).shape
      TensorShape([1, 2, 2, 1])
    """,
    "pool_v1": f"""N-D max or average pooling (TF1 signature, with `dilation_rate`).

    See `tf.nn.pool`.

    Args:
      input: a float tensor, channels last by default.
      window_shape: the window size.
      pooling_type: "MAX" or "AVG".
      {PADDING}
      dilation_rate: TF1's name for `dilations`.
      strides: the window steps.
      name: optional name for the operation.
      data_format: the layout.
      {DILATIONS}

    Returns:
      The pooled tensor.

    Example:
      >>> tf.compat.v1.nn.pool(tf.ones([1, 4, 4, 1]), [2, 2], 'AVG', 'VALID', strides=[2, 2]).shape
      TensorShape([1, 2, 2, 1])
    """,
    "separable_conv2d": f"""A depthwise convolution, then a 1x1 convolution mixing the channels.

    Args:
      input: a float tensor [batch, height, width, in_channels] (NHWC).
      depthwise_filter: a tensor [h, w, in_channels, channel_multiplier].
      pointwise_filter: a tensor [1, 1, in_channels * channel_multiplier, out_channels].
      strides: a list of 4 ints.
      {PADDING}
      data_format: "NHWC" or "NCHW".
      {DILATIONS}
      name: optional name for the operation.

    Returns:
      A tensor [batch, out_height, out_width, out_channels].

    Example:
      >>> x, dw, pw = tf.ones([1, 4, 4, 1]), tf.ones([3, 3, 1, 2]), tf.ones([1, 1, 2, 4])
      >>> tf.nn.separable_conv2d(x, dw, pw, [1, 1, 1, 1], 'VALID').shape
      TensorShape([1, 2, 2, 4])
    """,
    "separable_conv2d_v1": f"""A separable 2-D convolution (TF1 signature, with `rate`).

    See `tf.nn.separable_conv2d`; `rate` is TF1's name for `dilations`.

    Args:
      input: a 4-D float tensor.
      depthwise_filter: a tensor [h, w, in_channels, channel_multiplier].
      pointwise_filter: a tensor [1, 1, in_channels * channel_multiplier, out_channels].
      strides: a list of 4 ints.
      {PADDING}
      rate: the dilation rate, 2 ints.
      name: optional name for the operation.
      data_format: "NHWC" or "NCHW".
      {DILATIONS}

    Returns:
      A tensor [batch, out_height, out_width, out_channels].

    Example:
      >>> x, dw, pw = tf.ones([1, 4, 4, 1]), tf.ones([3, 3, 1, 2]), tf.ones([1, 1, 2, 4])
      >>> tf.compat.v1.nn.separable_conv2d(x, dw, pw, [1, 1, 1, 1], 'SAME').shape
      TensorShape([1, 4, 4, 4])
    """,
}
