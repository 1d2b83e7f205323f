"""keras.ops values against NumPy float64 references: each row runs one op on float64 (or
int) inputs through tf.keras.ops and the same computation in NumPy. Rows are grouped so
one test checks many ops (pytest's per-test cost would otherwise dominate)."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf

K = tf.keras.ops
RNG = np.random.default_rng(1234)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((3, 4))
P = RNG.uniform(0.1, 2.0, (3, 4))          # positive
U = RNG.uniform(-0.9, 0.9, (3, 4))         # in (-1, 1)
M = RNG.standard_normal((4, 4)) + 4 * np.eye(4)
SPD = M @ M.T
V = RNG.standard_normal(4)
I = RNG.integers(-5, 6, (3, 4))            # noqa: E741 - ints
J = RNG.integers(1, 6, (3, 4))
NAN = np.where(A > 0.8, np.nan, A)


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


ELEMENTWISE = [
    ("add", lambda: K.add(A, B), A + B), ("subtract", lambda: K.subtract(A, 2.5), A - 2.5),
    ("multiply", lambda: K.multiply(A, B), A * B), ("divide", lambda: K.divide(A, P), A / P),
    ("floor_divide", lambda: K.floor_divide(I, J), I // J), ("mod", lambda: K.mod(I, J), I % J),
    ("fmod", lambda: K.fmod(I, J), np.fmod(I, J)), ("power", lambda: K.power(P, A), P ** A),
    ("maximum", lambda: K.maximum(A, B), np.maximum(A, B)),
    ("fmin", lambda: K.fmin(NAN, B), np.fmin(NAN, B)),
    ("fmax", lambda: K.fmax(NAN, B), np.fmax(NAN, B)),
    ("abs", lambda: K.abs(A), np.abs(A)), ("sign", lambda: K.sign(A), np.sign(A)),
    ("sqrt", lambda: K.sqrt(P), np.sqrt(P)), ("cbrt", lambda: K.cbrt(A), np.cbrt(A)),
    ("square", lambda: K.square(A), A ** 2), ("exp", lambda: K.exp(A), np.exp(A)),
    ("exp2", lambda: K.exp2(A), np.exp2(A)), ("expm1", lambda: K.expm1(A), np.expm1(A)),
    ("log", lambda: K.log(P), np.log(P)), ("log2", lambda: K.log2(P), np.log2(P)),
    ("log10", lambda: K.log10(P), np.log10(P)), ("log1p", lambda: K.log1p(P), np.log1p(P)),
    ("sin", lambda: K.sin(A), np.sin(A)), ("arctan2", lambda: K.arctan2(A, B),
                                           np.arctan2(A, B)),
    ("arcsin", lambda: K.arcsin(U), np.arcsin(U)), ("arctanh", lambda: K.arctanh(U),
                                                    np.arctanh(U)),
    ("arccosh", lambda: K.arccosh(P + 1), np.arccosh(P + 1)),
    ("sinc", lambda: K.sinc(np.append(A, 0.0)), np.sinc(np.append(A, 0.0))),
    ("hypot", lambda: K.hypot(A, B), np.hypot(A, B)),
    ("logaddexp", lambda: K.logaddexp(A, B), np.logaddexp(A, B)),
    ("logaddexp2", lambda: K.logaddexp2(A, B), np.logaddexp2(A, B)),
    ("heaviside", lambda: K.heaviside(np.round(A), 0.5), np.heaviside(np.round(A), 0.5)),
    ("deg2rad", lambda: K.deg2rad(A), np.deg2rad(A)), ("rad2deg", lambda: K.rad2deg(A),
                                                       np.rad2deg(A)),
    ("trunc", lambda: K.trunc(A * 3), np.trunc(A * 3)),
    ("round", lambda: K.round(A * 10, decimals=1), np.round(A * 10, 1)),
    ("round_int", lambda: K.round(I * 37, decimals=-1), np.round(I * 37, -1)),
    ("ceil", lambda: K.ceil(A), np.ceil(A)), ("floor", lambda: K.floor(A), np.floor(A)),
    ("clip", lambda: K.clip(A, -0.5, 0.5), np.clip(A, -0.5, 0.5)),
    ("nan_to_num", lambda: K.nan_to_num(NAN, nan=7.0), np.nan_to_num(NAN, nan=7.0)),
    ("gcd", lambda: K.gcd(I * 6, J * 4), np.gcd(I * 6, J * 4)),
    ("lcm", lambda: K.lcm(I, J), np.lcm(I, J)),
    ("ldexp", lambda: K.ldexp(A, J), np.ldexp(A, J)),
    ("nextafter", lambda: K.nextafter(A, B), np.nextafter(A, B)),
    ("signbit", lambda: K.signbit(np.array([-0.0, 0.0, -1.0, 2.0])),
     np.signbit(np.array([-0.0, 0.0, -1.0, 2.0]))),
    ("isclose", lambda: K.isclose(A, A + 1e-9), np.isclose(A, A + 1e-9)),
    ("logical_xor", lambda: K.logical_xor(A > 0, B > 0), np.logical_xor(A > 0, B > 0)),
    ("greater_equal", lambda: K.greater_equal(A, B), A >= B),
    ("bitwise_xor", lambda: K.bitwise_xor(I, J), np.bitwise_xor(I, J)),
    ("left_shift", lambda: K.left_shift(J, 2), np.left_shift(J, 2)),
    ("i0", lambda: K.i0(A), np.i0(A)),
]

REDUCTIONS = [
    ("sum", lambda: K.sum(A, axis=1), A.sum(1)), ("mean", lambda: K.mean(A, axis=(0, 1)),
                                                  A.mean()),
    ("max_keepdims", lambda: K.max(A, axis=0, keepdims=True), A.max(0, keepdims=True)),
    ("min_initial", lambda: K.min(A, axis=1, initial=-0.1), A.min(1, initial=-0.1)),
    ("prod", lambda: K.prod(A, axis=0), A.prod(0)), ("std", lambda: K.std(A), A.std()),
    ("var", lambda: K.var(A, axis=1), A.var(1)), ("ptp", lambda: K.ptp(A, axis=0), np.ptp(A, 0)),
    ("argmax", lambda: K.argmax(A, axis=1), A.argmax(1)), ("argmin", lambda: K.argmin(A),
                                                           A.argmin()),
    ("any", lambda: K.any(A > 1.5, axis=0), (A > 1.5).any(0)),
    ("all", lambda: K.all(A > -3, axis=1), (A > -3).all(1)),
    ("count_nonzero", lambda: K.count_nonzero(I, axis=0), np.count_nonzero(I, 0)),
    ("median", lambda: K.median(A, axis=1), np.median(A, 1)),
    ("quantile", lambda: K.quantile(A, [0.3, 0.9], axis=0), np.quantile(A, [0.3, 0.9], 0)),
    ("percentile_nearest", lambda: K.percentile(A, 40, method="nearest"),
     np.percentile(A, 40, method="nearest")),
    ("average", lambda: K.average(A, axis=1, weights=V), np.average(A, 1, V)),
    ("cumsum", lambda: K.cumsum(A, axis=1), A.cumsum(1)), ("cumprod", lambda: K.cumprod(A),
                                                           A.cumprod()),
    ("nansum", lambda: K.nansum(NAN, axis=0), np.nansum(NAN, 0)),
    ("nanmean", lambda: K.nanmean(NAN, axis=1), np.nanmean(NAN, 1)),
    ("nanvar", lambda: K.nanvar(NAN), np.nanvar(NAN)),
    ("nanmin", lambda: K.nanmin(NAN, axis=0), np.nanmin(NAN, 0)),
    ("nanargmax", lambda: K.nanargmax(NAN, axis=1), np.nanargmax(NAN, 1)),
    ("nanmedian", lambda: K.nanmedian(NAN, axis=1), np.nanmedian(NAN, 1)),
    ("nancumprod", lambda: K.nancumprod(NAN, axis=1), np.nancumprod(NAN, 1)),
    ("logsumexp", lambda: K.logsumexp(A, axis=1),
     np.log(np.exp(A).sum(1))),
    ("sort", lambda: K.sort(A, axis=0), np.sort(A, 0)),
    ("argsort", lambda: K.argsort(A, axis=1), np.argsort(A, 1, kind="stable")),
    ("top_k", lambda: K.top_k(V, 2)[0], np.sort(V)[::-1][:2]),
    ("trace", lambda: K.trace(M, offset=1), np.trace(M, 1)),
    ("diff", lambda: K.diff(A, n=2, axis=1), np.diff(A, 2, 1)),
    ("trapezoid", lambda: K.trapezoid(A, x=np.array([0.0, 0.5, 2.0, 2.5])),
     np.trapezoid(A, np.array([0.0, 0.5, 2.0, 2.5])) if hasattr(np, "trapezoid")
     else np.trapz(A, np.array([0.0, 0.5, 2.0, 2.5]))),
    ("corrcoef", lambda: K.corrcoef(A), np.corrcoef(A)),
    ("histogram", lambda: K.histogram(V, bins=3)[0], np.histogram(V, 3)[0]),
    ("bincount", lambda: K.bincount(J.ravel(), weights=A.ravel()),
     np.bincount(J.ravel(), A.ravel())),
    ("searchsorted", lambda: K.searchsorted(np.sort(V), A.ravel(), side="right"),
     np.searchsorted(np.sort(V), A.ravel(), "right")),
    ("digitize", lambda: K.digitize(A, [-1.0, 0.0, 1.0]), np.digitize(A, [-1.0, 0.0, 1.0])),
    ("unique_counts", lambda: K.unique(J, return_counts=True)[1],
     np.unique(J, return_counts=True)[1]),
    ("isin", lambda: K.isin(I, [0, 2, 3]), np.isin(I, [0, 2, 3])),
]

ARRAYS = [
    ("reshape", lambda: K.reshape(A, (2, -1)), A.reshape(2, -1)),
    ("transpose", lambda: K.transpose(A), A.T),
    ("moveaxis", lambda: K.moveaxis(A[None], [0, 2], [2, 0]), np.moveaxis(A[None], [0, 2],
                                                                          [2, 0])),
    ("expand_squeeze", lambda: K.squeeze(K.expand_dims(A, (0, 3)), 0),
     np.expand_dims(A, (0, 3))[0]),
    ("concatenate", lambda: K.concatenate([A, B], axis=1), np.concatenate([A, B], 1)),
    ("stack", lambda: K.stack([A, B], axis=1), np.stack([A, B], 1)),
    ("take", lambda: K.take(A, [-1, 0, 2], axis=1), np.take(A, [-1, 0, 2], 1)),
    ("take_flat", lambda: K.take(A, [[5, -2]]), np.take(A, [[5, -2]])),
    ("take_along_axis", lambda: K.take_along_axis(A, np.argsort(A, 0), axis=0),
     np.take_along_axis(A, np.argsort(A, 0), 0)),
    ("tile", lambda: K.tile(V, (2, 2)), np.tile(V, (2, 2))),
    ("repeat", lambda: K.repeat(A, [1, 2, 0], axis=0), np.repeat(A, [1, 2, 0], 0)),
    ("pad", lambda: K.pad(A, ((1, 0), (2, 1)), constant_values=3.0),
     np.pad(A, ((1, 0), (2, 1)), constant_values=3.0)),
    ("pad_reflect", lambda: K.pad(A, ((1, 1), (2, 2)), mode="reflect"),
     np.pad(A, ((1, 1), (2, 2)), mode="reflect")),
    ("pad_symmetric", lambda: K.pad(A, ((1, 1), (2, 2)), mode="symmetric"),
     np.pad(A, ((1, 1), (2, 2)), mode="symmetric")),
    ("split", lambda: K.split(A, [1, 3], axis=1)[1], np.split(A, [1, 3], 1)[1]),
    ("array_split", lambda: K.array_split(V, 3)[0], np.array_split(V, 3)[0]),
    ("where", lambda: K.where(A > 0, A, -1.0), np.where(A > 0, A, -1.0)),
    ("nonzero", lambda: K.nonzero(I)[1], np.nonzero(I)[1]),
    ("flip", lambda: K.flip(A, axis=(0, 1)), np.flip(A, (0, 1))),
    ("roll", lambda: K.roll(A, 2), np.roll(A, 2)), ("roll_axis", lambda: K.roll(A, -1, 1),
                                                    np.roll(A, -1, 1)),
    ("rot90", lambda: K.rot90(A, k=3), np.rot90(A, 3)),
    ("tril", lambda: K.tril(A, k=1), np.tril(A, 1)), ("triu", lambda: K.triu(A, -1),
                                                      np.triu(A, -1)),
    ("diag", lambda: K.diag(V, k=-1), np.diag(V, -1)), ("diagflat", lambda: K.diagflat(A[0]),
                                                        np.diagflat(A[0])),
    ("diagonal", lambda: K.diagonal(A, offset=1), np.diagonal(A, 1)),
    ("eye", lambda: K.eye(3, 5, k=2), np.eye(3, 5, 2)), ("tri", lambda: K.tri(3, 4, k=-1),
                                                         np.tri(3, 4, -1)),
    ("arange", lambda: K.arange(1, 2, 0.25), np.arange(1, 2, 0.25)),
    ("linspace", lambda: K.linspace(0.0, 1.0, 5, endpoint=False, dtype="float64"),
     np.linspace(0.0, 1.0, 5, endpoint=False)),
    ("logspace", lambda: K.logspace(0.0, 2.0, 4, dtype="float64"), np.logspace(0.0, 2.0, 4)),
    ("geomspace", lambda: K.geomspace(1.0, 1000.0, 4, dtype="float64"),
     np.geomspace(1.0, 1000.0, 4)),
    ("meshgrid", lambda: K.meshgrid(V, V[:2], indexing="ij")[1],
     np.meshgrid(V, V[:2], indexing="ij")[1]),
    ("select", lambda: K.select([A > 1, A < -1], [A, -A], 0.0),
     np.select([A > 1, A < -1], [A, -A], 0.0)),
    ("vstack", lambda: K.vstack([V, V]), np.vstack([V, V])),
    ("dstack", lambda: K.dstack([A, B]), np.dstack([A, B])),
    ("unravel_index", lambda: K.unravel_index([5, 7], (3, 4))[1],
     np.unravel_index([5, 7], (3, 4))[1]),
    ("matmul", lambda: K.matmul(A, B.T), A @ B.T), ("matmul_vec", lambda: K.matmul(V, M),
                                                    V @ M),
    ("dot", lambda: K.dot(A, M), A @ M), ("inner", lambda: K.inner(A, B), np.inner(A, B)),
    ("outer", lambda: K.outer(V, V[:2]), np.outer(V, V[:2])),
    ("vdot", lambda: K.vdot(A, B), np.vdot(A, B)), ("kron", lambda: K.kron(A[:2, :2], M),
                                                    np.kron(A[:2, :2], M)),
    ("cross", lambda: K.cross(A[:, :3], B[:, :3]), np.cross(A[:, :3], B[:, :3])),
    ("tensordot", lambda: K.tensordot(A, B, axes=([0], [0])), np.tensordot(A, B, ([0], [0]))),
    ("einsum", lambda: K.einsum("ij,kj->ik", A, B), np.einsum("ij,kj->ik", A, B)),
    ("vander", lambda: K.vander(V, 3, increasing=True), np.vander(V, 3, increasing=True)),
    ("correlate", lambda: K.correlate(V, V[:2], mode="full"), np.correlate(V, V[:2], "full")),
]

NN_LINALG = [
    ("softmax", lambda: K.softmax(A, axis=0), _softmax(A, 0)),
    ("log_softmax", lambda: K.log_softmax(A), np.log(_softmax(A))),
    ("sigmoid", lambda: K.sigmoid(A), 1 / (1 + np.exp(-A))),
    ("silu", lambda: K.silu(A), A / (1 + np.exp(-A))),
    ("log_sigmoid", lambda: K.log_sigmoid(A), -np.log1p(np.exp(-A))),
    ("softplus", lambda: K.softplus(A), np.log1p(np.exp(A))),
    ("leaky_relu", lambda: K.leaky_relu(A, 0.1), np.where(A > 0, A, 0.1 * A)),
    ("hard_sigmoid", lambda: K.hard_sigmoid(A * 4), np.clip(A * 4 / 6 + 0.5, 0, 1)),
    ("celu", lambda: K.celu(A, 0.7), np.maximum(A, 0) + 0.7 * (np.exp(np.minimum(A, 0) / 0.7)
                                                               - 1)),
    ("squareplus", lambda: K.squareplus(A, 2), (A + np.sqrt(A ** 2 + 2)) / 2),
    ("sparsemax", lambda: K.sparsemax(np.array([[0.5, 1.2, -0.3, 0.9]])),
     np.array([[0.0, 0.65, 0.0, 0.35]])),
    ("one_hot", lambda: K.one_hot([2, 0, 3], 4, axis=0), np.eye(4)[[2, 0, 3]].T),
    ("bce", lambda: K.binary_crossentropy(np.clip(P / 2, 0, 1), 1 / (1 + np.exp(-A)), False),
     -(np.clip(P / 2, 0, 1) * np.log(1 / (1 + np.exp(-A))) + (1 - np.clip(P / 2, 0, 1))
       * np.log(1 - 1 / (1 + np.exp(-A))))),
    ("cce_logits", lambda: K.categorical_crossentropy(_softmax(B), A, from_logits=True),
     -(_softmax(B) * np.log(_softmax(A))).sum(-1)),
    ("moments", lambda: K.moments(A, axes=[1])[1], A.var(1)),
    ("normalize", lambda: K.normalize(A, axis=0), A / np.linalg.norm(A, axis=0)),
    ("layer_normalization", lambda: K.layer_normalization(A, epsilon=1e-6),
     (A - A.mean(1, keepdims=True)) / np.sqrt(A.var(1, keepdims=True) + 1e-6)),
    ("cholesky", lambda: K.cholesky(SPD), np.linalg.cholesky(SPD)),
    ("cholesky_upper", lambda: K.cholesky(SPD, upper=True), np.linalg.cholesky(SPD).T),
    ("det", lambda: K.det(M), np.linalg.det(M)), ("inv", lambda: K.inv(M), np.linalg.inv(M)),
    ("eigh", lambda: K.eigh(SPD)[0], np.linalg.eigh(SPD)[0]),
    ("solve", lambda: K.solve(M, A.T), np.linalg.solve(M, A.T)),
    ("solve_vector", lambda: K.solve(M, V), np.linalg.solve(M, V)),
    ("svd_values", lambda: K.svd(A, compute_uv=False), np.linalg.svd(A, compute_uv=False)),
    ("norm_fro", lambda: K.norm(A), np.linalg.norm(A)),
    ("norm_inf", lambda: K.norm(A, ord=np.inf, axis=(0, 1)), np.linalg.norm(A, np.inf)),
    ("norm_vec3", lambda: K.norm(A, ord=3, axis=0), np.linalg.norm(A, 3, axis=0)),
    ("pinv", lambda: K.pinv(A), np.linalg.pinv(A)),
    ("lstsq", lambda: K.lstsq(A.T, V), np.linalg.lstsq(A.T, V, rcond=None)[0]),
    ("matrix_rank", lambda: K.matrix_rank(np.outer(V, V)), 1),
    ("slogdet", lambda: K.slogdet(M)[1], np.linalg.slogdet(M)[1]),
    ("logdet", lambda: K.logdet(SPD), np.linalg.slogdet(SPD)[1]),
    ("cdist", lambda: K.cdist(A, B), np.sqrt(((A[:, None] - B[None]) ** 2).sum(-1))),
    ("erf_erfinv", lambda: K.erfinv(K.erf(U)), U),
    ("segment_sum", lambda: K.segment_sum(A, [0, 2, 0], num_segments=3),
     np.stack([A[0] + A[2], 0 * A[0], A[1]])),
    ("fft", lambda: K.fft((A, B))[0], np.fft.fft(A + 1j * B).real),
    ("rfft", lambda: K.rfft(A)[1], np.fft.rfft(A).imag),
    ("irfft", lambda: K.irfft(K.rfft(A), 4), np.fft.irfft(np.fft.rfft(A), 4)),
]

TABLES = {"elementwise": ELEMENTWISE, "reductions": REDUCTIONS, "arrays": ARRAYS,
          "nn_linalg": NN_LINALG}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_values_match_numpy_float64(table):
    problems = []
    for name, run, expected in TABLES[table]:
        got = np.asarray(run())
        expected = np.asarray(expected)
        if got.shape != expected.shape:
            problems.append(f"{name}: shape {got.shape}, NumPy {expected.shape}")
        elif not np.allclose(got, expected, rtol=1e-9, atol=1e-10, equal_nan=True):
            problems.append(f"{name}: max error {np.nanmax(np.abs(got - expected))}")
    assert not problems, "\n".join(problems)


def test_float64_inputs_compute_in_float64():
    """Every row above ran in float64 (ints aside): the comparisons are at 1e-9."""
    assert K.exp(A).dtype == tf.float64 and K.matmul(A, B.T).dtype == tf.float64
    assert K.mean(I).dtype == tf.float32    # ints' means are floatx, as Keras


def test_correlate_same_with_the_longer_second_sequence_as_keras_tf_backend():
    # Keras 3.15 (TF backend): the middle max(n, m) values of the full correlation, not
    # NumPy's swapped sequences (np.correlate(x4, y, "same") = [7.5, 12, 11.5, 5, 4])
    x3, x4 = np.array([1., 2., 3.]), np.array([1., 2., 3., 4.])
    y = np.array([0., 1., 0.5, 2., 1.])
    np.testing.assert_array_equal(K.correlate(x3, y, mode="same"), [4., 7.5, 8., 3.5, 3.])
    np.testing.assert_array_equal(K.correlate(x4, y, mode="same"), [4., 7.5, 12., 11.5, 5.])
    np.testing.assert_array_equal(K.correlate(y, x4, mode="same"), [4., 5., 11.5, 12., 7.5])
    np.testing.assert_array_equal(K.correlate(y, x4, mode="valid"), [11.5, 12.])
    with pytest.raises(tf.errors.InvalidArgumentError):   # as Keras' conv1d
        K.correlate(x3, y, mode="valid")
