"""tf.nn.fractional_max_pool / fractional_avg_pool (and tf.compat.v1.nn's), the ops
FractionalMaxPool / FractionalAvgPool and their gradient ops: TF 2.21's results for the same
seeds (tests/fixtures/fractional_pool: the random pooling sequences bit for bit, the values
and gradients exactly, static shapes, errors eagerly and in graphs), a float64 NumPy reference
of the pooling and its gradients given a sequence, the sequences' invariants, and
finite-difference gradients."""

from __future__ import annotations

import importlib.util
import json
import math

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import errors
from ndflow.kernels import fractional_pool_numba
from ndflow.ops import nn_fractional_pool as fp
from ndflow.runtime import execution_config
from tests import fixture_modules

CONFIGS = fixture_modules.load("fractional_pool")
TF_VALUES = json.loads((fixture_modules.FIXTURES / "fractional_pool" / "values.json")
                       .read_text())
CASES = CONFIGS.cases(tf)


@pytest.fixture(params=["numba", "aten"])
def kernel_path(request, monkeypatch):
    """The CPU kernels' two paths: numba's loops (where numba is installed) and ATen's
    gathers (GPUs, or no numba)."""
    if request.param == "aten":
        monkeypatch.setattr(fractional_pool_numba, "available", lambda: False)
    elif importlib.util.find_spec("numba") is None:
        pytest.skip("numba is not installed")
    else:
        assert fractional_pool_numba.available()
    return request.param


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name, kernel_path):
    assert CONFIGS.record(CASES[name]) == TF_VALUES[name]


def test_fixture_covers_every_case():
    assert sorted(CASES) == sorted(TF_VALUES)


# -- a float64 NumPy reference given the sequences ------------------------------------------

def _regions(seq, n, overlapping):
    return [(int(seq[i]), min(int(seq[i + 1]) - (0 if overlapping else 1), n - 1))
            for i in range(len(seq) - 1)]


def reference_pool(x, rows, cols, overlapping, kind):
    n, h, w, c = x.shape
    out = np.zeros((n, len(rows) - 1, len(cols) - 1, c))
    for i, (r0, r1) in enumerate(_regions(rows, h, overlapping)):
        for j, (c0, c1) in enumerate(_regions(cols, w, overlapping)):
            window = x[:, r0:r1 + 1, c0:c1 + 1, :]
            out[:, i, j] = window.max(axis=(1, 2)) if kind == "max" else \
                window.mean(axis=(1, 2))
    return out


