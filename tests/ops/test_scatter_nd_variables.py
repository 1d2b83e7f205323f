"""N-d scatter updates of variables (ResourceScatterNd*, `v.scatter_nd_update`,
`tf.compat.v1.scatter_nd_*`) and TF1's functional `tf.compat.v1.scatter_*`: values against
NumPy float64 references, errors with TF 2.21's messages."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf

START = np.arange(24, dtype=np.float64).reshape(4, 2, 3)


def _np_nd(kind, indices, updates):
    out = START.copy()
    idx = np.asarray(indices)
    upd = np.broadcast_to(np.asarray(updates, np.float64),
                          idx.shape[:-1] + START.shape[idx.shape[-1]:])
    for pos in np.ndindex(*idx.shape[:-1]):
        key = tuple(idx[pos])
        if kind == "update":
            out[key] = upd[pos]
        elif kind == "add":
            out[key] += upd[pos]
        elif kind == "sub":
            out[key] -= upd[pos]
        elif kind == "min":
            out[key] = np.minimum(out[key], upd[pos])
        else:
            out[key] = np.maximum(out[key], upd[pos])
    return out


ND_CASES = {
    "rows": ([[1], [3]], np.full([2, 2, 3], -1.0)),
    "elements": ([[0, 1, 2], [3, 0, 0]], [100.0, -100.0]),
    "slices": ([[[2, 1]], [[0, 0]]], np.ones([2, 1, 3])),
    "duplicates": ([[1, 1, 1], [1, 1, 1]], [5.0, 7.0]),
}


@pytest.mark.parametrize("kind", ["update", "add", "sub", "min", "max"])
@pytest.mark.parametrize("case", sorted(ND_CASES))
def test_variable_scatter_nd(kind, case):
    if kind == "update" and case == "duplicates":
        pytest.skip("which duplicate wins is unspecified, as in TF")
    indices, updates = ND_CASES[case]
    v = tf.Variable(START)
    out = getattr(v, f"scatter_nd_{kind}")(indices, updates)
    assert out is v
    np.testing.assert_allclose(v.numpy(), _np_nd(kind, indices, updates))


def test_compat_v1_scatter_nd_in_a_session():
    g = tf.Graph()
    with g.as_default():
        w = tf.compat.v1.Variable(np.zeros([3], np.float32))
        a = tf.compat.v1.scatter_nd_update(w, [[1]], [5.0])
        b = tf.compat.v1.scatter_nd_add(w, [[2]], [4.0])
        c = tf.compat.v1.scatter_nd_sub(w, [[2], [0]], [1.0, 2.0])
        assert "ResourceScatterNdSub" in [op.type for op in g.get_operations()]
        with tf.compat.v1.Session() as s:
            s.run(w.initializer)
            np.testing.assert_array_equal(s.run(a), [0, 5, 0])
            np.testing.assert_array_equal(s.run(b), [0, 5, 4])
            np.testing.assert_array_equal(s.run(c), [-2, 5, 3])


ROW_KINDS = {"update": lambda a, u: u, "add": np.add, "sub": np.subtract,
             "mul": np.multiply, "div": np.divide, "min": np.minimum, "max": np.maximum}


@pytest.mark.parametrize("kind", sorted(ROW_KINDS))
def test_compat_v1_scatter_rows(kind):
    start = np.arange(1.0, 9.0).reshape(4, 2)
    v = tf.Variable(start)
    updates = np.array([[2.0, -3.0], [0.5, 8.0]])
    out = getattr(tf.compat.v1, f"scatter_{kind}")(v, [3, 1], updates)
    assert out is v
    expected = start.copy()
    expected[[3, 1]] = ROW_KINDS[kind](start[[3, 1]], updates)
    np.testing.assert_allclose(v.numpy(), expected)


def test_scatter_nd_in_tf_function_writes_in_place():
    v = tf.Variable(np.zeros([1000, 4], np.float32))

    @tf.function
    def f(i):
        v.scatter_nd_add(i, tf.ones([1, 4]))

    f(tf.constant([[7]]))
    ptr = v.handle.value.value.data_ptr()
    f(tf.constant([[7]]))
    assert v.handle.value.value.data_ptr() == ptr
    assert v.numpy()[7].tolist() == [2.0] * 4 and float(v.numpy().sum()) == 8.0


ERRORS = [
    ([[7]], np.ones([1, 2, 3]), r"indices\[0\] = \[7\] does not index into shape \[4,2,3\]"),
    ([[[1, 0]], [[2, 5]]], np.ones([2, 1, 3]),
     r"indices\[1,0\] = \[2, 5\] does not index into shape \[4,2,3\]"),
    ([[-1]], np.ones([1, 2, 3]), r"indices\[0\] = \[-1\] does not index"),
    ([[1], [2]], np.ones([3, 2, 3]),
     r"Dimensions \[0,1\) of indices\[shape=\[2,1\]\] = 2 must match dimensions \[0,1\) of "
     r"updates\[shape=\[3,2,3\]\] = 3"),
    ([[1], [2]], np.ones([2, 2, 4]),
     r"Dimensions \[1,3\) of input\[shape=\[4,2,3\]\] must match dimensions \[1,3\) of "
     r"updates\[shape=\[2,2,4\]\]"),
    ([[0, 0, 0, 0]], [1.0],
     r"Dimensions \[4,3\) of input\[shape=\[4,2,3\]\] must match dimensions \[4,1\) of "
     r"updates\[shape=\[1\]\]"),
]


@pytest.mark.parametrize("indices,updates,message", ERRORS)
def test_scatter_nd_errors(indices, updates, message):
    v = tf.Variable(START)
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        v.scatter_nd_update(indices, updates)
    np.testing.assert_array_equal(v.numpy(), START)


def test_scatter_nd_wrong_dtype():
    v = tf.Variable(START.astype(np.float32))
    with pytest.raises(ValueError, match="Tensor conversion requested dtype float32 for Tensor "
                                         "with dtype float64"):
        v.scatter_nd_update([[1]], tf.ones([1, 2, 3], tf.float64))


def test_integer_variable():
    w = tf.Variable([1, 2, 3])
    w.scatter_nd_add([[0]], [5])
    np.testing.assert_array_equal(w.numpy(), [6, 2, 3])


def test_v1_assign_functions_update_and_return_the_new_value():
    # tf.compat.v1.assign / assign_add / assign_sub call the resource variable's methods, as
    # TF's state_ops do: a Session fetch of the op is the value after the update.
    v1 = tf.compat.v1
    with tf.Graph().as_default():
        v = v1.Variable(1.0)
        add, sub = v1.assign_add(v, 2.0), v1.assign_sub(v, 0.5)
        put = v1.assign(v, 7.0, name="put")
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            assert sess.run(add) == 3.0 and sess.run(sub) == 2.5 and sess.run(put) == 7.0
            assert sess.run(v.read_value()) == 7.0
    v = tf.Variable([1, 2], dtype=tf.int32)
    v1.assign_add(v, [10, 10])
    assert v.numpy().tolist() == [11, 12]
    with pytest.raises(AttributeError, match="has no attribute 'assign'"):
        v1.assign(tf.constant(1.0), 2.0)
