"""The docstrings of np_creation.py's TF-NumPy array makers (attached at its end)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "shape": "an int or a sequence of ints (or an int tensor) for the result's shape.",
    "dtype": "the result dtype; None or the default `float` gives the default float type.",
    "a": "array_like whose shape is used.",
    "N": "number of rows.",
    "k": "the diagonal: 0 the main one, positive above it, negative below.",
}
_LIKE_A = """

    Returns:
      A tensor of a's shape."""
_FILLED = """

    Returns:
      A tensor of `shape` and `dtype`."""
_MATRIX = """

    Returns:
      A tensor of shape [N, M]."""


DOCS = docs_with_args(_ARGS, {
    "zeros": (
        "An array of the given shape filled with zeros.",
        ["shape", "dtype"],
        _FILLED, """

    Example:
      >>> tnp.zeros((2,)).numpy()
      array([0., 0.])"""),
    "empty": (
        "An array of the given shape; unlike NumPy its elements are zeros, never garbage.",
        ["shape", "dtype"],
        """

    Returns:
      A tensor of `shape` and `dtype` (the same as `tnp.zeros`).""", """

    Example:
      >>> tnp.empty((1,)).numpy()
      array([0.])"""),
    "zeros_like": (
        "An array of zeros with the shape (and by default the dtype) of `a`.",
        ["a", "dtype: the result dtype; None keeps a's NumPy dtype."],
        _LIKE_A, """

    Example:
      >>> tnp.zeros_like([1, 2]).numpy()
      array([0, 0])"""),
    "empty_like": (
        "An array with the shape of `a`; filled with zeros (as `tnp.zeros_like`).",
        ["a", "dtype: the result dtype; None keeps a's NumPy dtype."],
        _LIKE_A, """

    Example:
      >>> tnp.empty_like([1]).numpy()
      array([0])"""),
    "ones": (
        "An array of the given shape filled with ones.",
        ["shape", "dtype"],
        _FILLED, """

    Example:
      >>> tnp.ones(2, dtype=tnp.int32).numpy()
      array([1, 1], dtype=int32)"""),
    "ones_like": (
        "An array of ones with the shape (and by default the dtype) of `a`.",
        ["a", "dtype: the result dtype; None keeps a's NumPy dtype."],
        _LIKE_A, """

    Example:
      >>> tnp.ones_like([1.]).numpy()
      array([1.])"""),
    "eye": (
        "A 2-D array with ones on one diagonal and zeros elsewhere.",
        ["N", "M: number of columns; None (or 0) means N.", "k", "dtype"],
        _MATRIX, """

    Example:
      >>> tnp.eye(2, 3, k=1).numpy()
      array([[0., 1., 0.],
             [0., 0., 1.]])"""),
    "identity": (
        "The n x n identity matrix.",
        ["n: number of rows and columns.", "dtype"],
        """

    Returns:
      A tensor of shape [n, n].""", """

    Example:
      >>> tnp.identity(2).numpy()
      array([[1., 0.],
             [0., 1.]])"""),
    "full": (
        "An array of the given shape filled with `fill_value`.",
        ["shape", "fill_value: a scalar, or an array broadcastable to `shape`.",
         "dtype: the result dtype; None infers it from `fill_value`."],
        """

    Returns:
      A tensor of `shape`.""", """

    Example:
      >>> tnp.full((2,), 7).numpy()
      array([7, 7])"""),
    "full_like": (
        "An array with the shape of `a` filled with `fill_value`.",
        ["a: array_like whose shape (and by default dtype) is used.",
         "fill_value: a scalar or an array broadcastable to a's shape.",
         "dtype: the result dtype; None keeps a's.", "order: only 'K' is accepted.",
         "subok: only True is accepted.", "shape: unsupported; must be None."],
        """

    Returns:
      A tensor of a's shape.

    Raises:
      ValueError: for another `order`, `subok=False` or a `shape`.""", """

    Example:
      >>> tnp.full_like([1., 2.], 3).numpy()
      array([3., 3.])"""),
    "diag": (
        "Extracts a diagonal of a 2-D array, or builds a 2-D array from a 1-D diagonal.",
        ["v: a rank-1 array (the diagonal to place) or a rank-2 array (to read from).", "k"],
        """

    Returns:
      A rank-2 tensor for rank-1 `v`; a rank-1 tensor for rank-2 `v`.

    Raises:
      ValueError: if `v` has another rank.""", """

    Example:
      >>> tnp.diag([[1, 2], [3, 4]]).numpy()
      array([1, 4])"""),
    "diagflat": (
        "A 2-D array with the flattened input on diagonal `k`.",
        ["v: array_like; flattened first.", "k: the diagonal (positive above the main one)."],
        """

    Returns:
      A square rank-2 tensor of v's dtype.""", """

    Example:
      >>> tnp.diagflat([[1, 2]]).numpy()
      array([[1, 0],
             [0, 2]])"""),
    "tri": (
        "A 2-D array with ones on and below diagonal `k` and zeros above it.",
        ["N", "M: number of columns; None means N.",
         "k: the diagonal up to which ones are filled (positive above the main one).",
         "dtype: the result dtype; None gives the default float."],
        _MATRIX, """

    Example:
      >>> tnp.tri(3, dtype=int).numpy()
      array([[1, 0, 0],
             [1, 1, 0],
             [1, 1, 1]])"""),
})
