"""tf.linalg.LinearOperator and its subclasses against TensorFlow 2.21
(tests/fixtures/linear_operator): every public method of every operator in float32 and
float64 (complex64/128 for the complex ones), the types, hints, shapes and values of the
operators that products, solves, adjoints, inverses and Cholesky factors give, operators
in tf.function, gradients, and TF's errors and their messages.

Values agree to a tolerance (the kernels differ: ATen's LAPACK/FFT against Eigen's); class
names, dtypes, shapes, hints, Python results and error types/messages exactly."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("linear_operator")
TF_VALUES = json.loads((fixture_modules.FIXTURES / "linear_operator" / "values.json")
                       .read_text())
# Absolute tolerance relative to the largest expected magnitude (at least 1).
TOLERANCE = {"float32": 1e-5, "float64": 1e-12}


def _compare(got, want, tol, path, problems):
    if isinstance(want, dict) and "values" in want and isinstance(got, dict):
        if (got.get("dtype"), got.get("shape")) != (want["dtype"], want["shape"]):
            problems.append(f"{path}: {got.get('dtype')}{got.get('shape')} != "
                            f"{want['dtype']}{want['shape']}")
            return
        g, w = np.array(got["values"], float), np.array(want["values"], float)
        if g.size == 0:
            return
        finite = np.isfinite(w)
        if not np.array_equal(finite, np.isfinite(g)) or \
                not np.array_equal(w[~finite], g[~finite], equal_nan=True):
            problems.append(f"{path}: non-finite values differ: {g} vs {w}")
            return
        scale = max(1.0, float(np.max(np.abs(w[finite]), initial=0.0)))
        err = float(np.max(np.abs(g[finite] - w[finite]), initial=0.0))
        if err > tol * scale:
            problems.append(f"{path}: max error {err:.3g} > {tol * scale:.3g}")
    elif isinstance(want, dict) and isinstance(got, dict):
        if sorted(got) != sorted(want):
            problems.append(f"{path}: keys {sorted(got)} != {sorted(want)}: got {got}, "
                            f"want {want}")
            return
        for k in want:
            _compare(got[k], want[k], tol, f"{path}/{k}", problems)
    elif isinstance(want, list) and isinstance(got, list) and len(got) == len(want):
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, tol, f"{path}[{i}]", problems)
    elif got != want:
        problems.append(f"{path}: {got!r} != {want!r}")


def _check(got: dict, want: dict, dtype: str):
    problems: list = []
    _compare(got, want, TOLERANCE[dtype], "", problems)
    assert not problems, "\n".join(problems)


OPERATOR_IDS = [(d, n) for d in CONFIGS.REAL for n in TF_VALUES["methods"][d]]


@pytest.mark.parametrize("dtype,name", OPERATOR_IDS, ids=[f"{d}-{n}" for d, n in OPERATOR_IDS])
def test_every_method_matches_tensorflow(dtype, name):
    try:
        op = CONFIGS.operators(tf, dtype)[name]()
    except Exception as e:  # noqa: BLE001 - the error is the result
        got = {"build": CONFIGS.error_summary(e)}
    else:
        got = {k: CONFIGS.record(f) for k, f in CONFIGS.method_cases(op, tf, name).items()}
    _check(got, TF_VALUES["methods"][dtype][name], dtype)


@pytest.mark.parametrize("dtype", CONFIGS.REAL)
def test_products_solves_and_derived_operators_match_tensorflow(dtype):
    got = {k: CONFIGS.record(f) for k, f in CONFIGS.pair_cases(tf, dtype).items()}
    _check(got, TF_VALUES["pairs"][dtype], dtype)


@pytest.mark.parametrize("dtype", CONFIGS.REAL)
def test_operators_in_tf_function_match_tensorflow(dtype):
    got = {k: CONFIGS.record(f) for k, f in CONFIGS.function_cases(tf, dtype).items()}
    _check(got, TF_VALUES["functions"][dtype], dtype)


@pytest.mark.parametrize("dtype", CONFIGS.REAL)
def test_gradients_match_tensorflow(dtype):
    got = {k: CONFIGS.record(f) for k, f in CONFIGS.gradient_cases(tf, dtype).items()}
    _check(got, TF_VALUES["gradients"][dtype], dtype)


ERRORS = sorted(TF_VALUES["errors"])


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_tensorflow(name):
    got = CONFIGS.record(CONFIGS.error_cases(tf)[name])
    assert got == TF_VALUES["errors"][name]


def test_fixture_covers_every_exported_operator():
    """Each tf.linalg.LinearOperator* class is built by the fixture."""
    built = {type(b()).__name__ for b in CONFIGS.operators(tf, "float64").values()}
    built |= {"LinearOperatorAdjoint", "LinearOperatorInversion"}
    exported = {n for n in dir(tf.linalg) if n.startswith("LinearOperator")} - \
        {"LinearOperator"}
    assert exported <= built | {"LinearOperatorCirculant3D"}, exported - built
