"""Sparse updates cost the rows they touch: ResourceScatter* write into the variable's
tensor in place when nothing else holds it (a training step does not copy the table), and
copy it first when a value read earlier is still alive (values never change under their
readers)."""

from __future__ import annotations

import numpy as np

import ndflow as tf


def _storage(var):
    return var.handle.value.value  # the Resource behind the handle, then its ATen tensor


def test_scatter_add_is_in_place_when_unshared():
    v = tf.Variable(np.zeros([1000, 4], np.float32))
    ptr = _storage(v).data_ptr()
    v.scatter_add(tf.IndexedSlices(tf.ones([2, 4]), tf.constant([3, 3])))
    assert _storage(v).data_ptr() == ptr
    expected = np.zeros([1000, 4], np.float32)
    expected[3] = 2
    np.testing.assert_array_equal(v.numpy(), expected)


def test_scatter_keeps_a_held_read_unchanged():
    v = tf.Variable(np.zeros([10, 2], np.float32))
    before = v.value()
    v.scatter_sub(tf.IndexedSlices(tf.ones([1, 2]), tf.constant([4])))
    np.testing.assert_array_equal(before.numpy(), np.zeros([10, 2]))
    assert v.numpy()[4].tolist() == [-1.0, -1.0]


def test_sgd_step_on_an_embedding_does_not_copy_the_table():
    rng = np.random.RandomState(0)
    table = tf.Variable(rng.uniform(-1, 1, [5000, 8]).astype(np.float32))
    opt = tf.compat.v1.train.GradientDescentOptimizer(0.5)

    @tf.function
    def step(ids):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(table, ids)))
        (grad,) = tape.gradient(loss, [table])
        opt.apply_gradients([(grad, table)])
        return loss

    ids = tf.constant([1, 7, 7, 4999])
    start = table.numpy()
    step(ids)
    ptr = _storage(table).data_ptr()
    step(ids)
    assert _storage(table).data_ptr() == ptr
    expected = start.copy()
    for _ in range(2):
        g = np.zeros_like(expected)
        for i in ids.numpy():
            g[i] += 2 * expected[i]
        expected -= 0.5 * g
    np.testing.assert_allclose(table.numpy(), expected, rtol=1e-6, atol=1e-6)
