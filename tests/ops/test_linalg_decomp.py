"""Solvers and decompositions (MatrixInverse ... MatrixSolveLs), table-driven (harness.py),
plus TF's errors, graph names and public names.

Inputs of symmetric ops are symmetrized inside the case, so finite differences perturb the
matrix the op sees; decompositions with a sign ambiguity (QR, SVD, eigh) are compared after
fixing signs (r's diagonal, the first row of u / v positive) in both ndflow and NumPy.
LAPACK has no half precision, so these cases skip the float16/bfloat16 forward runs.
"""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.ops import linalg_decomp as ld
from ndflow.ops.apply import apply_op
from ndflow.ops.array_core import placeholder
from ndflow.ops.linalg_decomp import (
    cholesky,
    cholesky_solve,
    log_matrix_determinant,
    logdet,
    matrix_determinant,
    matrix_inverse,
    matrix_rank,
    matrix_solve,
    matrix_solve_ls,
    matrix_square_root,
    matrix_triangular_solve,
    pinv,
    qr,
    self_adjoint_eig,
    self_adjoint_eigvals,
    svd,
)
from ndflow.ops.linalg_diag import matrix_diag_part
from ndflow.ops.linalg_expm import matrix_exponential
from ndflow.ops.linalg_extra import matrix_transpose
from tests.ops.harness import OpCase

rng = np.random.default_rng(7)


def _r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


def _wc(*shape):
    """Well-conditioned square matrices."""
    return _r(*shape) + 3.0 * np.eye(shape[-1])


