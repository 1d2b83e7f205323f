"""tf.linalg.eig and eigvals against TensorFlow 2.21 (tests/fixtures/tf_linalg_eig,
generate.py beside it): the same eigenvalues (compared sorted: neither gives an order),
complex64/complex128 outputs, eigenvectors satisfying A v = e v with unit columns, and TF's
gradients of functions independent of the eigenvectors' order and phase; those gradients
also against finite differences."""

import os

import numpy as np
import pytest

import ndflow as tf
from tests.fixtures.tf_linalg_eig import eig_cases as cases

EXPECTED = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_linalg_eig",
                                "expected.npz"))
CASES = [(name, dt) for name in cases.matrices() for dt in cases.dtypes_of(name)]


@pytest.mark.parametrize("name, dt", CASES)
def test_eigenvalues_and_vectors(name, dt):
    m = cases.matrices()[name].astype(dt)
    key = f"{name}/{np.dtype(dt).name}"
    e, v = tf.linalg.eig(m)
    assert v.dtype.name == str(EXPECTED[f"{key}/dtype"]) == e.dtype.name
    got = tf.linalg.eigvals(m).numpy()
    got = np.sort_complex(got.reshape(-1, got.shape[-1])).reshape(got.shape)
    tol = 1e-5 if dt == np.float32 else 1e-10
    np.testing.assert_allclose(got, EXPECTED[f"{key}/eigvals"], rtol=tol, atol=tol)
    e, v = e.numpy(), v.numpy()
    np.testing.assert_allclose(m @ v, v * e[..., None, :], atol=100 * tol)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=tol)


@pytest.mark.parametrize("name, dt", [c for c in CASES if c[0] != "complex"])
@pytest.mark.parametrize("fname", sorted(cases.FUNCTIONS))
def test_gradients_equal_tensorflow(name, dt, fname):
    m = cases.matrices()[name].astype(dt)
    f = cases.FUNCTIONS[fname]
    a = tf.constant(m)
    with tf.GradientTape() as tape:
        tape.watch(a)
        y = f(tf, a)
    got = tape.gradient(y, a).numpy()
    tol = 2e-3 if dt == np.float32 else 1e-8
    np.testing.assert_allclose(got, EXPECTED[f"{name}/{np.dtype(dt).name}/grad_{fname}"],
                               rtol=tol, atol=tol)
    if dt == np.float64 and name == "real":
        eps, num = 1e-6, np.zeros_like(m)
        for i in np.ndindex(m.shape):
            d = np.zeros_like(m)
            d[i] = eps
            num[i] = (f(tf, tf.constant(m + d)).numpy() - f(tf, tf.constant(m - d)).numpy()) \
                / (2 * eps)
        np.testing.assert_allclose(got, num, atol=1e-6)
