"""Split / SplitV (`tf.split`), table-driven (see harness.py), plus TF's errors and shapes."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.ops.array_split import split
from tests.ops.harness import OpCase, run_plan

rng = np.random.default_rng(11)


def _r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


def _np_split(x, sizes, axis):
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis)


CASES = [
    OpCase("split_even_axis0", lambda x: split(x, 3), [_r(6, 2)],
           lambda x: np.split(x, 3, axis=0)),
    OpCase("split_even_axis1", lambda x: split(x, 2, axis=1), [_r(2, 4, 3)],
           lambda x: np.split(x, 2, axis=1)),
    OpCase("split_neg_axis", lambda x: split(x, 3, axis=-1), [_r(2, 3)],
           lambda x: np.split(x, 3, axis=-1)),
    OpCase("split_one", lambda x: split(x, 1), [_r(2, 3)], lambda x: [x]),
    OpCase("splitv_sizes", lambda x: split(x, [1, 3, 2], axis=1), [_r(2, 6)],
           lambda x: _np_split(x, [1, 3, 2], 1)),
    OpCase("splitv_minus_one", lambda x: split(x, [2, -1], axis=0), [_r(5, 2)],
           lambda x: _np_split(x, [2, 3], 0)),
    OpCase("splitv_zero_piece", lambda x: split(x, [0, -1, 1], axis=-1), [_r(3, 4)],
           lambda x: _np_split(x, [0, 3, 1], 1)),
    OpCase("splitv_int64_sizes", lambda x: split(x, np.array([1, 1], np.int64)), [_r(2, 3)],
           lambda x: _np_split(x, [1, 1], 0)),
]



def test_gradient_of_some_pieces_fills_zeros():
    x = tf.constant(np.arange(6.0).reshape(3, 2))
    with tf.GradientTape() as tape:
        tape.watch(x)
        a, _, c = split(x, 3)
        y = tf.reduce_sum(a) + 2.0 * tf.reduce_sum(c)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[1, 1], [0, 0], [2, 2]])


def test_graph_layout_and_partial_shapes_as_tf():
    with Graph().as_default() as g:
        p = tf.compat.v1.placeholder(tf.float32, [None, 4])
        a, b = split(p, [1, -1], axis=1)
        assert (a.shape.as_list(), b.shape.as_list()) == ([None, 1], [None, 3])
        a, b = split(p, [1, -1], axis=0)
        assert (a.shape.as_list(), b.shape.as_list()) == ([1, 4], [None, 4])
        a, b = split(p, 2, axis=tf.compat.v1.placeholder(tf.int32, []))
        assert a.shape.as_list() == [None, None]
        a, b = split(tf.compat.v1.placeholder(tf.float32, None), [1, -1])
        assert a.shape.rank is None
        parts = split(tf.zeros([2, 3, 4]), [1, -1], axis=1)
        assert [p.shape.as_list() for p in parts] == [[2, 1, 4], [2, 2, 4]]
        assert parts[0].op.type == "SplitV" and parts[0].op.get_attr("Tlen") is tf.int32
        assert split(tf.zeros([4]), 2)[0].op.type == "Split"
        assert parts[0].name == "split_4:0" and g is not None


X52 = np.zeros((5, 2))

BUILD_ERRORS = [
    (lambda: split(tf.constant(X52), 2),
     "Dimension size must be evenly divisible by 2 but is 5\n\tNumber of ways to split should "
     "evenly divide the split dimension for '{{node split}} = Split"),
    (lambda: split(tf.constant(X52), 2, axis=2),
     r"Dimension size, given by scalar input 2 must be in range \[-2, 2\)"),
    (lambda: split(tf.constant(X52), 2, axis=-3),
     r"Dimension size, given by scalar input -3 must be in range \[-2, 2\)"),
    (lambda: split(tf.constant(X52), [1, 2]),
     r"can't split axis of size 5 into pieces of size \[1,2\]"),
    (lambda: split(tf.constant(X52), [1, -1, -1]), "size_splits can only have one -1"),
    (lambda: split(tf.constant(X52), [1, 7, -1]), "Split size at index 2 must be >= 0. Got: -3"),
    (lambda: split(tf.constant(X52), tf.compat.v1.placeholder(tf.int32, [None])),
     "Cannot infer argument `num` from shape"),
    (lambda: split(tf.constant(X52), np.array(2, np.int32)),
     "Rank-0 tensors are not supported"),
]


@pytest.mark.parametrize("fn,match", BUILD_ERRORS, ids=[m[:40] for _, m in BUILD_ERRORS])
def test_build_time_errors(fn, match):
    with Graph().as_default():
        with pytest.raises(ValueError, match=match if "{{" not in match else None) as info:
            fn()
        if "{{" in match:
            assert match in str(info.value)


RUN_ERRORS = [
    (lambda x: split(x, 2), "Number of ways to split should evenly divide the split dimension, "
     r"but got split_dim 0 \(size = 5\) and num_split 2", "Split"),
    (lambda x: split(x, 2, axis=2), r"-input rank\(-2\) <= split_dim < input rank \(2\), but "
     "got 2", "Split"),
    (lambda x: split(x, [1, 2]), "Determined shape must either match input shape along "
     "split_dim exactly if fully specified, or be less than the size of the input along "
     r"split_dim if not fully specified.  Got: 3", "SplitV"),
    (lambda x: split(x, [1, -1, -1]), "There can only be one -1 in the input.", "SplitV"),
]


@pytest.mark.parametrize("fn,match,op", RUN_ERRORS, ids=[r[1][:30] for r in RUN_ERRORS])
def test_eager_run_time_errors(fn, match, op):
    with pytest.raises(InvalidArgumentError, match=match) as info:
        fn(tf.constant(X52))
    assert f"[Op:{op}]" in str(info.value)


@pytest.mark.parametrize("fn,match,op", RUN_ERRORS, ids=[r[1][:30] for r in RUN_ERRORS])
def test_graph_run_time_errors(fn, match, op):
    g = Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float64, None)
        out = fn(p)
    with pytest.raises(InvalidArgumentError, match=match) as info:
        run_plan(g, [p], out, [X52])
    assert info.value.op is not None and info.value.op.type == op