def _spd(*shape):
    a = _r(*shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _sym(x):
    return (x + matrix_transpose(x)) * 0.5


def _np_sym(x):
    return (x + np.swapaxes(x, -1, -2)) / 2


def _sign_rows(x):
    return tf.sign(x[..., :1, :])


def _qr_fixed(x, full=False):
    q, r = qr(x, full_matrices=full)
    s = tf.sign(matrix_diag_part(r))
    k = s.shape[-1]
    return [q[..., :, :k] * s[..., None, :], r * s[..., :, None]]


def _np_qr_fixed(x, full=False):
    q, r = np.linalg.qr(x, mode="complete" if full else "reduced")
    s = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    k = s.shape[-1]
    return [q[..., :, :k] * s[..., None, :], r * s[..., :, None]]


def _svd_fixed(x, full=False):
    s, u, v = svd(x, full_matrices=full)
    k = s.shape[-1]
    su, sv = _sign_rows(u[..., :, :k]), _sign_rows(v[..., :, :k])
    return [s, u[..., :, :k] * su, v[..., :, :k] * sv]


def _np_svd_fixed(x, full=False):
    u, s, vh = np.linalg.svd(x, full_matrices=full)
    v = np.swapaxes(vh, -1, -2)
    k = s.shape[-1]
    u, v = u[..., :, :k], v[..., :, :k]
    return [s, u * np.sign(u[..., :1, :]), v * np.sign(v[..., :1, :])]


def _eigh_fixed(x):
    e, v = self_adjoint_eig(_sym(x))
    return [e, v * _sign_rows(v)]


def _np_eigh_fixed(x):
    e, v = np.linalg.eigh(_np_sym(x))
    return [e, v * np.sign(v[..., :1, :])]


def _np_lstsq(a, b, l2=0.0):
    at = np.swapaxes(a, -1, -2)
    n = a.shape[-1]
    return np.linalg.solve(at @ a + l2 * np.eye(n), at @ b)


def _np_lstsq_under(a, b, l2=0.0):
    at = np.swapaxes(a, -1, -2)
    return at @ np.linalg.solve(a @ at + l2 * np.eye(a.shape[-2]), b)


def _np_sqrtm(x):
    e, v = np.linalg.eig(x)
    return np.real(v @ (np.sqrt(e.astype(complex))[..., None] * np.linalg.inv(v)))


def _np_expm(x):
    """Taylor series (40 terms) of x / 2^k with norm < 1/2, squared k times."""
    k = max(0, int(np.ceil(np.log2(max(np.abs(x).sum(-2).max(), 1e-300) / 0.5))))
    a = x / 2.0 ** k
    term = result = np.broadcast_to(np.eye(x.shape[-1]), x.shape).copy()
    for n in range(1, 40):
        term = term @ a / n
        result = result + term
    for _ in range(k):
        result = result @ result
    return result


_TOL = dict(rtol=1e-5, atol=1e-5, low_precision=False)
_G = dict(_TOL, grad_tol=1e-4)

CASES = [
    OpCase("inv", lambda x: matrix_inverse(x), [_wc(2, 3, 3)], np.linalg.inv, **_TOL),
    OpCase("inv_adjoint", lambda x: matrix_inverse(x, adjoint=True), [_wc(3, 3)],
           lambda x: np.linalg.inv(x.T), **_TOL),
    OpCase("solve", lambda a, b: matrix_solve(a, b), [_wc(2, 3, 3), _r(2, 3, 2)],
           np.linalg.solve, **_TOL),
    OpCase("solve_adjoint", lambda a, b: matrix_solve(a, b, adjoint=True), [_wc(3, 3), _r(3, 4)],
           lambda a, b: np.linalg.solve(a.T, b), **_TOL),
    OpCase("det", lambda x: matrix_determinant(x), [_wc(2, 3, 3)], np.linalg.det, **_TOL),
    OpCase("slogdet", lambda x: list(log_matrix_determinant(x)),
           [_wc(3, 3) * np.array([[-1.0], [1.0], [1.0]])],
           lambda x: list(np.linalg.slogdet(x)), **_TOL),
    OpCase("logdet", lambda x: logdet(_sym(x)), [_spd(2, 3, 3)],
           lambda x: np.linalg.slogdet(_np_sym(x))[1], **_TOL),
    OpCase("cholesky", lambda x: cholesky(_sym(x)), [_spd(2, 3, 3)],
           lambda x: np.linalg.cholesky(_np_sym(x)), **_TOL),
    OpCase("cholesky_solve", lambda x, b: cholesky_solve(cholesky(_sym(x)), b),
           [_spd(3, 3), _r(3, 2)], lambda x, b: np.linalg.solve(_np_sym(x), b), **_TOL),
    OpCase("triangular_solve_lower", lambda a, b: matrix_triangular_solve(a, b),
           [_wc(2, 3, 3), _r(2, 3, 2)], lambda a, b: np.linalg.solve(np.tril(a), b), **_TOL),
    OpCase("triangular_solve_upper_adjoint",
           lambda a, b: matrix_triangular_solve(a, b, lower=False, adjoint=True),
           [_wc(3, 3), _r(3, 2)], lambda a, b: np.linalg.solve(np.triu(a).T, b), **_TOL),
    OpCase("triangular_solve_broadcast", lambda a, b: matrix_triangular_solve(a, b),
           [_wc(3, 3), _r(2, 3, 2)], lambda a, b: np.linalg.solve(np.tril(a), b), **_TOL),
    OpCase("qr", lambda x: _qr_fixed(x), [_r(2, 4, 3)], _np_qr_fixed, **_G),
    OpCase("qr_square_full", lambda x: _qr_fixed(x, True), [_r(3, 3)],
           lambda x: _np_qr_fixed(x, True), **_G),
    OpCase("qr_wide", lambda x: _qr_fixed(x), [_r(3, 5)], _np_qr_fixed, **_G),
    OpCase("qr_full_tall", lambda x: list(qr(x, full_matrices=True)), [_r(4, 2)],
           lambda x: list(np.linalg.qr(x, mode="complete")), grad=False, **_TOL),
    OpCase("svd_values", lambda x: svd(x, compute_uv=False), [_r(2, 4, 3)],
           lambda x: np.linalg.svd(x, compute_uv=False), **_G),
    OpCase("svd_tall", lambda x: _svd_fixed(x), [_r(2, 4, 3)], _np_svd_fixed, **_G),
    OpCase("svd_wide", lambda x: _svd_fixed(x), [_r(3, 4)], _np_svd_fixed, **_G),
    OpCase("svd_full_square", lambda x: _svd_fixed(x, True), [_r(3, 3)],
           lambda x: _np_svd_fixed(x, True), **_G),
    OpCase("eigh", _eigh_fixed, [_r(2, 3, 3)], _np_eigh_fixed, **_G),
    OpCase("eigvalsh", lambda x: self_adjoint_eigvals(_sym(x)), [_r(4, 4)],
           lambda x: np.linalg.eigvalsh(_np_sym(x)), **_G),
    OpCase("lstsq_over", lambda a, b: matrix_solve_ls(a, b), [_r(5, 3), _r(5, 2)],
           _np_lstsq, **_G),
    OpCase("lstsq_under_l2", lambda a, b: matrix_solve_ls(a, b, l2_regularizer=0.1),
           [_r(2, 4), _r(2, 3)], lambda a, b: _np_lstsq_under(a, b, 0.1), **_G),
    OpCase("lstsq_slow", lambda a, b: matrix_solve_ls(a, b, fast=False), [_r(2, 5, 3), _r(2, 5, 1)],
           lambda a, b: np.stack([np.linalg.lstsq(x, y, rcond=None)[0] for x, y in zip(a, b)]),
           grad=False, **_TOL),
    OpCase("expm_small", lambda x: matrix_exponential(x), [_r(2, 3, 3) * 0.05], _np_expm,
           **_G),
    OpCase("expm_mid", lambda x: matrix_exponential(x), [_r(4, 4) * 0.5], _np_expm, **_G),
    OpCase("expm_scaled", lambda x: matrix_exponential(x), [_r(2, 3, 3) * 4.0], _np_expm,
           rtol=1e-4, atol=1e-4, grad_tol=1e-3, low_precision=False),
    OpCase("pinv_tall", lambda x: pinv(x), [_r(2, 4, 3)], np.linalg.pinv, **_G),
    OpCase("pinv_rank_deficient", lambda x: pinv(x), [np.outer([1.0, 2.0, -1.0], [3.0, 1.0])],
           np.linalg.pinv, grad=False, **_TOL),
    OpCase("matrix_rank", lambda x: matrix_rank(x),
           [np.stack([np.outer([1.0, 2.0, -1.0], [3.0, 1.0, 2.0]), _wc(3, 3)])],
           lambda x: np.linalg.matrix_rank(x).astype(np.int32), grad=False, **_TOL),
    OpCase("sqrtm", lambda x: matrix_square_root(x), [_spd(2, 3, 3) + 0.3 * _r(2, 3, 3)],
           _np_sqrtm, **_G),
    OpCase("sqrtm_rotation", lambda x: matrix_square_root(x), [np.array([[0.0, 1], [-1, 0]])],
           _np_sqrtm, **_G),
    OpCase("matrix_solve_ls_op_over",
           lambda a, b: apply_op(ld.MatrixSolveLs, [a, b, 0.5], {"fast": True}).outputs[0],
           [_r(4, 3), _r(4, 2)], lambda a, b: _np_lstsq(a, b, 0.5), **_G),
    OpCase("matrix_solve_ls_op_under",
           lambda a, b: apply_op(ld.MatrixSolveLs, [a, b, 0.5], {"fast": True}).outputs[0],
           [_r(2, 2, 3), _r(2, 2, 2)], lambda a, b: _np_lstsq_under(a, b, 0.5), **_G),
]


def _impl(api):
    """The function behind a public name (LinearOperators install a dispatching wrapper on
    some of tf.linalg's, as TF's dispatch decorator wraps every API)."""
    return getattr(api, "_dispatch_original", api)


def test_public_names_v1_and_v2():
    assert _impl(tf.linalg.inv) is matrix_inverse
    assert _impl(tf.compat.v1.matrix_inverse) is matrix_inverse
    assert _impl(tf.compat.v1.matrix_determinant) is matrix_determinant
    assert _impl(tf.compat.v1.cholesky) is cholesky and _impl(tf.compat.v1.svd) is svd
    assert _impl(tf.compat.v1.qr) is qr and _impl(tf.compat.v1.self_adjoint_eig) is self_adjoint_eig
    assert _impl(tf.compat.v1.matrix_solve_ls) is matrix_solve_ls
    assert _impl(tf.linalg.lstsq) is matrix_solve_ls
    assert _impl(tf.compat.v1.matrix_triangular_solve) is matrix_triangular_solve
    assert not hasattr(tf, "cholesky") and not hasattr(tf, "svd")
    assert _impl(tf.linalg.pinv) is pinv and _impl(tf.linalg.matrix_rank) is matrix_rank


def test_singular_and_non_square_errors_as_tf():
    with pytest.raises(InvalidArgumentError, match="Input is not invertible."):
        matrix_inverse(np.zeros((2, 2), np.float32))
    with pytest.raises(InvalidArgumentError, match="Input matrix is not invertible."):
        matrix_solve(np.zeros((2, 2), np.float32), np.ones((2, 1), np.float32))
    with pytest.raises(InvalidArgumentError, match="Input matrix must be square."):
        matrix_determinant(np.ones((2, 3), np.float32))
    with pytest.raises(InvalidArgumentError, match="must have rank >= 2, got 1"):
        matrix_inverse(np.ones(3, np.float32))
    assert matrix_determinant(np.zeros((2, 2))).numpy() == 0.0
    sign, logabs = log_matrix_determinant(np.zeros((2, 2)))
    assert sign.numpy() == 0.0 and logabs.numpy() == -np.inf
    g = Graph()
    with g.as_default():
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
            matrix_inverse(placeholder(tf.float32, [2, 3]))
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
            matrix_determinant(placeholder(tf.float32, [2, 3]))
        with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
            svd(placeholder(tf.float32, [3]))
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 5 and 3"):
            matrix_triangular_solve(placeholder(tf.float32, [5, 2, 2]),
                                    placeholder(tf.float32, [3, 2, 1]))


def test_expm_as_tf():
    assert tf.linalg.expm is matrix_exponential
    np.testing.assert_allclose(matrix_exponential(np.diag([1.0, -2.0])).numpy(),
                               np.diag(np.exp([1.0, -2.0])), rtol=1e-14)
    assert np.isnan(matrix_exponential(np.full((2, 2), np.inf)).numpy()).all()
    x = 40.0 * _r(3, 3)  # several squarings, eagerly and in the unrolled graph
    eager = matrix_exponential(x).numpy()
    np.testing.assert_allclose(eager, _np_expm(x), rtol=1e-9)
    np.testing.assert_allclose(tf.function(matrix_exponential)(x).numpy(), eager, rtol=1e-12)
    assert matrix_exponential(np.zeros((0, 0))).shape.as_list() == [0, 0]
    assert matrix_exponential(np.zeros((0, 3, 3))).shape.as_list() == [0, 3, 3]


_M = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]], np.float32)


