"""ResourceScatter{Add,Sub,Mul,Div,Min,Max,Update}: every kind against a NumPy float64
reference applying the rows in order (repeated indices included), integer variables,
scalar and N-d updates, eagerly, in tf.function and in a Session; shape, index and dtype
errors with TF 2.21's messages."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.ops import state_sparse
from ndflow.ops.apply import apply_op

START = np.arange(8, dtype=np.float64).reshape(4, 2) + 1
IDS = [1, 3, 1]
UPD = np.array([[2.0, 3.0], [4.0, 5.0], [0.5, 10.0]])
APPLY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
         "min": np.minimum, "max": np.maximum, "update": lambda a, u: u}


def _reference(kind, start, ids, updates):
    out = start.copy()
    ids = np.asarray(ids).reshape(-1)
    rows = (ids.size,) + start.shape[1:]
    updates = np.asarray(updates)
    updates = updates.reshape(rows) if updates.ndim else np.broadcast_to(updates, rows)
    for i, u in zip(ids, updates):  # in order, as TF's CPU kernel
        out[i] = APPLY[kind](out[i], u)
    return out


def _scatter(kind, var, ids, updates):
    return state_sparse.resource_scatter(kind, var.handle, ids, updates, var.dtype)


@pytest.mark.parametrize("kind", sorted(APPLY))
def test_eager_float64(kind):
    v = tf.Variable(START)
    _scatter(kind, v, IDS, UPD)
    np.testing.assert_allclose(v.numpy(), _reference(kind, START, IDS, UPD), rtol=1e-15)


@pytest.mark.parametrize("kind", sorted(APPLY))
def test_tf_function_with_2d_indices(kind):
    v = tf.Variable(START)
    ids = [[0, 2], [2, 2]]
    updates = np.full([2, 2, 2], 3.0)

    @tf.function
    def f():
        _scatter(kind, v, ids, updates)

    f()
    np.testing.assert_allclose(v.numpy(), _reference(kind, START, ids, updates), rtol=1e-15)


@pytest.mark.parametrize("kind", ["add", "mul", "div", "min", "update"])
def test_integer_variables(kind):
    start = np.array([[7, -7], [9, 4], [1, 1]], np.int32)
    v = tf.Variable(start)
    upd = np.array([[2, 3], [-2, 2]], np.int32)
    _scatter(kind, v, [0, 0], upd)
    want = start.copy()
    for u in upd:
        want[0] = (np.trunc(want[0] / u).astype(np.int32) if kind == "div"
                   else APPLY[kind](want[0], u))
    np.testing.assert_array_equal(v.numpy(), want)


def test_scalar_updates_broadcast():
    v = tf.Variable(START)
    _scatter("add", v, [0, 2], 10.0)
    np.testing.assert_allclose(v.numpy(), _reference("add", START, [0, 2], 10.0))


def test_session():
    g = tf.Graph()
    with g.as_default():
        v = tf.compat.v1.Variable(START)
        op = _scatter("max", v, [3, 0], [[100.0, 0.0], [-1.0, 50.0]])
        with tf.compat.v1.Session() as s:
            s.run(v.initializer)
            s.run(op)
            np.testing.assert_allclose(
                s.run(v), _reference("max", START, [3, 0], [[100.0, 0.0], [-1.0, 50.0]]))


@pytest.mark.parametrize("ids,updates,message", [
    ([0, 7], np.ones([2, 2]), r"indices\[1\] = 7 is not in \[0, 4\)"),
    ([-1], np.ones([1, 2]), r"indices\[0\] = -1 is not in \[0, 4\)"),
    ([0, 2], np.ones([3, 2]),
     r"The shape of indices \(\[2\]\) must be a prefix of the shape of updates \(\[3,2\]\)"),
    ([0, 2], np.ones([2]),
     r"Must have updates.shape = indices.shape \+ params.shape\[1:\] or updates.shape = \[\], "
     r"got updates.shape \[2\], indices.shape \[2\], params.shape \[4,2\]"),
])
def test_errors(ids, updates, message):
    v = tf.Variable(START)
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        _scatter("update", v, ids, updates)
    np.testing.assert_array_equal(v.numpy(), START)


def test_dtype_mismatch():
    v = tf.Variable(START.astype(np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="DType of scatter resource and updates does not match."):
        apply_op(state_sparse.ResourceScatterAdd,
                 [v.handle, tf.constant([0]), tf.constant(np.ones([1, 2]))])
