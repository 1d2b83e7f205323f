"""dtypes as TensorFlow 2.21 spells them: `tf.as_dtype` and every API taking a dtype, and the
dtype `tf.constant` infers. Expected values are TensorFlow 2.21's (checked with it)."""

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1


@pytest.mark.parametrize("value,expected", [
    ("float", tf.float32), ("float32", tf.float32), ("double", tf.float64),
    ("float64", tf.float64), ("half", tf.float16), ("float16", tf.float16),
    ("bfloat16", tf.bfloat16), ("int32", tf.int32), ("int64", tf.int64), ("uint8", tf.uint8),
    ("bool", tf.bool), ("string", tf.string),
    (1, tf.float32), (3, tf.int32), (9, tf.int64), (7, tf.string),  # DataType enums
    (np.float32, tf.float32), (np.float64, tf.float64), (np.int64, tf.int64),
    (np.bool_, tf.bool), (np.dtype("float16"), tf.float16), (np.dtype("int8"), tf.int8),
    (np.str_, tf.string), (np.bytes_, tf.string), (np.object_, tf.string),
    (np.dtype("U5"), tf.string), (np.dtype("S3"), tf.string),
    (float, tf.float32), (bool, tf.bool), (object, tf.string),
    (np.zeros(2, np.int16), tf.int16),  # anything with a NumPy dtype
])
def test_as_dtype_accepts_tensorflows_spellings(value, expected):
    assert tf.as_dtype(value) is expected
    assert tf.dtypes.as_dtype(value) is expected


@pytest.mark.parametrize("value", [int, str, bytes, "int", "DT_FLOAT", "float_32", None,
                                   [1], 1000])
def test_as_dtype_refuses_what_tensorflow_refuses(value):
    # TF 2.21: Python int and str are not dtypes ("int" neither); the message names the value.
    with pytest.raises(TypeError, match=r"Cannot convert the argument `type_value`: .* to a "
                                        r"TensorFlow DType\."):
        tf.as_dtype(value)


SPELLINGS = [("float", tf.float32), ("double", tf.float64), ("half", tf.float16),
             (np.float32, tf.float32), (float, tf.float32), (tf.float64, tf.float64)]

TAKES_A_DTYPE = {
    "placeholder": lambda d: v1.placeholder(d, [None, 784]),
    "zeros": lambda d: tf.zeros([2], d),
    "ones": lambda d: tf.ones([2], dtype=d),
    "zeros_like": lambda d: tf.zeros_like(tf.zeros([2]), dtype=d),
    "cast": lambda d: tf.cast(tf.constant([1, 2]), d),
    "constant": lambda d: tf.constant([1, 2], dtype=d),
    "convert_to_tensor": lambda d: tf.convert_to_tensor([1, 2], dtype=d),
    "Variable": lambda d: tf.Variable([1, 2], dtype=d),
    "get_variable": lambda d: v1.get_variable("w", [2], dtype=d,
                                              initializer=v1.zeros_initializer()),
    "range": lambda d: tf.range(3, dtype=d),
    "random.uniform": lambda d: tf.random.uniform([2], dtype=d),
    "random.normal": lambda d: tf.random.normal([2], dtype=d),
    "truncated_normal": lambda d: v1.truncated_normal([2], dtype=d),
    "one_hot": lambda d: tf.one_hot([0, 1], 2, dtype=d),
    "TensorSpec": lambda d: tf.TensorSpec([2], d),
}


@pytest.mark.parametrize("api", sorted(TAKES_A_DTYPE))
@pytest.mark.parametrize("spelling,expected", SPELLINGS, ids=str)
def test_every_dtype_argument_takes_the_spellings(api, spelling, expected):
    with tf.Graph().as_default():
        assert TAKES_A_DTYPE[api](spelling).dtype is expected


def test_tf1_tutorial_placeholder_runs():
    # The most common line of the TF1 MNIST tutorials.
    with tf.Graph().as_default():
        x = v1.placeholder("float", [None, 784])
        y = tf.reduce_sum(x, 1)
        with v1.Session() as sess:
            out = sess.run(y, {x: np.ones((2, 784))})
    np.testing.assert_array_equal(out, [784.0, 784.0])
    assert out.dtype == np.float32


@pytest.mark.parametrize("value,shape,dtype", [
    (0.1, [3], tf.float32), (1, [3], tf.int32), (2**40, [2], tf.int64), (True, [2], tf.bool),
    ([1.5, 2.5], [2, 1], tf.float32), (np.float64(0.1), [2], tf.float64),
    (np.int16(3), [2], tf.int16), ([], [0], tf.float32), ([], None, tf.float32),
    (0.1, None, tf.float32), (1, None, tf.int32), ([[1, 2]], None, tf.int32),
])
def test_constant_infers_tensorflows_dtype(value, shape, dtype):
    # TF 2.21: Python floats are float32 and ints int32 (int64 beyond int32), with or without
    # `shape`; NumPy values keep their dtype. (The TF1 deep-MNIST `bias_variable` helper.)
    for graph in (False, True):
        if graph:
            with tf.Graph().as_default():
                t = tf.constant(value, shape=shape)
        else:
            t = tf.constant(value, shape=shape)
        assert t.dtype is dtype, (graph, t.dtype)
        want = np.asarray(value)
        if shape is not None:
            want = want.reshape(shape) if want.size == np.prod(shape) else \
                np.broadcast_to(want, shape)
        assert t.shape.as_list() == list(want.shape)
    np.testing.assert_allclose(t.numpy() if hasattr(t, "numpy") else np.asarray(want),
                               want.astype(dtype.as_numpy_dtype))


def test_constant_refuses_a_huge_broadcast_before_allocating():
    with pytest.raises(ValueError, match="larger than 2GB"):
        tf.constant(1.0, shape=[2**40])


def test_constant_with_the_wrong_number_of_elements():
    with pytest.raises(TypeError, match=r"has 2 elements, but got `shape` \(3,\) with 3 "):
        tf.constant([1, 2], shape=[3])
