"""SpaceToBatchND / BatchToSpaceND and their v1/v2 wrappers, table-driven (harness.py);
the references move elements one by one in NumPy."""

import itertools

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.ops.array_core import placeholder
from tests.ops.harness import OpCase

rng = np.random.default_rng(13)


def _s2b_ref(x, block, pads):
    m = len(block)
    pad = [(0, 0)] + [tuple(p) for p in pads] + [(0, 0)] * (x.ndim - 1 - m)
    xp = np.pad(x, pad)
    n = x.shape[0]
    out_sp = [xp.shape[1 + i] // b for i, b in enumerate(block)]
    out = np.zeros((n * int(np.prod(block)), *out_sp, *x.shape[1 + m:]), x.dtype)
    for offs in itertools.product(*[range(b) for b in block]):
        k = 0
        for o, b in zip(offs, block):
            k = k * b + o
        for pos in itertools.product(*[range(s) for s in out_sp]):
            src = tuple(p * b + o for p, b, o in zip(pos, block, offs))
            out[(slice(k * n, (k + 1) * n), *pos)] = xp[(slice(None), *src)]
    return out


def _b2s_ref(y, block, crops):
    m = len(block)
    n = y.shape[0] // int(np.prod(block))
    sp = [y.shape[1 + i] * b for i, b in enumerate(block)]
    full = np.zeros((n, *sp, *y.shape[1 + m:]), y.dtype)
    for offs in itertools.product(*[range(b) for b in block]):
        k = 0
        for o, b in zip(offs, block):
            k = k * b + o
        for pos in itertools.product(*[range(s) for s in y.shape[1:1 + m]]):
            dst = tuple(p * b + o for p, b, o in zip(pos, block, offs))
            full[(slice(None), *dst)] = y[(slice(k * n, (k + 1) * n), *pos)]
    return full[(slice(None), *[slice(c0, s - c1) for s, (c0, c1) in zip(sp, crops)])]


CASES = [
    OpCase("space_to_batch_nd_2d", lambda x: tf.space_to_batch_nd(x, [2, 2], [[0, 1], [1, 1]]),
           [rng.normal(size=(2, 5, 4, 3))], lambda x: _s2b_ref(x, [2, 2], [[0, 1], [1, 1]])),
    OpCase("space_to_batch_nd_1d_rest_dims",
           lambda x: tf.space_to_batch_nd(x, [3], [[1, 2]]), [rng.normal(size=(2, 6, 2, 2))],
           lambda x: _s2b_ref(x, [3], [[1, 2]])),
    OpCase("space_to_batch_nd_3d_int64_args",
           lambda x: tf.space_to_batch_nd(x, np.array([1, 2, 2], np.int64),
                                          np.array([[0, 0], [0, 0], [1, 1]], np.int64)),
           [rng.normal(size=(1, 2, 4, 2, 1))],
           lambda x: _s2b_ref(x, [1, 2, 2], [[0, 0], [0, 0], [1, 1]])),
    OpCase("batch_to_space_nd_2d",
           lambda x: tf.compat.v1.batch_to_space_nd(x, [2, 2], [[0, 1], [1, 0]]),
           [rng.normal(size=(8, 3, 2, 2))], lambda x: _b2s_ref(x, [2, 2], [[0, 1], [1, 0]])),
    OpCase("batch_to_space_v2_int_block", lambda x: tf.batch_to_space(x, 2, [[1, 0], [0, 0]]),
           [rng.normal(size=(4, 2, 3, 1))], lambda x: _b2s_ref(x, [2, 2], [[1, 0], [0, 0]])),
    OpCase("space_to_batch_v1", lambda x: tf.compat.v1.space_to_batch(x, [[0, 1], [1, 0]], 2),
           [rng.normal(size=(1, 3, 3, 2))], lambda x: _s2b_ref(x, [2, 2], [[0, 1], [1, 0]])),
    OpCase("batch_to_space_v1", lambda x: tf.compat.v1.batch_to_space(x, [[0, 1], [0, 0]], 2),
           [rng.normal(size=(4, 2, 2, 2))], lambda x: _b2s_ref(x, [2, 2], [[0, 1], [0, 0]])),
    OpCase("space_to_batch_nn_alias", lambda x: tf.nn.space_to_batch(x, [2], [[0, 0]]),
           [np.arange(8, dtype=np.int32).reshape(2, 4)], lambda x: _s2b_ref(x, [2], [[0, 0]]),
           grad=False),
]


def test_static_shapes():
    with Graph().as_default():
        x = placeholder(tf.float32, [None, 5, None, 3])
        assert tf.space_to_batch_nd(x, [2, 2], [[0, 1], [0, 0]]).shape.as_list() == \
            [None, 3, None, 3]
        p = placeholder(tf.int32, [2, 2])
        y = tf.space_to_batch_nd(placeholder(tf.float32, [1, 5, 4, 3]), [2, 2], p)
        assert y.shape.as_list() == [4, None, None, 3]
        with pytest.raises(ValueError, match="evenly divisible by 2 but is 5"):
            tf.space_to_batch_nd(placeholder(tf.float32, [1, 5, 4, 3]), [2, 2],
                                 [[0, 0], [0, 0]])
        with pytest.raises(ValueError, match="evenly divisible by 2 but is 3"):
            tf.batch_to_space(placeholder(tf.float32, [6, 5, 4, 3]), [2, 2], [[0, 0], [0, 0]])
        with pytest.raises(ValueError, match="Negative dimension size caused by subtracting 11 "
                                             "from 10"):
            tf.batch_to_space(placeholder(tf.float32, [8, 5, 4, 3]), [2, 2], [[0, 11], [0, 0]])
        with pytest.raises(ValueError, match="paddings cannot be negative"):
            tf.space_to_batch(placeholder(tf.float32, [8, 5, 4, 3]), [2, 2], [[0, -1], [0, 0]])
        with pytest.raises(ValueError, match="Shape must be at least rank 5 but is rank 4"):
            tf.space_to_batch(placeholder(tf.float32, [8, 5, 4, 3]), [2, 2, 2, 2],
                              [[0, 1], [0, 0], [0, 0], [0, 0]])


def test_kernel_errors():
    x = np.ones((1, 5, 4, 3), np.float32)
    with Graph().as_default() as g:
        block = placeholder(tf.int32, [2])
        pads = placeholder(tf.int32, [2, 2])
        xs = placeholder(tf.float32, [None, None, None, 3])
        s2b = tf.space_to_batch_nd(xs, block, pads)
        b2s = tf.compat.v1.batch_to_space_nd(xs, block, pads)
    with tf.compat.v1.Session(graph=g) as sess:
        with pytest.raises(InvalidArgumentError, match=r"padded_shape\[0\]=5 is not divisible "
                                                       r"by block_shape\[0\]=2"):
            sess.run(s2b, {xs: x, block: [2, 2], pads: [[0, 0], [0, 0]]})
        with pytest.raises(InvalidArgumentError, match="All values in block_shape must be "
                                                       "positive, got value, 0 at index 0"):
            sess.run(s2b, {xs: x, block: [0, 2], pads: [[0, 1], [0, 0]]})
        with pytest.raises(InvalidArgumentError, match="Paddings must be non-negative"):
            sess.run(s2b, {xs: x, block: [2, 2], pads: [[0, -1], [0, 0]]})
        with pytest.raises(InvalidArgumentError, match=r"Input batch dimension \(6\) is not "
                                                       r"divisible by product of block sizes"):
            sess.run(b2s, {xs: np.ones((6, 5, 4, 3)), block: [2, 2], pads: [[0, 0], [0, 0]]})
        with pytest.raises(InvalidArgumentError, match=r"cropped_shape\[0\]=-1 must be "
                                                       r"non-negative"):
            sess.run(b2s, {xs: np.ones((8, 5, 4, 3)), block: [2, 2], pads: [[0, 11], [0, 0]]})
        with pytest.raises(InvalidArgumentError, match="Crops must be non-negative"):
            sess.run(b2s, {xs: np.ones((8, 5, 4, 3)), block: [2, 2], pads: [[0, -1], [0, 0]]})


def test_gradient_ops_are_each_others_inverse():
    with Graph().as_default():
        x = placeholder(tf.float32, [2, 4, 4, 1])
        (dx,) = tf.gradients(tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]]), [x])
        assert dx.op.type == "BatchToSpaceND"


def test_required_space_to_batch_paddings():
    p, c = tf.required_space_to_batch_paddings([5, 4], [2, 3], [[1, 0], [0, 0]])
    np.testing.assert_array_equal(p.numpy(), [[1, 0], [0, 2]])
    np.testing.assert_array_equal(c.numpy(), [[0, 0], [0, 2]])
    with Graph().as_default() as g:
        size = placeholder(tf.int32, [2])
        p, c = tf.required_space_to_batch_paddings(size, [2, 3])
    with tf.compat.v1.Session(graph=g) as sess:
        pv, cv = sess.run([p, c], {size: [7, 9]})
    np.testing.assert_array_equal(pv, [[0, 1], [0, 0]])
    np.testing.assert_array_equal(cv, [[0, 1], [0, 0]])
