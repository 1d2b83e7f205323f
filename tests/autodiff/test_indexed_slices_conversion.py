"""IndexedSlices as TF 2.21 converts and aggregates them: `convert_to_tensor` densifies
without a warning (TF 2.21 warns only in graphs, for a constant dense shape of 100M
elements or more), TF's errors for a missing dense_shape and a wrong dtype, and
`tf.gradients` concatenating the sparse gradients of several gathers (checked against
TF 2.21's behaviour)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1


def _slices(dense_shape=(3, 2)):
    shape = None if dense_shape is None else tf.constant(list(dense_shape))
    return tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([2, 2]), shape)


def test_eager_densify_sums_repeated_rows_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dense = tf.convert_to_tensor(_slices())
    np.testing.assert_array_equal(dense.numpy(), [[0, 0], [0, 0], [4, 6]])


def test_missing_dense_shape_and_wrong_dtype():
    with pytest.raises(ValueError, match="Tensor conversion requested for IndexedSlices for "
                                         "argument `value` without dense_shape"):
        tf.convert_to_tensor(_slices(None))
    with pytest.raises(ValueError, match="Incompatible tensor conversion requested to `dtype` "
                                         "int32 for IndexedSlices"):
        tf.convert_to_tensor(_slices(), dtype=tf.int32)


def test_graph_warns_only_for_huge_constant_shapes():
    with tf.Graph().as_default():
        p = v1.placeholder(tf.float32, [None, 3])
        (g,) = tf.gradients(tf.reduce_sum(tf.gather(p, [0, 1])), [p])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            tf.convert_to_tensor(g)  # unknown shape: TF 2.21 does not warn
        big = tf.IndexedSlices(tf.ones([1, 2]), tf.constant([0]),
                               tf.constant([60_000_000, 2], tf.int64))
        with pytest.warns(UserWarning, match="Converting sparse IndexedSlices to a dense "
                                             "Tensor with 120000000 elements"):
            tf.convert_to_tensor(big)


def test_tf_gradients_concatenates_and_session_fetches_the_value():
    with tf.Graph().as_default():
        p = v1.placeholder(tf.float32, [None, 3])
        y = tf.reduce_sum(tf.gather(p, [0, 1])) + tf.reduce_sum(tf.gather(p, [1]) * 2.0)
        (g,) = tf.gradients(y, [p])
        assert isinstance(g, tf.IndexedSlices)
        with v1.Session() as s:
            value = s.run(g, {p: np.ones([3, 3], np.float32)})
            dense = s.run(tf.convert_to_tensor(g), {p: np.ones([3, 3], np.float32)})
    assert sorted(value.indices.tolist()) == [0, 1, 1]
    assert value.dense_shape.tolist() == [3, 3]
    np.testing.assert_array_equal(dense, [[1, 1, 1], [3, 3, 3], [0, 0, 0]])


def test_clipping_keeps_sparse_gradients_sparse():
    rows = np.array([[3.0, 4.0], [0.0, 12.0]])
    s = tf.IndexedSlices(tf.constant(rows), tf.constant([1, 4]), tf.constant([6, 2]))
    dense = tf.constant(np.array([[5.0, 0.0]]))
    (cs, cd), norm = tf.clip_by_global_norm([s, dense], 6.5)
    total = np.sqrt((rows ** 2).sum() + 25.0)
    np.testing.assert_allclose(norm.numpy(), total)
    assert isinstance(cs, tf.IndexedSlices) and cs.indices.numpy().tolist() == [1, 4]
    np.testing.assert_allclose(cs.values.numpy(), rows * 6.5 / total)
    np.testing.assert_allclose(cd.numpy(), [[5.0 * 6.5 / total, 0.0]])
    c = tf.clip_by_norm(s, 6.5)  # the norm of the rows, as TF
    assert isinstance(c, tf.IndexedSlices)
    np.testing.assert_allclose(c.values.numpy(), rows * 6.5 / 13.0)


def test_tf_function_returns_indexed_slices():
    v = tf.Variable(np.arange(12, dtype=np.float64).reshape(6, 2))

    @tf.function
    def grad(ids):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.gather(v, ids)) + tf.reduce_sum(tf.gather(v, ids[:1]) * 3.0)
        return {"g": tape.gradient(loss, v), "n": tf.size(ids)}

    out = grad(tf.constant([1, 4]))
    g = out["g"]
    assert isinstance(g, tf.IndexedSlices) and int(out["n"]) == 2
    assert sorted(g.indices.numpy().tolist()) == [1, 1, 4]
    assert g.dense_shape.numpy().tolist() == [6, 2]
    want = np.zeros([6, 2])
    want[1], want[4] = 4.0, 1.0
    np.testing.assert_array_equal(tf.convert_to_tensor(g).numpy(), want)
    no_shape = tf.function(lambda: tf.IndexedSlices(tf.ones([1, 2]), tf.constant([3])))()
    assert no_shape.dense_shape is None and no_shape.indices.numpy().tolist() == [3]
