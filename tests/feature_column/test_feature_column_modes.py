"""Feature columns under tf.function and fed Sessions, and the gradients that flow through
input_layer / linear_model (finite differences and NumPy float64 references)."""

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from ndflow.feature_column.base import FeatureTransformationCache

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "feature_column"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text())
sys.path.insert(0, str(FIXTURE))
try:
    from fc_cases import cases, to_python  # noqa: E402
finally:
    sys.path.remove(str(FIXTURE))

CASES = cases(tf, FeatureTransformationCache)
fc = tf.feature_column
v1 = tf.compat.v1


@pytest.mark.parametrize("name", ["hash_string_ids", "hash_int_ids", "crossed_ids",
                                  "vocab_list_oov_ids", "identity_ids_default",
                                  "bucketized_ids_2d", "sequence_numeric"])
def test_tf_function_matches_tensorflow(name):
    assert to_python(tf.function(CASES[name])()) == EXPECTED[name]["value"]


def test_session_feeds_unknown_rank_and_rank1_features():
    g = tf.Graph()
    with g.as_default():
        price = v1.placeholder(tf.float32)  # unknown rank: a rank-1 feed becomes [batch, 1]
        words = v1.placeholder(tf.string, [None])
        out = v1.feature_column.input_layer({"p": price, "w": words}, [
            fc.numeric_column("p"), fc.indicator_column(
                fc.categorical_column_with_vocabulary_list("w", ["a", "b"]))])
        with v1.Session() as sess:
            sess.run(v1.tables_initializer())
            got = sess.run(out, {price: np.array([1.5, -2.0], np.float32),
                                 words: np.array([b"b", b"zz"], dtype=object)})
    np.testing.assert_array_equal(got, [[1.5, 0.0, 1.0], [-2.0, 0.0, 0.0]])


def _embedding_out(table, combiner):
    ids = tf.sparse.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]],
                                 tf.constant([0, 2, 1, 1, 1, 3], tf.int64), [3, 3])
    wts = tf.sparse.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]],
                                 [0.5, 2.0, 1.0, 1.5, 0.5, 3.0], [3, 3])
    col = fc.embedding_column(
        fc.weighted_categorical_column(fc.categorical_column_with_identity("i", 4), "w"), 2,
        combiner=combiner, initializer=tf.constant_initializer(table))
    return v1.feature_column.input_layer({"i": ids, "w": wts}, [col])


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_embedding_gradient_matches_finite_differences(combiner):
    rng = np.random.RandomState(1)
    table = rng.uniform(-1, 1, [4, 2])
    coef = rng.uniform(-1, 1, [3, 2])

    def loss(t):
        return float(np.sum(coef * _embedding_out(t.astype(np.float32), combiner).numpy()))

    with tf.GradientTape() as tape:
        ids = tf.sparse.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]],
                                     tf.constant([0, 2, 1, 1, 1, 3], tf.int64), [3, 3])
        wts = tf.sparse.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]],
                                     [0.5, 2.0, 1.0, 1.5, 0.5, 3.0], [3, 3])
        col = fc.embedding_column(
            fc.weighted_categorical_column(fc.categorical_column_with_identity("i", 4), "w"),
            2, combiner=combiner, initializer=tf.constant_initializer(table))
        out = v1.feature_column.input_layer({"i": ids, "w": wts}, [col])
        total = tf.reduce_sum(tf.constant(coef, tf.float32) * out)
    (var,) = tape.watched_variables()  # eagerly cols_to_vars stays empty, as TF's
    assert re.fullmatch(r"input_layer(_\d+)?/i_weighted_by_w_embedding/embedding_weights:0",
                        var.name)
    grad = tf.convert_to_tensor(tape.gradient(total, var)).numpy()
    eps, numeric = 1e-2, np.zeros_like(table)
    for idx in np.ndindex(*table.shape):
        up, down = table.copy(), table.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = (loss(up) - loss(down)) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=2e-3, atol=2e-3)


def test_linear_model_gradients_match_numpy():
    price = np.array([[1.0], [2.0], [-0.5]], np.float32)
    coef = np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 1.0]])
    words = tf.sparse.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0]], ["a", "c", "c", "b"],
                                   [3, 2])
    cols = [fc.numeric_column("p"), fc.categorical_column_with_vocabulary_list(
        "w", ["a", "b", "c"])]
    with tf.GradientTape() as tape:
        pred = v1.feature_column.linear_model({"p": price, "w": words}, cols, units=2)
        total = tf.reduce_sum(tf.constant(coef, tf.float32) * pred)
    by_part = {v.name.split("/")[1]: v for v in tape.watched_variables()}
    w_p, w_w, bias = by_part["p"], by_part["w"], by_part["bias_weights:0"]
    grads = [tf.convert_to_tensor(g).numpy() for g in tape.gradient(total, [w_p, w_w, bias])]
    np.testing.assert_allclose(grads[0], price.astype(np.float64).T @ coef, rtol=1e-6)
    onehot = np.array([[1, 0, 1], [0, 0, 1], [0, 1, 0]], np.float64)  # rows: a+c, c, b
    np.testing.assert_allclose(grads[1], onehot.T @ coef, rtol=1e-6)
    np.testing.assert_allclose(grads[2], coef.sum(axis=0), rtol=1e-6)
    names = [re.sub(r"^linear_model_\d+/", "linear_model/", v.name) for v in (w_p, w_w, bias)]
    assert names == ["linear_model/p/weights:0", "linear_model/w/weights:0",
                     "linear_model/bias_weights:0"]


def test_embedding_initialized_from_checkpoint(tmp_path):
    table = np.arange(8, dtype=np.float32).reshape(4, 2) / 4
    with tf.Graph().as_default():
        v1.get_variable("saved_table", initializer=tf.constant(table))
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            path = v1.train.Saver().save(sess, str(tmp_path / "model.ckpt"))
    with tf.Graph().as_default():
        col = fc.embedding_column(fc.categorical_column_with_identity("i", 4), 2,
                                  combiner="sum", ckpt_to_load_from=path,
                                  tensor_name_in_ckpt="saved_table")
        out = v1.feature_column.input_layer({"i": tf.constant([[1, 3], [2, -1]])}, [col])
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            got = sess.run(out)
    np.testing.assert_allclose(got, [table[1] + table[3], table[2]])
