"""tf.linalg.LinearOperator* against NumPy in float64/complex128: every method of every
operator of tests/fixtures/linear_operator against the same computation on its dense matrix
(which test_linear_operator.py checks against TensorFlow), batch slicing against slicing
the dense matrix, gradients of matmul/solve/log|det| against finite differences, operators
in graphs of unknown batch size, variables, and what TF 2.21 itself gets wrong."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("linear_operator")
L = tf.linalg
BUILDERS = CONFIGS.operators(tf, "float64")
NAMES = sorted(n for n in BUILDERS if n not in ("zeros_non_square",))


def _h(a):
    return np.conj(np.swapaxes(a, -1, -2))


def _np(t):
    return np.asarray(t.numpy() if hasattr(t, "numpy") else t)


def _close(got, want, rtol=1e-9):
    got, want = _np(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype in (np.float32, np.complex64):   # e.g. a circulant product: complex64
        rtol = max(rtol, 1e-6)
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=0, atol=rtol * scale)


def _arg(op, rows, cols, seed, extra=()):
    batch = tuple(op.batch_shape.as_list())
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(extra + batch + (rows, cols))
    if op.dtype.is_complex:
        x = x + 1j * rng.standard_normal(x.shape)
    return x.astype(op.dtype.as_numpy_dtype)


def _invertible(op, a) -> bool:
    return a.shape[-1] == a.shape[-2] and op.is_non_singular is not False and \
        np.all(np.abs(np.linalg.det(a)) > 1e-8)


@pytest.mark.parametrize("name", NAMES)
def test_methods_match_numpy_on_the_dense_matrix(name):
    op = BUILDERS[name]()
    a = _np(op.to_dense())
    m, n = a.shape[-2:]
    x_n, x_m = _arg(op, n, 2, 1), _arg(op, m, 2, 2)
    assert list(a.shape) == op.shape.as_list() == list(_np(op.shape_tensor()))
    _close(op.matmul(x_n), a @ x_n)
    _close(op.matmul(x_m, adjoint=True), _h(a) @ x_m)
    _close(op.matmul(_h(x_n), adjoint_arg=True), a @ x_n)
    _close(op.matmul(_h(x_m), adjoint=True, adjoint_arg=True), _h(a) @ x_m)
    _close(op.matvec(x_n[..., 0]), (a @ x_n)[..., 0])
    _close(op.matvec(x_m[..., 0], adjoint=True), (_h(a) @ x_m)[..., 0])
    bcast = _arg(op, n, 1, 3, extra=(2,))
    _close(op.matmul(bcast), a @ bcast)
    _close(op.add_to_tensor(tf.constant(_arg(op, m, n, 4))), a + _arg(op, m, n, 4))
    # (TF's block lower-triangular operators take these from the diagonal blocks alone,
    # whose batch shape may be smaller than the operator's)
    fit = (lambda t, w: np.broadcast_to(_np(t), np.shape(w))) \
        if name == "block_lower_triangular" else (lambda t, w: t)
    if m == n and name != "block_diag_non_square_blocks":   # (TF: blocks must be square)
        want = np.trace(a, axis1=-2, axis2=-1)
        _close(fit(op.trace(), want), want)
        want = np.diagonal(a, axis1=-2, axis2=-1)
        _close(fit(op.diag_part(), want), want)
        want = np.linalg.det(a)
        _close(fit(op.determinant(), want), want, rtol=1e-8)
    if not _invertible(op, a):
        return
    want = np.linalg.slogdet(a)[1]
    _close(fit(op.log_abs_determinant(), want), want)
    _close(op.solve(x_m), np.linalg.solve(a, x_m))
    _close(op.solve(x_n, adjoint=True), np.linalg.solve(_h(a), x_n))
    _close(op.solve(_h(x_m), adjoint_arg=True), np.linalg.solve(a, x_m))
    _close(op.solve(_h(x_n), adjoint=True, adjoint_arg=True), np.linalg.solve(_h(a), x_n))
    _close(op.solvevec(x_m[..., 0]), np.linalg.solve(a, x_m)[..., 0])
    _close(op.solvevec(x_n[..., 0], adjoint=True), np.linalg.solve(_h(a), x_n)[..., 0])
    _close(op.cond(), np.linalg.cond(a), rtol=1e-8)
    _close(op.inverse().to_dense(), np.linalg.inv(a), rtol=1e-8)
    _close(op.adjoint().to_dense(), _h(a))
    _close(op.matmul(op).to_dense(), a @ a)
    _close(op.solve(op).to_dense(), np.broadcast_to(np.eye(n), a.shape))
    if op.is_self_adjoint:
        got = _np(op.eigvals())
        _close(np.sort(got.real, axis=-1), np.linalg.eigvalsh(a))
    if op.is_self_adjoint and op.is_positive_definite:
        chol = _np(op.cholesky().to_dense())
        _close(chol @ _h(chol), a)
        np.testing.assert_array_equal(np.triu(chol, 1), 0)


@pytest.mark.parametrize("name", [n for n in NAMES if BUILDERS[n]().batch_shape.rank
                                  and not n.startswith("custom")])
def test_batch_slicing_slices_the_dense_matrix(name):
    op = BUILDERS[name]()
    a = _np(op.to_dense())
    for key in (0, -1, slice(1, None), (Ellipsis, slice(None, 1)), (None, 0)):
        sliced = op[key]
        assert type(sliced) is type(op)
        key = key if isinstance(key, tuple) else (key,)
        _close(sliced.to_dense(), a[key + (slice(None), slice(None))])


def test_slicing_broadcasts_parameters_with_fewer_batch_dimensions():
    """A parameter of size 1 (or absent) in a batch dimension is taken whole."""
    op = L.LinearOperatorLowRankUpdate(
        L.LinearOperatorDiag(np.array([[2.0, 3.0, 4.0]])),
        np.random.default_rng(0).standard_normal((2, 1, 3, 2)),
        diag_update=np.array([1.0, 2.0]))
    assert op.batch_shape.as_list() == [2, 1]
    a = _np(op.to_dense())
    for key in ((1, 0), (slice(None), 0), (Ellipsis, 0), (0,)):
        _close(op[key].to_dense(), a[key + (slice(None), slice(None))])


def test_identity_and_zeros_slice_their_batch_shape():
    eye = L.LinearOperatorIdentity(2, batch_shape=[3, 4], dtype=tf.float64)
    assert eye[1:, 0].batch_shape.as_list() == [2]
    zeros = L.LinearOperatorZeros(2, batch_shape=[3], dtype=tf.float64)
    assert zeros[None, 1:].shape.as_list() == [1, 2, 2, 2]


# -- gradients ------------------------------------------------------------------------------------

def _finite_difference(f, value, eps=1e-6):
    grad = np.zeros_like(value)
    for i in np.ndindex(value.shape):
        step = np.zeros_like(value)
        step[i] = eps
        grad[i] = (f(value + step) - f(value - step)) / (2 * eps)
    return grad


GRADIENT_CASES = {
    "full": (np.array([[4.0, 1.0, 0.5], [0.2, 3.0, 1.0], [0.3, -1.0, 5.0]]),
             L.LinearOperatorFullMatrix),
    "full_spd": (np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 1.0], [0.5, 1.0, 5.0]]),
                 lambda p: L.LinearOperatorFullMatrix(
                     0.5 * (p + tf.linalg.adjoint(p)), is_self_adjoint=True,
                     is_positive_definite=True)),
    "diag": (np.array([1.5, -2.0, 3.0]), L.LinearOperatorDiag),
    "lower_triangular": (np.array([[4.0, 0, 0], [1.0, 3.0, 0], [0.5, -1.0, 2.0]]),
                         L.LinearOperatorLowerTriangular),
    "scaled_identity": (np.array(2.5), lambda p: L.LinearOperatorScaledIdentity(3, p)),
    "low_rank_update_u": (np.random.default_rng(1).standard_normal((3, 2)),
                          lambda p: L.LinearOperatorLowRankUpdate(
                              L.LinearOperatorDiag(np.array([2.0, 3.0, 4.0])), p,
                              diag_update=np.array([1.0, 0.5]))),
    "low_rank_update_diag": (np.array([1.0, 0.5]), lambda p: L.LinearOperatorLowRankUpdate(
        L.LinearOperatorDiag(np.array([2.0, 3.0, 4.0])),
        np.random.default_rng(2).standard_normal((3, 2)), diag_update=p)),
    "tridiag": (np.array([[1.0, -0.5, 0.0], [4.0, 5.0, 3.0], [0.0, 0.7, 1.2]]),
                L.LinearOperatorTridiag),
    "circulant": (np.array([5.0, 1.0, 1.0]), lambda p: L.LinearOperatorCirculant(
        p, input_output_dtype=tf.float64)),
    "kronecker": (np.array([[3.0, 1.0], [0.5, 2.0]]), lambda p: L.LinearOperatorKronecker(
        [L.LinearOperatorFullMatrix(p), L.LinearOperatorDiag(np.array([1.0, 2.0, 0.5]))])),
    "toeplitz_col": (np.array([4.0, 1.0, 0.5]), lambda p: L.LinearOperatorToeplitz(
        p, np.array([4.0, -1.0, 2.0]))),
    "householder": (np.array([1.0, 2.0, -0.5]), L.LinearOperatorHouseholder),
    "block_diag": (np.array([[3.0, 1.0], [0.5, 2.0]]), lambda p: L.LinearOperatorBlockDiag(
        [L.LinearOperatorFullMatrix(p), L.LinearOperatorDiag(np.array([2.0]))])),
}


@pytest.mark.parametrize("method", ["matmul", "solve", "log_abs_determinant"])
@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_match_finite_differences(name, method):
    value, build = GRADIENT_CASES[name]
    rng = np.random.default_rng(7)

    def loss(v):
        op = build(v)
        if method == "log_abs_determinant":
            return tf.reduce_sum(op.log_abs_determinant())
        n = op.range_dimension.value
        x = rng_x[:n] if rng_x.shape[0] >= n else np.resize(rng_x, (n, 2))
        return tf.reduce_sum(getattr(op, method)(x) * w[:n])

    rng_x, w = rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
    v = tf.constant(value)
    with tf.GradientTape() as tape:
        tape.watch(v)
        out = loss(v)
    got = tape.gradient(out, v)
    want = _finite_difference(lambda x: float(loss(tf.constant(x)).numpy()), value)
    got = np.zeros_like(value) if got is None else _np(got)   # log|det| of a reflection
    np.testing.assert_allclose(got, want, atol=1e-6 * max(1.0, np.max(np.abs(want))))


def test_gradient_reaches_a_variable_the_operator_holds():
    d = tf.Variable([1.0, 2.0, 4.0], dtype=tf.float64)
    op = L.LinearOperatorDiag(d)
    assert op.trainable_variables == (d,) and op.diag is d
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(op.solvevec(np.ones(3)))
    _close(tape.gradient(loss, d), -1.0 / np.array([1.0, 2.0, 4.0]) ** 2)
    d.assign([2.0, 2.0, 2.0])   # the operator reads the variable at each use
    _close(op.determinant(), 8.0)


# -- graphs ---------------------------------------------------------------------------------------

def test_operators_in_a_function_of_unknown_batch_size():
    """Shapes known only at run time: shape_tensor, to_dense, slicing-free methods."""
    spec = tf.TensorSpec([None, 3, 3], tf.float64)

    @tf.function(input_signature=[spec, tf.TensorSpec([None, 3], tf.float64)])
    def run(m, d):
        full = L.LinearOperatorFullMatrix(m)
        diag = L.LinearOperatorDiag(d)
        comp = full @ diag
        kron = L.LinearOperatorKronecker([diag, L.LinearOperatorDiag(d[:, :2])])
        assert full.batch_shape.as_list() == [None]
        return (full.shape_tensor(), comp.to_dense(), comp.solve(m),
                diag.log_abs_determinant(), kron.to_dense(), full.batch_shape_tensor())

    m = np.random.default_rng(3).standard_normal((2, 3, 3)) + 4 * np.eye(3)
    d = np.array([[1.0, 2.0, 3.0], [0.5, 1.5, 2.5]])
    shape, dense, sol, lad, kron, batch = run(m, d)
    np.testing.assert_array_equal(_np(shape), [2, 3, 3])
    np.testing.assert_array_equal(_np(batch), [2])
    _close(dense, m * d[:, None, :])
    _close(sol, np.linalg.solve(m * d[:, None, :], m))
    _close(lad, np.log(np.abs(d)).sum(-1))
    _close(kron, np.stack([np.kron(np.diag(d[i]), np.diag(d[i, :2])) for i in range(2)]))


def test_operator_passed_to_a_function_retraces_only_on_its_structure():
    traces = []

    @tf.function
    def apply(op, x):
        traces.append(type(op).__name__)
        return op.matvec(x)

    x = np.ones(3)
    for scale in (1.0, 2.0):
        _close(apply(L.LinearOperatorDiag(np.array([1.0, 2.0, 3.0]) * scale), x),
               np.array([1.0, 2.0, 3.0]) * scale)
    _close(apply(L.LinearOperatorScaledIdentity(3, np.float64(2.0)), x), 2 * x)
    assert traces == ["LinearOperatorDiag", "LinearOperatorScaledIdentity"]
    # static parameters (the hints, sizes) are part of the trace's key
    pd = tf.function(lambda op: tf.constant(bool(op.is_positive_definite)))
    m = np.diag([1.0, 2.0])
    assert not pd(L.LinearOperatorFullMatrix(m)).numpy()
    assert pd(L.LinearOperatorFullMatrix(m, is_self_adjoint=True,
                                         is_positive_definite=True)).numpy()


def test_a_users_subclass_passes_through_a_function_whole():
    cls = CONFIGS.custom_operator_class(tf)
    op = cls(np.diag([1.0, 2.0, 4.0]))
    assert tf.nest.flatten(op, expand_composites=True) == []   # one opaque value
    _close(tf.function(lambda o, x: o.solvevec(x))(op, np.ones(3)), [1.0, 0.5, 0.25])


def test_nest_flatten_and_pack_round_trip():
    op = L.LinearOperatorComposition([L.LinearOperatorFullMatrix(np.eye(2) * 3.0),
                                      L.LinearOperatorDiag(np.array([1.0, 2.0]))])
    flat = tf.nest.flatten(op, expand_composites=True)
    assert len(flat) == 2
    rebuilt = tf.nest.pack_sequence_as(op, [f * 2 for f in flat], expand_composites=True)
    assert type(rebuilt) is L.LinearOperatorComposition
    _close(rebuilt.to_dense(), np.diag([12.0, 24.0]))


def test_tf1_session_runs_operator_methods():
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float64, [None, 2])
        op = L.LinearOperatorLowerTriangular(np.array([[2.0, 0.0], [1.0, 4.0]]))
        y = op.solve(x, adjoint_arg=True)
        with tf.compat.v1.Session() as sess:
            got = sess.run(y, {x: np.array([[2.0, 5.0]])})
    _close(got, np.array([[1.0], [1.0]]))


# -- where TF 2.21 fails by accident ----------------------------------------------------------

def test_low_rank_update_assert_self_adjoint_checks_the_matrix():
    """(TF's recurses without end.)"""
    u = np.ones((3, 1))
    base = L.LinearOperatorDiag(np.array([1.0, 2.0, 3.0]))
    sym = L.LinearOperatorLowRankUpdate(base, u, diag_update=np.array([2.0]), v=u)
    sym.assert_self_adjoint()
    skew = L.LinearOperatorLowRankUpdate(base, u, v=np.array([[1.0], [0.0], [0.0]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not equal to its adjoint"):
        skew.assert_self_adjoint()


def test_circulant_assert_hermitian_spectrum():
    """(TF's multiplies a float by an int32 tensor and always fails.)"""
    hermitian = np.fft.fft(np.array([1.0, 2.0, 3.0, 4.0]))
    L.LinearOperatorCirculant(hermitian.astype(np.complex64)).assert_hermitian_spectrum()
    with pytest.raises(tf.errors.InvalidArgumentError, match="Spectrum was not Hermitian"):
        L.LinearOperatorCirculant(
            np.array([1.0, 2j, 1.0], np.complex64)).assert_hermitian_spectrum()
    kernel = L.LinearOperatorCirculant(hermitian, input_output_dtype=tf.float64)
    _close(kernel.convolution_kernel(), [1.0, 2.0, 3.0, 4.0])


def test_tridiag_matmul_broadcasts_the_argument():
    """(TF's TridiagonalMatMul needs arguments of the operator's rank.)"""
    diagonals = np.random.default_rng(4).standard_normal((2, 3, 4))
    op = L.LinearOperatorTridiag(diagonals)
    x = np.random.default_rng(5).standard_normal((3, 2, 4, 2))
    _close(op.matmul(x), _np(op.to_dense()) @ x)


def test_complex_tridiagonal_operators():
    """ndflow's tridiagonal kernels are real; complex operators multiply and solve too."""
    rng = np.random.default_rng(6)
    d = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4)) + [[0], [5], [0]]
    for fmt, arg in (("compact", d), ("sequence", list(d)),
                     ("matrix", _np(L.LinearOperatorTridiag(d).to_dense()))):
        op = L.LinearOperatorTridiag(arg, diagonals_format=fmt)
        a = _np(op.to_dense())
        x = rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))
        _close(op.matmul(x, adjoint=True), _h(a) @ x)
        _close(op.solve(x, adjoint=True), np.linalg.solve(_h(a), x))


def test_tensor_at_operator_goes_through_tf_matmul():
    """`tf.matmul(x, op)` dispatches to the operator (x @ op is (op^H x^H)^H)."""
    op = L.LinearOperatorDiag(np.array([1.0, 2.0]))
    x = np.array([[1.0, 1.0], [2.0, 3.0]])
    _close(tf.matmul(x, op), x @ np.diag([1.0, 2.0]))
    _close(tf.linalg.matmul(x, op, adjoint_b=True), x @ np.diag([1.0, 2.0]))
    _close(tf.constant(x) @ op, x @ np.diag([1.0, 2.0]))
    _close(tf.Variable(x) @ op, x @ np.diag([1.0, 2.0]))
    _close(tf.constant(x) @ tf.constant(x), x @ x)
