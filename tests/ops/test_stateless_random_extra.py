"""tf.random.stateless_binomial, tf.random.stateless_parameterized_truncated_normal and
tf.random.experimental.stateless_shuffle: TF 2.21's values bit for bit, its static shapes and
its error types (tests/fixtures/stateless_random_extra, recorded with TF's thread pool of
configs.THREADS threads, and its multi-block truncated normals with 1 and 3 threads too), and
the truncated normal's parameter gradients (to 1e-5), and the samplers' laws against NumPy
float64 references (binomial moments and pmf, truncated normal moments and CDF, the shuffle's
uniformity)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import ndflow as tf
from ndflow.kernels import stateless_random_extra as kernels
from tests import fixture_modules

CONFIGS = fixture_modules.load("stateless_random_extra")
_RECORDED = json.loads(
    (fixture_modules.FIXTURES / "stateless_random_extra" / "values.json").read_text())
TF_VALUES, TF_GRADIENTS = _RECORDED["threads"], _RECORDED["gradients"]
CASES = CONFIGS.cases(tf)
N = 200_000   # samples of the statistical checks


def _with_threads(monkeypatch, threads: int) -> None:
    """TF's intra-op thread count as the kernels see it (TF's truncated normal splits its
    outputs among that many threads)."""
    monkeypatch.setattr(kernels, "intra_op_threads", lambda: threads)


@pytest.mark.parametrize("name", sorted(TF_VALUES[str(CONFIGS.THREADS)]))
def test_results_match_tensorflow(name, monkeypatch):
    _with_threads(monkeypatch, CONFIGS.THREADS)
    assert CONFIGS.record(CASES[name]) == TF_VALUES[str(CONFIGS.THREADS)][name]


@pytest.mark.parametrize("threads", CONFIGS.OTHER_THREADS)
@pytest.mark.parametrize("name", CONFIGS.THREAD_CASES)
def test_thread_pool_splits_match_tensorflow(name, threads, monkeypatch):
    _with_threads(monkeypatch, threads)
    assert CONFIGS.record(CASES[name]) == TF_VALUES[str(threads)][name]


@pytest.mark.parametrize("name", sorted(TF_GRADIENTS))
def test_truncated_normal_gradients_match_tensorflow(name):
    """The implicit reparameterization gradients in means, stddevs, minvals and maxvals (TF's
    formula on the same samples; erf/erfc differ from TF's in the last bits)."""
    got = CONFIGS.record(CONFIGS.gradients(tf)[name])
    want = TF_GRADIENTS[name]
    assert [(g["dtype"], g["shape"]) for g in got] == [(w["dtype"], w["shape"]) for w in want]
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.array(g["values"], float), np.array(w["values"], float),
                                   rtol=1e-5, atol=1e-5)


def test_split_depends_on_the_thread_count_only_above_one_block(monkeypatch):
    # float32: TF's cost 187 per output makes 1123 outputs the first that Eigen splits
    assert kernels.block_size(1122, 187, 16) == 1122
    assert kernels.block_size(1123, 187, 2) < 1123
    assert kernels.block_size(10**6, 187, 1) == 10**6
    small = [tf.random.stateless_parameterized_truncated_normal([1122], [5, 6]).numpy()]
    large = [tf.random.stateless_parameterized_truncated_normal([5000], [5, 6]).numpy()]
    for threads in (1, 3, 8):
        _with_threads(monkeypatch, threads)
        small.append(tf.random.stateless_parameterized_truncated_normal([1122], [5, 6]).numpy())
        large.append(tf.random.stateless_parameterized_truncated_normal([5000], [5, 6]).numpy())
    assert all(np.array_equal(small[0], s) for s in small)
    assert len({v.tobytes() for v in large}) == 4
    monkeypatch.undo()
    monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", "3")
    assert kernels.intra_op_threads() == 3


# -- binomial ---------------------------------------------------------------------------------

BINOMIAL = [(10.0, 0.3), (7.0, 0.8), (1000.0, 0.3), (250.0, 0.93), (19.0, 0.5), (20.0, 0.5),
            (1e6, 2e-6), (1e9, 0.25)]