def reference_grad(x, rows, cols, overlapping, dy, kind):
    """d(sum(pool(x) * dy))/dx: the share of each region (avg), or its first maximum in
    row-major order (max)."""
    n, h, w, c = x.shape
    dx = np.zeros(x.shape)
    for i, (r0, r1) in enumerate(_regions(rows, h, overlapping)):
        for j, (c0, c1) in enumerate(_regions(cols, w, overlapping)):
            hh, ww = r1 - r0 + 1, c1 - c0 + 1
            if kind == "avg":
                dx[:, r0:r1 + 1, c0:c1 + 1, :] += dy[:, i:i + 1, j:j + 1, :] / (hh * ww)
                continue
            window = x[:, r0:r1 + 1, c0:c1 + 1, :].reshape(n, hh * ww, c)
            first = window.argmax(axis=1)          # the first maximum, rows then columns
            for b in range(n):
                for d in range(c):
                    k = first[b, d]
                    dx[b, r0 + k // ww, c0 + k % ww, d] += dy[b, i, j, d]
    return dx


def random_sequence(rng, n_in, n_out):
    k, extra = divmod(n_in, n_out)
    diff = np.array([k + 1] * extra + [k] * (n_out - extra))
    rng.shuffle(diff)
    return np.concatenate([[0], np.cumsum(diff)])


@pytest.mark.parametrize("overlapping", [False, True])
@pytest.mark.parametrize("pseudo", [False, True])
@pytest.mark.parametrize("ratio", [[1, 1.44, 1.73, 1], [1, 3.3, 2.0, 1], [1, 1.1, 5.5, 1]])
def test_values_and_gradients_match_numpy(ratio, pseudo, overlapping, kernel_path):
    x = np.random.default_rng(1).standard_normal((2, 19, 23, 3))
    for kind, fn in (("max", tf.nn.fractional_max_pool), ("avg", tf.nn.fractional_avg_pool)):
        v = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(v)
            out, rows, cols = fn(v, ratio, pseudo_random=pseudo, overlapping=overlapping,
                                 seed=21)
            dy = np.random.default_rng(2).standard_normal(out.shape)
            loss = tf.reduce_sum(out * dy)
        rows, cols = rows.numpy(), cols.numpy()
        want = reference_pool(x, rows, cols, overlapping, kind)
        grad = tape.gradient(loss, v).numpy()
        want_grad = reference_grad(x, rows, cols, overlapping, dy, kind)
        if kind == "max":
            np.testing.assert_array_equal(out.numpy(), want)
            np.testing.assert_array_equal(grad, want_grad)
        else:
            np.testing.assert_allclose(out.numpy(), want, rtol=1e-13, atol=1e-15)
            np.testing.assert_allclose(grad, want_grad, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("overlapping", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_gradient_ops_match_numpy_on_any_valid_sequence(dtype, overlapping, kernel_path):
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((2, 17, 14, 3)) * 100).astype(dtype)
    for n_out_h, n_out_w in ((9, 10), (4, 3), (17, 14), (1, 1)):
        rows, cols = random_sequence(rng, 17, n_out_h), random_sequence(rng, 14, n_out_w)
        pooled = reference_pool(x.astype(np.float64), rows, cols, overlapping, "max")
        dy = (rng.standard_normal(pooled.shape) * 10).astype(dtype)
        got = tf.raw_ops.FractionalMaxPoolGrad(
            orig_input=x, orig_output=pooled.astype(dtype), out_backprop=dy,
            row_pooling_sequence=rows, col_pooling_sequence=cols, overlapping=overlapping)
        want = reference_grad(x.astype(np.float64), rows, cols, overlapping, dy, "max")
        np.testing.assert_allclose(got.numpy(), want.astype(dtype), rtol=1e-6, atol=1e-5)
        got = tf.raw_ops.FractionalAvgPoolGrad(
            orig_input_tensor_shape=np.array(x.shape, np.int64), out_backprop=dy,
            row_pooling_sequence=rows, col_pooling_sequence=cols, overlapping=overlapping)
        want = reference_grad(x.astype(np.float64), rows, cols, overlapping,
                              dy.astype(np.float64), "avg")
        if np.issubdtype(dtype, np.integer):   # TF: the float64 sum cast, truncating
            np.testing.assert_array_equal(got.numpy(), np.trunc(want).astype(dtype))
        else:
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5 if dtype == np.float32
                                       else 1e-13, atol=1e-9)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_average_truncates_toward_zero(dtype):
    x = np.random.default_rng(6).integers(-1000, 1000, (1, 13, 11, 2)).astype(dtype)
    out, rows, cols = tf.nn.fractional_avg_pool(x, [1, 1.6, 1.3, 1], overlapping=True, seed=2)
    assert out.dtype == tf.as_dtype(dtype)
    sums = reference_pool(x.astype(np.float64), rows.numpy(), cols.numpy(), True, "avg")
    np.testing.assert_array_equal(out.numpy(), np.trunc(sums).astype(dtype))


# -- the sequences ------------------------------------------------------------------------

@pytest.mark.parametrize("pseudo", [False, True])
def test_sequences_keep_tensorflows_invariants(pseudo):
    rng = np.random.default_rng(8)
    for trial in range(60):
        h, w = (int(v) for v in rng.integers(1, 90, 2))
        ratio = [1.0, float(rng.uniform(1, min(h, 9))), float(rng.uniform(1, min(w, 9))), 1.0]
        x = tf.zeros([1, h, w, 1])
        _, rows, cols = tf.nn.fractional_max_pool(x, ratio, pseudo_random=pseudo,
                                                  seed=trial + 1)
        for seq, n, r in ((rows.numpy(), h, ratio[1]), (cols.numpy(), w, ratio[2])):
            n_out = math.floor(np.float32(n) / np.float32(r))
            assert seq.dtype == np.int64 and len(seq) == n_out + 1
            assert seq[0] == 0 and seq[-1] == n
            k = n // n_out
            assert set(np.diff(seq).tolist()) <= {k, k + 1}, (seq, n, r)


def test_seeded_sequences_repeat_and_unseeded_ones_vary():
    x = tf.zeros([1, 97, 89, 1])
    seeded = {tuple(tf.nn.fractional_avg_pool(x, [1, 1.5, 1.5, 1], seed=4)[1].numpy())
              for _ in range(3)}
    assert len(seeded) == 1
    assert tuple(tf.nn.fractional_avg_pool(x, [1, 1.5, 1.5, 1], seed=5)[1].numpy()) not in \
        seeded
    fresh = {tuple(tf.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1])[1].numpy())
             for _ in range(6)}
    assert len(fresh) > 1      # seed 0: fresh seeds on every call (C(97, 32) sequences)
    # deterministic with seeds 0: random seeds chosen once per kernel, as TF's
    v1 = tf.compat.v1.nn.fractional_max_pool
    fixed = {tuple(v1(x, [1, 1.5, 1.5, 1], deterministic=True)[1].numpy()) for _ in range(3)}
    assert len(fixed) == 1


