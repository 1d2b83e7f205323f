"""The docstrings of array_core.py's public functions (attached at its end; see
core/doc_tables.py)."""

from __future__ import annotations

_CONSTANT_ARGS = """    Args:
      value: a Python scalar, nested list, NumPy array or tensor.
      dtype: optional dtype; by default inferred (Python ints -> int32, floats -> float32).
      shape: optional shape; a one-element `value` is broadcast to it, otherwise `value`
        must have exactly as many elements and is reshaped.
      name: optional name for the operation.
"""

DOCS = {
    "constant": """A tensor holding `value`.

""" + _CONSTANT_ARGS + """
    Returns:
      A tensor (an eager tensor, or a Const op's output in a graph).

    Raises:
      TypeError: if `value` has more than one element and not as many as `shape`.
      ValueError: if the result would be larger than 2GB.

    Example:
      >>> tf.constant(0.5, shape=[2]).numpy()
      array([0.5, 0.5], dtype=float32)
    """,
    "constant_v1": """A tensor holding `value` (TF1 signature, with `verify_shape`).

""" + _CONSTANT_ARGS + """      verify_shape: if True, `value` must already have `shape`.

    Returns:
      A tensor.

    Raises:
      TypeError: if `verify_shape` is set and the shapes differ, or the element counts do
        not fit `shape`.

    Example:
      >>> tf.compat.v1.constant([1, 2], shape=[2], verify_shape=True).numpy()
      array([1, 2], dtype=int32)
    """,
    "placeholder": """A graph input whose value is fed when the graph runs (TF1).

    Args:
      dtype: the dtype of the fed value.
      shape: optional shape (None dimensions accept any size; None: any shape).
      name: optional name for the operation.

    Returns:
      A tensor to feed through `Session.run(..., feed_dict={placeholder: value})`.

    Raises:
      RuntimeError: when executing eagerly.

    Example:
      >>> with tf.Graph().as_default():
      ...     x = tf.compat.v1.placeholder(tf.float32, [None, 2])
      ...     with tf.compat.v1.Session() as sess:
      ...         print(sess.run(x * 2, feed_dict={x: [[1.0, 2.0]]}))
      [[2. 4.]]
    """,
    "placeholder_with_default": """A graph input that gives `input` unless a value is fed.

    Args:
      input: the default value (a tensor).
      shape: the shape fed values must have (may be less specific than input's).
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype.

    Raises:
      ValueError: if `shape` is incompatible with input's shape.

    Example:
      >>> tf.compat.v1.placeholder_with_default([1, 2], [None]).numpy()
      array([1, 2], dtype=int32)
    """,
    "identity": """A tensor with the same value as `input`.

    In a graph this is an Identity op (useful as a named output or a point to attach control
    dependencies to); it is also the way to read a variable's current value as a tensor.

    Args:
      input: a tensor (or a value convertible to one).
      name: optional name for the operation.

    Returns:
      A tensor of input's shape, dtype and value.

    Example:
      >>> tf.identity([1, 2]).numpy()
      array([1, 2], dtype=int32)
    """,
    "identity_n": """Identities of a list of tensors, as one IdentityN op.

    Args:
      input: a list of tensors.
      name: optional name for the operation.

    Returns:
      A list of tensors with the inputs' values.

    Example:
      >>> [t.numpy().tolist() for t in tf.identity_n([[1], [2]])]
      [[1], [2]]
    """,
    "stop_gradient": """The value of `input`, treated as a constant by gradient computations.

    Args:
      input: a tensor.
      name: optional name for the operation.

    Returns:
      A tensor of input's value; no gradient flows through it.

    Example:
      >>> x = tf.constant(3.0)
      >>> with tf.GradientTape() as tape:
      ...     tape.watch(x)
      ...     y = x * tf.stop_gradient(x)
      >>> float(tape.gradient(y, x))
      3.0
    """,
    "ensure_shape": """Checks that x's shape is compatible with `shape`; refines x's static shape.

    Args:
      x: a tensor.
      shape: the expected shape; None dimensions match any size.
      name: optional name for the operation.

    Returns:
      `x`, with the static shape refined by `shape`.

    Raises:
      InvalidArgumentError: if x's shape is incompatible (at run time in a graph).

    Example:
      >>> tf.ensure_shape(tf.zeros([2, 3]), [None, 3]).shape
      TensorShape([2, 3])
    """,
    "no_op": """An operation that does nothing (a target for control dependencies).

    Args:
      name: optional name for the operation.

    Returns:
      The NoOp operation in a graph; None when executing eagerly.

    Example:
      >>> print(tf.no_op())
      None
    """,
    "group": """An operation that runs after all of `inputs` (ops or tensors), producing nothing.

    Args:
      *inputs: ops, tensors, or lists of them.
      name: optional name for the operation.

    Returns:
      A NoOp operation depending on every input, in a graph; None when executing eagerly.

    Example:
      >>> with tf.Graph().as_default():
      ...     a, b = tf.constant(1), tf.constant(2)
      ...     len(tf.group(a, b).control_inputs)
      2
    """,
    "shape": """The shape of `input` as a 1-D integer tensor.

    Args:
      input: a tensor (or SparseTensor / RaggedTensor).
      out_type: int32 (the default) or int64.
      name: optional name for the operation.

    Returns:
      A rank-1 tensor of `out_type` (in a graph, a constant when the static shape is fully
      known, else computed when run).

    Example:
      >>> tf.shape(tf.zeros([2, 3])).numpy()
      array([2, 3], dtype=int32)
    """,
    "shape_n": """The shapes of several tensors, as one ShapeN op.

    Args:
      input: a list of tensors.
      out_type: int32 (the default) or int64.
      name: optional name for the operation.

    Returns:
      A list of rank-1 tensors, one shape per input.

    Example:
      >>> [s.numpy().tolist() for s in tf.shape_n([tf.zeros([2, 3]), tf.zeros([4])])]
      [[2, 3], [4]]
    """,
    "size": """The number of elements of `input`.

    Args:
      input: a tensor (or SparseTensor).
      out_type: int32 (the default) or int64.
      name: optional name for the operation.

    Returns:
      A scalar tensor of `out_type`.

    Example:
      >>> int(tf.size(tf.zeros([2, 3])))
      6
    """,
    "rank": """The number of dimensions of `input`.

    Args:
      input: a tensor (or SparseTensor / RaggedTensor).
      name: optional name for the operation.

    Returns:
      A scalar int32 tensor.

    Example:
      >>> int(tf.rank(tf.zeros([2, 3])))
      2
    """,
    "reshape": """Gives `tensor` a new shape with the same elements, in row-major order.

    Args:
      tensor: a tensor.
      shape: a list or 1-D int tensor; one entry may be -1, inferred from the size.
      name: optional name for the operation.

    Returns:
      A tensor of `shape` and tensor's dtype.

    Raises:
      InvalidArgumentError: if the element counts differ.

    Example:
      >>> tf.reshape(tf.range(6), [2, -1]).numpy()
      array([[0, 1, 2],
             [3, 4, 5]], dtype=int32)
    """,
    "expand_dims": """Inserts a dimension of size 1 at position `axis`.

    Args:
      input: a tensor.
      axis: where the new dimension goes, in [-rank - 1, rank] (negative counts from the end).
      name: optional name for the operation.

    Returns:
      A tensor with one more dimension than `input`.

    Raises:
      InvalidArgumentError: if `axis` is out of range.

    Example:
      >>> tf.expand_dims([1, 2], 0).shape
      TensorShape([1, 2])
    """,
    "expand_dims_v1": """Inserts a dimension of size 1 at position `axis` (TF1 signature).

    The arguments are those of `tf.expand_dims`, plus `dim`, the deprecated alias of `axis`.

    Example:
      >>> tf.compat.v1.expand_dims([1, 2], dim=1).shape
      TensorShape([2, 1])
    """,
    "squeeze": """Removes dimensions of size 1.

    Args:
      input: a tensor.
      axis: an int or list of ints naming the dimensions to remove; None removes every
        dimension of size 1.
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype and fewer dimensions.

    Raises:
      InvalidArgumentError: if a named dimension does not have size 1.

    Example:
      >>> tf.squeeze(tf.zeros([1, 3, 1])).shape
      TensorShape([3])
    """,
    "squeeze_v1": """Removes dimensions of size 1 (TF1 signature).

    The arguments are those of `tf.squeeze`, plus `squeeze_dims`, the deprecated alias of
    `axis`.

    Example:
      >>> tf.compat.v1.squeeze(tf.zeros([1, 3, 1]), squeeze_dims=[0]).shape
      TensorShape([3, 1])
    """,
}
