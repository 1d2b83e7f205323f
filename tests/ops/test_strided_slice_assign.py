"""Sliced assignment to variables (`v[0, 1:3].assign(x)`, ResourceStridedSliceAssign):
values against NumPy's slice assignment, broadcasting and errors as TF 2.21's kernel
(messages checked against TF 2.21)."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.ops.state_slice_assign import resource_strided_slice_assign

BASE = np.arange(12, dtype=np.float32).reshape(3, 4)

# (slice as a function of an indexable, value); the reference is NumPy's assignment.
ASSIGNMENTS = {
    "row_range": (lambda a: (0, slice(1, 3)), [10.0, 20.0]),
    "column_scalar": (lambda a: (slice(None), 0), 5.0),
    "reversed": (lambda a: (slice(None, None, -1), 1), [1.0, 2.0, 3.0]),
    "strided": (lambda a: (slice(0, 3, 2), slice(1, None, 2)), [[1.0, 2.0], [3.0, 4.0]]),
    "ellipsis": (lambda a: (Ellipsis, 3), [7.0, 8.0, 9.0]),
    "negative": (lambda a: (-1, slice(-3, -1)), [-1.0, -2.0]),
    "row_broadcast": (lambda a: (slice(0, 2),), [1.0, 2.0, 3.0, 4.0]),
}


def _np_assign(key, value):
    out = BASE.copy()
    out[key] = value
    return out


@pytest.mark.parametrize("case", sorted(ASSIGNMENTS))
def test_eager_assignment_matches_numpy(case):
    key_fn, value = ASSIGNMENTS[case]
    key = key_fn(None)
    v = tf.Variable(BASE)
    before = v.value()
    out = v[key].assign(value)
    np.testing.assert_array_equal(v.numpy(), _np_assign(key, value))
    assert out is v  # eager: the variable, as TF
    np.testing.assert_array_equal(before.numpy(), BASE)  # a value read earlier is unchanged


def test_assignment_is_in_place_when_nothing_holds_a_read():
    v = tf.Variable(np.zeros([1000, 4], np.float32))
    v[0].assign(np.ones(4, np.float32))  # the first write may copy (the initial value)
    held = v.value()
    sliced = v[5, 1:3]
    sliced.assign([7.0, 8.0])  # a read is alive: the write goes to a copy
    np.testing.assert_array_equal(sliced.numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(held.numpy()[5], [0.0] * 4)
    del held
    ptr = v.handle.value.value.data_ptr()
    v[6, :2].assign([1.0, 2.0])
    assert v.handle.value.value.data_ptr() == ptr
    np.testing.assert_array_equal(v.numpy()[5:7], [[0, 7, 8, 0], [1, 2, 0, 0]])


def test_slice_value_is_the_slice():
    v = tf.Variable(BASE)
    np.testing.assert_array_equal(v[1:, ::2].numpy(), BASE[1:, ::2])
    assert float(v[2, 3]) == 11.0


def test_new_axis_slice():
    v = tf.Variable(BASE)
    v[tf.newaxis, 0].assign(np.ones([1, 4], np.float32))
    np.testing.assert_array_equal(v.numpy()[0], np.ones(4))


def test_tf_function_assignment():
    v = tf.Variable(BASE)

    @tf.function
    def f(x):
        return v[1:, 2].assign(x)

    out = f(tf.constant([100.0, 200.0]))
    np.testing.assert_array_equal(out.numpy(), _np_assign((slice(1, None), 2), [100.0, 200.0]))
    graph = f.get_concrete_function(tf.TensorSpec([2])).graph
    assert "ResourceStridedSliceAssign" in [op.type for op in graph.get_operations()]


def test_session_assignment_named_as_tf():
    g = tf.Graph()
    with g.as_default():
        w = tf.compat.v1.Variable(np.zeros([2, 3], np.float32))
        a = w[0, :2].assign([1.0, 2.0])
        assign_ops = [op for op in g.get_operations() if op.type == "ResourceStridedSliceAssign"]
        assert [op.name for op in assign_ops] == ["strided_slice/_assign"]
        with tf.compat.v1.Session() as s:
            s.run(w.initializer)
            np.testing.assert_array_equal(s.run(a), [[1.0, 2.0, 0.0], [0.0, 0.0, 0.0]])


def test_wrong_shape_is_tf_error():
    v = tf.Variable(BASE)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Cannot broadcast input shape \[3\] into final shape \[2\]"):
        v[0, 1:3].assign([10.0, 20.0, 30.0])
    np.testing.assert_array_equal(v.numpy(), BASE)


def test_wrong_dtype_is_tf_error():
    v = tf.Variable(BASE)
    with pytest.raises(ValueError, match="Tensor conversion requested dtype float32 for Tensor "
                                         "with dtype float64"):
        v[1].assign(tf.ones([4], tf.float64))


def test_index_out_of_range():
    v = tf.Variable(BASE)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="slice index 5 of dimension 0 out of bounds"):
        v[5].assign(tf.ones([4]))


def _raw(value, begin=(0, 0), end=(2, 3), strides=(1, 1), **masks):
    w = tf.Variable(np.zeros([2, 3], np.float32))
    resource_strided_slice_assign(w.handle, list(begin), list(end), list(strides), value,
                                  **masks)
    return w.numpy()


@pytest.mark.parametrize("shape", [[2, 1], [3], [1, 1, 3], [1, 3]])
def test_value_broadcasts_into_the_slice(shape):
    np.testing.assert_array_equal(_raw(tf.ones(shape)), np.ones([2, 3]))


@pytest.mark.parametrize("shape,final", [([6], "[2,3]"), ([3, 2], "[2,3]"),
                                         ([2, 3, 1], "[2,3]")])
def test_value_that_does_not_broadcast(shape, final):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf"Cannot broadcast input shape \[{','.join(map(str, shape))}\] "
                             rf"into final shape \[{final[1:-1]}\]"):
        _raw(tf.ones(shape))


def test_shrink_axis_final_shape():
    out = _raw(tf.ones([1, 3]), end=(1, 3), shrink_axis_mask=1)
    np.testing.assert_array_equal(out, [[1, 1, 1], [0, 0, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"input shape \[3,1\] into final shape \[3\]"):
        _raw(tf.ones([3, 1]), end=(1, 3), shrink_axis_mask=1)


def test_empty_slice_accepts_any_value():
    np.testing.assert_array_equal(_raw(tf.ones([5]), begin=(1, 0), end=(1, 3)), np.zeros([2, 3]))


def test_negative_strides():
    out = _raw(tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), begin=(-1, -1), end=(0, 0),
               strides=(-1, -1), end_mask=3)
    np.testing.assert_array_equal(out, [[6, 5, 4], [3, 2, 1]])


def test_zero_stride_and_dtype_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"strides\[0\] must be non-zero"):
        _raw(tf.ones([1, 2]), end=(1, 2), strides=(0, 1))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="l-value dtype float does not match r-value dtype double"):
        _raw(tf.ones([2], tf.float64), end=(1, 2))


def test_integer_variable():
    w = tf.Variable([1, 2, 3])
    w[0].assign(5)
    np.testing.assert_array_equal(w.numpy(), [5, 2, 3])


def test_gradient_flows_through_an_eager_variable_slice():
    """`v[1:]` read under a GradientTape is differentiable eagerly, as in tf.function."""
    v = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(v[1:] ** 2) + 2.0 * v[0]
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [2.0, 4.0, 6.0])
    graph_grad = tf.function(lambda: tf.gradients(tf.reduce_sum(v[1:] ** 2) + 2.0 * v[0],
                                                  v)[0])
    np.testing.assert_allclose(graph_grad().numpy(), [2.0, 4.0, 6.0])
