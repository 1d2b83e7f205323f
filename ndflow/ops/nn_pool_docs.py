"""The docstrings of nn_pool.py's public functions (attached at its end; see
core/doc_tables.py): one template for max/avg pooling over 1, 2 or N dimensions and one for
the TF1 spellings, with each function's words and example."""

from __future__ import annotations

from ndflow.core.doc_tables import EXAMPLE, family

_PADDING = ('padding: "VALID" or "SAME" (SAME pads so the output size is ceil(input / stride); '
            "padded\n        positions are not counted by average pooling).")

_POOL = """The {what} of each window of the input ({dims} {kind} pooling).

    Args:
      input: {input}
      ksize: the window size: an int, or a list of 1, N or N + 2 ints.
      strides: the window step, in the same forms as ksize.
      {padding}
      data_format: {formats}
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype with the pooled spatial sizes.
""" + EXAMPLE

_POOL_V1 = """2-D {kind} pooling (TF1 signature: `value`).

    See `tf.nn.{kind_short}_pool2d`.

    Args:
      value: a 4-D float tensor.
      ksize: the window size, 4 ints.
      strides: the window step, 4 ints.
      {padding}
      data_format: "NHWC" or "NCHW".
      name: optional name for the operation.
      input: the same as `value`.

    Returns:
      The pooled tensor.

    Example:
      >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
      >>> tf.compat.v1.nn.{kind_short}_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], 'VALID').shape
      TensorShape([1, 2, 2, 1])
    """

_X = "x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])\n      >>> "
_SHAPES = {  # dims: the template's words for the pooling of that rank
    "2d": dict(dims="2-D", input="a float tensor [batch, height, width, channels] (NHWC).",
               formats='"NHWC" or "NCHW".',
               example=_X + "tf.nn.{name}(x, 2, 2, 'VALID')[0, :, :, 0].numpy()"),
    "1d": dict(dims="1-D", input="a float tensor [batch, width, channels] (NWC).",
               formats='"NWC" or "NCW".',
               example="tf.nn.{name}(tf.reshape(tf.range(4.0), [1, 4, 1]), 2, 2, 'VALID')"
                       "[0, :, 0].numpy()"),
    "": dict(dims="N-D", formats='None (channels last) or a format such as "NCHW".',
             input="a float tensor of rank 3, 4 or 5 (1-, 2- or 3-D pooling, channels last "
                   "by\n        default).",
             example=_X + "tf.nn.{name}(x, 2, 2, 'VALID').shape"),
}
_OUT = {
    "max_pool2d": "array([[ 5.,  7.],\n             [13., 15.]], dtype=float32)",
    "avg_pool2d": "array([[ 2.5,  4.5],\n             [10.5, 12.5]], dtype=float32)",
    "max_pool1d": "array([1., 3.], dtype=float32)",
    "avg_pool1d": "array([0.5, 2.5], dtype=float32)",
    "max_pool": "TensorShape([1, 2, 2, 1])",
    "avg_pool": "TensorShape([1, 2, 2, 1])",
}
_WHAT = {"max": "maximum", "avg": "average"}

DOCS = family(_POOL, {
    f"{kind}_pool{dims}": dict(words, what=_WHAT[kind], kind=kind, out=_OUT[f"{kind}_pool{dims}"],
                               example=words["example"].format(name=f"{kind}_pool{dims}"))
    for dims, words in _SHAPES.items() for kind in _WHAT
}, padding=_PADDING) | family(_POOL_V1, {
    "max_pool_v1": dict(kind="max", kind_short="max"),
    "avg_pool_v1": dict(kind="average", kind_short="avg"),
}, padding=_PADDING)