@pytest.mark.parametrize("count,p", BINOMIAL)
def test_binomial_moments(count, p):
    """Mean n p and variance n p (1 - p) within 6 standard errors (inversion for n p < 10,
    BTRS above, count - Binomial(count, 1 - p) for p > 0.5)."""
    x = tf.random.stateless_binomial([N], [int(count * 7) % 2**31, 11], count, p,
                                     output_dtype=tf.float64).numpy()
    assert x.min() >= 0 and x.max() <= count and np.all(x == np.floor(x))
    q = 1.0 - p
    mean, var = count * p, count * p * q
    assert abs(x.mean() - mean) < 6 * math.sqrt(var / N)
    fourth = var * (1 + 3 * (count - 2) * p * q)   # the binomial's 4th central moment
    assert abs(x.var() - var) < 6 * math.sqrt((fourth - var * var) / N) + 1e-9


@pytest.mark.parametrize("count,p", [(10, 0.3), (60, 0.4), (200, 0.85), (12, 0.9)])
def test_binomial_pmf(count, p):
    """The histogram against the exact pmf (chi-square, bins of expected count >= 20)."""
    x = tf.random.stateless_binomial([N], [count, 99], float(count), p).numpy()
    pmf = np.array([math.comb(count, k) * p**k * (1 - p) ** (count - k)
                    for k in range(count + 1)])
    observed = np.bincount(x, minlength=count + 1).astype(np.float64)
    expected = pmf * N
    keep = expected >= 20
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    obs, exp = obs[exp > 0], exp[exp > 0]
    chi2, df = float(((obs - exp) ** 2 / exp).sum()), len(obs) - 1
    assert chi2 < df + 6 * math.sqrt(2 * df), (chi2, df)


def test_binomial_parameters_broadcast_per_column():
    counts = np.array([[5.0], [50.0], [500.0]])
    probs = np.array([0.1, 0.5, 0.9, 0.99])
    x = tf.random.stateless_binomial([20000, 3, 4], [1, 1], counts, probs,
                                     output_dtype=tf.float64).numpy()
    np.testing.assert_allclose(x.mean(axis=0), counts * probs,
                               atol=0, rtol=0.02 + 0)


def test_binomial_edge_probabilities():
    x = tf.random.stateless_binomial([100, 6], [3, 4], [7.0, 7.0, -2.0, 0.0, 7.0, 7.0],
                                     [0.0, 1.0, 0.5, 0.5, -0.5, 2.0],
                                     output_dtype=tf.float32).numpy()
    np.testing.assert_array_equal(x, np.tile([0.0, 7.0, 0.0, 0.0, 0.0, 7.0], (100, 1)))
    nan = tf.random.stateless_binomial([5], [3, 4], 7.0, float("nan"),
                                       output_dtype=tf.float64).numpy()
    assert np.isnan(nan).all()


# -- parameterized truncated normal ------------------------------------------------------------

def _q(z: np.ndarray) -> np.ndarray:
    """P(Z > z) of the standard normal, float64 (accurate in the upper tail)."""
    return np.vectorize(lambda v: 0.5 * math.erfc(v / math.sqrt(2.0)))(z)


def _phi(z):
    return np.exp(-0.5 * np.square(z)) / math.sqrt(2 * math.pi) if np.isfinite(z) else 0.0


def _truncated_law(mean, std, lo, hi):
    """(mean, stddev, cdf) of Normal(mean, std) truncated to [lo, hi], float64. The lower
    tail is mirrored onto the upper one for accuracy."""
    a, b = (lo - mean) / std, (hi - mean) / std
    sign = 1.0
    if a < 0 and b <= 0:
        a, b, sign = -b, -a, -1.0
    z = float(_q(np.array(a)) - _q(np.array(b)))
    pa, pb = _phi(a), _phi(b)
    m = (pa - pb) / z
    v = 1 + (a * pa - (b * pb if np.isfinite(b) else 0.0)) / z - m * m

    def cdf(x):
        s = sign * (x - mean) / std
        upper = (_q(np.array(a)) - _q(s)) / z   # P(a < Z < s)
        return upper if sign > 0 else 1.0 - upper
    return mean + sign * std * m, std * math.sqrt(v), cdf


