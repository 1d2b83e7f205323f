"""tf.approx_top_k / tf.math.approx_max_k / approx_min_k (ApproxTopK, exact as TF's CPU
kernel) and tf.random_index_shuffle: TF 2.21's results on what TF runs on a CPU
(tests/fixtures/approx_top_k), NumPy's for the directions and dimensions TF's CPU kernel
lacks, and finite-difference gradients."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import errors
from tests import fixture_modules

CONFIGS = fixture_modules.load("approx_top_k")
TF_VALUES = json.loads((fixture_modules.FIXTURES / "approx_top_k" / "values.json").read_text())
CASES = CONFIGS.cases(tf)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name):
    assert CONFIGS.record(CASES[name]) == TF_VALUES[name]


@pytest.mark.parametrize("dim", [0, 1, -1, 2])
@pytest.mark.parametrize("largest", [True, False])
def test_any_dimension_and_direction_matches_numpy(dim, largest):
    x = np.random.default_rng(dim + 7).standard_normal((4, 5, 6)).astype(np.float32)
    fn = tf.math.approx_max_k if largest else tf.math.approx_min_k
    values, indices = fn(tf.constant(x), 3, reduction_dimension=dim)
    order = np.argsort(-x if largest else x, axis=dim, kind="stable")
    want_idx = np.take(order, np.arange(3), axis=dim)
    np.testing.assert_array_equal(indices.numpy(), want_idx)
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(x, want_idx, axis=dim))


@pytest.mark.parametrize("dim", [0, 1])
def test_gradient_matches_finite_differences(dim):
    x = np.random.default_rng(3).standard_normal((5, 6))
    weights = np.random.default_rng(4).standard_normal((2, 6) if dim == 0 else (5, 2))

    def f(v):
        values, _ = tf.math.approx_min_k(v, 2, reduction_dimension=dim)
        return tf.reduce_sum(values * weights)
    v = tf.constant(x.astype(np.float32))
    with tf.GradientTape() as tape:
        tape.watch(v)
        loss = f(v)
    got = tape.gradient(loss, v).numpy()
    eps, want = 1e-3, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        hi = f(tf.constant((x + step).astype(np.float32))).numpy()
        lo = f(tf.constant((x - step).astype(np.float32))).numpy()
        want[i] = (hi - lo) / (2 * eps)
    np.testing.assert_allclose(got, want, atol=2e-3)


def test_bad_input_names_the_op():
    x = tf.constant(np.zeros((2, 3), np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="at least k columns"):
        tf.math.approx_min_k(x, 3, reduction_dimension=0)
    with pytest.raises((ValueError, errors.InvalidArgumentError), match="reduction dimension"):
        tf.math.approx_max_k(x, 1, reduction_dimension=2)
    with pytest.raises(errors.InvalidArgumentError,
                       match="Value for attr 'T' of int32 is not in the list of allowed values: "
                             "half, bfloat16, float\n"):
        tf.math.approx_max_k(tf.constant([1, 2, 3]), 2)
    with tf.Graph().as_default(), pytest.raises(TypeError, match="allowed values"):
        tf.math.approx_max_k(tf.constant([1, 2, 3]), 2)


def test_top_k_results_are_namedtuples_a_function_returns():
    """TF's TopKV2/ApproxTopK results are namedtuples, so a tf.function returns them whole
    (ndflow's were tuples a function could not rebuild)."""
    x = tf.constant(np.array([[3.0, 1.0, 2.0]], np.float32))
    for fn in (lambda v: tf.math.top_k(v, 2), lambda v: tf.math.approx_max_k(v, 2)):
        out = tf.function(fn)(x)
        assert out._fields == ("values", "indices")
        np.testing.assert_array_equal(out.indices.numpy(), [[0, 2]])
