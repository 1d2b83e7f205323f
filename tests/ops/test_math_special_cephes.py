"""tf.math.special.dawsn / expint / fresnel_cos / fresnel_sin / spence (ops Dawsn, Expint,
FresnelCos, FresnelSin, Spence): TF 2.21's results (tests/fixtures/math_special_cephes) for
values over every interval and edge in float32 and float64, gradients, op names and the errors
of the types TF refuses or has no kernel for; mpmath's values as a reference independent of
TF; gradients against central differences; and the ATen path (GPUs) against TF's values.

On a CPU with numba the kernels run TF's scalar code in the input's type and give TF's results
bit for bit on this machine (tolerances below are a few ulps, for another libm's exp/log/cos);
the ATen path agrees to a few ulps, except where TF's own float32 expint cancels (near its zero,
x = 0.3725) and on float32 subnormals (TF's logf of a subnormal under its flush-to-zero mode).
"""

from __future__ import annotations

import json

import mpmath
import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import denormals
from ndflow.kernels import math_special_cephes as kernels
from tests import fixture_modules

CONFIGS = fixture_modules.load("math_special_cephes")
TF_VALUES = json.loads(
    (fixture_modules.FIXTURES / "math_special_cephes" / "values.json").read_text())
CASES = CONFIGS.cases(tf)
NAMES = CONFIGS.NAMES

# relative tolerance per type: 4 ulps
RTOL = {"float32": 4 * 2.0 ** -23, "float64": 4 * 2.0 ** -52}
# expint near its zero (x = 0.3725) is a sum of O(1) terms that cancel: an absolute error of a
# few ulps of 1 (float32: TF's own error there is ~1e-7)
EXPINT_ATOL = {"float32": 2.0 ** -21, "float64": 2.0 ** -50}
# gradients: TF's Cos/Sin/Exp/Log kernels are Eigen's, ATen's differ by an ulp here and there
# (measured: 1.6e-7 relative in float32, 2e-16 in float64); the absolute part is for cos/sin
# of pi/2 x**2 near their zeros
GRAD_TOL = {"float32": dict(rtol=RTOL["float32"], atol=2.0 ** -24),
            "float64": dict(rtol=RTOL["float64"], atol=2.0 ** -53)}


def _values(summary) -> np.ndarray:
    return np.array([float(v) for v in summary["values"]], np.float64)


def _assert_close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float = 0.0):
    """Equal NaNs, infinities and signs of zeros; finite values within the tolerance."""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)])
    zeros = want == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def _compare(name: str, got, want):
    if isinstance(want, dict) and "error" in want:
        assert got == want
        return
    if isinstance(want, list):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _compare(name, g, w)
        return
    if isinstance(want, str):
        assert got == want
        return
    assert "error" not in got, got
    assert (got["dtype"], got["shape"]) == (want["dtype"], want["shape"])
    kind = want["dtype"]
    if "_grad" in name:
        tol = GRAD_TOL[kind]
    else:
        tol = dict(rtol=RTOL[kind], atol=EXPINT_ATOL[kind] if name.startswith("expint") else 0)
    _assert_close(_values(got), _values(want), **tol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name):
    _compare(name, CONFIGS.record(CASES[name]), TF_VALUES[name])


def test_every_case_has_tensorflows_result():
    assert sorted(CASES) == sorted(TF_VALUES)


def test_values_are_tensorflows_bit_for_bit_with_numba():
    """TF's code in the input's type, on the same libm: the values cases equal TF's exactly
    (subnormal inputs included, whatever TF's flush-to-zero mode makes of them)."""
    if not kernels.numba_available():
        pytest.skip("numba or ATen's OpenMP not found: the ATen path runs")
    for name in NAMES:
        for kind in ("float32", "float64"):
            got = getattr(tf.math.special, name)(tf.constant(CONFIGS.points(name, kind)))
            got = got.numpy()
            want = _values(TF_VALUES[f"{name}_{kind}"]).astype(kind)
            nan = np.isnan(want)   # (the fixture's repr keeps no NaN's sign)
            np.testing.assert_array_equal(np.isnan(got), nan, err_msg=name)
            bits = f"u{want.itemsize}"
            np.testing.assert_array_equal(got[~nan].view(bits), want[~nan].view(bits),
                                          err_msg=name)


def _aten(name: str, x: np.ndarray) -> np.ndarray:
    flushed = denormals.enter()   # as ndflow runs kernels (and TF its CPU kernels)
    try:
        return kernels.compute(name, torch.from_numpy(x), use_numba=False).numpy()
    finally:
        if flushed:
            denormals.leave()


