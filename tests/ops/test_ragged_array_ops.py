"""RaggedTensor to_sparse/from_sparse, merge_dims, tf.ragged.stack and
tf.ragged.boolean_mask (results as TensorFlow 2.21 gives them)."""

from __future__ import annotations

import ndflow as tf

ROWS = [[1, 2], [], [3]]


def test_sparse_round_trip():
    rt = tf.ragged.constant(ROWS)
    st = rt.to_sparse()
    assert st.indices.numpy().tolist() == [[0, 0], [0, 1], [2, 0]]
    assert st.dense_shape.numpy().tolist() == [3, 2]
    assert tf.RaggedTensor.from_sparse(st).to_list() == ROWS
    wider = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [1, 2, 3], [4, 5])
    assert tf.RaggedTensor.from_sparse(wider).to_list() == ROWS + [[]]
    nested = tf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]]]).to_sparse()
    assert nested.indices.numpy().tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0],
                                               [1, 0, 1], [1, 0, 2]]
    assert nested.dense_shape.numpy().tolist() == [2, 2, 3]


def test_merge_dims():
    r3 = tf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]]])
    assert r3.merge_dims(0, 1).to_list() == [[1, 2], [3], [4, 5, 6]]
    assert r3.merge_dims(1, 2).to_list() == [[1, 2, 3], [4, 5, 6]]
    assert r3.merge_dims(0, -1).numpy().tolist() == [1, 2, 3, 4, 5, 6]
    dense_inner = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    assert dense_inner.merge_dims(1, 2).to_list() == [[1, 2, 3, 4], [5, 6]]
    assert dense_inner.merge_dims(0, 1).numpy().tolist() == [[1, 2], [3, 4], [5, 6]]


def test_stack_and_boolean_mask():
    rt = tf.ragged.constant(ROWS)
    assert tf.ragged.stack([rt, tf.ragged.constant([[9]])]).to_list() == [ROWS, [[9]]]
    assert tf.ragged.stack([tf.constant([1, 2]), tf.constant([3, 4])]).to_list() == \
        [[1, 2], [3, 4]]
    mask = tf.ragged.constant([[True, False], [], [True]])
    assert tf.ragged.boolean_mask(rt, mask).to_list() == [[1], [], [3]]
    assert tf.ragged.boolean_mask(rt, [True, False, True]).to_list() == [[1, 2], [3]]
    dense = tf.ragged.boolean_mask([[1, 2, 3], [4, 5, 6]],
                                   [[True, False, True], [False, False, False]])
    assert dense.to_list() == [[1, 3], []]
