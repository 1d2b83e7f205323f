"""tf.map_fn, tf.scan, tf.foldl/foldr, tf.case, tf.tuple and tf.vectorized_map against NumPy
float64 references, eagerly and in tf.function (one While op), their gradients against
finite differences, and TensorFlow 2.21's errors for bad input."""

import numpy as np
import pytest

import ndflow as tf

X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])


def _both(fn):
    """(eager result, tf.function result) of fn()."""
    return fn(), tf.function(fn)()


def test_map_fn_nested_and_typed_outputs():
    x = tf.constant(X)
    for got in _both(lambda: tf.map_fn(lambda r: tf.reduce_sum(r * r), x)):
        np.testing.assert_allclose(got.numpy(), (X * X).sum(1))
    for a, b in _both(lambda: tf.map_fn(lambda r: (r[0], tf.cast(r[1], tf.int32)), x,
                                        fn_output_signature=(tf.float64, tf.int32))):
        np.testing.assert_allclose(a.numpy(), X[:, 0])
        assert b.dtype is tf.int32 and b.numpy().tolist() == [2, 4, 6]
    pairs = tf.map_fn(lambda p: p[0] * p[1], (x, x + 1.0), fn_output_signature=tf.float64)
    np.testing.assert_allclose(pairs.numpy(), X * (X + 1))
    empty = tf.map_fn(lambda r: r * 2, tf.zeros([0, 3]))
    assert empty.shape.as_list() == [0, 3] or empty.numpy().size == 0


def test_map_fn_is_one_while_loop_in_a_graph():
    fn = tf.function(lambda x: tf.map_fn(lambda r: r * 2.0, x))
    types = [op.type for op in fn.get_concrete_function(
        tf.TensorSpec([None, 2], tf.float64)).graph.get_operations()]
    assert sum(t in ("While", "StatelessWhile") for t in types) == 1
    np.testing.assert_allclose(fn(tf.constant(X)).numpy(), 2 * X)


def test_scan_foldl_foldr():
    x = tf.constant(X)
    for got in _both(lambda: tf.scan(lambda a, r: a + r, x)):
        np.testing.assert_allclose(got.numpy(), np.cumsum(X, 0))
    for got in _both(lambda: tf.scan(lambda a, r: a * 0.5 + r, x, initializer=tf.zeros([2],
                                                                                       tf.float64),
                                     reverse=True)):
        want, acc = np.zeros_like(X), np.zeros(2)
        for i in range(2, -1, -1):
            acc = acc * 0.5 + X[i]
            want[i] = acc
        np.testing.assert_allclose(got.numpy(), want)
    v = tf.constant([1.0, 2.0, 3.0, 4.0], tf.float64)
    for got in _both(lambda: tf.foldl(lambda a, e: a * 10 + e, v)):
        assert float(got) == 1234.0
    for got in _both(lambda: tf.foldr(lambda a, e: a * 10 + e, v, initializer=tf.constant(
            0.0, tf.float64))):
        assert float(got) == 4321.0


def test_map_fn_and_scan_gradients_match_finite_differences():
    w = tf.Variable(0.7, dtype=tf.float64)
    x = tf.constant(X)

    def loss():
        mapped = tf.map_fn(lambda r: tf.sin(r * w), x)
        scanned = tf.scan(lambda a, r: a * w + r, x)
        return tf.reduce_sum(mapped) + tf.reduce_sum(scanned)

    for run in (loss, tf.function(loss)):
        with tf.GradientTape() as tape:
            value = run()
        grad = float(tape.gradient(value, w))

        def ref(wv):
            acc, total = np.zeros(2), np.sin(X * wv).sum()
            for r in X:
                acc = acc * wv + r
                total += acc.sum()
            return total
        assert float(value) == pytest.approx(ref(0.7), rel=1e-12)
        assert grad == pytest.approx((ref(0.7 + 1e-6) - ref(0.7 - 1e-6)) / 2e-6, rel=1e-7)


def test_case_eager_and_graph():
    def pick(c):
        return tf.case([(c < 2, lambda: tf.constant(1)), (c < 5, lambda: tf.constant(2))],
                       default=lambda: tf.constant(3))
    graph_pick = tf.function(pick)
    for c, want in ((1, 1), (4, 2), (9, 3)):
        assert int(pick(tf.constant(c))) == want == int(graph_pick(tf.constant(c)))
    no_default = tf.function(lambda c: tf.case([(c < 2, lambda: tf.constant(1)),
                                                (c < 5, lambda: tf.constant(2))]))
    assert int(no_default(tf.constant(3))) == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match="None of conditions evaluated"):
        no_default(tf.constant(9))
    with pytest.raises(tf.errors.InvalidArgumentError, match="None of conditions evaluated"):
        tf.case([(tf.constant(False), lambda: tf.constant(1))])
    assert int(tf.compat.v1.case({tf.constant(True): lambda: tf.constant(7)})) == 7


def test_tuple_gates_and_vectorized_map():
    with tf.Graph().as_default():
        a, b = tf.constant(1.0), tf.constant(2.0)
        ga, gb = tf.tuple([a, b])
        assert ga.op.control_inputs and ga.op.control_inputs == gb.op.control_inputs
    np.testing.assert_allclose(tf.vectorized_map(lambda r: r * r, tf.constant(X)).numpy(), X * X)


def test_bad_input_as_tensorflow():
    with pytest.raises(ValueError, match="Elements in elems must be 1\\+ dimensional Tensors, "
                                         "not scalars"):
        tf.map_fn(lambda x: x, tf.constant(1.0))
    with pytest.raises(ValueError, match="Dimensions 2 and 3 are not compatible"):
        tf.map_fn(lambda x: x[0], (tf.zeros([2]), tf.zeros([3])))
    with pytest.raises(ValueError, match="does not contain any Tensors"):
        tf.map_fn(lambda x: x, [])
    with pytest.raises(tf.errors.OutOfRangeError, match="Tried to read from index 0"):
        tf.scan(lambda a, x: a + x, tf.zeros([0]))
