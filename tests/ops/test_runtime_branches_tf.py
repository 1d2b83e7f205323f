"""Ops whose TF form branches or pads at run time, against TensorFlow 2.21
(tests/fixtures/tf_runtime_branches, generate.py beside it): tf.image.rot90 with k known
only when the function runs (a case over the four rotations: TF's values and static shape),
tf.case(exclusive=True) in a graph (its values, and TF's assertion when two conditions
hold), tf.io.decode_raw(fixed_length=...) (DecodePaddedRaw) and tf.gather_nd(batch_dims=...)
with its gradient."""

import os

import numpy as np
import pytest

import ndflow as tf

EXPECTED = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures",
                                "tf_runtime_branches", "expected.npz"))


@pytest.mark.parametrize("name, shape", [("3d", [2, 3, 1]), ("4d", [2, 2, 3, 2])])
def test_rot90_with_k_known_at_run_time(name, shape):
    @tf.function
    def rot(img, k):
        return tf.image.rot90(img, k)
    img = tf.reshape(tf.range(int(np.prod(shape))), shape)
    for k in range(-1, 5):
        np.testing.assert_array_equal(rot(img, tf.constant(k)).numpy(),
                                      EXPECTED[f"rot90/{name}/{k}"])
    out = rot.get_concrete_function(tf.TensorSpec(shape, tf.int32),
                                    tf.TensorSpec([], tf.int32)).structured_outputs
    assert [-1 if d is None else d for d in out.shape.as_list()] == \
        list(EXPECTED[f"rot90/{name}/static_shape"])


def test_exclusive_case_in_a_graph():
    @tf.function
    def case(x):
        return tf.case([(x > 0, lambda: x * 10), (x > 5, lambda: x * 100)],
                       default=lambda: -x, exclusive=True)
    got = [case(tf.constant(v)).numpy() for v in (3, -2, 0)]
    np.testing.assert_array_equal(got, EXPECTED["case/values"])
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        case(tf.constant(7))
    assert str(EXPECTED["case/error"]) in str(e.value)


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "float32"])
@pytest.mark.parametrize("little", [True, False])
def test_decode_raw_with_a_fixed_length(dtype, little):
    x = tf.constant([b"\x01\x02\x03", b"\x04\x05\x06\x07\x08\x09", b""])
    got = tf.io.decode_raw(x, dtype, little_endian=little, fixed_length=4).numpy()
    want = EXPECTED[f"decode/{dtype}/{little}"]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("length", [3, 0, -2])
def test_decode_raw_bad_fixed_lengths(length):
    x = tf.constant([b"\x01\x02\x03"])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=str(EXPECTED[f"decode/error/{length}"]).replace("(", r"\(")
                       .replace(")", r"\)")):
        tf.io.decode_raw(x, tf.int16, fixed_length=length)


def test_decode_raw_fixed_length_static_shape():
    @tf.function
    def f(s):
        return tf.io.decode_raw(s, tf.int16, fixed_length=6)
    out = f.get_concrete_function(tf.TensorSpec([None], tf.string)).structured_outputs
    assert out.shape.as_list() == [None, 3]


def test_gather_nd_with_batch_dims_and_its_gradient():
    params = tf.reshape(tf.range(48, dtype=tf.float32), [2, 3, 2, 4])
    np.testing.assert_array_equal(
        tf.gather_nd(params, [[[1, 0], [2, 1]], [[0, 1], [0, 0]]], batch_dims=1).numpy(),
        EXPECTED["gather_nd/b1"])
    np.testing.assert_array_equal(
        tf.gather_nd(params, [[[1], [0], [1]], [[0], [0], [1]]], batch_dims=2).numpy(),
        EXPECTED["gather_nd/b2"])
    p = tf.Variable(tf.ones([2, 3, 4]))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.gather_nd(p, [[1, 1], [2, 2]], batch_dims=1) ** 2)
    np.testing.assert_array_equal(tape.gradient(y, p).numpy(), EXPECTED["gather_nd/grad"])
    with pytest.raises(ValueError, match=r"`batch_dims` = 2 must be less than "
                                         r"rank\(`indices`\) = 2"):
        tf.gather_nd(tf.zeros([2, 3]), [[0], [1]], batch_dims=2)
