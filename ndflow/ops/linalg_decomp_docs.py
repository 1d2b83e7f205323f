"""The docstrings of linalg_decomp.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations


def _square(what: str, which: str, call: str, details: str, matrix: str, out: str) -> str:
    """The docstring of a function of each square matrix with a result of its shape."""
    return f"""The {what} of each {which} matrix.

    {details}

    Args:
      input: a float or complex tensor of shape [..., M, M] (a batch of square matrices).
      name: optional name for the operation.

    Returns:
      A tensor of input's shape and dtype.

    Example:
      >>> tf.linalg.{call}({matrix}).numpy()
      array({out}, dtype=float32)
    """


DOCS = {
    "cholesky_solve": """Solves A X = rhs given the Cholesky factor of A.

    Args:
      chol: the lower-triangular Cholesky factor of A, shape [..., M, M].
      rhs: a tensor of shape [..., M, K].
      name: optional name for the operation.

    Returns:
      X, of rhs's shape.

    Example:
      >>> tf.linalg.cholesky_solve([[2.0, 0.0], [1.0, 1.0]], [[4.0], [3.0]]).numpy()
      array([[0.5],
             [1. ]], dtype=float32)
    """,
    "matrix_determinant": """The determinant of each square matrix.

    Args:
      input: a float or complex tensor of shape [..., M, M] (a batch of square matrices).
      name: optional name for the operation.

    Returns:
      A tensor of shape [...] (the batch shape).

    Example:
      >>> float(tf.linalg.det([[2.0, 0.0], [0.0, 3.0]]))
      6.0
    """,
    "log_matrix_determinant": """The sign and the log of |determinant| of each square matrix.

    More accurate than log(det) for large or small determinants.

    Args:
      input: a float or complex tensor of shape [..., M, M] (a batch of square matrices).
      name: optional name for the operation.

    Returns:
      A tuple `(sign, log_abs_det)` of tensors of the batch shape.

    Example:
      >>> float(tf.linalg.slogdet([[2.0, 0.0], [0.0, 3.0]])[1])
      1.7917594909667969
    """,
    "logdet": """The log determinant of each Hermitian positive definite matrix.

    Computed from the Cholesky factor.

    Args:
      matrix: a float or complex tensor of shape [..., M, M] (a batch of square matrices).
      name: optional name for the operation.

    Returns:
      A tensor of the batch shape.

    Example:
      >>> float(tf.linalg.logdet([[4.0, 2.0], [2.0, 3.0]]))
      2.079441547393799
    """,
    "matrix_inverse": """The inverse of each square matrix (or the inverse's adjoint).

    Args:
      input: a float or complex tensor of shape [..., M, M] (a batch of square matrices).
      adjoint: if True, return the adjoint of the inverse.
      name: optional name for the operation.

    Returns:
      A tensor of input's shape and dtype.

    Raises:
      InvalidArgumentError: if a matrix is not invertible.

    Example:
      >>> tf.linalg.inv([[2.0, 0.0], [0.0, 3.0]]).numpy()
      array([[0.5       , 0.        ],
             [0.        , 0.33333334]], dtype=float32)
    """,
    "matrix_solve": """Solves `matrix @ X = rhs` (or `adjoint(matrix) @ X = rhs`) for X.

    Args:
      matrix: a float or complex tensor of shape [..., M, M] (a batch of square matrices).
      rhs: a tensor of shape [..., M, K].
      adjoint: whether to solve with the adjoint of `matrix`.
      name: optional name for the operation.

    Returns:
      X, of rhs's shape.

    Raises:
      InvalidArgumentError: if a matrix is not invertible.

    Example:
      >>> tf.linalg.solve([[2.0, 0.0], [0.0, 3.0]], [[2.0], [3.0]]).numpy()
      array([[1.],
             [1.]], dtype=float32)
    """,
    "matrix_triangular_solve": """Solves `matrix @ X = rhs` using only one triangle of `matrix`.

    Batch dimensions broadcast.

    Args:
      matrix: a float or complex tensor of shape [..., M, M] (a batch of square matrices).
      rhs: a tensor of shape [..., M, K].
      lower: whether the lower (True) or upper triangle is used.
      adjoint: whether to solve with the adjoint.
      name: optional name for the operation.

    Returns:
      X, of rhs's shape (with the broadcast batch shape).

    Example:
      >>> tf.linalg.triangular_solve([[2.0, 0.0], [1.0, 1.0]], [[2.0], [2.0]]).numpy()
      array([[1.],
             [1.]], dtype=float32)
    """,
    "banded_triangular_solve": """Solves with a triangular matrix given by its bands.

    The rows of `bands` are the K diagonals of the matrix: the main diagonal first when
    `lower`, last otherwise (aligned as for `tf.linalg.set_diag` with LEFT_RIGHT).

    Args:
      bands: a tensor of shape [..., K, M].
      rhs: a tensor of shape [..., M, N].
      lower: whether the matrix is lower triangular.
      adjoint: whether to solve with its adjoint.
      name: optional name for the operation.

    Returns:
      X, of rhs's shape.

    Example:
      >>> tf.linalg.banded_triangular_solve([[2.0, 4.0]], [[2.0], [4.0]]).numpy()
      array([[1.],
             [1.]], dtype=float32)
    """,
    "matrix_solve_ls": """Least-squares solutions of `matrix @ X = rhs`.

    Minimizes ||matrix @ X - rhs||^2 + l2_regularizer * ||X||^2. With `fast` (and a known
    matrix shape) this solves the normal equations via Cholesky, as TensorFlow does.

    Args:
      matrix: a float tensor of shape [..., M, N].
      rhs: a tensor of shape [..., M, K].
      l2_regularizer: a non-negative scalar.
      fast: whether to use the normal equations (faster, less robust).
      name: optional name for the operation.

    Returns:
      X, of shape [..., N, K].

    Example:
      >>> tf.linalg.lstsq([[1.0], [1.0]], [[1.0], [3.0]]).numpy()
      array([[2.]], dtype=float32)
    """,
    "matrix_rank": """The numerical rank of each matrix: how many singular values exceed `tol`.

    Args:
      a: a float tensor of shape [..., M, N].
      tol: the threshold; by default eps * max(M, N) * the largest singular value.
      validate_args: accepted for compatibility.
      name: optional name for the operation.

    Returns:
      An int32 tensor of the batch shape.

    Example:
      >>> int(tf.linalg.matrix_rank([[1.0, 2.0], [2.0, 4.0]]))
      1
    """,
    "pinv": """The Moore-Penrose pseudo-inverse of each matrix, via the SVD.

    Singular values at or below `rcond` times the largest one are treated as zero.

    Args:
      a: a float tensor of shape [..., M, N].
      rcond: the cutoff ratio; by default 10 * max(M, N) * eps.
      validate_args: accepted for compatibility.
      name: optional name for the operation.

    Returns:
      A tensor of shape [..., N, M].

    Example:
      >>> tf.linalg.pinv([[2.0, 0.0], [0.0, 0.0]]).numpy()
      array([[0.5, 0. ],
             [0. , 0. ]], dtype=float32)
    """,
    "qr": """The QR decomposition of each matrix: q orthonormal columns, r upper triangular.

    Args:
      input: a float or complex tensor of shape [..., M, N].
      full_matrices: if True q is [..., M, M] and r [..., M, N]; else q is [..., M, P] and r
        [..., P, N] with P = min(M, N).
      name: optional name for the operation.

    Returns:
      A tuple `(q, r)` with `q @ r == input`.

    Example:
      >>> tf.linalg.qr([[3.0, 0.0], [4.0, 5.0]])[1].numpy()
      array([[-5., -4.],
             [ 0.,  3.]], dtype=float32)
    """,
    "svd": """The singular value decomposition of each matrix.

    input = u @ diag(s) @ adjoint(v). As in TensorFlow the result order is (s, u, v) and `v`
    is not adjoint.

    Args:
      tensor: a float or complex tensor of shape [..., M, N].
      full_matrices: if True u and v are square; else they have min(M, N) columns.
      compute_uv: if False only `s` is computed and returned.
      name: optional name for the operation.

    Returns:
      `(s, u, v)`, or `s` alone when not `compute_uv`; s is real, descending.

    Example:
      >>> tf.linalg.svd([[3.0, 0.0], [0.0, 4.0]], compute_uv=False).numpy()
      array([4., 3.], dtype=float32)
    """,
    "self_adjoint_eig": """The eigen decomposition of each self-adjoint (Hermitian) matrix.

    Only the lower triangle is read.

    Args:
      tensor: a float or complex tensor of shape [..., M, M] (a batch of square matrices).
      name: optional name for the operation.

    Returns:
      A tuple `(e, v)`: e the eigenvalues in ascending order, v the eigenvectors as columns.

    Example:
      >>> tf.linalg.eigh([[2.0, 0.0], [0.0, 3.0]])[0].numpy()
      array([2., 3.], dtype=float32)
    """,
    "self_adjoint_eigvals": """The eigenvalues of each self-adjoint (Hermitian) matrix, ascending.

    Args:
      tensor: a float or complex tensor of shape [..., M, M] (a batch of square matrices).
      name: optional name for the operation.

    Returns:
      A tensor of shape [..., M].

    Example:
      >>> tf.linalg.eigvalsh([[2.0, 0.0], [0.0, 3.0]]).numpy()
      array([2., 3.], dtype=float32)
    """,
    "eig": """The eigen decomposition of each general square matrix.

    Args:
      tensor: a float or complex tensor of shape [..., M, M] (a batch of square matrices).
      name: optional name for the operation.

    Returns:
      A tuple `(e, v)` of complex tensors: the eigenvalues (in no particular order) and the
      right eigenvectors as unit columns.

    Example:
      >>> sorted(tf.linalg.eig([[2.0, 0.0], [0.0, 3.0]])[0].numpy().real.tolist())
      [2.0, 3.0]
    """,
    "eigvals": """The eigenvalues of each general square matrix (complex, in no set order).

    Args:
      tensor: a float or complex tensor of shape [..., M, M] (a batch of square matrices).
      name: optional name for the operation.

    Returns:
      A complex tensor of shape [..., M].

    Example:
      >>> sorted(tf.linalg.eigvals([[2.0, 0.0], [0.0, 3.0]]).numpy().real.tolist())
      [2.0, 3.0]
    """,
    "cholesky": _square(
        "Cholesky factor", "Hermitian positive definite", "cholesky",
        "The lower-triangular L with L @ adjoint(L) = input; only the lower triangle of the input"
        "\n    is read. Where the factorization fails the result holds NaNs.",
        "[[4.0, 2.0], [2.0, 3.0]]",
        "[[2.       , 0.       ],\n             [1.       , 1.4142135]]"),
    "matrix_square_root": _square(
        "principal square root", "square", "sqrtm", "Where a matrix has no real square root "
        "(e.g. a negative real eigenvalue) the result\n    holds NaNs.",
        "[[4.0, 0.0], [0.0, 9.0]]", "[[2., 0.],\n             [0., 3.]]"),
}
