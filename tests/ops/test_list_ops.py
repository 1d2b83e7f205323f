"""TensorList ops (EmptyTensorList, TensorListReserve, ...SetItem, ...Stack, ...): values,
static shapes, gradients (TF's list_ops gradients, by finite differences through the
harness) and TensorFlow 2.21's errors, checked against TF's messages."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import errors
from ndflow.ops import list_ops as lo
from ndflow.ops.apply import apply_op
from tests.ops.harness import OpCase

X = np.arange(1.0, 7.0).reshape(3, 2) / 3.0
Y = np.array([[0.5, -1.0], [2.0, 0.25]])


def _set_items(x, y):
    lst = lo.tensor_list_reserve([2], 4, x.dtype)
    lst = lo.tensor_list_set_item(lst, 3, y[0])
    lst = lo.tensor_list_set_item(lst, 0, x[1] * 2.0)
    lst = lo.tensor_list_set_item(lst, 3, y[1] * x[0])  # overwrites: y[0] gets no gradient
    return lo.tensor_list_stack(lst, x.dtype, element_shape=[2])


def _set_items_ref(x, y):
    return np.stack([x[1] * 2.0, np.zeros(2), np.zeros(2), y[1] * x[0]])


def _push_pop(x, y):
    lst = lo.empty_tensor_list([None], x.dtype)
    for i in range(3):
        lst = lo.tensor_list_push_back(lst, x[i] * (i + 1.0))
    lst, last = lo.tensor_list_pop_back(lst, x.dtype, element_shape=[2])
    lst = lo.tensor_list_push_back(lst, last * y[0])
    return lo.tensor_list_stack(lst, x.dtype, element_shape=[2])


def _push_pop_ref(x, y):
    return np.stack([x[0], x[1] * 2.0, x[2] * 3.0 * y[0]])


def _gather_scatter(x, y):
    lst = lo.tensor_list_from_tensor(x, [2])
    lst = lo.tensor_list_scatter(y, [2, 0], input_handle=lst)
    # Unique indices: the gradient scatters into a list (TF's too), so repeats would overwrite.
    return lo.tensor_list_gather(lst, [2, 0, 1], x.dtype, element_shape=[2])


def _gather_scatter_ref(x, y):
    return np.stack([y[0], y[1], x[1]])


def _scatter_new(y):
    lst = lo.tensor_list_scatter(y, [3, 1], element_shape=[2])
    return lo.tensor_list_stack(lst, y.dtype, element_shape=[2])


def _v1_scatter_concat(y):
    """TensorListScatter and TensorListConcat, the v1 forms (GraphDefs of older TF)."""
    lst = apply_op(lo.TensorListScatter, [y, [1, 0], lo.build_element_shape([2])]).outputs[0]
    return apply_op(lo.TensorListConcat, [lst], {"element_dtype": y.dtype,
                                                 "element_shape": tf.TensorShape([None])}
                    ).outputs[0]


def _concat_split(x):
    lst = lo.tensor_list_split(x, [None, 2], np.array([1, 2], np.int64))
    first = lo.tensor_list_get_item(lst, 1, x.dtype, element_shape=[None, 2])
    lst = lo.tensor_list_push_back(lst, first * first)
    return lo.tensor_list_concat(lst, x.dtype, element_shape=[None, 2])


def _concat_split_ref(x):
    return np.concatenate([x, x[1:] ** 2])


def _resize(x):
    lst = lo.tensor_list_resize(lo.tensor_list_from_tensor(x, [2]), 2)
    lst = lo.tensor_list_resize(lst, 4)
    return lo.tensor_list_stack(lst, x.dtype, element_shape=[2])


def _getitem(x):
    lst = lo.tensor_list_from_tensor(x, [2])
    return lo.tensor_list_get_item(lst, 2, x.dtype, element_shape=[2]) * \
        lo.tensor_list_get_item(lst, 0, x.dtype, element_shape=[2])


# TensorListStack knows its rows statically only from `num_elements` (TF's shape function too).
_ROWS_UNKNOWN = {"static_shape_exact": False}

CASES = [
    OpCase("from_tensor_stack", lambda x: lo.tensor_list_stack(
        lo.tensor_list_from_tensor(x, [2]), x.dtype, 3, element_shape=[2]), [X], lambda x: x),
    OpCase("get_item_twice", _getitem, [X], lambda x: x[2] * x[0]),
    OpCase("reserve_set_item_stack", _set_items, [X, Y], _set_items_ref, **_ROWS_UNKNOWN),
    OpCase("push_back_pop_back", _push_pop, [X, Y], _push_pop_ref, **_ROWS_UNKNOWN),
    OpCase("scatter_into_existing_and_gather", _gather_scatter, [X, Y], _gather_scatter_ref),
    OpCase("scatter_v2_sparse", _scatter_new, [Y],
           lambda y: np.stack([np.zeros(2), y[1], np.zeros(2), y[0]]), **_ROWS_UNKNOWN),
    OpCase("v1_scatter_concat", _v1_scatter_concat, [Y], lambda y: np.concatenate([y[1], y[0]]),
           **_ROWS_UNKNOWN),
    OpCase("split_concat", _concat_split, [X], _concat_split_ref, **_ROWS_UNKNOWN),
    OpCase("resize", _resize, [X], lambda x: np.concatenate([x[:2], np.zeros((2, 2))]),
           **_ROWS_UNKNOWN),
]


def _raises(fn, match):
    with pytest.raises(errors.InvalidArgumentError, match=match):
        fn()


F32 = tf.float32


def test_errors_match_tensorflow():
    lst = lo.tensor_list_reserve([2], 3, F32)
    _raises(lambda: lo.tensor_list_set_item(lst, 5, tf.ones([2])),
            r"Trying to modify element 5 in a list with 3 elements\. \[Op:TensorListSetItem\]")
    _raises(lambda: lo.tensor_list_set_item(lst, 0, tf.ones([3])),
            r"Tried to set a tensor with incompatible shape at a list index\. Item element "
            r"shape: \[3\] list shape: \[2\]")
    _raises(lambda: lo.tensor_list_set_item(lst, 0, tf.ones([2], tf.float64)),
            "Invalid data types; op elements double but list elements float")
    _raises(lambda: lo.tensor_list_get_item(lst, 5, F32),
            r"Trying to access element 5 in a list with 3 elements\.")
    _raises(lambda: lo.tensor_list_get_item(lst, -1, F32),
            r"Trying to access element -1 in a list with 3 elements\.")
    unknown = lo.tensor_list_reserve(None, 3, F32)
    _raises(lambda: lo.tensor_list_get_item(unknown, 1, F32),
            "Trying to read an uninitialized tensor but element_shape is not fully defined: "
            "<unknown> and no list element is set.")
    _raises(lambda: lo.tensor_list_stack(unknown, F32),
            "Tried to stack list which only contains uninitialized tensors and has a "
            "non-fully-defined element_shape: <unknown>")
    _raises(lambda: lo.tensor_list_stack(lst, F32, num_elements=2),
            "Operation expected a list with 2 elements but got a list with 3 elements.")
    _raises(lambda: lo.tensor_list_pop_back(lo.empty_tensor_list([2], F32), F32),
            r"Trying to pop from an empty list\.")
    _raises(lambda: lo.tensor_list_stack(lo.empty_tensor_list(None, F32), F32),
            "Tried to stack elements of an empty list with non-fully-defined element_shape: "
            "<unknown>")
    _raises(lambda: lo.tensor_list_reserve([2], -1, F32),
            "The num_elements to reserve must be a non negative number, but got -1")
    full = lo.tensor_list_push_back(lo.empty_tensor_list([2], F32, 1), tf.ones([2]))
    _raises(lambda: lo.tensor_list_push_back(full, tf.ones([2])),
            "Tried to push item into a full list list size: 1 max_num_elements: 1")
    _raises(lambda: lo.tensor_list_push_back(lo.empty_tensor_list([2], F32), tf.ones([3])),
            r"Tried to append a tensor with incompatible shape to a list\. Op element shape: "
            r"\[3\] list shape: \[2\]")
    _raises(lambda: lo.tensor_list_from_tensor(tf.ones([3, 2]), [3]),
            r"Specified a list with shape \[3\] from a tensor with shape \[2\]")
    _raises(lambda: lo.tensor_list_from_tensor(tf.constant(1.0), []),
            r"Tensor must be at least a vector, but saw shape: \[\]")
    rows = lo.tensor_list_from_tensor(tf.ones([3, 2]), [2])
    _raises(lambda: lo.tensor_list_gather(rows, [0, 5], F32),
            "Index 5 out o range; list only has 3 elements.")
    _raises(lambda: lo.tensor_list_concat(lo.tensor_list_from_tensor(tf.ones([3]), []), F32),
            "Concat requires elements to be at least vectors, found scalars instead.")
    _raises(lambda: lo.tensor_list_split(tf.ones([5, 2]), [None, 2], [2, 2]),
            "Unused values in tensor. Length of tensor: 5 Values used: 4")
    _raises(lambda: lo.tensor_list_scatter(tf.ones([2, 2]), [0, -1], [2]),
            "Indices in TensorListScatter must all be non-negative.")
    _raises(lambda: lo.tensor_list_scatter(tf.ones([2, 2]), [0, 1, 2], [2]),
            "Invalid number of rows in input tensor. Expected: 3 Actual: 2")
    _raises(lambda: lo.tensor_list_resize(rows, -1),
            "TensorListSlice expects size to be non-negative. Got: -1")
    _raises(lambda: tf.math.add_n([rows, lo.tensor_list_from_tensor(tf.ones([2, 2]), [2])]),
            "Trying to add two lists of tensors with different lengths. One is 3 and the "
            r"other is 2 \[Op:AddN\]")
    mixed = lo.tensor_list_push_back(lo.tensor_list_push_back(
        lo.empty_tensor_list(None, F32), tf.ones([2])), tf.ones([3]))
    _raises(lambda: lo.tensor_list_stack(mixed, F32),
            r"Incompatible shapes during merge: \[2\] vs\. \[3\]")


def test_values_are_immutable_and_push_back_shares_safely():
    a = lo.tensor_list_from_tensor(tf.constant([[1.0], [2.0]]), [1])
    b = lo.tensor_list_set_item(a, 0, tf.constant([9.0]))
    np.testing.assert_array_equal(lo.tensor_list_stack(a, F32).numpy(), [[1.0], [2.0]])
    np.testing.assert_array_equal(lo.tensor_list_stack(b, F32).numpy(), [[9.0], [2.0]])
    # Two pushes onto the same list: the second must not see the first.
    c1 = lo.tensor_list_push_back(a, tf.constant([3.0]))
    c2 = lo.tensor_list_push_back(a, tf.constant([4.0]))
    shorter, last = lo.tensor_list_pop_back(c1, F32)
    c3 = lo.tensor_list_push_back(shorter, tf.constant([5.0]))
    assert [lo.tensor_list_stack(t, F32).numpy().ravel().tolist() for t in (a, c1, c2, c3)] == \
        [[1, 2], [1, 2, 3], [1, 2, 4], [1, 2, 5]]
    assert float(last.numpy()[0]) == 3.0
    assert int(lo.tensor_list_length(c3).numpy()) == 3


def test_element_shape_length_add_zeros_and_uninitialized_reads():
    rows = lo.tensor_list_from_tensor(tf.ones([3, 2]), [2])
    np.testing.assert_array_equal(lo.tensor_list_element_shape(rows).numpy(), [2])
    assert int(lo.tensor_list_element_shape(lo.empty_tensor_list(None, F32)).numpy()) == -1
    np.testing.assert_array_equal(
        lo.tensor_list_element_shape(lo.empty_tensor_list([None, 2], F32)).numpy(), [-1, 2])
    total = tf.math.add_n([rows, rows, lo.tensor_list_reserve([2], 3, F32)])
    np.testing.assert_array_equal(lo.tensor_list_stack(total, F32).numpy(), np.full((3, 2), 2))
    zeros = tf.zeros_like(rows)
    assert zeros.dtype is tf.variant
    np.testing.assert_array_equal(lo.tensor_list_stack(zeros, F32).numpy(), np.zeros((3, 2)))
    np.testing.assert_array_equal(
        lo.tensor_list_get_item(lo.tensor_list_reserve([2], 3, F32), 1, F32).numpy(), [0, 0])
    grown = lo.tensor_list_set_item(rows, 4, tf.ones([2]), resize_if_index_out_of_bounds=True)
    np.testing.assert_array_equal(lo.tensor_list_stack(grown, F32).numpy(),
                                  [[1, 1], [1, 1], [1, 1], [0, 0], [1, 1]])
    assert lo.tensor_list_stack(lo.empty_tensor_list([2], F32), F32).shape == [0, 2]


def test_static_shapes_in_graphs():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(F32, [None, 3])
        lst = lo.tensor_list_from_tensor(x, [3])
        assert lst.dtype is tf.variant and lst.shape == []
        assert lo.tensor_list_get_item(lst, 0, F32, element_shape=[3]).shape == [3]
        assert lo.tensor_list_get_item(lst, 0, F32).shape.rank is None
        assert lo.tensor_list_stack(lst, F32, 4, element_shape=[None, 3]).shape.as_list() == \
            [4, None, 3]
        assert lo.tensor_list_gather(lst, [0, 1], F32, element_shape=[3]).shape == [2, 3]
        assert lo.tensor_list_concat(lst, F32, element_shape=[None, 3]).shape.as_list() == \
            [None, 3]
        _, item = lo.tensor_list_pop_back(lst, F32, element_shape=[3])
        assert item.shape == [3]
        assert lo.tensor_list_length(lst).shape == []
        with tf.compat.v1.Session() as s:
            out = s.run(lo.tensor_list_stack(lst, F32, element_shape=[3]),
                        {x: np.ones((2, 3), np.float32)})
        assert out.shape == (2, 3)


def test_gradient_of_a_list_read_twice_aggregates_lists():
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        lst = lo.tensor_list_from_tensor(x, [2])
        y = tf.reduce_sum(lo.tensor_list_get_item(lst, 0, tf.float64) * 3.0 +
                          lo.tensor_list_get_item(lst, 0, tf.float64) +
                          lo.tensor_list_get_item(lst, 2, tf.float64))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [[4, 4], [0, 0], [1, 1]])
