"""Variable updates write in place only when no reader holds the buffer (TF's copy-on-write).

The optimizer kernels and AssignAdd/Sub overwrite a variable's own buffer when nothing else
shares it (saving a weight-sized allocation per update); a read taken earlier — an eager
tensor, a NumPy array, a tf.function's returned read, a view — keeps its value.
"""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf


def _buffer(v) -> int:
    return v.handle._value.value.data_ptr()


def _keras_momentum(v):
    tf.keras.optimizers.SGD(0.1, momentum=0.9).apply_gradients([(tf.ones_like(v), v)])


def _adam(v):
    tf.keras.optimizers.Adam(0.1).apply_gradients([(tf.ones_like(v), v)])


def _assign_add(v):
    v.assign_add(tf.ones_like(v))


def _assign_sub(v):
    v.assign_sub(tf.ones_like(v))


UPDATES = [_keras_momentum, _adam, _assign_add, _assign_sub]


@pytest.mark.parametrize("update", UPDATES)
def test_unshared_buffer_is_updated_in_place(update):
    v = tf.Variable(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    update(v)  # builds the optimizer's slots; their first update may allocate
    before, expected = _buffer(v), v.numpy().copy()
    update(v)
    assert _buffer(v) == before
    assert not np.array_equal(v.numpy(), expected)


@pytest.mark.parametrize("update", UPDATES)
def test_reads_taken_earlier_keep_their_values(update):
    v = tf.Variable(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    update(v)
    read, array = v.read_value(), v.numpy()
    view = tf.reshape(v.read_value(), [6])
    old = array.copy()
    update(v)
    assert not np.array_equal(v.numpy(), old)
    np.testing.assert_array_equal(read.numpy(), old)
    np.testing.assert_array_equal(array, old)
    np.testing.assert_array_equal(view.numpy(), old.reshape(6))


def test_numpy_initial_value_is_never_written():
    init = np.arange(4.0, dtype=np.float32)
    v = tf.Variable(init)
    for _ in range(2):
        _assign_add(v)
    np.testing.assert_array_equal(init, np.arange(4.0, dtype=np.float32))
    np.testing.assert_array_equal(v.numpy(), np.arange(4.0) + 2)


def test_function_returning_a_read_before_its_update():
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def step():
        r = v.read_value()
        v.assign_add([10.0, 10.0])
        return r

    for k in range(3):
        np.testing.assert_array_equal(step().numpy(), [1.0 + 10 * k, 2.0 + 10 * k])
    np.testing.assert_array_equal(v.numpy(), [31.0, 32.0])


def test_session_fetch_of_the_update_input_keeps_the_old_value():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        read = v.read_value()
        with tf.control_dependencies([read]):
            train = tf.compat.v1.train.GradientDescentOptimizer(1.0).minimize(
                tf.reduce_sum(v * v))
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            got, _ = sess.run([read, train])
            np.testing.assert_array_equal(got, [1.0, 2.0])
            np.testing.assert_array_equal(sess.run(v), [-1.0, -2.0])
