"""Partitioned variables (TF1): partitioners, `get_variable(partitioner=)` and
`variable_scope(partitioner=)` making `PartitionedVariable`s, their reads, embedding lookups
and training through their parts. Expected values were checked against TensorFlow 2.21."""

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1
S = tf.TensorShape


def test_partitioners_as_tensorflows():
    assert v1.fixed_size_partitioner(3)(S([7, 2])) == [3, 1]
    assert v1.fixed_size_partitioner(5, axis=1)(S([7, 2])) == [1, 2]  # at most the dim
    assert v1.min_max_variable_partitioner(4, min_slice_size=40)(S([10, 4]), tf.float32) \
        == [4, 1]
    assert v1.min_max_variable_partitioner(4, min_slice_size=1000)(S([10, 4]),
                                                                   tf.float32) == [1, 1]
    assert v1.variable_axis_size_partitioner(50)(S([10, 4]), tf.float32) == [4, 1]
    assert v1.variable_axis_size_partitioner(50, max_shards=2)(S([10, 4]),
                                                               tf.float32) == [2, 1]
    assert v1.variable_axis_size_partitioner(100, axis=1)(S([10, 4]), tf.string) == [1, 4]
    with pytest.raises(ValueError, match="must be positive"):
        v1.variable_axis_size_partitioner(0)


def test_partitioned_variable_parts_reads_and_lookups():
    table = np.arange(14, dtype=np.float32).reshape(7, 2)
    with tf.Graph().as_default():
        emb = v1.get_variable("emb", initializer=tf.constant(table),
                              partitioner=v1.fixed_size_partitioner(3))
        assert [p.name for p in emb] == ["emb/part_0:0", "emb/part_1:0", "emb/part_2:0"]
        assert [p.shape.as_list() for p in emb] == [[3, 2], [2, 2], [2, 2]]
        assert emb.get_shape().as_list() == [7, 2] and len(emb) == 3
        assert [p._get_save_slice_info().spec for p in emb] == \
            ["7 2 0,3:0,2", "7 2 3,2:0,2", "7 2 5,2:0,2"]
        assert v1.global_variables() == list(emb)
        ids = tf.constant([0, 1, 2, 3, 6])
        by_mod = v1.nn.embedding_lookup(emb, ids)  # id % 3 picks the part
        by_div = v1.nn.embedding_lookup(emb, ids, partition_strategy="div")
        whole = tf.convert_to_tensor(emb)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(whole), table)
            np.testing.assert_array_equal(sess.run(emb.as_tensor()), table)
            np.testing.assert_array_equal(sess.run(by_div), table[[0, 1, 2, 3, 6]])
            parts = [table[0:3], table[3:5], table[5:7]]
            np.testing.assert_array_equal(sess.run(by_mod), np.stack(
                [parts[i % 3][i // 3] for i in [0, 1, 2, 3, 6]]))


def test_training_and_gradients_go_through_the_parts():
    with tf.Graph().as_default():
        w = v1.get_variable("w", initializer=tf.constant(np.ones((5, 2), np.float32)),
                            partitioner=v1.fixed_size_partitioner(2))
        x = tf.constant(np.arange(10, dtype=np.float32).reshape(2, 5))
        loss = tf.reduce_sum(tf.matmul(x, w))
        grads = tf.gradients(loss, list(w))
        step = v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            column = np.arange(10, dtype=np.float32).reshape(2, 5).sum(0)  # d loss / d w
            want = np.stack([column, column], 1)
            np.testing.assert_allclose(np.concatenate(sess.run(grads)), want)
            sess.run(step)
            np.testing.assert_allclose(sess.run(w.as_tensor()), 1 - 0.1 * want, rtol=1e-6)


def test_scope_partitioner_reuse_and_errors():
    with tf.Graph().as_default():
        with v1.variable_scope("s", partitioner=v1.fixed_size_partitioner(2)):
            a = v1.get_variable("a", [5, 3])
            scalar = v1.get_variable("sc", [])  # scalars are never partitioned
        assert [p.shape.as_list() for p in a] == [[3, 3], [2, 3]]
        assert isinstance(scalar, tf.Variable)
        with v1.variable_scope("s", reuse=True, partitioner=v1.fixed_size_partitioner(2)):
            assert v1.get_variable("a", [5, 3]) is a
        with pytest.raises(ValueError, match="Partitioned variable with name s/a already"):
            v1.get_variable("s/a", [5, 3], partitioner=v1.fixed_size_partitioner(2))
        with pytest.raises(ValueError, match="Can only slice a variable along one dim"):
            v1.get_variable("c", [5, 3], partitioner=lambda shape, dtype: [2, 2])
        with pytest.raises(ValueError, match="must be fully defined"):
            v1.get_variable("d", [None, 3], partitioner=v1.fixed_size_partitioner(2))
        v1.get_variable("plain", [4, 2])
        with pytest.raises(ValueError, match="an unpartitioned version of the variable"):
            v1.get_variable("plain", [4, 2], partitioner=v1.fixed_size_partitioner(2))
        parts = v1.create_partitioned_variables([4, 2], [2, 1], v1.constant_initializer(1.0))
        assert [p.name for p in parts] == ["PartitionedVariable/part_0:0",
                                           "PartitionedVariable/part_1:0"]


def test_initializers_see_the_full_shape_and_eager_parts():
    with tf.Graph().as_default():
        g = v1.get_variable("g", [1000, 10], partitioner=v1.fixed_size_partitioner(4),
                            initializer=v1.glorot_uniform_initializer(seed=1))
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            value = sess.run(tf.convert_to_tensor(g))
    # Glorot's limit from the full [1000, 10] (0.077), not a part's [250, 10] (0.152)
    assert 0.07 < np.abs(value).max() <= np.sqrt(6 / 1010)
    e = v1.get_variable("e", [4, 2], partitioner=v1.fixed_size_partitioner(2),
                        initializer=v1.ones_initializer())
    assert [p.name for p in e] == ["e/part_0:0", "e/part_1:0"]
    e.assign(np.arange(8, dtype=np.float32).reshape(4, 2))
    np.testing.assert_array_equal(tf.convert_to_tensor(e).numpy(),
                                  np.arange(8).reshape(4, 2))
