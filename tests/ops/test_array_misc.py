"""unravel_index, invert_permutation, broadcast_dynamic/static_shape, bitcast, saturate_cast,
parallel_stack, guarantee_const and histogram_fixed_width_bins: values against NumPy,
shapes and messages as TensorFlow 2.21 gives them."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.ops.array_core import placeholder
from tests.ops.harness import OpCase

rng = np.random.default_rng(17)


def _bins_ref(v, r, n):
    idx = np.floor(n * (v - r[0]) / (r[1] - r[0]))
    return np.clip(idx, 0, n - 1).astype(np.int32)


CASES = [
    OpCase("unravel_index_vector", lambda i, d: tf.unravel_index(i, d),
           [np.array([1, 5, 4, 0], np.int32), np.array([2, 3], np.int32)],
           lambda i, d: np.stack(np.unravel_index(i, d)).astype(np.int32)),
    OpCase("unravel_index_scalar_int64", lambda i, d: tf.unravel_index(i, d),
           [np.array(22, np.int64), np.array([2, 3, 4], np.int64)],
           lambda i, d: np.array(np.unravel_index(i, d), np.int64)),
    OpCase("invert_permutation", lambda p: tf.math.invert_permutation(p),
           [np.array([3, 0, 2, 1], np.int32)], lambda p: np.argsort(p).astype(np.int32)),
    OpCase("broadcast_dynamic_shape", lambda a, b: tf.broadcast_dynamic_shape(a, b),
           [np.array([2, 1, 4], np.int32), np.array([5, 1], np.int32)],
           lambda a, b: np.array([2, 5, 4], np.int32)),
    OpCase("bitcast_float_to_uint8", lambda x: tf.bitcast(x, tf.uint8),
           [np.array([[1.0, -2.5], [3.0, 0.0]], np.float32)],
           lambda x: np.asarray(x, np.float32).view(np.uint8).reshape(2, 2, 4),
           dtypes=(tf.float32,), low_precision=False, grad=False),
    OpCase("bitcast_int8_to_int32", lambda x: tf.bitcast(x, tf.int32),
           [np.arange(-8, 8, dtype=np.int8).reshape(2, 2, 4)],
           lambda x: x.view(np.int32).reshape(2, 2)),
    OpCase("bitcast_same_size", lambda x: tf.bitcast(x, tf.float32),
           [np.array([1065353216, -1082130432], np.int32)],
           lambda x: x.view(np.float32)),
    OpCase("saturate_cast_float_to_uint8", lambda x: tf.saturate_cast(x, tf.uint8),
           [np.array([-1e10, 1.5, 300.0, 254.9])],
           lambda x: np.array([0, 1, 255, 254], np.uint8), dtypes=(tf.float64,),
           low_precision=False, grad=False),
    OpCase("saturate_cast_int_to_uint8", lambda x: tf.dtypes.saturate_cast(x, tf.uint8),
           [np.array([-5, 7, 300], np.int32)], lambda x: np.array([0, 7, 255], np.uint8)),
    OpCase("histogram_fixed_width_bins",
           lambda v, r: tf.histogram_fixed_width_bins(v, r, nbins=5),
           [np.array([[-1.0, 0.0, 1.5], [2.0, 5.0, 15.0]]), np.array([0.0, 5.0])],
           lambda v, r: _bins_ref(v, r, 5), grad=False),
    OpCase("histogram_fixed_width_bins_random",
           lambda v, r: tf.histogram_fixed_width_bins(v, r, nbins=7),
           [rng.uniform(-1.2, 1.2, (20,)), np.array([-1.0, 1.0])],
           lambda v, r: _bins_ref(v, r, 7), grad=False, low_precision=False),
    OpCase("guarantee_const", lambda x: tf.guarantee_const(x) * 2.0, [rng.normal(size=(2, 3))],
           lambda x: 2 * x, grad=False),
]


def test_saturate_cast_float32_to_int32_and_nonfinite():
    got = tf.saturate_cast(np.array([-1e10, 1e10, np.inf, -np.inf], np.float32), tf.int32)
    # TF nudges the limit into float32: 2147483520, not 2147483647.
    np.testing.assert_array_equal(got.numpy(), [-2147483648, 2147483520, 2147483520,
                                                -2147483648])
    got = tf.saturate_cast(np.array([np.inf, 1.0], np.float32), tf.uint8)
    np.testing.assert_array_equal(got.numpy(), [255, 1])


def test_bitcast_shapes_and_errors():
    with Graph().as_default():
        assert tf.bitcast(placeholder(tf.float32, [None, 2]), tf.uint8).shape.as_list() == \
            [None, 2, 4]
        assert tf.bitcast(placeholder(tf.uint8, [3, 4]), tf.int32).shape.as_list() == [3]
        with pytest.raises(ValueError, match="Cannot bitcast from 4 to 3 due to shape. 2 does "
                                             "not match 4"):
            tf.bitcast(placeholder(tf.uint8, [3, 2]), tf.int32)
    with pytest.raises(InvalidArgumentError, match="Cannot bitcast from 4 to 1"):
        tf.bitcast(np.ones((2, 3), np.uint8), tf.float32)
    with pytest.raises((TypeError, ValueError, InvalidArgumentError)):
        tf.bitcast(np.ones((2, 4), np.uint8), tf.bool)


def test_unravel_index_shapes_and_errors():
    with Graph().as_default():
        i = placeholder(tf.int32, [None])
        assert tf.unravel_index(i, [2, 3]).shape.as_list() == [2, None]
        with pytest.raises(ValueError, match="at most rank 1"):
            tf.unravel_index(placeholder(tf.int32, [2, 2]), [2, 3])
    with pytest.raises(InvalidArgumentError, match="index is out of bound as with dims"):
        tf.unravel_index([1, 7], [2, 3])
    with pytest.raises(InvalidArgumentError, match="index is out of bound as with dims"):
        tf.unravel_index(-1, [2, 3])
    with pytest.raises(InvalidArgumentError, match="dims contains zero at index 1"):
        tf.unravel_index([1], [2, 0])


def test_invert_permutation_errors():
    with pytest.raises(InvalidArgumentError, match="0 is duplicated in the input."):
        tf.math.invert_permutation([0, 0, 1])
    with pytest.raises(InvalidArgumentError, match="3 is not between 0 and 3"):
        tf.compat.v1.invert_permutation([0, 3, 1])
    with pytest.raises(InvalidArgumentError, match="rank 1"):
        tf.math.invert_permutation([[0]])


def test_broadcast_shapes():
    with pytest.raises(InvalidArgumentError, match=r"Incompatible shapes: \[2,3\] vs. \[4\]"):
        tf.broadcast_dynamic_shape([2, 3], [4])
    with Graph().as_default():
        out = tf.broadcast_dynamic_shape(placeholder(tf.int32, [2]), [1, 3, 4])
        assert out.shape.as_list() == [3]
        assert tf.broadcast_dynamic_shape(placeholder(tf.int32, [None]), [3]).shape.as_list() \
            == [None]
    s = tf.broadcast_static_shape(tf.TensorShape([2, None, 1]), tf.TensorShape([1, 3, None]))
    assert s.as_list() == [2, 3, None]
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting. .* Received: "
                                         r"\(2, 3\) and \(4,\)."):
        tf.broadcast_static_shape(tf.TensorShape([2, 3]), tf.TensorShape([4]))


def test_parallel_stack():
    with pytest.raises(RuntimeError, match="not compatible with eager execution"):
        tf.parallel_stack([1, 2])
    with Graph().as_default() as g:
        a = placeholder(tf.float32, [2, 3])
        y = tf.parallel_stack([a, a * 2.0, a + 1.0])
        assert y.op.type == "ParallelConcat" and y.shape.as_list() == [3, 2, 3]
    x = rng.normal(size=(2, 3)).astype(np.float32)
    with tf.compat.v1.Session(graph=g) as sess:
        np.testing.assert_allclose(sess.run(y, {a: x}), np.stack([x, 2 * x, x + 1]), rtol=1e-6)


def test_guarantee_const_is_stateful_with_no_gradient():
    with Graph().as_default():
        x = placeholder(tf.float32, [2])
        y = tf.guarantee_const(x)
        assert y.op.op_def.is_stateful
        with pytest.raises(LookupError):
            tf.gradients(y, [x])

# None of these ops has a gradient in TF (integer outputs, or no gradient registered).
GRADIENT_CASES = []
