"""tf.RaggedTensor: factories, accessors, conversion, indexing, validation (values and error
messages as TensorFlow 2.21 gives them, checked against Python lists and NumPy)."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf

ROWS = [[1, 2], [], [3, 4, 5]]


def test_constant_structure_and_accessors():
    rt = tf.ragged.constant(ROWS)
    assert rt.dtype is tf.int32 and rt.ragged_rank == 1 and rt.row_splits.dtype is tf.int64
    assert rt.shape.as_list() == [3, None]
    assert rt.to_list() == ROWS
    np.testing.assert_array_equal(rt.values.numpy(), [1, 2, 3, 4, 5])
    np.testing.assert_array_equal(rt.row_splits.numpy(), [0, 2, 2, 5])
    np.testing.assert_array_equal(rt.row_lengths().numpy(), [2, 0, 3])
    np.testing.assert_array_equal(rt.value_rowids().numpy(), [0, 0, 2, 2, 2])
    assert int(rt.nrows()) == 3
    np.testing.assert_array_equal(rt.bounding_shape().numpy(), [3, 3])
    assert repr(rt) == "<tf.RaggedTensor [[1, 2], [], [3, 4, 5]]>"
    got = rt.numpy()
    assert got.dtype == object and [list(r) for r in got] == ROWS


def test_nested_and_inner_shape():
    rt = tf.ragged.constant([[[1, 2], [3]], [[4]]])
    assert rt.ragged_rank == 2 and rt.shape.as_list() == [2, None, None]
    assert [s.numpy().tolist() for s in rt.nested_row_splits] == [[0, 2, 3], [0, 2, 3, 4]]
    assert rt.flat_values.numpy().tolist() == [1, 2, 3, 4]
    uniform = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    assert uniform.shape.as_list() == [2, None, 2]
    assert tf.ragged.constant([[1.0]]).dtype is tf.float32
    assert tf.ragged.constant([["a", "bc"]]).to_list() == [[b"a", b"bc"]]
    with pytest.raises(ValueError, match="same nesting depth"):
        tf.ragged.constant([[1, [2]]])


def test_factories_agree():
    values = [1, 2, 3, 4, 5]
    want = ROWS
    assert tf.RaggedTensor.from_row_splits(values, [0, 2, 2, 5]).to_list() == want
    assert tf.RaggedTensor.from_row_lengths(values, [2, 0, 3]).to_list() == want
    assert tf.RaggedTensor.from_value_rowids(values, [0, 0, 2, 2, 2]).to_list() == want
    assert tf.RaggedTensor.from_value_rowids([1, 2, 3], [0, 0, 2], nrows=4).to_list() == \
        [[1, 2], [], [3], []]
    nested = tf.RaggedTensor.from_nested_row_splits(values, [[0, 1, 3], [0, 2, 2, 5]])
    assert nested.to_list() == [[[1, 2]], [[], [3, 4, 5]]]
    assert tf.RaggedTensor.from_tensor([[1, 0, 0], [2, 3, 0]], padding=0).to_list() == \
        [[1], [2, 3]]
    assert tf.RaggedTensor.from_tensor([[1, 0, 0], [2, 3, 0]], lengths=[1, 3]).to_list() == \
        [[1], [2, 3, 0]]
    assert tf.RaggedTensor.from_tensor(np.arange(6).reshape(2, 3)).to_list() == \
        [[0, 1, 2], [3, 4, 5]]
    deep = tf.RaggedTensor.from_tensor(np.arange(8).reshape(2, 2, 2), ragged_rank=2)
    assert deep.ragged_rank == 2 and deep.to_list() == np.arange(8).reshape(2, 2, 2).tolist()
    int32 = tf.RaggedTensor.from_row_splits(values, tf.constant([0, 2, 2, 5], tf.int32))
    assert int32.row_splits.dtype is tf.int32
    assert int32.with_row_splits_dtype(tf.int64).row_splits.dtype is tf.int64


@pytest.mark.parametrize("make, message", [
    (lambda: tf.RaggedTensor.from_row_splits([1, 2, 3], [1, 3]),
     "do not form a valid RaggedTensor:zero"),
    (lambda: tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 3, 2, 3]),
     "do not form a valid RaggedTensor:monotonic"),
    (lambda: tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 2]),
     "Arguments to _from_row_partition do not form a valid RaggedTensor"),
    (lambda: tf.RaggedTensor.from_row_lengths([1, 2, 3], [2, -1, 2]),
     "Arguments to from_row_lengths do not form a valid RowPartition"),
    (lambda: tf.RaggedTensor.from_value_rowids([1, 2, 3], [0, 2, 1]),
     "Arguments to from_value_rowids do not form a valid RowPartition"),
])
def test_validation_errors_as_tensorflow(make, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        make()


def test_constructor_is_private_and_validate_false_skips_checks():
    with pytest.raises(ValueError, match="constructor is private"):
        tf.RaggedTensor([1], [0, 1])
    rt = tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 1, 3], validate=False)
    assert rt.to_list() == [[1], [2, 3]]


def test_to_tensor_default_and_shape():
    rt = tf.ragged.constant(ROWS)
    np.testing.assert_array_equal(rt.to_tensor().numpy(), [[1, 2, 0], [0, 0, 0], [3, 4, 5]])
    np.testing.assert_array_equal(rt.to_tensor(default_value=9, shape=[2, 2]).numpy(),
                                  [[1, 2], [9, 9]])
    nested = tf.ragged.constant([[[1, 2], [3]], [[4]]])
    np.testing.assert_array_equal(nested.to_tensor().numpy(),
                                  [[[1, 2], [3, 0]], [[4, 0], [0, 0]]])


def test_indexing():
    rt = tf.ragged.constant(ROWS)
    assert rt[0].numpy().tolist() == [1, 2]
    assert rt[-1].numpy().tolist() == [3, 4, 5]
    assert rt[1:].to_list() == [[], [3, 4, 5]]
    assert rt[:0].to_list() == []
    assert int(rt[2, 1]) == 4
    nested = tf.ragged.constant([[[1, 2], [3]], [[4]]])
    assert nested[0].to_list() == [[1, 2], [3]]
    assert nested[0, 0].numpy().tolist() == [1, 2]
    with pytest.raises(IndexError):
        rt[3]
    assert [r.numpy().tolist() for r in rt] == ROWS


def test_ragged_range_and_segment_ids():
    assert tf.ragged.range([3, 0, 2]).to_list() == [[0, 1, 2], [], [0, 1]]
    assert tf.ragged.range([1, 2], [4, 3]).to_list() == [[1, 2, 3], [2]]
    assert tf.ragged.range(0, [5, 3], 2).to_list() == [[0, 2, 4], [0, 2]]
    assert tf.ragged.row_splits_to_segment_ids([0, 2, 2, 5]).numpy().tolist() == \
        [0, 0, 2, 2, 2]
    assert tf.ragged.segment_ids_to_row_splits([0, 0, 2, 2, 2]).numpy().tolist() == \
        [0, 2, 2, 5]
    assert tf.ragged.segment_ids_to_row_splits([0, 1], num_segments=4).numpy().tolist() == \
        [0, 1, 2, 2, 2]


def test_slicing_inside_rows_as_tensorflow():
    rt = tf.ragged.constant([[1, 2, 3], [], [4, 5]])
    assert rt[:, 1:].to_list() == [[2, 3], [], [5]]
    assert rt[:, -1:].to_list() == [[3], [], [5]]
    assert rt[:, 1:-1].to_list() == [[2], [], []]
    assert rt[1:, :1].to_list() == [[], [4]]
    with pytest.raises(ValueError, match="Cannot index into an inner ragged dimension"):
        rt[:, 0]
    r3 = tf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]]])
    assert r3[:, 1:].to_list() == [[[3]], []]
    assert r3[:, :, :1].to_list() == [[[1], [3]], [[4]]]
    dense_inner = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    assert dense_inner[:, :, 1].to_list() == [[2, 4], [6]]

    @tf.function
    def first_two(x):
        return x[:, :2]

    assert first_two(rt).to_list() == [[1, 2], [], [4, 5]]


def test_to_tensor_shape_of_another_rank_is_tensorflows_error():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="rt_input.rank = 2 but shape.rank = 3"):
        tf.ragged.constant(ROWS).to_tensor(shape=[2, 2, 2])


def test_static_uniform_row_lengths_show_in_shapes_as_tensorflow():
    deep = tf.RaggedTensor.from_tensor(np.arange(8).reshape(2, 2, 2), ragged_rank=2)
    assert deep.shape.as_list() == [2, 2, 2]
    assert deep._type_spec == tf.RaggedTensorSpec([2, 2, 2], tf.int64, 2)
    assert tf.RaggedTensor.from_uniform_row_length(tf.range(6), 2).shape.as_list() == [3, 2]
    assert tf.strings.split([["a b"], ["c"]]).shape.as_list() == [2, 1, None]
    assert (deep + 1).shape.as_list() == [2, 2, 2]          # kept by with_flat_values
    assert tf.ragged.constant(ROWS).shape.as_list() == [3, None]


def test_tf1_session_fetches_ragged_as_ragged_tensor_value():
    v1 = tf.compat.v1
    with tf.Graph().as_default():
        rt = tf.ragged.constant(ROWS)
        with v1.Session() as sess:
            got = sess.run({"rt": rt, "sums": tf.reduce_sum(rt, axis=1)})
    value = got["rt"]
    assert isinstance(value, v1.ragged.RaggedTensorValue) and value.to_list() == ROWS
    assert value.row_splits.tolist() == [0, 2, 2, 5] and got["sums"].tolist() == [3, 0, 12]
    made = v1.ragged.constant_value([[1, 2], [3]])
    assert repr(made) == ("tf.RaggedTensorValue(values=array([1, 2, 3]), "
                          "row_splits=array([0, 2, 3]))")
    assert str(made) == "<tf.RaggedTensorValue [[1, 2], [3]]>" and made.shape == (2, None)


def test_tf1_ragged_placeholder_fed_with_values():
    v1 = tf.compat.v1
    with tf.Graph().as_default():
        ph = v1.ragged.placeholder(tf.float32, 1)
        sums = tf.reduce_sum(ph, axis=1)
        with v1.Session() as sess:
            fed = v1.ragged.constant_value([[1.0, 2.0], [], [3.0]], dtype=tf.float32)
            assert sess.run(sums, {ph: fed}).tolist() == [3.0, 0.0, 3.0]
            assert sess.run(ph * 2, {ph: fed}).to_list() == [[2.0, 4.0], [], [6.0]]
