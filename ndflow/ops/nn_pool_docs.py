"""The docstrings of nn_pool.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "max_pool2d": """The maximum of each window of the input (2-D max pooling).

    Args:
      input: a float tensor [batch, height, width, channels] (NHWC).
      ksize: the window size: an int, or a list of 1, N or N + 2 ints.
      strides: the window step, in the same forms as ksize.
      padding: "VALID" or "SAME" (SAME pads so the output size is ceil(input / stride); padded
        positions are not counted by average pooling).
      data_format: "NHWC" or "NCHW".
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype with the pooled spatial sizes.

    Example:
      >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
      >>> tf.nn.max_pool2d(x, 2, 2, 'VALID')[0, :, :, 0].numpy()
      array([[ 5.,  7.],
             [13., 15.]], dtype=float32)
    """,
    "avg_pool2d": """The average of each window of the input (2-D avg pooling).

    Args:
      input: a float tensor [batch, height, width, channels] (NHWC).
      ksize: the window size: an int, or a list of 1, N or N + 2 ints.
      strides: the window step, in the same forms as ksize.
      padding: "VALID" or "SAME" (SAME pads so the output size is ceil(input / stride); padded
        positions are not counted by average pooling).
      data_format: "NHWC" or "NCHW".
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype with the pooled spatial sizes.

    Example:
      >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
      >>> tf.nn.avg_pool2d(x, 2, 2, 'VALID')[0, :, :, 0].numpy()
      array([[ 2.5,  4.5],
             [10.5, 12.5]], dtype=float32)
    """,
    "max_pool1d": """The maximum of each window of the input (1-D max pooling).

    Args:
      input: a float tensor [batch, width, channels] (NWC).
      ksize: the window size: an int, or a list of 1, N or N + 2 ints.
      strides: the window step, in the same forms as ksize.
      padding: "VALID" or "SAME" (SAME pads so the output size is ceil(input / stride); padded
        positions are not counted by average pooling).
      data_format: "NWC" or "NCW".
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype with the pooled spatial sizes.

    Example:
      >>> tf.nn.max_pool1d(tf.reshape(tf.range(4.0), [1, 4, 1]), 2, 2, 'VALID')[0, :, 0].numpy()
      array([1., 3.], dtype=float32)
    """,
    "avg_pool1d": """The average of each window of the input (1-D avg pooling).

    Args:
      input: a float tensor [batch, width, channels] (NWC).
      ksize: the window size: an int, or a list of 1, N or N + 2 ints.
      strides: the window step, in the same forms as ksize.
      padding: "VALID" or "SAME" (SAME pads so the output size is ceil(input / stride); padded
        positions are not counted by average pooling).
      data_format: "NWC" or "NCW".
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype with the pooled spatial sizes.

    Example:
      >>> tf.nn.avg_pool1d(tf.reshape(tf.range(4.0), [1, 4, 1]), 2, 2, 'VALID')[0, :, 0].numpy()
      array([0.5, 2.5], dtype=float32)
    """,
    "max_pool": """The maximum of each window of the input (N-D max pooling).

    Args:
      input: a float tensor of rank 3, 4 or 5 (1-, 2- or 3-D pooling, channels last by
        default).
      ksize: the window size: an int, or a list of 1, N or N + 2 ints.
      strides: the window step, in the same forms as ksize.
      padding: "VALID" or "SAME" (SAME pads so the output size is ceil(input / stride); padded
        positions are not counted by average pooling).
      data_format: None (channels last) or a format such as "NCHW".
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype with the pooled spatial sizes.

    Example:
      >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
      >>> tf.nn.max_pool(x, 2, 2, 'VALID').shape
      TensorShape([1, 2, 2, 1])
    """,
    "avg_pool": """The average of each window of the input (N-D avg pooling).

    Args:
      input: a float tensor of rank 3, 4 or 5 (1-, 2- or 3-D pooling, channels last by
        default).
      ksize: the window size: an int, or a list of 1, N or N + 2 ints.
      strides: the window step, in the same forms as ksize.
      padding: "VALID" or "SAME" (SAME pads so the output size is ceil(input / stride); padded
        positions are not counted by average pooling).
      data_format: None (channels last) or a format such as "NCHW".
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype with the pooled spatial sizes.

    Example:
      >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
      >>> tf.nn.avg_pool(x, 2, 2, 'VALID').shape
      TensorShape([1, 2, 2, 1])
    """,
    "max_pool_v1": """2-D max pooling (TF1 signature: `value`).

    See `tf.nn.max_pool2d`.

    Args:
      value: a 4-D float tensor.
      ksize: the window size, 4 ints.
      strides: the window step, 4 ints.
      padding: "VALID" or "SAME" (SAME pads so the output size is ceil(input / stride); padded
        positions are not counted by average pooling).
      data_format: "NHWC" or "NCHW".
      name: optional name for the operation.
      input: the same as `value`.

    Returns:
      The pooled tensor.

    Example:
      >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
      >>> tf.compat.v1.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], 'VALID').shape
      TensorShape([1, 2, 2, 1])
    """,
    "avg_pool_v1": """2-D average pooling (TF1 signature: `value`).

    See `tf.nn.avg_pool2d`.

    Args:
      value: a 4-D float tensor.
      ksize: the window size, 4 ints.
      strides: the window step, 4 ints.
      padding: "VALID" or "SAME" (SAME pads so the output size is ceil(input / stride); padded
        positions are not counted by average pooling).
      data_format: "NHWC" or "NCHW".
      name: optional name for the operation.
      input: the same as `value`.

    Returns:
      The pooled tensor.

    Example:
      >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
      >>> tf.compat.v1.nn.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], 'VALID').shape
      TensorShape([1, 2, 2, 1])
    """,
}
