"""TopKV2 (`tf.math.top_k`), `tf.sort`, `tf.argsort` and `tf.boolean_mask`, table-driven."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.ops.array_mask import boolean_mask
from ndflow.ops.sort import argsort, sort, top_k
from tests.ops.harness import OpCase

rng = np.random.default_rng(3)


def _distinct(*shape):
    """Values in [-1, 1) at least 2/size apart: no ties, even in bfloat16."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * (2.0 / n) - 1.0).reshape(shape)


def _np_top_k(x, k):
    idx = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    return [np.take_along_axis(x, idx, -1), idx.astype(np.int32)]


def _np_sort(x, axis, descending=False, arg=False):
    idx = np.argsort(-x if descending else x, axis=axis, kind="stable")
    return idx.astype(np.int32) if arg else np.take_along_axis(x, idx, axis)



def _np_in_top_k(predictions, targets, k):
    """TF's rule: fewer than k predictions strictly above the target's, every prediction of
    the row finite, the target in range."""
    out = []
    for row, t in zip(predictions, targets):
        ok = 0 <= t < row.size and np.all(np.isfinite(row))
        out.append(bool(ok and np.sum(row > row[t]) < k))
    return np.array(out)


_PREDICTIONS = np.array([[0.1, 0.3, 0.3, 0.2], [np.nan, 1, 2, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
_IN_TOP_K = dict(dtypes=(tf.float32,), low_precision=False, grad=False)

CASES = [
    OpCase("in_top_k_ties_nan_out_of_range",
           lambda p: tf.math.in_top_k(tf.constant([1, 3, 9, 0]), p, 1), [_PREDICTIONS],
           lambda p: _np_in_top_k(p, [1, 3, 9, 0], 1), **_IN_TOP_K),
    OpCase("in_top_k_k2_int64", lambda p: tf.nn.in_top_k(tf.constant([2, 0, 2, 3], tf.int64), p,
                                                        2),
           [_PREDICTIONS], lambda p: _np_in_top_k(p, [2, 0, 2, 3], 2), **_IN_TOP_K),
    OpCase("in_top_k_v1_order", lambda p: tf.compat.v1.nn.in_top_k(p, [0, 1, 2, 3], 4),
           [_PREDICTIONS], lambda p: _np_in_top_k(p, [0, 1, 2, 3], 4), **_IN_TOP_K),
    OpCase("in_top_k_k0", lambda p: tf.nn.in_top_k([0, 1, 2, 3], p, 0), [_PREDICTIONS],
           lambda p: np.zeros(4, bool), **_IN_TOP_K),
    OpCase("top_k_1d", lambda x: list(top_k(x, 3)), [_distinct(7)], lambda x: _np_top_k(x, 3)),
    OpCase("top_k_3d", lambda x: list(top_k(x, 2)), [_distinct(2, 3, 5)],
           lambda x: _np_top_k(x, 2)),
    OpCase("top_k_all", lambda x: list(top_k(x, 4)), [_distinct(3, 4)],
           lambda x: _np_top_k(x, 4)),
    OpCase("top_k_zero", lambda x: list(top_k(x, 0)), [_distinct(3, 4)],
           lambda x: _np_top_k(x, 0), grad=False),  # TF's gradient: Reshape [-1, 0] fails
    OpCase("top_k_int64_index", lambda x: list(top_k(x, 2, index_type=tf.int64)),
           [_distinct(2, 4)], lambda x: [_np_top_k(x, 2)[0], _np_top_k(x, 2)[1].astype(np.int64)]),
    OpCase("top_k_int_ties", lambda x: list(top_k(x, 3)),
           [np.array([[1, 3, 3, 2, 3], [5, 5, 5, 5, 5]], np.int32)],
           lambda x: [np.array([[3, 3, 3], [5, 5, 5]], np.int32),
                      np.array([[1, 2, 4], [0, 1, 2]], np.int32)], grad=False),
    OpCase("sort_last", lambda x: sort(x), [_distinct(3, 5)], lambda x: _np_sort(x, -1)),
    OpCase("sort_axis0_desc", lambda x: sort(x, axis=0, direction="DESCENDING"),
           [_distinct(4, 3)], lambda x: _np_sort(x, 0, descending=True)),
    OpCase("sort_axis1_of_3d", lambda x: sort(x, axis=1), [_distinct(2, 4, 3)],
           lambda x: _np_sort(x, 1)),
    OpCase("argsort_last", lambda x: argsort(x), [_distinct(3, 5)],
           lambda x: _np_sort(x, -1, arg=True), grad=False),
    OpCase("argsort_axis0_desc", lambda x: argsort(x, axis=0, direction="DESCENDING"),
           [_distinct(4, 3)], lambda x: _np_sort(x, 0, descending=True, arg=True), grad=False),
    OpCase("argsort_stable_ties", lambda x: argsort(x, stable=True),
           [np.array([3, 1, 1, 2, 1], np.int32)], lambda x: np.array([1, 2, 4, 3, 0], np.int32),
           grad=False),
    OpCase("argsort_desc_stable_ties", lambda x: argsort(x, direction="DESCENDING"),
           [np.array([3.0, 1, 1, 2])], lambda x: np.array([0, 3, 1, 2], np.int32), grad=False),
    OpCase("sort_int32_min", lambda x: sort(x),
           [np.array([3, 1, -2**31, 2], np.int32)],
           lambda x: np.array([-2**31, 1, 2, 3], np.int32), grad=False),
    OpCase("sort_uint8", lambda x: [sort(x), argsort(x)],
           [np.array([3, 255, 0, 2], np.uint8)],
           lambda x: [np.array([0, 2, 3, 255], np.uint8), np.array([2, 3, 0, 1], np.int32)],
           grad=False),
    OpCase("boolean_mask_1d", lambda x: boolean_mask(x, [True, False, True, True]),
           [_distinct(4)], lambda x: x[[0, 2, 3]], static_shape_exact=False),
    OpCase("boolean_mask_rows", lambda x: boolean_mask(x, np.array([False, True, True])),
           [_distinct(3, 2)], lambda x: x[[1, 2]], static_shape_exact=False),
    OpCase("boolean_mask_2d_mask_axis1",
           lambda x: boolean_mask(x, np.array([[True, False], [False, True], [True, True]]),
                                  axis=1),
           [_distinct(2, 3, 2, 2)],
           lambda x: x.reshape(2, 6, 2)[:, [0, 3, 4, 5]], static_shape_exact=False),
    OpCase("boolean_mask_int", lambda x: boolean_mask(x, [True, False, True], axis=1),
           [np.array([[1, 2, 3], [4, 5, 6]], np.int32)],
           lambda x: np.array([[1, 3], [4, 6]], np.int32), grad=False,
           static_shape_exact=False),
]



def test_top_k_static_shapes_and_errors_as_tf():
    with Graph().as_default():
        v, i = top_k(tf.compat.v1.placeholder(tf.float32, [None, 4]), 2)
        assert v.shape.as_list() == [None, 2] and i.shape.as_list() == [None, 2]
        assert i.dtype is tf.int32 and v.op.type == "TopKV2" and v.op.name == "TopKV2"
        v, _ = top_k(tf.compat.v1.placeholder(tf.float32, [None, 4]),
                     tf.compat.v1.placeholder(tf.int32, []))
        assert v.shape.as_list() == [None, None]
        with pytest.raises(ValueError, match="input must have last dimension >= k = 3 but is 2"):
            top_k(tf.zeros([5, 2]), 3)
        with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
            top_k(tf.zeros([]), 1)
        with pytest.raises(ValueError, match="Dimension size, given by scalar input 1, must be "
                                             "non-negative but is -1"):
            top_k(tf.zeros([5, 2]), -1)
    with pytest.raises(InvalidArgumentError, match=r"input must have at least k columns. Had 2, "
                                                   r"needed 3 \[Op:TopKV2\]"):
        top_k(tf.zeros([5, 2]), 3)


def test_sort_graph_is_tfs():
    with Graph().as_default() as g:
        sort(tf.zeros([2, 3, 4]), axis=1)
    types = [op.type for op in g.get_operations() if op.type != "Const"]
    assert types == ["Neg", "StridedSlice", "Transpose", "TopKV2", "Transpose", "Neg"]
    with pytest.raises(ValueError, match="Argument `direction` should be one of ASCENDING, "
                                         "DESCENDING. Received: direction=UP"):
        sort([3, 1, 2], direction="UP")


def test_boolean_mask_graph_shapes_and_errors_as_tf():
    with Graph().as_default() as g:
        out = boolean_mask(tf.zeros([2, 3, 4]), tf.compat.v1.placeholder(tf.bool, [3, 4]), axis=1)
        assert out.shape.as_list() == [2, None] and out.name == "boolean_mask/GatherV2:0"
        out = boolean_mask(tf.zeros([2, 3, 4]), tf.compat.v1.placeholder(tf.bool, [None]), axis=1)
        assert out.shape.as_list() == [2, None, 4]
        ops = [op.type for op in g.get_operations()]
        assert {"Prod", "Reshape", "Where", "Squeeze", "GatherV2"} <= set(ops)
    with pytest.raises(ValueError, match="mask cannot be scalar."):
        boolean_mask([1, 2, 3], True)
    with pytest.raises(ValueError, match=r"Shapes \(3,\) and \(2,\) are incompatible"):
        boolean_mask([1, 2, 3], [True, False])


def test_exports():
    assert tf.math.top_k is top_k and tf.nn.top_k is top_k
    assert tf.sort is sort and tf.argsort is argsort and tf.boolean_mask is boolean_mask
    assert tf.compat.v1.sort is sort and tf.compat.v1.boolean_mask is boolean_mask
    assert tf.compat.v1.nn.top_k is top_k


def test_in_top_k_errors_are_tensorflows():
    p = tf.constant(_PREDICTIONS, tf.float32)
    with pytest.raises(InvalidArgumentError, match="First dimension of predictions 4 must "
                                                   "match length of targets 2"):
        tf.nn.in_top_k(tf.constant([1, 2]), p, 1)
    with Graph().as_default():
        with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
            tf.nn.in_top_k([1], tf.constant([1.0, 2.0]), 1)
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 4 and 2"):
            tf.nn.in_top_k([1, 2], tf.constant(_PREDICTIONS, tf.float32), 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="attr 'T' of float"):
        tf.nn.in_top_k([1.0, 2.0, 0.0, 1.0], p, 1)  # targets must be int32/int64
    with pytest.raises((TypeError, ValueError)):
        tf.nn.in_top_k([1, 2, 0, 1], tf.constant(_PREDICTIONS), 1)  # predictions float32 only

