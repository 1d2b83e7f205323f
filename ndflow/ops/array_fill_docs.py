"""The docstrings of array_fill.py's public functions (attached at its end; see
core/doc_tables.py)."""

from __future__ import annotations


def _filled(what: str, call: str, result: str) -> str:
    return f"""A tensor of the given shape with every element {what}.

    Args:
      shape: a list of ints or a 1-D int tensor.
      dtype: the element dtype (float32 by default).
      name: optional name for the operation.
      layout: unsupported (DTensor layouts); must be None.

    Returns:
      A tensor of `shape` and `dtype`.

    Example:
      >>> {call}.numpy()
      {result}
    """


def _like(what: str, call: str, result: str, v1: bool) -> str:
    first = "tensor" if v1 else "input"
    last = ("      optimize: if True, a constant may be built when the shape is known "
            "statically.\n" if v1 else "      layout: unsupported (DTensor layouts); must be "
            "None.\n")
    return f"""A tensor of {what} with the shape of `{first}`{" (TF1 signature)" if v1 else ""}.

    Args:
      {first}: a tensor (or value convertible to one) whose shape is used.
      dtype: the result dtype; None keeps {first}'s.
      name: optional name for the operation.
{last}
    Returns:
      A tensor of {first}'s shape.

    Example:
      >>> {call}.numpy()
      {result}
    """


DOCS = {
    "zeros": _filled("0", "tf.zeros([2])", "array([0., 0.], dtype=float32)"),
    "ones": _filled("1", "tf.ones([2], tf.int32)", "array([1, 1], dtype=int32)"),
    "zeros_like": _like("zeros", "tf.zeros_like([1, 2])", "array([0, 0], dtype=int32)", False),
    "ones_like": _like("ones", "tf.ones_like([1.0])", "array([1.], dtype=float32)", False),
    "zeros_like_v1": _like("zeros", "tf.compat.v1.zeros_like([1, 2])",
                           "array([0, 0], dtype=int32)", True),
    "ones_like_v1": _like("ones", "tf.compat.v1.ones_like([1, 2], dtype=tf.float32)",
                          "array([1., 1.], dtype=float32)", True),
    "fill": """A tensor of shape `dims` with every element `value`.

    Args:
      dims: a list of ints or a 1-D int tensor, the shape.
      value: a scalar; its dtype is the result's.
      name: optional name for the operation.
      layout: unsupported (DTensor layouts); must be None.

    Returns:
      A tensor of shape `dims` and value's dtype.

    Raises:
      InvalidArgumentError: if `dims` is not 1-D or `value` is not a scalar.

    Example:
      >>> tf.fill([2], 7).numpy()
      array([7, 7], dtype=int32)
    """,
    "broadcast_to": """Broadcasts `input` to `shape` (NumPy's rules).

    Args:
      input: a tensor.
      shape: the target shape, a list of ints or 1-D int tensor.
      name: optional name for the operation.

    Returns:
      A tensor of `shape` and input's dtype.

    Raises:
      InvalidArgumentError: if input's shape is not broadcastable to `shape`.

    Example:
      >>> tf.broadcast_to([1, 2], [2, 2]).numpy()
      array([[1, 2],
             [1, 2]], dtype=int32)
    """,
    "tile": """Repeats `input` `multiples[i]` times along each dimension i.

    Args:
      input: a tensor.
      multiples: a 1-D int tensor with one entry per dimension of `input`.
      name: optional name for the operation.

    Returns:
      A tensor of input's dtype whose dimension i is `input.shape[i] * multiples[i]`.

    Raises:
      InvalidArgumentError: if `multiples` does not have one entry per dimension.

    Example:
      >>> tf.tile([1, 2], [2]).numpy()
      array([1, 2, 1, 2], dtype=int32)
    """,
    "pad": """Pads a tensor.

    Args:
      tensor: the tensor to pad.
      paddings: an int tensor of shape [rank, 2]: the amounts to add before and after each
        dimension.
      mode: "CONSTANT" (fill with `constant_values`), "REFLECT" (mirror without the edge) or
        "SYMMETRIC" (mirror with the edge); case-insensitive.
      constant_values: the fill value for "CONSTANT", of tensor's dtype.
      name: optional name for the operation.

    Returns:
      A tensor of tensor's dtype, each dimension grown by its paddings.

    Raises:
      ValueError: for another mode.
      InvalidArgumentError: if `paddings` has the wrong shape, or a mirror padding is too
        large for its dimension.

    Example:
      >>> tf.pad([[1]], [[1, 1], [0, 1]]).numpy()
      array([[0, 0],
             [1, 0],
             [0, 0]], dtype=int32)
    """,
}
