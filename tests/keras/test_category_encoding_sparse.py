"""`keras.layers.CategoryEncoding(sparse=True)`: a SparseTensor of the encoding's non-zero
entries (Keras' TensorFlow backend returns tf.sparse.bincount's), equal to the dense
encoding once densified; Dense takes it. Symbolic (functional API) use is not modelled and
says so."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf


def _dense_count(ids, weights, depth):
    out = np.zeros((ids.shape[0], depth))
    for row, (i, w) in enumerate(zip(ids, weights)):
        np.add.at(out[row], i, w)
    return out


def test_weighted_count_is_sparse_and_densifies_to_the_counts():
    ids = np.array([[5, 11, 5, 17, 17]])
    weights = np.array([[0.5, 1.5, 0.7, 1.8, 0.2]], np.float32)
    layer = tf.keras.layers.CategoryEncoding(num_tokens=20, output_mode="count", sparse=True)
    sp = layer(tf.constant(ids), count_weights=tf.constant(weights))
    assert isinstance(sp, tf.SparseTensor)
    assert sp.indices.numpy().tolist() == [[0, 5], [0, 11], [0, 17]]
    assert sp.dense_shape.numpy().tolist() == [1, 20]
    np.testing.assert_allclose(tf.sparse.to_dense(sp).numpy(),
                               _dense_count(ids, weights.astype(np.float64), 20), rtol=1e-6)


def test_one_hot_and_multi_hot_sparse():
    one_hot = tf.keras.layers.CategoryEncoding(3, output_mode="one_hot", sparse=True)([0, 2])
    assert one_hot.indices.numpy().tolist() == [[0, 0], [1, 2]]
    assert one_hot.values.numpy().tolist() == [1.0, 1.0]
    assert one_hot.dense_shape.numpy().tolist() == [2, 3]
    multi = tf.keras.layers.CategoryEncoding(3, output_mode="multi_hot", sparse=True)([[0, 2]])
    assert multi.indices.numpy().tolist() == [[0, 0], [0, 2]]
    assert multi.dense_shape.numpy().tolist() == [1, 3]


def test_dense_layer_on_the_sparse_encoding():
    ids = np.array([[5, 11, 5, 17, 17]])
    weights = np.array([[0.5, 1.5, 0.7, 1.8, 0.2]])
    weights = weights / weights.sum(-1, keepdims=True)
    layer = tf.keras.layers.CategoryEncoding(num_tokens=20, output_mode="count", sparse=True)
    dense = tf.keras.layers.Dense(4, use_bias=False)
    out = dense(layer(tf.constant(ids), count_weights=tf.constant(weights, tf.float32)))
    expected = _dense_count(ids, weights, 20) @ dense.kernel.numpy().astype(np.float64)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_config_has_no_sparse_key_as_keras():
    config = tf.keras.layers.CategoryEncoding(3, sparse=True).get_config()
    assert "sparse" not in config


def test_functional_use_is_not_supported():
    x = tf.keras.Input(shape=(5,), dtype="int32")
    with pytest.raises(NotImplementedError, match="sparse=True"):
        tf.keras.layers.CategoryEncoding(20, output_mode="count", sparse=True)(x)
