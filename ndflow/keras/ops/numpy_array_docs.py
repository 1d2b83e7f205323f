"""Docstrings of keras.ops' array construction and shape functions (numpy_array.py; the
joining, splitting and selection ones: numpy_select_docs.py). Attached by
`ndflow.keras.docstrings.attach`; the examples run as doctests."""

from __future__ import annotations

from ndflow.keras.docstrings import sections

_SHAPE = "shape: an int or a tuple/list of ints."


def _filled(what: str, default: str, example: str = "", note: str = "") -> str:
    doc = f"""A new tensor of shape `shape` filled with {what}.{note}

    Args:
      {_SHAPE}
      dtype: the result's dtype (default {default}).

    Returns:
      A tensor of shape `shape`.
    """
    return sections(doc, example=example)


def _filled_like(what: str, note: str = "") -> str:
    return f"""A new tensor of `x`'s shape filled with {what}.{note}

    Args:
      x: a tensor or array-like, whose shape is used.
      dtype: the result's dtype (default `x`'s).

    Returns:
      A tensor of `x`'s shape.
    """


def _spaced(summary: str, args: str, example: str) -> str:
    return f"""{summary}

    Args:
      start: the first value (a scalar or a tensor; tensors give one sequence per
        element, stacked along `axis`).
      stop: the last value (included when `endpoint`).
      num: the number of values (a non-negative int).
      endpoint: whether `stop` is the last value; otherwise the sequence stops one step
        before it.{args}
      dtype: the result's dtype (default the float result type of `start` and `stop`);
        integer dtypes take the floor of each value.
      axis: where the values go when `start`/`stop` are tensors.

    Returns:
      A tensor of `num` values along `axis`.

    Example:

    {example}
    """


