"""tf.math.bincount, tf.histogram_fixed_width, tf.math.confusion_matrix, tf.repeat and
tf.random.categorical, against NumPy (values checked with TF 2.21), with TF's errors."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from tests.ops.harness import OpCase

rng = np.random.default_rng(4)
_ARR = np.array([1, 1, 3, 0, 3, 3])
_W = rng.uniform(0.5, 1.5, 6)
def _np_confusion(labels, predictions, n, weights=None):
    out = np.zeros((n, n))
    for i, (a, b) in enumerate(zip(labels, predictions)):
        out[a, b] += 1 if weights is None else weights[i]
    return out if weights is not None else out.astype(np.int32)


# The number of bins comes from the values at run time: the static length is unknown.
_INTS = dict(grad=False, low_precision=False, static_shape_exact=False)

CASES = [
    OpCase("bincount", lambda: tf.math.bincount(_ARR), [], lambda: np.bincount(_ARR), **_INTS),
    OpCase("bincount_weights", lambda w: tf.math.bincount(_ARR, weights=w), [_W],
           lambda w: np.bincount(_ARR, weights=w), dtypes=(tf.float32, tf.float64), **_INTS),
    OpCase("bincount_min_max_length", lambda: tf.math.bincount(_ARR, minlength=6, maxlength=3),
           [], lambda: np.bincount(_ARR)[:3], **_INTS),
    OpCase("bincount_rows", lambda: tf.math.bincount([[1, 2], [2, 2]], axis=-1), [],
           lambda: np.array([[0, 1, 1], [0, 0, 2]]), **_INTS),
    OpCase("bincount_binary", lambda: tf.math.bincount(_ARR, binary_output=True), [],
           lambda: (np.bincount(_ARR) > 0).astype(np.int32), **_INTS),
    OpCase("histogram_fixed_width", lambda v: tf.histogram_fixed_width(v, [0.0, 5.0], nbins=5),
           [np.array([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0])], lambda v: np.array([2, 1, 1, 0, 2]),
           dtypes=(tf.float32,), **_INTS),  # value_range is float32, as in TF
    OpCase("confusion_matrix", lambda: tf.math.confusion_matrix([1, 2, 4], [2, 2, 4]), [],
           lambda: _np_confusion([1, 2, 4], [2, 2, 4], 5), **_INTS),
    OpCase("confusion_matrix_weights", lambda w: tf.math.confusion_matrix(
        [1, 2, 0], [2, 2, 0], num_classes=3, weights=w, dtype=w.dtype), [_W[:3]],
           lambda w: _np_confusion([1, 2, 0], [2, 2, 0], 3, w), dtypes=(tf.float32,),
           grad=False, low_precision=False),
    OpCase("repeat_scalar_flat", lambda x: tf.repeat(x, 2), [rng.normal(size=(2, 3))],
           lambda x: np.repeat(x, 2), static_shape_exact=False),
    OpCase("repeat_counts_axis0", lambda x: tf.repeat(x, [1, 0, 3], axis=0),
           [rng.normal(size=(3, 2))], lambda x: np.repeat(x, [1, 0, 3], axis=0),
           static_shape_exact=False),
    OpCase("repeat_axis1", lambda x: tf.repeat(x, [2, 1], axis=1), [rng.normal(size=(2, 2))],
           lambda x: np.repeat(x, [2, 1], axis=1), static_shape_exact=False),
    # one count for every slice: TF's tile-and-reshape path (its gradient a sum)
    OpCase("repeat_scalar_image_rows", lambda x: tf.repeat(x, 2, axis=1),
           [rng.normal(size=(2, 3, 2, 2))], lambda x: np.repeat(x, 2, axis=1),
           static_shape_exact=False),
    OpCase("repeat_scalar_negative_axis", lambda x: tf.repeat(x, 3, axis=-1),
           [rng.normal(size=(2, 3))], lambda x: np.repeat(x, 3, axis=-1),
           static_shape_exact=False),
    OpCase("repeat_one_element_counts", lambda x: tf.repeat(x, [2], axis=0),
           [rng.normal(size=(3, 2))], lambda x: np.repeat(x, 2, axis=0),
           static_shape_exact=False),
    OpCase("repeat_zero_times", lambda x: tf.repeat(x, 0, axis=1), [rng.normal(size=(2, 3))],
           lambda x: np.repeat(x, 0, axis=1), grad=False, static_shape_exact=False),
]


def test_repeat_with_one_count_tiles_instead_of_gathering():
    # TF's repeat_with_axis: expand, tile and reshape for a scalar count; its gradient sums
    # the copies where a gather's would scatter them (Keras' UpSampling2D repeats rows so)
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 4, None, 3])
        y = tf.repeat(x, 2, axis=2)
        assert y.shape.as_list() == [None, 4, None, 3]
        (dx,) = tf.compat.v1.gradients(tf.reduce_sum(y * y), [x])
    types = {op.type for op in g.get_operations()}
    assert "Tile" in types and "GatherV2" not in types and "UnsortedSegmentSum" not in types
    value = rng.normal(size=(2, 4, 5, 3)).astype(np.float32)
    with tf.compat.v1.Session(graph=g) as sess:
        got, grad = sess.run([y, dx], {x: value})
    np.testing.assert_array_equal(got, np.repeat(value, 2, axis=2))
    np.testing.assert_allclose(grad, 4 * value, rtol=1e-6)   # d/dx sum(2 copies of x^2)


def test_categorical_draws_each_class_as_often_as_its_probability():
    tf.random.set_seed(3)
    probabilities = np.array([[0.1, 0.9], [0.99, 0.01], [0.2, 0.3]])
    probabilities[2] = [0.4, 0.6]
    draws = tf.random.categorical(tf.math.log(probabilities), 4000, seed=1)
    assert draws.dtype is tf.int64 and draws.shape.as_list() == [3, 4000]
    np.testing.assert_allclose(draws.numpy().mean(1), probabilities[:, 1], atol=0.03)
    v1_draws = tf.compat.v1.multinomial(tf.math.log(probabilities), 10, output_dtype=tf.int32)
    assert v1_draws.dtype is tf.int32
    never = tf.random.categorical([[0.0, -np.inf]], 50)  # a -inf logit is never drawn
    assert not np.any(never.numpy())


@pytest.mark.parametrize("call,error,message", [
    (lambda: tf.math.bincount([-1, 2]), InvalidArgumentError, "Input arr must be non-negative!"),
    (lambda: tf.math.bincount([1], weights=[1.0], binary_output=True), ValueError,
     "Arguments `binary_output` and `weights` are mutually exclusive"),
    (lambda: tf.math.bincount([1], axis=1), ValueError, "Unsupported value for argument axis=1"),
    (lambda: tf.random.categorical([1.0, 2.0], 3), InvalidArgumentError,
     r"logits should be a matrix, got shape \[2\]"),
    (lambda: tf.math.confusion_matrix([1, 5], [2, 2], num_classes=3), InvalidArgumentError,
     "`labels` out of bound"),
    (lambda: tf.histogram_fixed_width([1.0], [1.0, 0.0]), InvalidArgumentError,
     r"value_range should satisfy value_range\[0\] < value_range\[1\]"),
])
def test_errors_are_tensorflows(call, error, message):
    with pytest.raises(error, match=message):
        call()
