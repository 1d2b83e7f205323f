"""The docstrings of linalg_diag.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "matrix_diag": """Builds matrices with the given values on a diagonal (zeros elsewhere).

    Args:
      diagonal: a tensor [..., n] (or [..., num_diags, n] for a band).
      name: optional name for the operation.
      k: the diagonal offset (0 main, positive above, negative below), or a pair (lo, hi) for
        a band of diagonals.
      num_rows: the rows of the result (-1: inferred).
      num_cols: the columns of the result (-1: inferred).
      padding_value: the value off the diagonal(s).
      align: how diagonals shorter than the longest are aligned: "RIGHT_LEFT" (default),
        "LEFT_RIGHT", "LEFT_LEFT" or "RIGHT_RIGHT".

    Returns:
      A tensor [..., num_rows, num_cols].

    Example:
      >>> tf.linalg.diag([1, 2]).numpy()
      array([[1, 0],
             [0, 2]], dtype=int32)
    """,
    "matrix_diag_part": """The diagonal (or a band of diagonals) of each matrix.

    Args:
      input: a tensor [..., M, N].
      name: optional name for the operation.
      k: the diagonal offset (0 main, positive above, negative below), or a pair (lo, hi) for
        a band of diagonals.
      padding_value: the value filling short diagonals of a band.
      align: how diagonals shorter than the longest are aligned: "RIGHT_LEFT" (default),
        "LEFT_RIGHT", "LEFT_LEFT" or "RIGHT_RIGHT".

    Returns:
      A tensor [..., min(M, N)] for the main diagonal.

    Example:
      >>> tf.linalg.diag_part([[1, 2], [3, 4]]).numpy()
      array([1, 4], dtype=int32)
    """,
    "matrix_set_diag": """Replaces a diagonal (or a band) of each matrix with new values.

    Args:
      input: a tensor [..., M, N].
      diagonal: the new values, shaped as `tf.linalg.diag_part` would give.
      name: optional name for the operation.
      k: the diagonal offset (0 main, positive above, negative below), or a pair (lo, hi) for
        a band of diagonals.
      align: how diagonals shorter than the longest are aligned: "RIGHT_LEFT" (default),
        "LEFT_RIGHT", "LEFT_LEFT" or "RIGHT_RIGHT".

    Returns:
      A tensor of input's shape and dtype.

    Example:
      >>> tf.linalg.set_diag([[1, 2], [3, 4]], [9, 9]).numpy()
      array([[9, 2],
             [3, 9]], dtype=int32)
    """,
    "band_part": """Keeps a band around the diagonal of each matrix, zeroing the rest.

    Element (i, j) is kept when (num_lower < 0 or i - j <= num_lower) and (num_upper < 0 or
    j - i <= num_upper).

    Args:
      input: a tensor [..., M, N].
      num_lower: the subdiagonals to keep (negative: all).
      num_upper: the superdiagonals to keep (negative: all).
      name: optional name for the operation.

    Returns:
      A tensor of input's shape and dtype.

    Example:
      >>> tf.linalg.band_part([[1, 2, 3], [4, 5, 6], [7, 8, 9]], 0, -1).numpy()
      array([[1, 2, 3],
             [0, 5, 6],
             [0, 0, 9]], dtype=int32)
    """,
    "trace": """The sum of the main diagonal of each matrix.

    Args:
      x: a tensor [..., M, N].
      name: optional name for the operation.

    Returns:
      A tensor of the batch shape.

    Example:
      >>> int(tf.linalg.trace([[1, 2], [3, 4]]))
      5
    """,
    "adjoint": """The conjugate transpose of each matrix (its last two dimensions swapped).

    Args:
      matrix: a tensor [..., M, N].
      name: optional name for the operation.

    Returns:
      A tensor [..., N, M].

    Example:
      >>> tf.linalg.adjoint([[1 + 1j, 2], [3, 4]]).numpy()
      array([[1.-1.j, 3.-0.j],
             [2.-0.j, 4.-0.j]])
    """,
}