@pytest.mark.parametrize("kind", ["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_aten_path_matches_tensorflow(name, kind):
    """The kernel GPUs run (and CPUs without numba), on this CPU: TF's values to a few ulps.
    TF's float32 expint of a subnormal is what its logf makes of one under flush-to-zero
    (-103.39 for 1e-39 and 1e-45, NaN for -1e-39); the ATen path reads a subnormal as 0 there
    (-inf), as TF's float64 expint does."""
    x = CONFIGS.points(name, kind)
    got = _aten(name, x).astype(np.float64)
    want = _values(TF_VALUES[f"{name}_{kind}"])
    if name == "expint" and kind == "float32":
        subnormal = (x != 0) & (np.abs(x) < np.finfo(np.float32).tiny)
        assert subnormal.sum() == 3 and np.all(np.isneginf(got[subnormal]))
        got, want = got[~subnormal], want[~subnormal]
    _assert_close(got, want, RTOL[kind], EXPINT_ATOL[kind] if name == "expint" else 0.0)


def test_aten_path_agrees_with_numba_on_random_points():
    if not kernels.numba_available():
        pytest.skip("numba or ATen's OpenMP not found")
    rng = np.random.default_rng(9)
    x = np.concatenate([rng.uniform(-12, 12, 4000), 10 ** rng.uniform(-6, 6, 4000)])
    for name in NAMES:
        for kind in ("float32", "float64"):
            xs = x.astype(kind)
            fast = getattr(tf.math.special, name)(tf.constant(xs)).numpy().astype(np.float64)
            # expint: float32 overflows past 88.7 in both; the cancelling zone has an atol
            _assert_close(_aten(name, xs).astype(np.float64), fast, RTOL[kind],
                          EXPINT_ATOL[kind] if name == "expint" else 0.0)


# -- mpmath: a float64 reference independent of TensorFlow --------------------------------------

def _dawsn_mp(x):
    x = mpmath.mpf(x)
    return mpmath.sqrt(mpmath.pi) / 2 * mpmath.exp(-x * x) * mpmath.erfi(x)


_MPMATH = {
    "dawsn": _dawsn_mp,
    "expint": mpmath.ei,
    "fresnel_cos": mpmath.fresnelc,   # the integral of cos(pi/2 t**2), as TF's
    "fresnel_sin": mpmath.fresnels,
    "spence": lambda x: mpmath.polylog(2, 1 - mpmath.mpf(x)),
}
_rng = np.random.default_rng(3)
# (points, float64 rtol, float64 atol, float32 rtol) as measured: Cephes' approximations reach
# a few ulps in float64; the Fresnel integrals' asymptotic form takes cos/sin of pi/2 x**2,
# whose rounding costs |x| * 2**-53 / pi absolutely (float64) beyond |x| = 1.6.
_DENSE = {
    # (TF's dawsn is positive for x <= -1e9: test_dawsn_sign_beyond_minus_1e9)
    "dawsn": (np.concatenate([np.linspace(-12, 12, 481), 10 ** _rng.uniform(-10, 12, 80),
                              -(10 ** _rng.uniform(-10, 8.9, 20))]), 1e-15, 0.0, 6e-7),
    # near the zero at 0.3725 the error is absolute: ~2 ulps of Euler's constant
    "expint": (np.concatenate([np.linspace(0.01, 80, 400), 10 ** _rng.uniform(-10, 1.9, 80),
                               np.linspace(0.36, 0.39, 31)]), 1e-15, 2.5e-16, 6e-7),
    "fresnel_cos": (np.concatenate([np.linspace(-8, 8, 481), 10 ** _rng.uniform(-10, 1.5, 60)]),
                    1e-15, 2e-15, 1e-6),
    "fresnel_sin": (np.concatenate([np.linspace(-8, 8, 481), 10 ** _rng.uniform(-10, 1.5, 60)]),
                    1e-15, 2e-15, 1e-6),
    "spence": (np.concatenate([np.linspace(0, 20, 401), 10 ** _rng.uniform(-10, 12, 100)]),
               2e-15, 0.0, 8e-7),
}


@pytest.mark.parametrize("name", NAMES)
def test_float64_matches_mpmath(name):
    x, rtol, atol, _ = _DENSE[name]
    with mpmath.workdps(40):
        want = np.array([float(_MPMATH[name](float(v))) for v in x])
    got = getattr(tf.math.special, name)(tf.constant(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", NAMES)
def test_float32_matches_mpmath(name):
    x, _, _, rtol = _DENSE[name]
    x = x[np.abs(x) <= 80].astype(np.float32)   # float32 expint overflows past 88.7
    with mpmath.workdps(30):
        want = np.array([float(_MPMATH[name](float(v))) for v in x])
    got = getattr(tf.math.special, name)(tf.constant(x)).numpy().astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-7 if name == "expint" else 0.0)


def test_large_fresnel_arguments_keep_tensorflows_float64_rounding():
    """|x| up to TF's cut at 36974: within a few times the error of pi/2 x**2's rounding
    (|x| * 2**-53 / pi); 1/2 exactly beyond the cut (where the true value is 1/2 - 1/(pi x))."""
    x = 10 ** _rng.uniform(1.5, np.log10(36974.0), 40)
    with mpmath.workdps(40):
        want_c = np.array([float(mpmath.fresnelc(v)) for v in x])
        want_s = np.array([float(mpmath.fresnels(v)) for v in x])
    got_c = tf.math.special.fresnel_cos(tf.constant(x)).numpy()
    got_s = tf.math.special.fresnel_sin(tf.constant(x)).numpy()
    bound = x * 2.0 ** -53 / np.pi * 8
    assert np.all(np.abs(got_c - want_c) <= bound)
    assert np.all(np.abs(got_s - want_s) <= bound)
    beyond = tf.constant([36974.5, 1e6, 1e300, -36974.5], tf.float64)
    for fn in (tf.math.special.fresnel_cos, tf.math.special.fresnel_sin):
        np.testing.assert_array_equal(fn(beyond).numpy(), [0.5, 0.5, 0.5, -0.5])


def test_dawsn_sign_beyond_minus_1e9():
    """TF's kernel returns 0.5 / x for |x| >= 1e9 and then negates it for x < 0: positive
    values there (dawsn is odd: the true values are negative), reproduced."""
    got = tf.math.special.dawsn(tf.constant([-1e9, -4e12, 1e9, -np.inf], tf.float64)).numpy()
    np.testing.assert_array_equal(got, [5e-10, 1.25e-13, 5e-10, 0.0])
    assert not np.signbit(got[-1])


# -- gradients ----------------------------------------------------------------------------------

_FD_POINTS = {
    "dawsn": [-7.0, -2.5, -0.5, 0.0, 0.3, 1.0, 3.0, 4.0, 5.0, 7.0, 20.0],
    "expint": [1e-3, 0.2, 0.37, 1.0, 1.9, 2.5, 5.0, 10.0, 20.0, 40.0, 70.0],
    "fresnel_cos": [-3.0, -0.4, 0.0, 0.7, 1.3, 1.7, 2.0, 4.5, 10.0],
    "fresnel_sin": [-3.0, -0.4, 0.0, 0.7, 1.3, 1.7, 2.0, 4.5, 10.0],
    "spence": [0.05, 0.3, 0.5, 0.9, 0.999, 1.001, 1.3, 1.7, 2.5, 10.0, 100.0],
}


@pytest.mark.parametrize("name", NAMES)
def test_gradients_match_central_differences(name):
    fn = getattr(tf.math.special, name)
    x = np.array(_FD_POINTS[name])
    v = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(v)
        y = fn(v)
    got = tape.gradient(y, v).numpy()
    h = 1e-4 * np.where(x == 0, 1.0, np.abs(x))
    f = {k: fn(tf.constant(x + k * h)).numpy() for k in (-2, -1, 1, 2)}
    want = (8 * (f[1] - f[-1]) - (f[2] - f[-2])) / (12 * h)   # error O(h**4)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=2e-7)


def test_gradient_edges_are_tensorflows():
    """spence' is -1 at x = 1 (log(x)/(1-x) is 0/0 there) and -inf at 0; expint' is inf at 0
    (exp(0)/0)."""
    def grad(fn, x):
        v = tf.constant(np.array(x, np.float64))
        with tf.GradientTape() as tape:
            tape.watch(v)
            y = fn(v)
        return tape.gradient(y, v).numpy()
    np.testing.assert_array_equal(grad(tf.math.special.spence, [1.0, 0.0]), [-1.0, -np.inf])
    np.testing.assert_array_equal(grad(tf.math.special.expint, [0.0]), [np.inf])


def test_second_order_gradient_of_dawsn():
    """dawsn'' = -2 dawsn - 2x dawsn' (the first gradient is built of differentiable ops)."""
    x = tf.constant(np.array([0.3, 1.2, 4.0]))
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.math.special.dawsn(x)
        dy = inner.gradient(y, x)
    d2 = outer.gradient(dy, x).numpy()
    yv, dyv = y.numpy(), dy.numpy()
    np.testing.assert_allclose(d2, -2 * yv - 2 * x.numpy() * dyv, rtol=1e-12)


# -- types ---------------------------------------------------------------------------------------

def test_refused_and_kernelless_types_raise_tensorflows_errors():
    """(Also in the fixture, by error type.) Integers: the eager kernel lookup's
    InvalidArgumentError, the graph builder's TypeError. half/bfloat16, which the op accepts
    but TF has no kernel for: NotFoundError eagerly, InvalidArgumentError from a graph."""
    fn = tf.math.special.spence
    with pytest.raises(tf.errors.InvalidArgumentError, match="Value for attr 'T' of int32"):
        fn(tf.constant([1, 2]))
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.function(fn)(tf.constant([1, 2]))
    with pytest.raises(tf.errors.NotFoundError, match=r"Spence\[T=DT_HALF\]"):
        fn(tf.constant([0.5], tf.float16))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"No OpKernel was registered to support Op 'Spence'.*DT_BFLOAT16"):
        tf.function(fn)(tf.constant([0.5], tf.bfloat16))
