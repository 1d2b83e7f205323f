"""tf.linalg.logm (MatrixLogarithm) and tf.linalg.eigh_tridiagonal: TF 2.21's results
(tests/fixtures/linalg_logm_tridiag, tolerances in its configs.py), float64 NumPy references
(expm(logm(A)) == A, logm through an eigendecomposition, eigh of the dense tridiagonal
matrix), the absent gradient of logm and finite-difference gradients of eigh_tridiagonal."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import errors
from tests import fixture_modules

CONFIGS = fixture_modules.load("linalg_logm_tridiag")
TF_VALUES = json.loads(
    (fixture_modules.FIXTURES / "linalg_logm_tridiag" / "values.json").read_text())
CASES = CONFIGS.cases(tf)


def _tolerance(name: str) -> tuple:
    for prefix, tol in CONFIGS.TOLERANCES.items():
        if name.startswith(prefix):
            return tol
    return 0.0, 0.0


def _assert_matches(got, want, rtol, atol, where):
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_matches(g, w, rtol, atol, f"{where}[{i}]")
        return
    assert "error" not in got, f"{where}: ndflow raised {got}"
    assert got["dtype"] == want["dtype"] and got["shape"] == want["shape"], where
    for part in ("values", "real", "imag"):
        if part in want:
            np.testing.assert_allclose(got[part], want[part], rtol=rtol, atol=atol,
                                       equal_nan=True, err_msg=f"{where} {part}")


def _array(rec) -> np.ndarray:
    if "values" in rec:
        return np.array(rec["values"]).reshape(rec["shape"])
    return (np.array(rec["real"]) + 1j * np.array(rec["imag"])).reshape(rec["shape"])


def _cluster_projectors(values: np.ndarray, vectors: np.ndarray, eps: float) -> list:
    """V_c V_c^H of each run of eigenvalues closer than sqrt(eps) ||T|| (TF's clusters, whose
    vectors are any orthonormal basis of their span: the inverse iteration's rounding picks
    it) and of each single eigenvalue (its vector's sign is free too)."""
    cut = np.sqrt(eps) * np.abs(values).max()
    groups, start = [], 0
    for i in range(1, len(values) + 1):
        if i == len(values) or values[i] - values[i - 1] >= cut:
            groups.append(vectors[:, start:i])
            start = i
    return [g @ g.conj().T for g in groups]


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name):
    want = TF_VALUES[name]
    got = CONFIGS.record(CASES[name])
    if isinstance(want, dict) and "error" in want:
        assert got == want
    elif name in CONFIGS.CLUSTERED:
        # eigenvalues: TF's exactly; eigenvectors: the same invariant subspaces
        _assert_matches(got[0], want[0], 0.0, 0.0, name)
        rtol, atol = _tolerance(name)
        eps = np.finfo(want[0]["dtype"]).eps
        values = _array(want[0])
        for g, w in zip(_cluster_projectors(values, _array(got[1]), eps),
                        _cluster_projectors(values, _array(want[1]), eps)):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=name)
    elif name.startswith("eigh_") and isinstance(want, list):
        _assert_matches(got[0], want[0], 0.0, 0.0, name)      # eigenvalues: TF's exactly
        _assert_matches(got[1], want[1], *_tolerance(name), name)
    elif name.startswith("eigh_"):
        _assert_matches(got, want, 0.0, 0.0, name)
    else:
        _assert_matches(got, want, *_tolerance(name), name)


def test_tensorflow_fixture_covers_every_case():
    assert sorted(TF_VALUES) == sorted(CASES)


# --- logm against float64 references -----------------------------------------------------

def _expm(a: np.ndarray) -> np.ndarray:
    """exp of a complex matrix by scaling, a degree-18 Taylor series and squaring."""
    s = max(0, int(np.ceil(np.log2(max(np.abs(a).sum(0).max(), 1e-300)))) + 1)
    x = a / 2.0 ** s
    term, total = np.eye(len(a), dtype=complex), np.eye(len(a), dtype=complex)
    for k in range(1, 19):
        term = term @ x / k
        total = total + term
    for _ in range(s):
        total = total @ total
    return total


def _random_matrices(seed, shape, shift):
    rng = np.random.default_rng(seed)
    n = shape[-1]
    return (np.eye(n) * shift + rng.standard_normal(shape)
            + 1j * rng.standard_normal(shape)).astype(np.complex128)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 16, 33])