def test_seed_follows_the_global_seed():
    x = tf.zeros([1, 40, 40, 1])
    tf.random.set_seed(3)
    try:
        a = tf.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1], seed=7)[1].numpy()
    finally:
        tf.random.set_seed(None)
    b = tf.compat.v1.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1], deterministic=True, seed=3,
                                            seed2=7)[1].numpy()
    c = tf.compat.v1.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1], deterministic=True,
                                            seed=87654321, seed2=7)[1].numpy()
    d = tf.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1], seed=7)[1].numpy()
    np.testing.assert_array_equal(a, b)       # (global seed, op seed)
    np.testing.assert_array_equal(c, d)       # no global seed: TF's DEFAULT_GRAPH_SEED
    assert not np.array_equal(a, d)


def test_op_determinism_requires_a_seed_for_max_pool():
    x = tf.zeros([1, 9, 9, 1])
    tf.config.experimental.enable_op_determinism()
    try:
        with pytest.raises(ValueError, match="requires a non-zero seed"):
            tf.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1])
        with pytest.raises(ValueError, match='requires "seed" and "seed2" to be non-zero'):
            tf.compat.v1.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1], seed=1)
        tf.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1], seed=1)
        tf.compat.v1.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1], True, seed=1, seed2=1,
                                            deterministic=True)
        tf.nn.fractional_avg_pool(x, [1, 1.5, 1.5, 1])   # TF checks the max pool only
    finally:
        execution_config.disable_op_determinism()


# -- gradients ----------------------------------------------------------------------------

@pytest.mark.parametrize("overlapping", [False, True])
@pytest.mark.parametrize("kind", ["avg", "max"])
def test_gradient_matches_finite_differences(kind, overlapping):
    rng = np.random.default_rng(12)
    x = rng.permutation(7 * 6 * 2).reshape(1, 7, 6, 2).astype(np.float64) / 10  # no ties
    weights = rng.standard_normal((1, 4, 3, 2))
    fn = tf.nn.fractional_avg_pool if kind == "avg" else tf.nn.fractional_max_pool

    def loss(v):
        out, _, _ = fn(v, [1, 1.7, 1.9, 1], overlapping=overlapping, seed=9)
        return tf.reduce_sum(out * weights)
    v = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(v)
        value = loss(v)
    got = tape.gradient(value, v).numpy()
    eps, want = 1e-4, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        want[i] = (loss(tf.constant(x + step)).numpy() -
                   loss(tf.constant(x - step)).numpy()) / (2 * eps)
    np.testing.assert_allclose(got, want, atol=1e-8)
    assert np.count_nonzero(got) > 0


def test_gradient_in_a_graph_with_an_unknown_batch():
    """TF's avg-pool gradient takes the input's static shape (it fails on a partly unknown
    one); ndflow's falls back to the dynamic shape."""
    x = np.random.default_rng(2).standard_normal((3, 11, 10, 2)).astype(np.float32)

    @tf.function(input_signature=[tf.TensorSpec([None, 11, 10, 2], tf.float32)])
    def grads(v):
        with tf.GradientTape() as tape:
            tape.watch(v)
            out, _, _ = tf.nn.fractional_avg_pool(v, [1, 1.5, 1.5, 1], seed=3)
            loss = tf.reduce_sum(out * out)
        return tape.gradient(loss, v), out
    g, out = grads(tf.constant(x))
    with tf.GradientTape() as tape:
        v = tf.constant(x)
        tape.watch(v)
        eager_out, _, _ = tf.nn.fractional_avg_pool(v, [1, 1.5, 1.5, 1], seed=3)
        eager_loss = tf.reduce_sum(eager_out * eager_out)
    np.testing.assert_array_equal(out.numpy(), eager_out.numpy())
    np.testing.assert_array_equal(g.numpy(), tape.gradient(eager_loss, v).numpy())