@pytest.mark.parametrize("call,message", [
    (lambda: matrix_triangular_solve(_M, np.ones((2, 1), np.float32), lower=False,
                                     adjoint=True),
     "In[0] mismatch In[1] shape: 3 vs. 2: [3,3] [2,1] 0 1"),
    (lambda: matrix_triangular_solve(np.ones((5, 3, 3), np.float32),
                                     np.ones((4, 3, 1), np.float32)),
     "In[0] and In[1] must have compatible batch dimensions: [5,3,3] vs. [4,3,1]"),
    (lambda: matrix_triangular_solve(np.ones((3, 2), np.float32), np.ones((3, 1), np.float32)),
     "In[0] matrices in the last dimensions must be square (2 =/= 3)"),
    (lambda: matrix_solve(np.ones((5, 3, 3), np.float32), np.ones((4, 3, 1), np.float32)),
     "All input tensors must have the same outer dimensions."),
    (lambda: matrix_solve(np.stack([_M, _M]), np.ones((3, 1), np.float32)),
     "All input tensors must have the same rank."),
    (lambda: matrix_solve(_M, np.ones((2, 1), np.float32)),
     "Input matrix and rhs are incompatible."),
    (lambda: matrix_solve_ls(np.ones((3, 2), np.float32), np.ones((4, 1), np.float32),
                             fast=False), "Input matrix and rhs are incompatible."),
    (lambda: self_adjoint_eig(np.ones((2, 3), np.float32)), "Input matrix must be square."),
])
def test_eager_error_messages_as_tf(call, message):
    with pytest.raises(InvalidArgumentError) as info:
        call()
    assert message in str(info.value)


