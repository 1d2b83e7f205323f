"""tf.py_function / tf.numpy_function / tf.compat.v1.py_func: the Python function runs when
the op runs (eagerly, in tf.function, in Sessions), its results take `Tout`, py_function is
differentiable (against the analytic derivative), and Python exceptions become TensorFlow's
error types as TF 2.21 maps them."""

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1


def test_py_function_eager_function_and_session():
    calls = []

    def double(x):
        calls.append(type(x).__name__)
        return x * 2

    assert float(tf.py_function(double, [tf.constant(3.0)], tf.float32)) == 6.0
    a, b = tf.py_function(lambda x: [x, x + 1], [tf.constant(3.0)], [tf.float32, tf.float32])
    assert (float(a), float(b)) == (3.0, 4.0)

    @tf.function
    def f(x):
        y = tf.py_function(double, [x], tf.float32)
        assert y.shape.rank is None  # unknown until it runs, as TF
        return y + 1

    np.testing.assert_allclose(f(tf.constant([1.0, 2.0])).numpy(), [3.0, 5.0])
    np.testing.assert_allclose(f(tf.constant([5.0, 6.0])).numpy(), [11.0, 13.0])
    assert calls == ["EagerTensor"] * 3  # runs on every call, with eager tensors
    with tf.Graph().as_default():
        p = v1.placeholder(tf.float32, [None])
        out = tf.py_function(double, [p], tf.float32)
        with v1.Session() as sess:
            np.testing.assert_allclose(sess.run(out, {p: [1.5]}), [3.0])
    assert tf.py_function(lambda x: None, [tf.constant(1.0)], []) == []


def test_numpy_function_gets_arrays_and_returns_tout():
    seen = []

    def sort(a):
        seen.append(type(a))
        return np.sort(a)

    g = tf.function(lambda x: tf.numpy_function(sort, [x], tf.float32))
    np.testing.assert_array_equal(g(tf.constant([3.0, 1.0, 2.0])).numpy(), [1.0, 2.0, 3.0])
    assert seen == [np.ndarray]
    out = tf.numpy_function(lambda x: np.int64(3), [tf.constant(1.0)], tf.float32)
    assert out.dtype is tf.float32 and float(out) == 3.0 and out.shape.rank == 0
    s = tf.numpy_function(lambda x: type(x).__name__.encode(), [tf.constant(1.0)], tf.string)
    assert s.numpy() == b"ndarray"
    with tf.Graph().as_default():
        legacy = v1.py_func(lambda a: a + 1, [tf.constant(1.0)], tf.float32)
        assert legacy.op.type == "PyFunc"
        assert tf.numpy_function(np.abs, [tf.constant(-1.0)], tf.float32,
                                 stateful=False).op.type == "PyFuncStateless"
        with v1.Session() as sess:
            assert sess.run(legacy) == 2.0


def test_py_function_gradients():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = tf.py_function(lambda a: a * a, [x], tf.float32)
    assert float(tape.gradient(y, x)) == 6.0

    @tf.function
    def cube_grad(v):
        with tf.GradientTape() as t:
            t.watch(v)
            out = tf.py_function(lambda a: a * a * a, [v], tf.float32)
        return t.gradient(out, v)
    assert float(cube_grad(tf.constant(2.0))) == 12.0

    with tf.Graph().as_default():
        p = v1.placeholder(tf.float64, [2])
        y = tf.py_function(lambda a: tf.sin(a) * a, [p], tf.float64)
        (g,) = tf.gradients(tf.reduce_sum(y), [p])
        with v1.Session() as sess:
            xs = np.array([0.3, 1.2])
            np.testing.assert_allclose(sess.run(g, {p: xs}), np.cos(xs) * xs + np.sin(xs))


def test_python_exceptions_become_tensorflow_errors():
    with pytest.raises(tf.errors.UnknownError, match="ZeroDivisionError: division by zero"):
        tf.py_function(lambda x: 1 / 0, [tf.constant(1.0)], tf.float32)

    def bad_value(x):
        raise ValueError("no good")
    with pytest.raises(tf.errors.InvalidArgumentError, match="ValueError: no good"):
        tf.function(lambda x: tf.py_function(bad_value, [x], tf.float32))(tf.constant(1.0))
    with pytest.raises(tf.errors.OutOfRangeError, match="StopIteration"):
        tf.numpy_function(lambda x: next(iter([])), [tf.constant(1.0)], tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="returns 1 values, but expects "
                                                             "to see 2 values"):
        tf.py_function(lambda x: x, [tf.constant(1.0)], [tf.float32, tf.float32])


def test_py_function_and_numpy_function_as_decorators():
    @tf.py_function(Tout=tf.float32)
    def mul(x, y):
        return x * y

    assert mul.__name__ == "mul" and float(mul(tf.constant(2.0), 3.0)) == 6.0
    assert float(tf.function(lambda x: mul(x, x))(tf.constant(3.0))) == 9.0

    @tf.numpy_function(Tout=tf.int64)
    def inc(x):
        return (x + 1).astype(np.int64)

    assert int(inc(np.int64(4))) == 5
    # TF 2.21's argument errors
    with pytest.raises(TypeError, match=r"Missing required argument: 'Tout'\n  If using "
                                        r"tf.py_function as a decorator, set `Tout`"):
        tf.py_function(lambda: 1.0, [])
    with pytest.raises(TypeError, match="Don't set the `inp` argument when using "
                                        r"tf.numpy_function as a decorator \(`func=None`\)."):
        tf.numpy_function(inp=[1.0], Tout=tf.float32)
    with pytest.raises(TypeError, match="Missing argument `inp`:"):
        tf.py_function(lambda: 1.0, Tout=tf.float32)