DOCS = {
    "zeros": _filled("zeros", "float32 (`keras.config.floatx()`)",
                     ">>> tf.keras.ops.zeros((2,)).numpy()\n"
                     "    array([0., 0.], dtype=float32)"),
    "ones": _filled("ones", "float32 (`keras.config.floatx()`)",
                    ">>> tf.keras.ops.ones(2, dtype='int32').numpy()\n"
                    "    array([1, 1], dtype=int32)"),
    "empty": _filled("zeros", "floatx", note=" (NumPy's `empty` leaves the values "
                     "undefined; here they are zeros)"),
    "full": """A new tensor of shape `shape` with every element `fill_value`.

    Args:
      shape: an int or a tuple/list of ints.
      fill_value: a scalar, or a tensor broadcastable to `shape`.
      dtype: the result's dtype (default float32, `keras.config.floatx()`, whatever
        `fill_value`'s type).

    Returns:
      A tensor of shape `shape`.

    Example:

    >>> tf.keras.ops.full((2, 2), 7, dtype="int32").numpy()
    array([[7, 7],
           [7, 7]], dtype=int32)
    """,
    "zeros_like": _filled_like("zeros"),
    "ones_like": _filled_like("ones"),
    "empty_like": _filled_like("zeros", " (the values of NumPy's `empty_like` are "
                                        "undefined; here they are zeros)"),
    "full_like": """A new tensor of `x`'s shape with every element `fill_value`.

    Args:
      x: a tensor or array-like, whose shape is used.
      fill_value: a scalar, or a tensor broadcastable to `x`'s shape.
      dtype: the result's dtype (default `x`'s).

    Returns:
      A tensor of `x`'s shape.
    """,
    "arange": """Evenly spaced values from `start` up to (not including) `stop`.

    `arange(n)` counts from 0 to n - 1.

    Args:
      start: the first value (or the stop, when `stop` is None).
      stop: the end, excluded.
      step: the spacing (default 1; may be negative).
      dtype: the result's dtype (default the result type of the arguments: int32 for
        Python ints, float32 when one is a float).

    Returns:
      A 1-D tensor.

    Example:

    >>> tf.keras.ops.arange(1, 7, 2).numpy()
    array([1, 3, 5], dtype=int32)
    """,
    "linspace": _spaced(
        "`num` evenly spaced values from `start` to `stop`.",
        """
      retstep: whether to return the spacing too.""",
        ">>> tf.keras.ops.linspace(0, 1, 5).numpy()\n"
        "    array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)").replace(
        "A tensor of `num` values along `axis`.",
        "A tensor of `num` values along `axis`; with `retstep`, a tuple (values, step).\n\n"
        "    Raises:\n      ValueError: `num` is negative."),
    "logspace": _spaced(
        "`num` values evenly spaced on a log scale: `base ** linspace(start, stop, num)`.",
        """
      base: the base of the exponents.""",
        ">>> tf.keras.ops.logspace(0, 2, 3).numpy()\n"
        "    array([  1.,  10., 100.], dtype=float32)"),
    "geomspace": _spaced(
        "`num` values in a geometric progression from `start` to `stop`.",
        "",
        ">>> tf.keras.ops.geomspace(1, 8, 4).numpy().round(3)\n"
        "    array([1., 2., 4., 8.], dtype=float32)").replace(
        "the first value", "the first value (nonzero; its sign is the result's)"),
    "eye": """A 2-D tensor with ones on a diagonal and zeros elsewhere.

    Args:
      N: the number of rows.
      M: the number of columns (default `N`).
      k: which diagonal: 0 the main one, positive above it, negative below.
      dtype: the result's dtype (default float32, `keras.config.floatx()`).

    Returns:
      A tensor of shape (N, M).

    Example:

    >>> tf.keras.ops.eye(2, 3, k=1).numpy()
    array([[0., 1., 0.],
           [0., 0., 1.]], dtype=float32)
    """,
    "identity": """The `n` x `n` identity matrix.

    Args:
      n: the number of rows and columns.
      dtype: the result's dtype (default float32, `keras.config.floatx()`).

    Returns:
      A tensor of shape (n, n).
    """,
    "tri": """A 2-D tensor with ones on and below the `k`-th diagonal, zeros above.

    Args:
      N: the number of rows.
      M: the number of columns (default `N`).
      k: the diagonal at and below which the ones are (0 the main one, positive above).
      dtype: the result's dtype (default float32, `keras.config.floatx()`).

    Returns:
      A tensor of shape (N, M).

    Example:

    >>> tf.keras.ops.tri(2).numpy()
    array([[1., 0.],
           [1., 1.]], dtype=float32)
    """,
    "array": """`x` as a tensor (NumPy's `array`).

    Args:
      x: a tensor, NumPy array, list or scalar.
      dtype: optional dtype to convert (or cast) to.

    Returns:
      A tensor.
    """,
    "copy": """A copy of `x` as a tensor (tensors are immutable, so the copy shares nothing
    that could change).

    Args:
      x: a tensor or array-like.

    Returns:
      A tensor equal to `x`.
    """,
    "reshape": """`x` with a new shape holding the same elements in the same (row-major) order.

    Args:
      x: a tensor or array-like.
      newshape: an int or a tuple/list of ints; one entry may be -1 (inferred).

    Returns:
      A tensor of shape `newshape`.

    Raises:
      InvalidArgumentError: the number of elements differs.

    Example:

    >>> tf.keras.ops.reshape(tf.keras.ops.arange(6), (2, -1)).shape
    TensorShape([2, 3])
    """,
    "ravel": """`x` flattened to 1-D (row-major order).

    Args:
      x: a tensor or array-like.

    Returns:
      A 1-D tensor of `x`'s size.
    """,
    "transpose": """`x` with its axes permuted.

    Args:
      x: a tensor or array-like.
      axes: a permutation of `range(ndim)`; None reverses the axes.

    Returns:
      A tensor whose axis i is `x`'s axis `axes[i]`.

    Example:

    >>> tf.keras.ops.transpose(tf.zeros((2, 3, 4)), (2, 0, 1)).shape
    TensorShape([4, 2, 3])
    """,
    "expand_dims": """`x` with new axes of size 1 inserted.

    Args:
      x: a tensor or array-like.
      axis: an int or a tuple of ints: the positions of the new axes in the result
        (negative ones count from the result's end).

    Returns:
      A tensor of rank `ndim(x) + len(axis)`.

    Example:

    >>> tf.keras.ops.expand_dims(tf.zeros((2, 3)), (0, -1)).shape
    TensorShape([1, 2, 3, 1])
    """,
    "squeeze": """`x` without axes of size 1.

    Args:
      x: a tensor or array-like.
      axis: an int or tuple of ints, the axes to remove; None removes every axis of
        size 1.

    Returns:
      A tensor of lower rank.

    Raises:
      ValueError: a named axis does not have size 1.
    """,
    "moveaxis": """`x` with the axes `source` moved to the positions `destination`, the other
    axes keeping their order.

    Args:
      x: a tensor or array-like.
      source: an int or tuple of ints.
      destination: an int or tuple of ints, as many as `source`.

    Returns:
      A tensor with the same elements, axes permuted.

    Example:

    >>> tf.keras.ops.moveaxis(tf.zeros((2, 3, 4)), 0, -1).shape
    TensorShape([3, 4, 2])
    """,
    "swapaxes": """`x` with two of its axes exchanged.

    Args:
      x: a tensor or array-like.
      axis1: an int.
      axis2: an int.

    Returns:
      A tensor with the same elements, two axes swapped.
    """,
    "broadcast_to": """`x` broadcast (repeated along new or size-1 axes) to `shape`.

    Args:
      x: a tensor or array-like.
      shape: the target shape, compatible with `x`'s under broadcasting rules.

    Returns:
      A tensor of shape `shape`.

    Raises:
      InvalidArgumentError: `x`'s shape does not broadcast to `shape`.

    Example:

    >>> tf.keras.ops.broadcast_to([1, 2], (2, 2)).numpy()
    array([[1, 2],
           [1, 2]], dtype=int32)
    """,
}