def test_lstsq_without_fast_ignores_l2_as_tf():
    x = matrix_solve_ls(_M, np.ones((3, 1), np.float32), l2_regularizer=0.5, fast=False)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(_M, np.ones((3, 1))), rtol=1e-5)


def test_sqrtm_without_a_real_root_is_nan_as_tf():
    assert np.isnan(matrix_square_root(np.array([[-1.0, 0.0], [0.0, 4.0]])).numpy()).all()
    np.testing.assert_allclose(matrix_square_root(np.array([[4.0, 1.0], [0.0, 4.0]])).numpy(),
                               [[2.0, 0.25], [0.0, 2.0]], rtol=1e-12)
    assert tf.linalg.sqrtm is matrix_square_root
    assert tf.compat.v1.matrix_square_root is matrix_square_root


def test_failed_cholesky_fills_nans_like_tf():
    out = cholesky(np.array([[[4.0, 2.0], [2.0, -3.0]], [[4.0, 2.0], [2.0, 3.0]]])).numpy()
    assert np.isnan(out[0][np.tril_indices(2)]).all()
    np.testing.assert_allclose(out[1], [[2.0, 0.0], [1.0, np.sqrt(2.0)]])


def test_graph_ops_and_shapes_as_tf():
    g = Graph()
    with g.as_default():
        p = placeholder(tf.float32, [None, 3, 4])
        s, u, v = svd(p)
        assert s.op.type == "Svd" and s.shape.as_list() == [None, 3]
        assert u.shape.as_list() == [None, 3, 3] and v.shape.as_list() == [None, 4, 3]
        assert svd(p, compute_uv=False).shape.as_list() == [None, 3]
        q, r = qr(p, full_matrices=True)
        assert q.shape.as_list() == [None, 3, 3] and r.shape.as_list() == [None, 3, 4]
        x = matrix_solve_ls(placeholder(tf.float32, [4, 3]), placeholder(tf.float32, [4, 2]),
                            l2_regularizer=0.1)
        assert x.op.name == "matrix_solve_ls/cholesky_solve/MatrixTriangularSolve_1"
        assert x.shape.as_list() == [3, 2]
        d = logdet(placeholder(tf.float32, [3, 3]))
        assert d.op.name == "logdet/mul"
        t = matrix_triangular_solve(placeholder(tf.float32, [1, 2, 2]),
                                    placeholder(tf.float32, [3, 2, 1]))
        assert t.op.name == "triangular_solve/MatrixTriangularSolve"
        assert t.shape.as_list() == [3, 2, 1]
        e = self_adjoint_eigvals(placeholder(tf.float32, [3, 3]))
        assert e.op.type == "SelfAdjointEigV2" and e.shape.as_list() == [3]
