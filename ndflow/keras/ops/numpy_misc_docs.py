"""Docstrings of keras.ops' searching, counting, complex-part, window and determinant
functions (numpy_misc.py). Attached by `ndflow.keras.docstrings.attach`; the examples run as
doctests."""

from __future__ import annotations

from ndflow.keras.docstrings import sections


def _window(name: str, formula: str, extra: str = "") -> str:
    return f"""The {name} window of `x` points (symmetric, as NumPy's): {formula}.

    Args:
      x: the number of points (an int; 0 or 1 give an empty or one-point window).{extra}

    Returns:
      A 1-D float tensor of length `x`.
    """


def _complex_part(summary: str, returns: str, raises: str = "", example: str = "") -> str:
    doc = f"""{summary}

    Args:
      x: a tensor or array-like (complex or real).

    Returns:
      {returns}
    """
    return sections(doc, raises, example)


DOCS = {
    "searchsorted": """The indices at which `values` would be inserted into `sorted_sequence`
    to keep it sorted.

    Args:
      sorted_sequence: a 1-D tensor sorted ascending.
      values: a tensor of any shape, of values to place.
      side: "left" (the first suitable index) or "right" (the last).

    Returns:
      An int32 tensor of `values`' shape.

    Raises:
      ValueError: `sorted_sequence` is not 1-D, or `side` is neither "left" nor "right".

    Example:

    >>> tf.keras.ops.searchsorted([1, 3, 5], [0, 3, 6]).numpy()
    array([0, 1, 3], dtype=int32)
    """,
    "bincount": """The number of occurrences of each non-negative int in `x` (or the sum of
    `weights` at them).

    Args:
      x: a non-negative int tensor, 1-D, or 2-D for one count per row.
      weights: optional weights of `x`'s shape; the counts become weight sums.
      minlength: the smallest length of the result.
      sparse: must be False (ndflow returns dense tensors).

    Returns:
      A tensor of length `max(max(x) + 1, minlength)` (per row for 2-D `x`): int32
      without `weights`, else in the weights' dtype.

    Raises:
      NotImplementedError: `sparse=True`.

    Example:

    >>> tf.keras.ops.bincount([0, 1, 1, 3]).numpy()
    array([1, 2, 0, 1], dtype=int32)
    """,
    "histogram": """Counts of `x`'s values in `bins` equal-width bins.

    Args:
      x: a 1-D tensor.
      bins: the number of bins.
      range: optional `(lower, upper)` bounds; values outside are not counted (default:
        `x`'s min and max). The last bin includes its upper edge.

    Returns:
      A tuple (counts, edges): `bins` counts in `x`'s dtype and `bins + 1` edges.

    Raises:
      ValueError: `x` is not 1-D.

    Example:

    >>> counts, edges = tf.keras.ops.histogram([0.0, 1.0, 1.0, 4.0], bins=2)
    >>> counts.numpy(), edges.numpy()
    (array([3., 1.], dtype=float32), array([0., 2., 4.], dtype=float32))
    """,
    "isin": """Elementwise test whether each element of `x1` occurs in `x2`.

    Args:
      x1: a tensor or array-like.
      x2: the values to look for (any shape, flattened).
      assume_unique: accepted for NumPy's signature (no effect).
      invert: whether to return the negation (not in `x2`).

    Returns:
      A bool tensor of `x1`'s shape.

    Example:

    >>> tf.keras.ops.isin([1, 2, 3], [2, 5]).numpy()
    array([False,  True, False])
    """,
    "nan_to_num": """`x` with NaN replaced by `nan` and infinities by large finite values.

    Args:
      x: a tensor or array-like; non-float dtypes are returned unchanged.
      nan: the value for NaN.
      posinf: the value for +inf (default the dtype's largest finite value).
      neginf: the value for -inf (default the dtype's most negative finite value).

    Returns:
      A tensor of `x`'s shape and dtype.

    Example:

    >>> tf.keras.ops.nan_to_num([float('nan'), 1.0], nan=-1.0).numpy()
    array([-1.,  1.], dtype=float32)
    """,
    "allclose": """Whether every pair of elements of `x1` and `x2` is close:
    `|x1 - x2| <= atol + rtol * |x2|` (equal infinities count as close).

    Args:
      x1: a tensor or array-like.
      x2: likewise, broadcastable with `x1`. Integer inputs must be equal.
      rtol: relative tolerance.
      atol: absolute tolerance.
      equal_nan: whether two NaNs count as close.

    Returns:
      A scalar bool tensor.

    Example:

    >>> bool(tf.keras.ops.allclose([1.0, 2.0], [1.0, 2.0 + 1e-7]))
    True
    """,
    "real": _complex_part("The real part of each element of `x`.",
                          "A real tensor of `x`'s shape (`x` itself when it is real).",
                          "TypeError: `x` is bool."),
    "imag": _complex_part("The imaginary part of each element of `x`.",
                          "A real tensor of `x`'s shape (zeros when `x` is real).",
                          example=">>> tf.keras.ops.imag(tf.constant([1 + 2j])).numpy()\n"
                                  "    array([2.])"),
    "conj": _complex_part("The complex conjugate of each element of `x`.",
                          "A tensor of `x`'s shape and dtype (`x` itself when it is real).",
                          "TypeError: `x` is bool."),
    "conjugate": _complex_part("The complex conjugate of each element of `x` (the same op as "
                               "`conj`).", "A tensor of `x`'s shape and dtype.",
                               "TypeError: `x` is bool."),
    "angle": _complex_part("The angle (argument) of each element of `x` in radians, within "
                           "(-pi, pi].",
                           "A real float tensor of `x`'s shape: for real inputs 0 for "
                           "non-negative values and pi for negative ones (ints compute in "
                           "floatx).",
                           example=">>> tf.keras.ops.angle([1.0, -1.0]).numpy()\n"
                                   "    array([0.       , 3.1415927], dtype=float32)"),
    "isreal": _complex_part("Elementwise test that the imaginary part is zero.",
                            "A bool tensor of `x`'s shape (all True for real dtypes)."),
    "view_as_complex": """Complex numbers from pairs of reals on the last axis.

    Args:
      x: a float tensor whose last axis has size 2: (real, imaginary).

    Returns:
      A complex tensor of `x`'s shape without the last axis (complex64 for float32).

    Raises:
      ValueError: the last axis does not have size 2.

    Example:

    >>> tf.keras.ops.view_as_complex([[1.0, 2.0]]).numpy()
    array([1.+2.j], dtype=complex64)
    """,
    "view_as_real": """The real and imaginary parts of a complex tensor, on a new last axis.

    Args:
      x: a complex tensor.

    Returns:
      A real tensor of shape `x.shape + (2,)`.

    Raises:
      ValueError: `x` is not complex.
    """,
    "bartlett": _window("Bartlett (triangular)", "rising linearly from 0 to 1 and back"),
    "blackman": _window("Blackman",
                        "`0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))`"),
    "hamming": _window("Hamming", "`0.54 - 0.46 cos(2 pi n / (M - 1))`"),
    "hanning": _window("Hann", "`0.5 - 0.5 cos(2 pi n / (M - 1))`"),
    "kaiser": _window("Kaiser", "a Bessel-function taper, sharper for larger `beta`", """
      beta: the shape parameter (0 gives a rectangular window)."""),
    "slogdet": """The sign and the log of the absolute value of the determinant of `x`
    (stable where the determinant itself would overflow or underflow).

    Args:
      x: a float tensor of square matrices, shape (..., n, n).

    Returns:
      A tuple (sign, logabsdet) of tensors of shape `x.shape[:-2]`; sign is 0 for a
      singular matrix (then logabsdet is -inf).

    Example:

    >>> sign, logdet = tf.keras.ops.slogdet([[2.0, 0.0], [0.0, -3.0]])
    >>> float(sign), round(float(logdet), 4)
    (-1.0, 1.7918)
    """,
    "digitize": """The index of the bin each value of `x` falls in: i such that
    `bins[i - 1] <= x < bins[i]` (0 below the first edge, `len(bins)` from the last).

    Args:
      x: a tensor or array-like.
      bins: a 1-D, ascending list or array of bin edges (known when called).

    Returns:
      An int32 tensor of `x`'s shape.

    Example:

    >>> tf.keras.ops.digitize([0.5, 1.0, 2.5], [1.0, 2.0]).numpy()
    array([0, 1, 2], dtype=int32)
    """,
    "unique": """The unique values of `x` (flattened), optionally with their first indices,
    the inverse mapping and their counts.

    Args:
      x: a tensor or array-like.
      sorted: whether the unique values come ascending (else in order of first
        appearance).
      return_index: also return each unique value's first index in the flattened `x`.
      return_inverse: also return, for each element of `x`, the index of its value in
        the result (of `x`'s shape).
      return_counts: also return how often each value occurs.
      axis: must be None (unique rows are not supported by ndflow).
      size: optional fixed result length: truncated, or padded with `fill_value` (0 by
        default; counts padded with 0), so the shape is static.
      fill_value: the padding value for `size`.

    Returns:
      The unique values, or a tuple of them and the requested extras in the order
      values, index, inverse, counts.

    Raises:
      NotImplementedError: `axis` is not None.

    Example:

    >>> values, counts = tf.keras.ops.unique([3, 1, 3, 2], return_counts=True)
    >>> values.numpy(), counts.numpy()
    (array([1, 2, 3], dtype=int32), array([1, 1, 2], dtype=int32))
    """,
    "vectorize": """Turns a function of single elements (or of core sub-arrays, with
    `signature`) into one that maps over the leading dimensions of tensor arguments, as
    NumPy's `vectorize` (computed with `vectorized_map`).

    Args:
      pyfunc: the function to vectorize.
      excluded: positions of arguments passed through unchanged (not mapped).
      signature: optional generalized-ufunc signature such as "(n),(n)->()": the trailing
        core dimensions each argument passes to `pyfunc` whole; the leading ones are
        broadcast and mapped.

    Returns:
      The vectorized function.

    Example:

    >>> dot = tf.keras.ops.vectorize(lambda a, b: tf.reduce_sum(a * b), signature="(n),(n)->()")
    >>> dot(tf.ones((4, 3)), tf.ones((4, 3))).numpy()
    array([3., 3., 3., 3.], dtype=float32)
    """,
    "view": """The bytes of `x` reinterpreted as `dtype` (no conversion of values).

    When the item sizes differ, the last axis is rescaled by their ratio (e.g. int32 to
    int8 makes it 4 times longer).

    Args:
      x: a tensor or array-like.
      dtype: the new dtype (default `x`'s).

    Returns:
      A tensor of `dtype`.

    Raises:
      ValueError: the last axis does not divide by the size ratio (to a wider dtype).

    Example:

    >>> tf.keras.ops.view(tf.constant([1.0]), "int32").numpy()
    array([1065353216], dtype=int32)
    """,
}