def test_logm_inverts_expm(n):
    a = _random_matrices(n, (3, n, n), shift=2.0 * np.sqrt(n))
    log_a = tf.linalg.logm(tf.constant(a)).numpy()
    for m in range(3):
        back = _expm(log_a[m])
        np.testing.assert_allclose(back, a[m], rtol=0, atol=1e-12 * np.abs(a[m]).max())
        # the principal logarithm: eigenvalues' imaginary parts in (-pi, pi]
        assert np.all(np.abs(np.linalg.eigvals(log_a[m]).imag) <= np.pi + 1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_logm_matches_an_eigendecomposition(seed):
    """Diagonalizable matrices with well-conditioned eigenvectors: V diag(log w) V^-1."""
    rng = np.random.default_rng(seed)
    v = np.eye(6) + 0.3 * (rng.standard_normal((6, 6)) + 1j * rng.standard_normal((6, 6)))
    w = rng.uniform(0.2, 5.0, 6) * np.exp(1j * rng.uniform(-3.0, 3.0, 6))
    a = v @ np.diag(w) @ np.linalg.inv(v)
    want = v @ np.diag(np.log(w)) @ np.linalg.inv(v)
    got = tf.linalg.logm(tf.constant(a)).numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-11 * np.abs(want).max())
    got64 = tf.linalg.logm(tf.constant(a.astype(np.complex64))).numpy()
    assert got64.dtype == np.complex64
    np.testing.assert_allclose(got64, want, rtol=0, atol=2e-5 * np.abs(want).max())


def test_logm_of_real_matrices_with_negative_eigenvalues_is_complex():
    a = np.array([[-2.0, 1.0], [0.0, 3.0]]).astype(np.complex128)
    got = tf.linalg.logm(tf.constant(a)).numpy()
    np.testing.assert_allclose(np.diag(got), [np.log(2.0) + 1j * np.pi, np.log(3.0)], atol=1e-14)
    np.testing.assert_allclose(_expm(got), a, atol=1e-13)


