"""BandedTriangularSolve, and TridiagonalSolve / TridiagonalMatMul through
`tf.linalg.tridiagonal_solve` / `tridiagonal_matmul` in their three diagonal formats,
table-driven (harness.py). Values and gradients were also compared with TF 2.21's (equal to
~1e-16)."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.ops.linalg_decomp import banded_triangular_solve
from ndflow.ops.linalg_tridiag import tridiagonal_matmul, tridiagonal_solve
from tests.ops.harness import OpCase

rng = np.random.default_rng(17)


def _r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


def _diags(*batch, m=4):
    d = _r(*batch, 3, m)
    d[..., 1, :] += 3.0
    return d


def _dense(d):
    """compact [..., 3, M] -> the [..., M, M] matrix."""
    m = d.shape[-1]
    out = np.zeros(d.shape[:-2] + (m, m))
    i = np.arange(m)
    out[..., i, i] = d[..., 1, :]
    out[..., i[:-1], i[1:]] = d[..., 0, :-1]
    out[..., i[1:], i[:-1]] = d[..., 2, 1:]
    return out


def _np_banded(bands, lower):
    """The triangular matrix of `bands` [K, M] (LEFT_RIGHT alignment)."""
    k, m = bands.shape
    a = np.zeros((m, m))
    for row in range(k):
        d = -row if lower else k - 1 - row
        n = m - abs(d)
        vals = bands[row, m - n:] if d < 0 else bands[row, :n]
        a += np.diag(vals, d)
    return a


def _bands(k, m, lower, *batch):
    b = _r(*batch, k, m)
    b[..., 0 if lower else k - 1, :] += 3.0
    return b


_TOL = dict(rtol=1e-5, atol=1e-5, low_precision=False)

CASES = [
    OpCase("tridiagonal_solve", lambda d, b: tridiagonal_solve(d, b), [_diags(2), _r(2, 4, 3)],
           lambda d, b: np.linalg.solve(_dense(d), b), **_TOL),
    OpCase("tridiagonal_solve_no_pivoting",
           lambda d, b: tridiagonal_solve(d, b, partial_pivoting=False), [_diags(), _r(4, 2)],
           lambda d, b: np.linalg.solve(_dense(d), b), **_TOL),
    OpCase("tridiagonal_solve_vector", lambda d, b: tridiagonal_solve(d, b), [_diags(), _r(4)],
           lambda d, b: np.linalg.solve(_dense(d), b), **_TOL),
    OpCase("tridiagonal_solve_transpose_rhs",
           lambda d, b: tridiagonal_solve(d, b, transpose_rhs=True), [_diags(), _r(2, 4)],
           lambda d, b: np.linalg.solve(_dense(d), b.T), **_TOL),
    OpCase("tridiagonal_solve_matrix",
           lambda a, b: tridiagonal_solve(a, b, diagonals_format="matrix"),
           [_r(4, 4) + 3 * np.eye(4), _r(4, 2)],
           lambda a, b: np.linalg.solve(_dense(np.stack([
               np.pad(np.diagonal(a, 1), (0, 1)), np.diagonal(a),
               np.pad(np.diagonal(a, -1), (1, 0))])), b), **_TOL),
    OpCase("tridiagonal_solve_sequence",
           lambda s, m, u, b: tridiagonal_solve([s, m, u], b, diagonals_format="sequence"),
           [_r(4), _r(4) + 3.0, _r(4), _r(4, 2)],
           lambda s, m, u, b: np.linalg.solve(_dense(np.stack([s, m, u])), b), **_TOL),
    OpCase("tridiagonal_matmul", lambda d, b: tridiagonal_matmul(d, b), [_r(2, 3, 4), _r(2, 4, 3)],
           lambda d, b: _dense(d) @ b, **_TOL),
    OpCase("tridiagonal_matmul_sequence",
           lambda s, m, u, b: tridiagonal_matmul([s, m, u], b, diagonals_format="sequence"),
           [_r(4), _r(4), _r(4), _r(4, 2)],
           lambda s, m, u, b: _dense(np.stack([s, m, u])) @ b, **_TOL),
]


BANDED = [
    OpCase("banded_triangular_solve_lower", lambda a, b: banded_triangular_solve(a, b),
           [_bands(3, 5, True), _r(5, 2)],
           lambda a, b: np.linalg.solve(_np_banded(a, True), b), **_TOL),
    OpCase("banded_triangular_solve_upper_adjoint_broadcast",
           lambda a, b: banded_triangular_solve(a, b, lower=False, adjoint=True),
           [_bands(2, 4, False), _r(2, 4, 3)],
           lambda a, b: np.linalg.solve(_np_banded(a, False).T, b), **_TOL),
]
CASES += BANDED


def test_banded_triangular_solve_as_tf():
    bands = np.array([[2.0, 3.0, 4.0], [1.0, 5.0, 6.0]])
    np.testing.assert_allclose(  # TF 2.21's values
        banded_triangular_solve(bands, np.ones((3, 1)), lower=False).numpy().ravel(),
        [0.8, 0.1, 1 / 6], rtol=1e-12)
    np.testing.assert_allclose(
        banded_triangular_solve(bands, np.ones((3, 1)), adjoint=True).numpy().ravel(),
        [11 / 12, -1 / 6, 0.25], rtol=1e-12)
    with pytest.raises(InvalidArgumentError, match="Input matrix is not invertible."):
        banded_triangular_solve(np.array([[2.0, 3.0, 4.0], [1.0, 1.0, 0.0]]), np.ones((3, 1)),
                                lower=False)
    assert tf.linalg.banded_triangular_solve is banded_triangular_solve
    assert not hasattr(tf.compat.v1.linalg, "banded_triangular_solve")


def test_public_names_and_errors_as_tf():
    assert tf.linalg.tridiagonal_solve is tridiagonal_solve
    assert tf.linalg.tridiagonal_matmul is tridiagonal_matmul
    with pytest.raises(ValueError, match="Expected 3 diagonals got 2"):
        tridiagonal_solve(np.ones((2, 3)), np.ones((3, 1)))
    with pytest.raises(ValueError, match="left-hand sided and right-hand sides to be equal, "
                                         "got 3 and 2"):
        tridiagonal_solve(np.ones((3, 3)), np.ones((2, 1)))
    with pytest.raises(ValueError, match="partial_pivoting must be True if perturb_singular"):
        tridiagonal_solve(np.ones((3, 3)), np.ones((3, 1)), partial_pivoting=False,
                          perturb_singular=True)
    # [[1, 1, 0], [1, 1, 1], [0, 1, 1]] needs pivoting: NaN without it, as TF.
    d = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 1.0]])
    np.testing.assert_allclose(tridiagonal_solve(d, np.ones((3, 1))).numpy(), [[0], [1], [0]],
                               atol=1e-12)
    assert np.isnan(tridiagonal_solve(d, np.ones((3, 1)), partial_pivoting=False).numpy()).all()
    assert np.isnan(tridiagonal_solve(np.zeros((3, 3)), np.ones((3, 1))).numpy()).all()
    # A sequence's off-diagonals may have length M - 1.
    s, m, u = np.array([1.0, 2.0]), np.array([4.0, 5.0, 6.0]), np.array([3.0, 1.0])
    b = np.ones((3, 1))
    want = np.linalg.solve(np.diag(m) + np.diag(s, 1) + np.diag(u, -1), b)
    np.testing.assert_allclose(
        tridiagonal_solve([s, m, u], b, diagonals_format="sequence").numpy(), want, rtol=1e-12)
