"""tf.debugging.assert_* and tf.debugging.Assert: eager checks raise TensorFlow's errors with
TensorFlow 2.21's messages (copied from TF 2.21 runs of the same calls); in tf.function and
Sessions they become Assert ops that fail when run; statically passing checks are NoOps."""

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1
X, Y = [1, 2, 3], [1, 5, 3]


def _message(fn) -> str:
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value)


def test_binary_asserts_eagerly_as_tensorflow():
    x, y = tf.constant(X), tf.constant(Y)
    assert tf.debugging.assert_equal(x, x) is None
    assert _message(lambda: tf.debugging.assert_equal(x, y, message="msg")) == (
        "InvalidArgumentError",
        "msg\nCondition x == y did not hold.\nIndices of first 1 different values:\n[[1]]\n"
        "Corresponding x values:\n[2]\nCorresponding y values:\n[5]\nFirst 3 elements of x:\n"
        "[1 2 3]\nFirst 3 elements of y:\n[1 5 3]")
    assert _message(lambda: tf.debugging.assert_less(x, y)) == (
        "InvalidArgumentError",
        "Condition x < y did not hold.\nIndices of first 2 different values:\n[[0]\n [2]]\n"
        "Corresponding x values:\n[1 3]\nCorresponding y values:\n[1 3]\nFirst 3 elements of "
        "x:\n[1 2 3]\nFirst 3 elements of y:\n[1 5 3]")
    assert tf.assert_greater(y + 1, x) is None and tf.debugging.assert_none_equal(x, x + 1) is None
    assert _message(lambda: tf.debugging.assert_positive(tf.constant([1.0, -1.0]))) == (
        "InvalidArgumentError",
        "\nCondition x > 0 did not hold element-wise:\nx (shape=(2,) dtype=float32) = \n"
        "['1.0', '-1.0']")
    assert tf.debugging.assert_non_negative(tf.constant([0.0, 2.0])) is None


def test_static_asserts_as_tensorflow():
    x = tf.constant(X)
    assert _message(lambda: tf.debugging.assert_rank(x, 2)) == (
        "ValueError", "Tensor  must have rank 2.  Received rank 1, shape (3,)")
    assert tf.debugging.assert_rank(x, 1) is None and tf.debugging.assert_rank_in(x, [1, 2]) is None
    assert _message(lambda: tf.debugging.assert_type(x, tf.float32)) == (
        "TypeError", "tensor must be of type tf.float32; got tf.int32")
    assert _message(lambda: tf.debugging.assert_integer(tf.constant(1.0))) == (
        "TypeError", "Expected \"x\" to be integer type.  Found: tensor of dtype <dtype: "
                     "'float32'>")
    assert _message(lambda: tf.debugging.assert_scalar(x)) == (
        "ValueError", "Expected scalar shape, saw shape: (3,).")
    assert _message(lambda: tf.debugging.assert_shapes(
        [(x, ("N",)), (tf.zeros([2, 2]), ("N", "N"))])) == (
        "ValueError", "Specified by tensor shape=(3,) dtype=int32 dimension 0.  Tensor "
                      "shape=(2, 2) dtype=float32 dimension 0 must have size 3.  Received size "
                      "2, shape (2, 2)")
    assert tf.debugging.assert_shapes([(x, ("N",)), (tf.zeros([3, 2]), ("N", 2))]) is None
    with pytest.raises(TypeError, match='to be a "proper" iterable'):
        tf.debugging.assert_proper_iterable(x)
    assert tf.debugging.assert_same_float_dtype([tf.constant(1.0)]) is tf.float32


def test_graph_asserts_of_failing_constants_raise_while_building():
    # TF's _assert_static: both sides known and failing is an InvalidArgumentError at graph
    # construction, message first (also an empty one), then the data with constants' values
    # (messages copied from TF 2.21 runs of the same calls)
    with tf.Graph().as_default():
        assert _message(lambda: v1.assert_greater_equal(tf.constant([1.5, -1.0]),
                                                        tf.constant(0.0), message="")) == (
            "InvalidArgumentError",
            "\nCondition x >= y did not hold element-wise:\nx (Const:0) = \n[ 1.5 -1. ]\n"
            "y (Const_1:0) = \n0.0")
        assert _message(lambda: v1.assert_greater_equal(
            tf.constant([1.5, -1.0]), 0.0, data=["d1", tf.constant([1, 2])], message="m")) == (
            "InvalidArgumentError", "m\nd1\n[1 2]")
        p = v1.placeholder(tf.float32, [2])   # unknown: checked when it runs
        assert v1.assert_greater_equal(p, 0.0).type == "Assert"


def test_assert_near_eagerly_as_tensorflow():
    assert tf.debugging.assert_near(tf.constant([1.0]), tf.constant([1.0 + 1e-7])) is None
    assert _message(lambda: tf.debugging.assert_near(tf.constant([1.0]), tf.constant([1.1]))) == (
        "InvalidArgumentError",
        "Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: b''\n"
        "b'x and y not equal to tolerance rtol = tf.Tensor(1.1920929e-06, shape=(), "
        "dtype=float32), atol = tf.Tensor(1.1920929e-06, shape=(), dtype=float32)'\n"
        "b'x (shape=(1,) dtype=float32) = '\n1.0\nb'y (shape=(1,) dtype=float32) = '\n1.1")


def test_asserts_run_in_tf_function_and_sessions():
    @tf.function
    def f(a, b):
        tf.debugging.assert_less(a, b, message="a<b")
        return a + b

    np.testing.assert_array_equal(f(tf.constant(X), tf.constant(Y) + 1).numpy(), [3, 8, 7])
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        f(tf.constant(X), tf.constant(Y))
    msg = str(info.value)  # TF's: where the failing node was made, then the kernel's text
    assert msg.startswith("Graph execution error:\n\nDetected at node "
                          "assert_less/Assert/Assert defined at (most recent call last):\n")
    assert ("\n\nassertion failed: [a<b] [Condition x < y did not hold element-wise:] "
            "[x (a:0) = ] [1 2 3] [y (b:0) = ] [1 5 3]\n\t [[{{node assert_less/Assert/Assert}}]]"
            ) in msg

    with tf.Graph().as_default():
        a = v1.placeholder(tf.int32, [None])
        check = v1.assert_positive(a, data=["a must be positive", a], summarize=2)
        assert check.type == "Assert" and v1.assert_equal(a, a).type == "NoOp"
        with v1.Session() as sess:
            sess.run(check, {a: [1, 2]})
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"assertion failed: \[a must be positive\] \[1 -2\.\.\.\]"):
                sess.run(check, {a: [1, -2, 3]})
            shape_check = tf.debugging.assert_shapes([(a, (3,))])
            sess.run(shape_check, {a: [1, 2, 3]})
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="dimension 0 must have size 3"):
                sess.run(shape_check, {a: [1, 2]})


def test_tf_assert_eager_and_graph():
    assert tf.Assert(True, ["ok"]) is None
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Expected 'tf.Tensor\(False, shape=\(\), dtype=bool\)' to be true. "
                             r"Summarized data: b'x must be positive'\n1.0, -2.0"):
        tf.debugging.Assert(tf.reduce_all(tf.constant([1.0, -2.0]) > 0),
                            ["x must be positive", tf.constant([1.0, -2.0])])