def test_logm_has_no_gradient():
    x = tf.constant(np.eye(2, dtype=np.complex128) * 2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.linalg.logm(x)
    with pytest.raises(LookupError, match="MatrixLogarithm"):
        tape.gradient(y, x)


def test_logm_rejects_real_matrices():
    with pytest.raises(errors.InvalidArgumentError, match="complex64, complex128"):
        tf.linalg.logm(tf.constant(np.eye(2)))
    with pytest.raises(TypeError, match="complex64, complex128"):
        tf.function(tf.linalg.logm)(tf.constant(np.eye(2, dtype=np.float32)))


# --- eigh_tridiagonal against NumPy's eigh --------------------------------------------------

def _dense(alpha, beta):
    return np.diag(alpha.real.astype(complex)) + np.diag(beta, 1) + np.diag(np.conj(beta), -1)


def _problem(seed, n, kind):
    rng = np.random.default_rng(seed)
    alpha = rng.standard_normal(n)
    beta = rng.standard_normal(n - 1)
    if kind == "complex":
        beta = beta + 1j * rng.standard_normal(n - 1)
        alpha = alpha.astype(np.complex128)
    elif kind == "clustered":
        alpha = np.abs(np.arange(n) - n // 2).astype(np.float64)
        beta = np.ones(n - 1)
    return alpha, beta


@pytest.mark.parametrize("kind", ["real", "complex", "clustered"])
@pytest.mark.parametrize("n", [2, 3, 17, 64])
def test_eigh_tridiagonal_matches_numpy_eigh(kind, n):
    alpha, beta = _problem(n, n, kind)
    dense = _dense(alpha, beta)
    want = np.linalg.eigvalsh(dense)
    norm = np.abs(want).max()
    e = tf.linalg.eigh_tridiagonal(alpha, beta).numpy()
    np.testing.assert_allclose(e, want, rtol=0, atol=8 * n * 2.2e-16 * norm)
    e, v = (t.numpy() for t in tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False))
    np.testing.assert_allclose(e, want, rtol=0, atol=8 * n * 2.2e-16 * norm)
    # eigenpairs: T v = e v, and V orthonormal (clusters included)
    np.testing.assert_allclose(dense @ v, v * e, rtol=0, atol=1e-12 * norm)
    # inverse iteration loses orthogonality ~ eps ||T|| / gap between eigenvalues not close
    # enough to be orthogonalized as a cluster (as TF's)
    gaps = np.diff(want)
    gap = gaps[gaps >= np.sqrt(2.2e-16) * norm].min(initial=norm)
    np.testing.assert_allclose(v.conj().T @ v, np.eye(n), rtol=0,
                               atol=1e-12 + 20 * 2.2e-16 * norm / gap)


@pytest.mark.parametrize("select,select_range", [("i", [3, 9]), ("i", (0, 0)),
                                                 ("v", [-1.0, 1.0]), ("v", [0.25, 10.0])])
def test_eigh_tridiagonal_selects_like_numpy(select, select_range):
    alpha, beta = _problem(3, 30, "real")
    want = np.linalg.eigvalsh(_dense(alpha, beta))
    if select == "i":
        want = want[select_range[0]:select_range[1] + 1]
    else:
        want = want[(want > select_range[0]) & (want <= select_range[1])]
    e, v = (t.numpy() for t in tf.linalg.eigh_tridiagonal(
        alpha, beta, eigvals_only=False, select=select, select_range=select_range))
    np.testing.assert_allclose(e, want, rtol=0, atol=1e-13)
    np.testing.assert_allclose(_dense(alpha, beta).real @ v, v * e, atol=1e-12)


def test_eigh_tridiagonal_float32_is_close_to_float64():
    alpha, beta = _problem(8, 50, "real")
    e32 = tf.linalg.eigh_tridiagonal(alpha.astype(np.float32), beta.astype(np.float32))
    assert e32.dtype == tf.float32
    np.testing.assert_allclose(e32.numpy(), np.linalg.eigvalsh(_dense(alpha, beta)),
                               rtol=0, atol=2e-5)


def _fd_gradient(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        for unit in ((1.0,) if not np.iscomplexobj(x) else (1.0, 1j)):
            step = np.zeros_like(x)
            step[i] = eps * unit
            d = (f(x + step) - f(x - step)) / (2 * eps)
            grad[i] += d * unit          # TF's convention: dL/dRe + i dL/dIm
    return grad


@pytest.mark.parametrize("kind", ["real", "complex"])
@pytest.mark.parametrize("select", ["a", "i"])
def test_eigh_tridiagonal_eigenvalue_gradients(kind, select):
    alpha, beta = _problem(21, 7, kind)
    weights = np.random.default_rng(2).standard_normal(7 if select == "a" else 3)
    kw = {"select": select, "select_range": [2, 4]} if select == "i" else {}

    def loss(a, b):
        return tf.reduce_sum(tf.linalg.eigh_tridiagonal(a, b, **kw) * weights)
    a, b = tf.constant(alpha), tf.constant(beta)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        value = loss(a, b)
    ga, gb = (g.numpy() for g in tape.gradient(value, [a, b]))
    want_b = _fd_gradient(lambda x: loss(a, tf.constant(x)).numpy(), beta)
    np.testing.assert_allclose(gb, want_b, atol=1e-6)
    want_a = _fd_gradient(lambda x: loss(tf.constant(x.real.astype(alpha.dtype)), b).numpy(),
                          alpha.real.copy())
    np.testing.assert_allclose(ga.real, want_a, atol=1e-6)


@pytest.mark.parametrize("kind", ["real", "complex"])
def test_eigh_tridiagonal_eigenvector_gradients(kind):
    """A loss of |v|^2 (blind to each eigenvector's sign or phase) through eigvals_only=False,
    in a graph (tf.gradients) as eagerly."""
    alpha, beta = _problem(4, 6, kind)
    w = np.random.default_rng(9).standard_normal((6, 3))

    def loss(a, b):
        e, v = tf.linalg.eigh_tridiagonal(a, b, eigvals_only=False, select="i",
                                          select_range=[1, 3])
        return tf.reduce_sum(tf.math.real(v * tf.math.conj(v)) * w) + tf.reduce_sum(e * e)
    a, b = tf.constant(alpha), tf.constant(beta)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        value = loss(a, b)
    ga, gb = (g.numpy() for g in tape.gradient(value, [a, b]))
    np.testing.assert_allclose(
        gb, _fd_gradient(lambda x: loss(a, tf.constant(x)).numpy(), beta), atol=1e-6)
    np.testing.assert_allclose(
        ga.real, _fd_gradient(lambda x: loss(tf.constant(x.astype(alpha.dtype)), b).numpy(),
                              alpha.real.copy()), atol=1e-6)
    graph = tf.function(lambda x, y: tf.gradients(loss(x, y), [x, y]))(a, b)
    np.testing.assert_allclose(graph[1].numpy(), gb, atol=1e-12)


def test_eigh_tridiagonal_needs_a_static_length():
    fn = tf.function(tf.linalg.eigh_tridiagonal,
                     input_signature=[tf.TensorSpec([None], tf.float64)] * 2)
    with pytest.raises(TypeError):
        fn(tf.constant([1.0, 2.0]), tf.constant([1.0]))