def test_sequences_have_no_gradient():
    v = tf.constant(np.ones((1, 6, 6, 1), np.float32))
    with tf.GradientTape() as tape:
        tape.watch(v)
        _, rows, _ = tf.nn.fractional_max_pool(v, [1, 1.5, 1.5, 1], seed=1)
        loss = tf.reduce_sum(tf.cast(rows, tf.float32))
    assert tape.gradient(loss, v) is None


# -- ops and API ------------------------------------------------------------------------------

def test_ops_are_tensorflows():
    for op in (fp.FractionalMaxPool, fp.FractionalAvgPool):
        assert not op.is_stateful and op.gradient() is not None
        assert [a.name for a in op.outputs] == ["output", "row_pooling_sequence",
                                               "col_pooling_sequence"]
    for op in (fp.FractionalMaxPoolGrad, fp.FractionalAvgPoolGrad):
        assert op.gradient_undefined
    fields = ("output", "row_pooling_sequence", "col_pooling_sequence")
    x = np.ones((1, 4, 4, 1), np.float32)
    out = tf.raw_ops.FractionalMaxPool(value=x, pooling_ratio=[1.0, 2.0, 2.0, 1.0])
    assert out._fields == fields
    for fn, name in ((tf.nn.fractional_max_pool, "FractionalMaxPool"),
                     (tf.nn.fractional_avg_pool, "FractionalAvgPool"),
                     (tf.compat.v1.nn.fractional_avg_pool, "FractionalAvgPool")):
        for out in (fn(x, [1, 2, 2, 1]), tf.function(lambda v, fn=fn: fn(v, [1, 2, 2, 1]))(x)):
            assert type(out).__name__ == name and out._fields == fields   # TF's namedtuples
            np.testing.assert_array_equal(out.row_pooling_sequence.numpy(), [0, 2, 4])
    assert tf.nn.fractional_max_pool is fp.fractional_max_pool_v2
    assert tf.compat.v1.nn.fractional_avg_pool is fp.fractional_avg_pool


def test_graph_names_and_session_run():
    x = np.random.default_rng(3).standard_normal((2, 9, 9, 2)).astype(np.float32)
    with tf.Graph().as_default():
        p = tf.compat.v1.placeholder(tf.float32, [None, 9, 9, 2])
        out, rows, cols = tf.nn.fractional_max_pool(p, [1, 1.5, 1.5, 1], seed=4, name="fmp")
        assert out.op.name == "fmp" and out.op.type == "FractionalMaxPool"
        assert out.op.get_attr("deterministic") and out.op.get_attr("seed2") == 4
        with tf.compat.v1.Session() as sess:
            a = sess.run([out, rows, cols], {p: x})
            b = sess.run([out, rows, cols], {p: x})
    eager = tf.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1], seed=4)
    for u, v, w in zip(a, b, eager):
        np.testing.assert_array_equal(u, v)
        np.testing.assert_array_equal(u, w.numpy())


def test_bad_gradient_input_is_refused():
    x = np.zeros((1, 6, 6, 1), np.float32)
    with pytest.raises(errors.InvalidArgumentError, match="tensor_out_dup"):
        tf.raw_ops.FractionalMaxPoolGrad(
            orig_input=x, orig_output=np.zeros((1, 3, 3, 1), np.float32),
            out_backprop=np.zeros((1, 3, 3, 1), np.float32),
            row_pooling_sequence=np.array([0, 2, 4, 6]), col_pooling_sequence=[0, 4, 2, 6])
    with pytest.raises(errors.InvalidArgumentError, match="does not match"):
        tf.raw_ops.FractionalAvgPoolGrad(
            orig_input_tensor_shape=np.array([1, 6, 6, 1]),
            out_backprop=np.zeros((1, 3, 3, 2), np.float32),
            row_pooling_sequence=np.array([0, 2, 4, 6]),
            col_pooling_sequence=np.array([0, 2, 4, 6]))
