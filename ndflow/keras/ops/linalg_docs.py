"""Docstrings of keras.ops.linalg's functions (linalg_functions.py). Attached by
`ndflow.keras.docstrings.attach`; the examples run as doctests."""

from __future__ import annotations

_SQUARE = "x: a float tensor of square matrices, shape (..., n, n)."
_MATRIX_RAISES = """Raises:
      ValueError: `x` has rank below 2 or its matrices are not square."""

DOCS = {
    "cholesky": f"""The Cholesky factor of each symmetric positive-definite matrix in `x`:
    the lower-triangular L with `L @ L^T == x` (or the upper U = L^T).

    Args:
      {_SQUARE}
      upper: whether to return the upper-triangular factor.

    Returns:
      A tensor of `x`'s shape.

    Raises:
      ValueError: the matrices are not square or (eagerly) not positive definite.

    Example:

    >>> tf.keras.ops.cholesky([[4.0, 2.0], [2.0, 2.0]]).numpy()
    array([[2., 0.],
           [1., 1.]], dtype=float32)
    """,
    "cholesky_inverse": f"""The inverse of the matrix whose Cholesky factor `x` is:
    `inv(L @ L^T)` for a lower factor, `inv(U^T @ U)` for an upper one.

    Args:
      x: a triangular Cholesky factor, shape (..., n, n).
      upper: whether `x` is the upper factor.

    Returns:
      A tensor of `x`'s shape.

    {_MATRIX_RAISES}
    """,
    "det": f"""The determinant of each square matrix in `x`.

    Args:
      {_SQUARE}

    Returns:
      A tensor of shape `x.shape[:-2]`.

    {_MATRIX_RAISES}

    Example:

    >>> float(tf.keras.ops.det([[1.0, 2.0], [3.0, 4.0]]))
    -2.0
    """,
    "inv": f"""The inverse of each square matrix in `x`.

    Args:
      {_SQUARE}

    Returns:
      A tensor of `x`'s shape (a singular matrix is an error of the kernel).

    {_MATRIX_RAISES}

    Example:

    >>> tf.keras.ops.inv([[2.0, 0.0], [0.0, 4.0]]).numpy()
    array([[0.5 , 0.  ],
           [0.  , 0.25]], dtype=float32)
    """,
    "eigh": f"""The eigenvalues and eigenvectors of each symmetric (Hermitian) matrix in `x`.

    Args:
      {_SQUARE} Only the lower triangle is read.

    Returns:
      A tuple (w, v): w of shape (..., n), ascending; v of `x`'s shape, whose columns are
      the matching unit eigenvectors.

    {_MATRIX_RAISES}
    """,
    "lu_factor": f"""The LU decomposition with partial pivoting of each square matrix in `x`.

    Args:
      {_SQUARE}

    Returns:
      A tuple (lu, pivots): lu packs L (unit diagonal, below) and U (on and above the
      diagonal) in `x`'s shape; pivots (..., n), int32, with `(L @ U)[pivots] == x` for
      one matrix (Keras' TensorFlow backend: the inverse of `tf.linalg.lu`'s permutation).

    {_MATRIX_RAISES}
    """,
    "norm": """A vector norm (one axis) or matrix norm (two axes) of `x`.

    Args:
      x: a tensor or array-like (ints are computed as floats).
      ord: the norm's order. Vectors: None/2 (Euclidean), inf, -inf, 0 (nonzero count)
        or any number p (`sum(|x|**p)**(1/p)`). Matrices: None/"fro" (Frobenius), "nuc"
        (sum of singular values), 1, -1, inf, -inf, 2, -2.
      axis: None (all of `x` flattened for a vector, or the last two axes of a 2-D
        `x`), an int, or a pair of ints for matrices.
      keepdims: whether the reduced axes stay, with size 1.

    Returns:
      A float tensor of `x`'s shape without the reduced axes.

    Raises:
      ValueError: an axis out of range, more than two axes, or an `ord` invalid for
        vectors or matrices.

    Example:

    >>> float(tf.keras.ops.norm([3.0, 4.0]))
    5.0
    """,
    "qr": """The QR decomposition of each matrix in `x`: Q with orthonormal columns, R upper
    triangular, `Q @ R == x`.

    Args:
      x: a float tensor of shape (..., m, n).
      mode: "reduced" (Q is (m, k), R (k, n), k = min(m, n)) or "complete" (Q is (m, m),
        R (m, n)).

    Returns:
      A tuple (q, r).

    Raises:
      ValueError: an unknown `mode`, or `x` of rank below 2.
    """,
    "solve": """The solution `x` of `a @ x == b` for each square matrix `a`.

    Args:
      a: a float tensor of shape (..., n, n).
      b: the right-hand sides: (..., n, k), or (..., n) for a single vector.

    Returns:
      A tensor of `b`'s shape (in the two inputs' promoted dtype).

    Raises:
      ValueError: `a` is not a stack of square matrices.

    Example:

    >>> tf.keras.ops.solve([[2.0, 0.0], [0.0, 4.0]], [2.0, 2.0]).numpy()
    array([1. , 0.5], dtype=float32)
    """,
    "solve_triangular": """The solution `x` of `a @ x == b` for triangular matrices `a`.

    Args:
      a: a float tensor of shape (..., n, n); only its lower (or upper) triangle is read.
      b: the right-hand sides: (..., n, k), or (..., n) for a single vector.
      lower: whether `a` is lower triangular (default upper).

    Returns:
      A tensor of `b`'s shape.

    Raises:
      ValueError: `a` is not a stack of square matrices.
    """,
    "svd": """The singular value decomposition of each matrix in `x`: `x == u @ diag(s) @ vh`.

    Args:
      x: a float tensor of shape (..., m, n).
      full_matrices: whether u and vh are square ((m, m), (n, n)) or reduced ((m, k),
        (k, n), k = min(m, n)).
      compute_uv: whether to compute u and vh (else only s is returned).

    Returns:
      A tuple (u, s, vh) (NumPy's order, vh being v's conjugate transpose), or s alone;
      s has shape (..., k), descending.

    Raises:
      ValueError: `x` has rank below 2.

    Example:

    >>> tf.keras.ops.svd([[3.0, 0.0], [0.0, 4.0]], compute_uv=False).numpy()
    array([4., 3.], dtype=float32)
    """,
    "matrix_rank": """The rank of each matrix in `x`: the number of singular values above
    `tol`.

    Args:
      x: a float tensor of shape (..., m, n).
      tol: the threshold (default `eps * max(m, n) * max(s)`).

    Returns:
      An int32 tensor of shape `x.shape[:-2]`.

    Example:

    >>> int(tf.keras.ops.matrix_rank([[1.0, 2.0], [2.0, 4.0]]))
    1
    """,
    "pinv": """The Moore-Penrose pseudo-inverse of each matrix in `x`, by its SVD.

    Args:
      x: a float tensor of shape (..., m, n).
      rcond: singular values below `rcond * max(s)` count as zero (default
        `10 * max(m, n) * eps`).

    Returns:
      A tensor of shape (..., n, m).
    """,
    "eig": f"""The eigenvalues and right eigenvectors of each square matrix in `x` (general,
    not necessarily symmetric: the results are complex).

    Computed by NumPy on the host (a `tf.numpy_function` step inside graphs), so it has
    no gradient.

    Args:
      {_SQUARE}

    Returns:
      A tuple (w, v): w of shape (..., n), v of `x`'s shape whose columns are the
      eigenvectors; complex64 (complex128 for float64 inputs).

    {_MATRIX_RAISES}
    """,
    "lstsq": """The least-squares solution `x` minimizing `||a @ x - b||`, by the SVD.

    Args:
      a: a 2-D float tensor (m, n).
      b: the right-hand side, (m,) or (m, k).
      rcond: singular values below `rcond * max(s)` are treated as zero (default
        `eps * max(m, n)`, NumPy's; a negative value means machine epsilon).

    Returns:
      A tensor of shape (n,) or (n, k).

    Raises:
      ValueError: `a` and `b` differ in their first dimension.
      TypeError: `a` is not 2-D, or `b` not 1-D or 2-D.

    Example:

    >>> tf.keras.ops.lstsq([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]], [1.0, 4.0, 0.0]).numpy()
    array([1., 2.], dtype=float32)
    """,
    "jvp": """The Jacobian-vector product of `fun` at `primals` along `tangents`: the
    directional derivative `J(primals) @ tangents` (forward-mode differentiation).

    ndflow computes it with two reverse passes (the gradient of `<J^T u, tangents>` with
    respect to `u`), so `fun` must be differentiable by `tf.GradientTape`.

    Args:
      fun: a callable taking `*primals` and returning a tensor or nest of tensors (and
        an auxiliary value with `has_aux`).
      primals: a tuple or list of the input values.
      tangents: the direction, with the structure and shapes of `primals`.
      has_aux: whether `fun` returns `(output, aux)`.

    Returns:
      `(fun(*primals), jvp)` or, with `has_aux`, `(output, jvp, aux)`; `jvp` has the
      output's structure.

    Example:

    >>> out, jvp = tf.keras.ops.jvp(lambda x: x * x, (tf.constant(3.0),), (tf.constant(1.0),))
    >>> float(out), float(jvp)
    (9.0, 6.0)
    """,
}
