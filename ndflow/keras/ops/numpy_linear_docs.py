"""Docstrings of keras.ops' products and matrix-shaped helpers (numpy_linear.py). Attached by
`ndflow.keras.docstrings.attach`; the examples run as doctests."""

from __future__ import annotations

_PRODUCT_DTYPE = ("in the operands' promoted dtype (ints are multiplied in floating point "
                  "and cast back; int8 x int8 gives int32)")


def _band(part: str, relation: str, example: str) -> str:
    return f"""The {part} triangle of `x`: elements with `column - row {relation} k` kept,
    the others zeroed (on the last two axes).

    Args:
      x: a tensor of rank 2 or more.
      k: the diagonal bounding the triangle (0 the main one, positive above it).

    Returns:
      A tensor of `x`'s shape and dtype.

    Example:

    {example}
    """


DOCS = {
    "matmul": f"""Matrix product of `x1` and `x2`, NumPy's rules: 1-D operands are vectors,
    higher ranks are stacks of matrices broadcast against each other.

    Args:
      x1: a tensor of rank 1 or more, (..., n, k) or (k,).
      x2: a tensor of rank 1 or more, (..., k, m) or (k,).

    Returns:
      The product, {_PRODUCT_DTYPE}.

    Raises:
      ValueError: an operand is a scalar (use `multiply`).

    Example:

    >>> tf.keras.ops.matmul([[1, 2], [3, 4]], [1, 1]).numpy()
    array([3, 7], dtype=int32)
    """,
    "dot": f"""NumPy's dot product: a sum over `x1`'s last axis and `x2`'s second-to-last
    (its only axis if 1-D); scalars multiply elementwise.

    Args:
      x1: a tensor or array-like.
      x2: a tensor or array-like.

    Returns:
      A tensor of shape `x1.shape[:-1] + x2.shape[:-2] + x2.shape[-1:]`, {_PRODUCT_DTYPE}.

    Example:

    >>> int(tf.keras.ops.dot([1, 2, 3], [4, 5, 6]))
    32
    """,
    "tensordot": f"""The sum of products over the given axes of `x1` and `x2`.

    Args:
      x1: a tensor or array-like.
      x2: a tensor or array-like.
      axes: an int N (the last N axes of `x1` with the first N of `x2`) or a pair of
        lists of axes to contract.

    Returns:
      A tensor of the remaining axes of `x1` then of `x2`, {_PRODUCT_DTYPE}.

    Example:

    >>> tf.keras.ops.tensordot(tf.ones((2, 3)), tf.ones((3, 4)), axes=1).shape
    TensorShape([2, 4])
    """,
    "inner": f"""Inner product over the last axes of `x1` and `x2` (scalars multiply).

    Args:
      x1: a tensor or array-like.
      x2: a tensor or array-like with `x1`'s last dimension.

    Returns:
      A tensor of shape `x1.shape[:-1] + x2.shape[:-1]`, {_PRODUCT_DTYPE}.
    """,
    "outer": f"""Outer product of the flattened `x1` and `x2`: `out[i, j] = x1[i] * x2[j]`.

    Args:
      x1: a tensor or array-like (flattened).
      x2: a tensor or array-like (flattened).

    Returns:
      A tensor of shape (size(x1), size(x2)), {_PRODUCT_DTYPE}.

    Example:

    >>> tf.keras.ops.outer([1, 2], [1, 10]).numpy()
    array([[ 1, 10],
           [ 2, 20]], dtype=int32)
    """,
    "vdot": f"""The dot product of the flattened `x1` and `x2` (no conjugation).

    Args:
      x1: a tensor or array-like.
      x2: a tensor or array-like of as many elements.

    Returns:
      A scalar tensor, {_PRODUCT_DTYPE}.
    """,
    "kron": """The Kronecker product: a block array of `x2` scaled by each element of `x1`.

    Args:
      x1: a tensor or array-like.
      x2: a tensor or array-like (the lower-rank one gets leading axes of size 1).

    Returns:
      A tensor whose shape is the elementwise product of the two shapes, in their
      promoted dtype.

    Example:

    >>> tf.keras.ops.kron([1, 2], [1, 10]).numpy()
    array([ 1, 10,  2, 20], dtype=int32)
    """,
    "einsum": """Einstein summation: products of the operands summed over the indices that
    `subscripts` leaves out of the output.

    Args:
      subscripts: the equation, e.g. "ij,jk->ik" (matmul) or "ii->i" (diagonal).
      *operands: the tensors the equation names.
      **kwargs: passed on to `tf.einsum`.

    Returns:
      A tensor in the operands' promoted dtype (ints computed in floatx; int8 gives
      int32).

    Raises:
      TypeError: the operands are bool.

    Example:

    >>> float(tf.keras.ops.einsum("i,i->", [1.0, 2.0], [3.0, 4.0]))
    11.0
    """,
    "cross": """The cross product of 3-vectors (or 2-vectors, giving the z component) on
    an axis of `x1` and `x2`.

    Args:
      x1: a tensor whose `axisa` has size 2 or 3.
      x2: a tensor whose `axisb` has size 2 or 3, broadcastable with `x1`.
      axisa: the vectors' axis in `x1`.
      axisb: the vectors' axis in `x2`.
      axisc: the axis of the result's vectors.
      axis: when given, overrides the three above.

    Returns:
      A tensor of the broadcast shape (without the vector axis for two 2-vectors).

    Example:

    >>> tf.keras.ops.cross([1, 0, 0], [0, 1, 0]).numpy()
    array([0, 0, 1], dtype=int32)
    """,
    "diag": """A diagonal matrix from a 1-D `x`, or the diagonal of a 2-D `x`.

    Args:
      x: a 1-D or 2-D tensor.
      k: the diagonal (0 the main one, positive above it, negative below).

    Returns:
      A 2-D tensor (for 1-D `x`) or a 1-D tensor (for 2-D `x`).

    Raises:
      ValueError: `x` is neither 1-D nor 2-D.

    Example:

    >>> tf.keras.ops.diag([1, 2]).numpy()
    array([[1, 0],
           [0, 2]], dtype=int32)
    """,
    "diagflat": """A diagonal matrix with the flattened `x` on its `k`-th diagonal.

    Args:
      x: a tensor or array-like of any shape.
      k: the diagonal (0 the main one).

    Returns:
      A 2-D tensor.
    """,
    "diagonal": """The diagonal of the matrices `x` makes on the axes `axis1` and `axis2`.

    Args:
      x: a tensor of rank 2 or more.
      offset: the diagonal (0 the main one, positive above it).
      axis1: the rows axis.
      axis2: the columns axis.

    Returns:
      A tensor of the other axes, with the diagonal's values on a new last axis.

    Example:

    >>> tf.keras.ops.diagonal([[1, 2], [3, 4]]).numpy()
    array([1, 4], dtype=int32)
    """,
    "trace": """The sum along a diagonal of the matrices in `x`.

    Args:
      x: a tensor of rank 2 or more.
      offset: the diagonal (0 the main one).
      axis1: the rows axis.
      axis2: the columns axis.

    Returns:
      A tensor of the other axes (bools and small ints sum as int32, uint8 as int64).

    Example:

    >>> int(tf.keras.ops.trace([[1, 2], [3, 4]]))
    5
    """,
    "tril": _band("lower", "<=", ">>> tf.keras.ops.tril([[1, 2], [3, 4]]).numpy()\n"
                                 "    array([[1, 0],\n           [3, 4]], dtype=int32)"),
    "triu": _band("upper", ">=", ">>> tf.keras.ops.triu([[1, 2], [3, 4]]).numpy()\n"
                                 "    array([[1, 2],\n           [0, 4]], dtype=int32)"),
    "diff": """The `n`-th discrete difference along `axis`: `a[i + 1] - a[i]`, repeated `n`
    times (for bools, whether neighbours differ).

    Args:
      a: a tensor or array-like.
      n: how many times to take the difference.
      axis: the axis along which to difference.

    Returns:
      A tensor `n` shorter along `axis`.

    Example:

    >>> tf.keras.ops.diff([1, 4, 9, 16]).numpy()
    array([3, 5, 7], dtype=int32)
    """,
    "vander": """The Vandermonde matrix of `x`: its columns are powers of `x`.

    Args:
      x: a 1-D tensor.
      N: the number of columns (default `len(x)`).
      increasing: whether the powers go up from `x**0` (default: down to it).

    Returns:
      A tensor of shape (len(x), N) in `x`'s dtype (int32 for bools).

    Example:

    >>> tf.keras.ops.vander([2, 3], 3).numpy()
    array([[4, 2, 1],
           [9, 3, 1]], dtype=int32)
    """,
    "trapezoid": """The integral of `y` along `axis` by the trapezoidal rule.

    Args:
      y: the sampled values.
      x: optional sample positions (1-D along `axis`, or `y`'s shape); default evenly
        spaced by `dx`.
      dx: the spacing when `x` is None.
      axis: the axis to integrate along.

    Returns:
      A float tensor of `y`'s shape without `axis`.

    Example:

    >>> float(tf.keras.ops.trapezoid([1.0, 2.0, 3.0]))
    4.0
    """,
    "correlate": """The cross-correlation of two 1-D sequences: `out[k] = sum_i x1[i + k] *
    x2[i]` (NumPy's `correlate` for real inputs).

    Args:
      x1: a 1-D tensor (in "valid" mode, at least as long as `x2`).
      x2: a 1-D tensor.
      mode: "valid" (only full overlaps), "same" (the middle `max(len(x1), len(x2))`
        values of "full"; unlike NumPy, the sequences are not swapped when `x2` is the
        longer) or "full" (every partial overlap).

    Returns:
      A 1-D float tensor (float32 for ints, float64 for int64).

    Raises:
      ValueError: an unknown `mode`.

    Example:

    >>> tf.keras.ops.correlate([1, 2, 3], [0, 1]).numpy()
    array([2., 3.], dtype=float32)
    """,
    "corrcoef": """The Pearson correlation coefficients between the rows of `x` (each row a
    variable, each column an observation).

    Args:
      x: a 2-D tensor.

    Returns:
      A float tensor of shape (rows, rows), 1 on the diagonal.
    """,
}
