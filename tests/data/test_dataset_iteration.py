"""Dataset iteration inside tf.function (AutoGraph `for`, iter/next) and in TF1 Sessions
(make_one_shot_iterator, make_initializable_iterator), with TensorFlow's end-of-data and
uninitialized-iterator errors."""

import numpy as np
import pytest

import ndflow as tf

D = tf.data.Dataset


def test_for_loop_in_tf_function_runs_the_dataset_each_call():
    ds = D.range(5).map(lambda x: x * 2)

    @tf.function
    def total(d):
        s = tf.constant(0, tf.int64)
        for x in d:
            s += x
        return s
    assert int(total(ds)) == 20 and int(total(ds)) == 20
    ops = {op.type for op in total.get_concrete_function(ds).graph.get_operations()}
    assert {"AnonymousIteratorV3", "MakeIterator", "While"} <= ops


def test_for_loop_with_side_effects_only_and_break():
    v = tf.Variable(0, dtype=tf.int64)
    ds = D.range(5)

    @tf.function
    def accumulate():
        for x in ds:
            v.assign_add(x)
    accumulate()
    assert int(v.numpy()) == 10

    @tf.function
    def until_big():
        s = tf.constant(0, tf.int64)
        for x in ds:
            if x > 2:
                break
            s += x
        return s
    assert int(until_big()) == 3


def test_for_loop_over_batches_of_a_structure():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    ds = D.from_tensor_slices({"x": x, "y": np.arange(6)}).batch(4)

    @tf.function
    def sums():
        total = tf.constant(0.0)
        rows = tf.constant(0, tf.int64)
        for b in ds:
            total += tf.reduce_sum(b["x"])
            rows += tf.cast(tf.shape(b["y"])[0], tf.int64)
        return total, rows
    total, rows = sums()
    assert float(total) == float(x.sum()) and int(rows) == 6


def test_iter_and_next_in_tf_function_and_end_of_sequence():
    ds = D.range(3)

    @tf.function
    def first_two():
        it = iter(ds)
        return next(it) + next(it)
    assert int(first_two()) == 1

    @tf.function
    def past_the_end():
        it = iter(D.range(1))
        next(it)
        return next(it)
    with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
        past_the_end()


def test_eager_iterator_get_next_and_optional():
    it = iter(D.range(2))
    assert int(it.get_next()) == 0
    assert it.element_spec == tf.TensorSpec([], tf.int64)
    assert bool(it.get_next_as_optional().has_value())
    opt = it.get_next_as_optional()
    assert not bool(opt.has_value())
    with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
        it.get_next()


@pytest.fixture
def graph_mode():
    tf.compat.v1.disable_eager_execution()
    try:
        yield
    finally:
        tf.compat.v1.enable_eager_execution()


def test_tf1_initializable_and_one_shot_iterators(graph_mode):
    with tf.Graph().as_default():
        ds = D.from_tensor_slices(np.arange(3.0)).map(lambda x: x + 1)
        it = tf.compat.v1.data.make_initializable_iterator(ds)
        nxt = it.get_next()
        one = tf.compat.v1.data.make_one_shot_iterator(D.range(2)).get_next()
        with tf.compat.v1.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError,
                               match="iterator has not been initialized"):
                sess.run(nxt)
            sess.run(it.initializer)
            out = []
            with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
                while True:
                    out.append(sess.run(nxt))
            assert out == [1.0, 2.0, 3.0]
            sess.run(it.initializer)  # restarts at the beginning
            assert sess.run(nxt) == 1.0
            assert [sess.run(one), sess.run(one)] == [0, 1]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(one)
        with tf.compat.v1.Session() as sess:  # iterator state is per Session
            assert sess.run(one) == 0


def test_tf1_dataset_methods_and_training_loop(graph_mode):
    with tf.Graph().as_default():
        x = np.linspace(-1, 1, 8).astype(np.float32).reshape(8, 1)
        ds = D.from_tensor_slices((x, 3 * x)).batch(4).repeat()
        bx, by = ds.make_one_shot_iterator().get_next()
        w = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean((tf.matmul(bx, w) - by) ** 2)
        step = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(loss)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for _ in range(60):
                sess.run(step)
            assert abs(float(sess.run(w)[0, 0]) - 3.0) < 1e-2


def test_tf1_pipeline_on_worker_threads(graph_mode):
    with tf.Graph().as_default():
        gen = D.from_generator(lambda: iter(range(6)), output_signature=tf.TensorSpec(
            [], tf.int64))
        ds = gen.map(lambda v: v * 10, num_parallel_calls=2).batch(4).prefetch(2)
        nxt = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
        with tf.compat.v1.Session() as sess:
            assert sess.run(nxt).tolist() == [0, 10, 20, 30]
            assert sess.run(nxt).tolist() == [40, 50]
        assert not tf.executing_eagerly()


def test_eager_iterator_passed_into_tf_function_shares_its_position():
    it = iter(D.range(10).batch(3))

    @tf.function
    def step(iterator):
        return tf.reduce_sum(next(iterator))
    assert int(step(it)) == 3 and int(step(it)) == 12
    assert next(it).numpy().tolist() == [6, 7, 8]  # eager next continues after the graph's

    @tf.function
    def rest(iterator):
        s = tf.constant(0, tf.int64)
        for b in iterator:
            s += tf.reduce_sum(b)
        return s
    assert int(rest(it)) == 9
    with pytest.raises(tf.errors.OutOfRangeError):
        step(it)

    @tf.function(autograph=False)
    def python_loop(d):
        for _ in iter(d):
            pass
    with pytest.raises(TypeError, match="Python loop is not allowed while building a graph"):
        python_loop(D.range(3))
