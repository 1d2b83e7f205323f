"""tf.linalg.tridiagonal_solve with partial pivoting: TF's row-interchange LU
(kernels/tridiagonal_solve_numba.py), bit for bit TF 2.21's values (tests/fixtures/
tridiagonal_solve, generate.py beside), and the dense LU's where numba is off."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from ndflow.kernels import tridiagonal_solve_numba
from tests import fixture_modules

CONFIGS = fixture_modules.load("tridiagonal_solve")
TF_VALUES = json.loads(
    (fixture_modules.FIXTURES / "tridiagonal_solve" / "values.json").read_text())
CASES = CONFIGS.cases(tf)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow_bit_for_bit(name):
    assert CONFIGS.record(CASES[name]) == TF_VALUES[name]


def test_the_dense_fallback_agrees(monkeypatch):
    rng = np.random.default_rng(5)
    d, b = rng.standard_normal((3, 3, 30)), rng.standard_normal((3, 30, 2))
    fast = tf.linalg.tridiagonal_solve(d, b).numpy()
    monkeypatch.setattr(tridiagonal_solve_numba, "solve", lambda *a: None)
    dense = tf.linalg.tridiagonal_solve(d, b).numpy()
    np.testing.assert_allclose(fast, dense, rtol=1e-9, atol=1e-12)
