"""RaggedTensorToTensor against the values TensorFlow 2.21 computes for the same inputs
(value row ids, nested row splits with a requested shape, strings) and its gradient."""

import numpy as np

import ndflow as tf
from ndflow.ops.apply import apply_op
from ndflow.ops.ragged_conversion_ops import RaggedTensorToTensor


def to_tensor(shape, values, default, partitions, types):
    return apply_op(RaggedTensorToTensor, [shape, values, default, partitions],
                    {"row_partition_types": types}).outputs[0]


def i64(x):
    return tf.constant(x, tf.int64)


def test_first_dim_size_and_value_rowids():
    out = to_tensor(i64(-1), tf.constant([1, 2, 3, 4, 5]), tf.constant(0),
                    [i64(3), i64([0, 0, 2, 2, 2])], ["FIRST_DIM_SIZE", "VALUE_ROWIDS"])
    assert out.numpy().tolist() == [[1, 2, 0], [0, 0, 0], [3, 4, 5]]


def test_nested_row_splits_truncated_to_the_requested_shape():
    out = to_tensor(i64([2, 2, 2]), tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
                    tf.constant(-1.0), [i64([0, 2, 3]), i64([0, 3, 3, 6])],
                    ["ROW_SPLITS", "ROW_SPLITS"])
    assert out.shape.as_list() == [2, 2, 2]
    assert out.numpy().tolist() == [[[1.0, 2.0], [-1.0, -1.0]], [[4.0, 5.0], [-1.0, -1.0]]]


def test_strings():
    out = to_tensor(i64(-1), tf.constant(["a", "b", "c"]), tf.constant(""),
                    [i64([0, 1, 1, 3])], ["ROW_SPLITS"])
    assert out.numpy().tolist() == [[b"a", b""], [b"", b""], [b"b", b"c"]]


def test_gradient_goes_to_the_values_placed_and_the_default_for_the_rest():
    v, d = tf.constant([1.0, 2.0, 3.0]), tf.constant(0.5)
    with tf.GradientTape() as tape:
        tape.watch([v, d])
        y = to_tensor(i64([2, 3]), v, d, [i64([0, 1, 3])], ["ROW_SPLITS"])
        loss = tf.reduce_sum(y * [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    gv, gd = tape.gradient(loss, [v, d])
    np.testing.assert_allclose(tf.convert_to_tensor(gv).numpy(), [1.0, 4.0, 5.0])
    assert float(gd.numpy()) == 11.0