TRUNCATED = [
    ("normal proposals", 0.0, 1.0, -1.5, 2.0),
    ("normal proposals, one side", 0.0, 1.0, -3.0, 0.0),
    ("uniform proposals", 0.0, 1.0, -0.5, 0.5),
    ("uniform proposals, upper", 0.0, 1.0, 1.0, 1.4),
    ("exponential proposals", 0.0, 1.0, 3.0, float("inf")),
    ("exponential proposals, two sided", 0.0, 1.0, 2.0, 2.5),
    ("exponential proposals, far tail", 0.0, 1.0, 8.0, 9.0),
    ("lower tail (mirrored)", 0.0, 1.0, -float("inf"), -3.0),
    ("shifted and scaled", 5.0, 3.0, 4.0, 20.0),
    ("mean beyond the upper bound", 2.0, 0.5, -1.0, 0.5),
]


@pytest.mark.parametrize("case", TRUNCATED, ids=[c[0] for c in TRUNCATED])
def test_truncated_normal_law(case):
    """Within the bounds; mean and stddev within 6 standard errors of the closed forms; the
    Kolmogorov-Smirnov distance to the closed-form CDF below its 0.1% critical value."""
    _, mean, std, lo, hi = case
    x = tf.random.stateless_parameterized_truncated_normal(
        [N], [TRUNCATED.index(case), 5], *(tf.constant(v, tf.float64) for v in (mean, std, lo, hi))
    ).numpy()
    assert x.min() >= lo and x.max() <= hi
    want_mean, want_std, cdf = _truncated_law(mean, std, lo, hi)
    assert abs(x.mean() - want_mean) < 6 * want_std / math.sqrt(N)
    assert abs(x.std() - want_std) < 6 * want_std / math.sqrt(2 * N) * 2
    f = np.sort(cdf(np.sort(x)))
    ranks = np.arange(1, N + 1) / N
    ks = max(np.max(ranks - f), np.max(f - (ranks - 1.0 / N)))
    assert ks < 1.95 / math.sqrt(N), ks


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32])
def test_truncated_normal_narrow_dtypes_follow_the_law(dtype):
    x = tf.random.stateless_parameterized_truncated_normal(
        [N], [8, 8], *(tf.constant(v, dtype) for v in (1.0, 2.0, 0.0, 3.0))).numpy()
    assert x.dtype == dtype.as_numpy_dtype
    x = x.astype(np.float64)
    want_mean, want_std, _ = _truncated_law(1.0, 2.0, 0.0, 3.0)
    assert x.min() >= 0.0 and x.max() <= 3.0
    assert abs(x.mean() - want_mean) < 6 * want_std / math.sqrt(N) + 1e-3
    assert abs(x.std() - want_std) < 0.01


def test_truncated_normal_parameters_broadcast_per_column():
    x = tf.random.stateless_parameterized_truncated_normal(
        [50000, 2, 3], [3, 3], 0.0, [[1.0], [2.0]], [-1.0, 0.0, 1.0], [[2.0], [4.0]],
        ).numpy().astype(np.float64)
    for i, (std, hi) in enumerate(((1.0, 2.0), (2.0, 4.0))):
        for j, lo in enumerate((-1.0, 0.0, 1.0)):
            want_mean, want_std, _ = _truncated_law(0.0, std, lo, hi)
            col = x[:, i, j]
            assert col.min() >= lo and col.max() <= hi
            assert abs(col.mean() - want_mean) < 6 * want_std / math.sqrt(len(col))


# -- shuffle ----------------------------------------------------------------------------------

def test_shuffle_permutes_rows_uniformly():
    v = np.arange(40).reshape(20, 2)
    out = tf.random.experimental.stateless_shuffle(tf.constant(v), [1, 5]).numpy()
    assert sorted(map(tuple, out)) == sorted(map(tuple, v))
    assert not np.array_equal(out, v)
    # where element 0 lands over many seeds: uniform over the 6 positions
    where = [int(np.argmax(tf.random.experimental.stateless_shuffle(
        tf.range(6), [s, 17]).numpy() == 0)) for s in range(3000)]
    counts = np.bincount(where, minlength=6)
    chi2 = float(((counts - 500.0) ** 2 / 500.0).sum())
    assert chi2 < 25.0, counts   # df 5: P(chi2 > 25) ~ 1e-4


def test_shuffle_is_a_function_of_the_seed():
    v = tf.range(100)
    a = tf.random.experimental.stateless_shuffle(v, [3, 4]).numpy()
    b = tf.random.experimental.stateless_shuffle(v, tf.constant([3, 4], tf.int64)).numpy()
    c = tf.random.experimental.stateless_shuffle(v, [4, 3]).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert sorted(a) == list(range(100))
