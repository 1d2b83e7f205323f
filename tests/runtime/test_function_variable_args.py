"""tf.function traces a tf.Variable argument by its VariableSpec (dtype, shape, trainable and
alias id), as TF 2.21 does: another variable like it reuses the trace, and the call binds that
variable's handle, so reads, writes, gradients and nested calls act on the variable passed.
Tracing counts: TF 2.21's, in tests/fixtures/function_variable_args (generate.py)."""

from __future__ import annotations

import json
import os

import numpy as np

import ndflow as tf

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "function_variable_args",
                       "expected.json")


def _tf_counts() -> dict:
    with open(FIXTURE) as f:
        return json.load(f)["tracing_counts"]


def test_variables_of_one_spec_share_a_trace_and_each_call_updates_its_own():
    expected = _tf_counts()

    @tf.function
    def add(v, x):
        v.assign_add(tf.ones_like(v) * x)
        return v.read_value() * 2.0

    a, b = tf.Variable([1.0, 2.0]), tf.Variable([10.0, 20.0])
    frozen = tf.Variable([5.0, 6.0], trainable=False)
    np.testing.assert_array_equal(add(a, 1.0).numpy(), [4.0, 6.0])
    np.testing.assert_array_equal(add(b, 1.0).numpy(), [22.0, 42.0])
    np.testing.assert_array_equal(a.numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(b.numpy(), [11.0, 21.0])
    assert add.experimental_get_tracing_count() == expected["same_spec"]
    np.testing.assert_array_equal(add(frozen, 1.0).numpy(), [12.0, 14.0])
    assert add.experimental_get_tracing_count() == expected["not_trainable"]
    np.testing.assert_array_equal(a.numpy(), [2.0, 3.0])   # the traced variable is untouched


def test_an_argument_passed_twice_is_traced_apart_from_two_variables():
    expected = _tf_counts()

    @tf.function
    def two(v, w):
        v.assign_add(w)
        return v + w

    a, b = tf.Variable([2.0, 3.0]), tf.Variable([11.0, 21.0])
    np.testing.assert_array_equal(two(a, a).numpy(), [8.0, 12.0])      # a -> [4, 6]
    np.testing.assert_array_equal(two(a, b).numpy(), [26.0, 48.0])     # a -> [15, 27]
    np.testing.assert_array_equal(two(b, b).numpy(), [44.0, 84.0])     # b -> [22, 42]
    np.testing.assert_array_equal(a.numpy(), [15.0, 27.0])
    assert two.experimental_get_tracing_count() == expected["aliases"]


def test_shape_and_dtype_are_part_of_the_spec():
    expected = _tf_counts()

    @tf.function
    def loss(v):
        return tf.reduce_sum(v * v)

    a, b = tf.Variable([1.0, 2.0]), tf.Variable([3.0, 4.0])
    assert loss(a).numpy() == 5.0
    assert loss(b).numpy() == 25.0
    assert loss(tf.Variable([[2.0]])).numpy() == 4.0
    assert loss.experimental_get_tracing_count() == expected["shapes"]
    assert loss(tf.Variable([1, 2])).numpy() == 5
    assert loss.experimental_get_tracing_count() == expected["dtypes"]


def test_gradients_and_watched_variables_follow_the_variable_passed():
    @tf.function
    def loss(v):
        return tf.reduce_sum(v * v)

    a, b = tf.Variable([1.0, 2.0]), tf.Variable([3.0, -4.0], name="b")
    with tf.GradientTape() as tape:
        loss(a)
    with tf.GradientTape(persistent=True) as tape:
        value = loss(b)
    np.testing.assert_array_equal(tape.gradient(value, b).numpy(), [6.0, -8.0])
    assert tape.gradient(value, a) is None
    assert [v.name for v in tape.watched_variables()] == ["b:0"]
    assert loss.experimental_get_tracing_count() == 1


def test_concrete_functions_and_nested_calls_bind_the_variable_passed():
    @tf.function
    def loss(v):
        return tf.reduce_sum(v * v)

    @tf.function
    def outer(v):
        return loss(v) + 1.0

    a, b = tf.Variable([1.0, 2.0]), tf.Variable([3.0, 4.0])
    cf = loss.get_concrete_function(a)
    assert cf(b).numpy() == 25.0
    assert cf(a).numpy() == 5.0
    assert outer(a).numpy() == 6.0
    assert outer(b).numpy() == 26.0     # the inlined call binds b's handle in outer's trace
    assert outer.experimental_get_tracing_count() == 1
    with tf.Graph().as_default():       # a TF1 graph: the call is inlined with c's handle
        c = tf.compat.v1.Variable([5.0, 0.0])
        out = loss(c)
        with tf.compat.v1.Session() as sess:
            sess.run(c.initializer)
            assert sess.run(out) == 25.0
