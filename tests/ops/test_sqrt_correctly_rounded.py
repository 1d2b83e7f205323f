"""float32 and float64 `tf.sqrt` are correctly rounded, as TensorFlow's (the CPU's sqrt
instruction): every float32 result equals the float64 root rounded to float32, every float64
one NumPy's (ATen's CPU kernel is an ulp off for about one float32 in six)."""

import numpy as np

import ndflow as tf


def _reference(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.sqrt(x.astype(np.float64)).astype(np.float32)


def test_eager_sqrt_is_correctly_rounded():
    x = np.random.RandomState(0).uniform(0, 10, 4096).astype(np.float32)
    x[0] = float.fromhex("0x1.c7ae26p-3")   # Adagrad's denominator in the migration guide
    np.testing.assert_array_equal(tf.sqrt(tf.constant(x)).numpy(), _reference(x))
    assert float(tf.sqrt(tf.constant(x[0])).numpy()).hex() == "0x1.e3051e0000000p-2"


def test_sqrt_in_a_function_is_correctly_rounded():
    x = np.random.RandomState(1).uniform(0, 1e4, (64, 64)).astype(np.float32)
    f = tf.function(lambda a: tf.sqrt(a))
    out = f(tf.constant(x))
    assert out.dtype == tf.float32 and out.shape == (64, 64)
    np.testing.assert_array_equal(out.numpy(), _reference(x))


def test_sqrt_special_values():
    x = np.array([0.0, -0.0, np.inf, -1.0, np.nan, 2e-38], np.float32)   # TF flushes denormals
    got = tf.sqrt(tf.constant(x)).numpy()
    np.testing.assert_array_equal(got, _reference(x))
    assert np.signbit(got[1])
    assert tf.sqrt(tf.constant(np.float32(1e-45))).numpy() == 0.0   # TF flushes denormals


def test_float64_sqrt_is_correctly_rounded():
    x = np.random.RandomState(3).uniform(0, 10, 4096)
    np.testing.assert_array_equal(tf.sqrt(tf.constant(x)).numpy(), np.sqrt(x))
    f = tf.function(lambda a: tf.sqrt(a))
    np.testing.assert_array_equal(f(tf.constant(x)).numpy(), np.sqrt(x))
    special = tf.sqrt(tf.constant([5e-324, -5e-324, -0.0, np.inf], tf.float64)).numpy()
    np.testing.assert_array_equal(special, [0.0, -0.0, -0.0, np.inf])   # TF flushes denormals
    assert np.signbit(special[1]) and np.signbit(special[2])
