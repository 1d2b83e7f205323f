"""The docstrings of apply.py's public functions (attached at its end; see
core/doc_tables.py)."""

from __future__ import annotations

DOCS = {
    "convert_to_tensor": """Converts a value to a tensor.

    Tensors pass through (their dtype must match `dtype`); Python numbers, nested lists,
    NumPy arrays and objects with a registered conversion become constants. Python ints
    become int32 and floats float32 unless `dtype` or `dtype_hint` says otherwise.

    Args:
      value: the value to convert.
      dtype: optional required dtype of the result.
      name: optional name for a new constant.
      dtype_hint: optional preferred dtype, used only when the value can take it.

    Returns:
      A tensor.

    Raises:
      TypeError: if the value cannot be converted.
      ValueError: if a tensor's dtype differs from `dtype`, or the value does not fit it.

    Example:
      >>> tf.convert_to_tensor([1, 2]).dtype
      tf.int32
      >>> tf.convert_to_tensor([1, 2], dtype_hint=tf.float32).dtype
      tf.float32
    """,
    "constant_value": """The value of a tensor as a NumPy array, when known without running a graph.

    Eager tensors always have one; in a graph, constants and ops computable from constants
    (shape, size, rank, ...) do.

    Args:
      tensor: a tensor (other values are returned as they are).
      partial: if True, a partially known shape value may contain None entries.

    Returns:
      A NumPy array, or None when the value is not known statically.

    Example:
      >>> tf.get_static_value(tf.constant([1, 2]))
      array([1, 2], dtype=int32)
      >>> with tf.Graph().as_default():
      ...     x = tf.compat.v1.placeholder(tf.float32, [None, 3])
      ...     print(tf.get_static_value(tf.shape(x)))
      None
    """,
}
