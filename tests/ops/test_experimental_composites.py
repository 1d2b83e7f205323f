"""tf.experimental.RowPartition, DynamicRaggedShape, StructuredTensor, BatchableExtensionType /
ExtensionTypeBatchEncoder (tf.data batching) and dispatch_for_binary_elementwise_assert_apis
against TensorFlow 2.21: every case of tests/fixtures/experimental_composites/cases.py run
here gives what TensorFlow gave (expected.json, written by generate.py beside it): values,
dtypes, shapes, reprs, and for bad input the error type and the first line of its message.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from tests.fixture_modules import FIXTURES, load

CASES = load("experimental_composites", "cases")
EXPECTED = json.loads((FIXTURES / "experimental_composites" / "expected.json").read_text())

# Where ndflow's text differs from TensorFlow's for reasons outside these types, and why.
KNOWN_DIFFERENCES: dict = {}


def _same(got, want, path="") -> None:
    if isinstance(want, dict) and "error" in want:
        assert isinstance(got, dict) and "error" in got, f"{path}: expected {want}, got {got}"
        assert got["error"] == want["error"], f"{path}: {got} vs {want}"
        assert got["message"].rstrip(". ") == want["message"].rstrip(". "), \
            f"{path}: {got['message']!r} vs {want['message']!r}"
        return
    if isinstance(want, float) and isinstance(got, float):
        assert np.isclose(got, want, rtol=1e-6), f"{path}: {got} vs {want}"
        return
    if isinstance(want, list) and isinstance(got, list):
        assert len(got) == len(want), f"{path}: {got} vs {want}"
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{path}[{i}]")
        return
    if isinstance(want, dict) and isinstance(got, dict):
        assert sorted(got) == sorted(want), f"{path}: keys {sorted(got)} vs {sorted(want)}"
        for k in want:
            _same(got[k], want[k], f"{path}.{k}")
        return
    assert got == want, f"{path}: {got!r} vs {want!r}"


@pytest.fixture(autouse=True)
def _unregister_handlers():
    yield
    while CASES.REGISTERED:
        tf.experimental.unregister_dispatch_for(CASES.REGISTERED.pop())


@pytest.mark.parametrize("name", sorted(CASES.CASES))
def test_case_matches_tensorflow(name):
    got = CASES.run(CASES.CASES[name], tf)
    _same(got, EXPECTED[name], name)


def test_every_case_has_an_expectation():
    assert set(CASES.CASES) == set(EXPECTED) - {"_meta"}
    assert EXPECTED["_meta"]["tensorflow"].startswith("2.21")


def test_assert_dispatch_is_gone_after_unregister():
    mt, handler = CASES._masked(tf)
    original = tf.debugging.assert_equal
    tf.experimental.dispatch_for_binary_elementwise_assert_apis(mt, mt)(handler)
    assert tf.debugging.assert_equal is not original
    assert tf.compat.v1.debugging.assert_equal is not original
    tf.experimental.unregister_dispatch_for(handler)
    assert tf.debugging.assert_equal is original
    with pytest.raises((TypeError, ValueError)):
        tf.debugging.assert_equal(mt([1], [True]), mt([1], [True]))
    # registering again after unregistering is allowed
    tf.experimental.dispatch_for_binary_elementwise_assert_apis(mt, mt)(handler)
    tf.experimental.unregister_dispatch_for(handler)


def test_row_partition_encodings_against_numpy():
    """Random partitions: every encoding agrees with NumPy's, whichever one built it."""
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 4, size=20)
    splits = np.concatenate([[0], np.cumsum(lengths)])
    rowids = np.repeat(np.arange(20), lengths)
    rp = tf.experimental.RowPartition
    for p in (rp.from_row_lengths(lengths), rp.from_row_splits(splits),
              rp.from_value_rowids(rowids, nrows=20), rp.from_row_starts(splits[:-1],
                                                                         splits[-1]),
              rp.from_row_limits(splits[1:])):
        np.testing.assert_array_equal(p.row_splits().numpy(), splits)
        np.testing.assert_array_equal(p.row_lengths().numpy(), lengths)
        np.testing.assert_array_equal(p.value_rowids().numpy(), rowids)
        np.testing.assert_array_equal(p.offsets_in_rows().numpy(),
                                      np.arange(len(rowids)) - splits[rowids])
        assert int(p.nrows()) == 20 and int(p.nvals()) == splits[-1]


def test_row_partition_in_a_graph_validates_at_run_time():
    rp = tf.experimental.RowPartition

    @tf.function(input_signature=[tf.TensorSpec([None], tf.int64)])
    def lengths(splits):
        return rp.from_row_splits(splits).row_lengths()

    np.testing.assert_array_equal(lengths(tf.constant([0, 2, 5], tf.int64)).numpy(), [2, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="monotonic"):
        lengths(tf.constant([0, 3, 2], tf.int64))


def test_broadcast_to_ragged_shape_against_numpy():
    """Each row of the broadcast equals NumPy's broadcast of the dense operand to that row's
    dense shape."""
    x = np.arange(6).reshape(1, 2, 3)[:, :1, :]           # [1, 1, 3]
    lengths = [2, 0, 3]
    shape = tf.experimental.DynamicRaggedShape.from_lengths([3, tuple(lengths), 3])
    out = tf.broadcast_to(tf.constant(x), shape)
    for row, n in zip(out.to_list(), lengths):
        np.testing.assert_array_equal(np.asarray(row).reshape(n, 3),
                                      np.broadcast_to(x[0], (n, 3)))


def test_broadcast_to_ragged_shape_gradient_matches_finite_differences():
    """d/dx sum(w * broadcast_to(x, shape)): each entry of x collects the weights of the
    values it was copied to."""
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((1, 1, 3))
    shape = tf.experimental.DynamicRaggedShape.from_lengths([2, (2, 1), 3])
    w = tf.constant(rng.standard_normal((3, 3)))

    def loss(x):
        return tf.reduce_sum(tf.broadcast_to(x, shape).flat_values * w)

    x = tf.constant(x0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = loss(x)
    grad = tape.gradient(y, x).numpy()
    eps, numeric = 1e-6, np.zeros_like(x0)
    for i in range(3):
        d = np.zeros_like(x0)
        d[0, 0, i] = eps
        numeric[0, 0, i] = (float(loss(tf.constant(x0 + d))) -
                            float(loss(tf.constant(x0 - d)))) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)
