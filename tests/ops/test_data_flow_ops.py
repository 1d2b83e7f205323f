"""DynamicPartition / DynamicStitch, the clip-by-norm family and `tf.nn.embedding_lookup`
(one table or shards by TF's "mod" and "div" strategies), table-driven with NumPy references.
Values were checked against TensorFlow 2.21."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from tests.ops.harness import OpCase

rng = np.random.default_rng(11)
v1 = tf.compat.v1


def _r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


def _np_partition(data, partitions, n):
    flat = np.asarray(partitions).reshape(-1)
    rows = data.reshape((flat.size,) + data.shape[np.ndim(partitions):])
    return [rows[flat == i] for i in range(n)]


def _np_stitch(indices, data):
    rows = max(int(np.max(i)) for i in indices) + 1
    out = np.zeros((rows,) + data[0].shape[np.ndim(indices[0]):])
    for ind, d in zip(indices, data):
        for i, row in zip(np.reshape(ind, -1), d.reshape((-1,) + out.shape[1:])):
            out[i] = row
    return out


def _np_clip_by_norm(t, clip, axes=None):
    norm = np.sqrt(np.sum(t * t, axis=axes, keepdims=True))
    return t * clip / np.maximum(norm, clip)


_PARTS = np.array([[0, 2], [1, 0], [2, 2]])
_TABLE = _r(10, 3)
_IDS = np.array([[1, 3], [9, 0], [4, 4]])
# The table cut as TF's strategies cut it over 3 shards of 10 rows.
_DIV = (slice(0, 4), slice(4, 7), slice(7, 10))       # 4, 3, 3 rows
_MOD = (slice(0, 10, 3), slice(1, 10, 3), slice(2, 10, 3))


def _shards(table, cuts):
    return [table[c] for c in cuts]


CASES = [
    # The number of rows in each part is known only when it runs (TF: [?, ...]).
    OpCase("dynamic_partition", lambda x: tf.dynamic_partition(x, _PARTS, 3), [_r(3, 2, 4)],
           lambda x: _np_partition(x, _PARTS, 3), static_shape_exact=False),
    OpCase("dynamic_partition_1d", lambda x: tf.dynamic_partition(x, [1, 1, 0, 1], 2),
           [_r(4)], lambda x: _np_partition(x, [1, 1, 0, 1], 2), static_shape_exact=False),
    OpCase("dynamic_partition_empty_part", lambda x: tf.dynamic_partition(x, [0, 0], 2),
           [_r(2, 3)], lambda x: _np_partition(x, [0, 0], 2), static_shape_exact=False),
    OpCase("dynamic_stitch", lambda a, b: tf.dynamic_stitch([[0, 4, 2], [1, 3]], [a, b]),
           [_r(3, 2), _r(2, 2)], lambda a, b: _np_stitch([[0, 4, 2], [1, 3]], [a, b])),
    OpCase("dynamic_stitch_2d_indices",
           lambda a, b: tf.dynamic_stitch([[[0, 2]], [[1], [3]]], [a, b]),
           [_r(1, 2, 3), _r(2, 1, 3)],
           lambda a, b: _np_stitch([[[0, 2]], [[1], [3]]], [a, b])),
    OpCase("dynamic_stitch_hole_and_overwrite",  # row 1 never written; later values win
           lambda a, b: tf.dynamic_stitch([[0, 2], [2]], [a, b]), [_r(2), _r(1)],
           lambda a, b: _np_stitch([[0, 2], [2]], [a, b]), grad=False),
    OpCase("clip_by_norm", lambda t: tf.clip_by_norm(t, 0.5), [_r(3, 4)],
           lambda t: _np_clip_by_norm(t, 0.5)),
    OpCase("clip_by_norm_unclipped", lambda t: tf.clip_by_norm(t, 100.0), [_r(3, 4)],
           lambda t: t),
    OpCase("clip_by_norm_axes", lambda t: tf.clip_by_norm(t, 0.4, axes=[1]), [_r(3, 4)],
           lambda t: _np_clip_by_norm(t, 0.4, axes=1)),
    OpCase("global_norm", lambda a, b: tf.linalg.global_norm([a, None, b]), [_r(3), _r(2, 2)],
           lambda a, b: np.sqrt(np.sum(a * a) + np.sum(b * b))),
    OpCase("clip_by_global_norm", lambda a, b: tf.clip_by_global_norm([a, b], 0.5)[0],
           [_r(3), _r(2, 2)],
           lambda a, b: [x * 0.5 / max(np.sqrt(np.sum(a * a) + np.sum(b * b)), 0.5)
                         for x in (a, b)]),
    OpCase("embedding_lookup", lambda t: tf.nn.embedding_lookup(t, _IDS), [_TABLE],
           lambda t: t[_IDS]),
    OpCase("embedding_lookup_max_norm",
           lambda t: tf.nn.embedding_lookup(t, _IDS, max_norm=0.5), [_TABLE],
           lambda t: _np_clip_by_norm(t[_IDS], 0.5, axes=2)),
    OpCase("embedding_lookup_div_shards",
           lambda a, b, c: tf.nn.embedding_lookup([a, b, c], _IDS),
           _shards(_TABLE, _DIV), lambda a, b, c: np.concatenate([a, b, c])[_IDS]),
    OpCase("embedding_lookup_v1_mod_shards",
           lambda a, b, c: v1.nn.embedding_lookup([a, b, c], _IDS),
           _shards(_TABLE, _MOD), lambda a, b, c: _unshard_mod([a, b, c])[_IDS]),
    OpCase("embedding_lookup_v1_div_max_norm",
           lambda a, b, c: v1.nn.embedding_lookup([a, b, c], _IDS, partition_strategy="div",
                                                  max_norm=0.5),
           _shards(_TABLE, _DIV),
           lambda a, b, c: _np_clip_by_norm(np.concatenate([a, b, c])[_IDS], 0.5, axes=2)),
]


def _unshard_mod(shards):
    n = sum(len(s) for s in shards)
    table = np.zeros((n,) + shards[0].shape[1:])
    for i, s in enumerate(shards):
        table[i::len(shards)] = s
    return table


def test_embedding_lookup_of_a_variable_trains_the_looked_up_rows():
    table = tf.Variable(np.zeros((5, 2), np.float32))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.nn.embedding_lookup(table, [1, 3, 1]))
    grad = tf.convert_to_tensor(tape.gradient(loss, table)).numpy()
    np.testing.assert_array_equal(grad, [[0, 0], [2, 2], [0, 0], [1, 1], [0, 0]])


def test_embedding_lookup_in_a_session_names_its_ops_as_tensorflow():
    with tf.Graph().as_default():
        table = tf.constant(_TABLE)
        ids = v1.placeholder(tf.int32, [None])
        single = tf.nn.embedding_lookup(table, ids)
        sharded = tf.nn.embedding_lookup(_shards(table, _DIV), ids)
        assert single.name == "embedding_lookup/Identity:0"
        assert single.shape.as_list() == [None, 3] and sharded.shape.as_list() == [None, 3]
        with v1.Session() as sess:
            a, b = sess.run([single, sharded], {ids: [7, 0, 5]})
    np.testing.assert_allclose(a, _TABLE[[7, 0, 5]])
    np.testing.assert_allclose(b, _TABLE[[7, 0, 5]], rtol=1e-6)


def test_bad_input_gets_tensorflows_errors():
    with pytest.raises(InvalidArgumentError, match=r"partitions\[1\] = 2 is not in \[0, 2\)"):
        tf.dynamic_partition([1, 2, 3], [0, 2, 1], 2)
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] is out of range"):
        tf.dynamic_stitch([[0, -1]], [[1.0, 2.0]])
    with pytest.raises(ValueError, match="Unrecognized partition strategy: bad"):
        v1.nn.embedding_lookup([_TABLE, _TABLE], [1], partition_strategy="bad")
    with pytest.raises(ValueError, match="Need at least one param"):
        tf.nn.embedding_lookup([], [1])
    with pytest.raises(TypeError, match="`t_list` should be a sequence of tensors"):
        tf.clip_by_global_norm(tf.constant([1.0]), 1.0)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="must be a prefix of the shape of data"):
            tf.dynamic_partition(tf.zeros([3, 2]), [0, 1], 2)
