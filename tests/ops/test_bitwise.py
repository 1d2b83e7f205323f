"""tf.bitwise: TF 2.21's results on shift clamping and wrapping (fixture), NumPy's on random
data with broadcasting, graph mode, and TF's error for float inputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "bitwise" /
                      "values.json").read_text())
OPS = ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift")
RNG = np.random.default_rng(5)


@pytest.mark.parametrize("dtype", sorted(FIXTURE))
def test_matches_tensorflow(dtype):
    case = FIXTURE[dtype]
    x, y = tf.constant(case["x"], dtype), tf.constant(case["y"], dtype)
    for op in OPS:
        assert getattr(tf.bitwise, op)(x, y).numpy().tolist() == case[op], op
    assert tf.bitwise.invert(x).numpy().tolist() == case["invert"]


@pytest.mark.parametrize("np_dtype", [np.int16, np.int32, np.uint8])
def test_matches_numpy_with_broadcasting(np_dtype):
    info = np.iinfo(np_dtype)
    x = RNG.integers(info.min, info.max, size=(3, 4), dtype=np_dtype)
    y = RNG.integers(info.min, info.max, size=(4,), dtype=np_dtype)
    np.testing.assert_array_equal(tf.bitwise.bitwise_and(x, y).numpy(), x & y)
    np.testing.assert_array_equal(tf.bitwise.bitwise_or(x, y).numpy(), x | y)
    np.testing.assert_array_equal(tf.bitwise.bitwise_xor(x, y).numpy(), x ^ y)
    np.testing.assert_array_equal(tf.bitwise.invert(x).numpy(), ~x)
    shift = RNG.integers(0, np.dtype(np_dtype).itemsize * 8, size=(4,)).astype(np_dtype)
    np.testing.assert_array_equal(tf.bitwise.right_shift(x, shift).numpy(), x >> shift)
    np.testing.assert_array_equal(tf.bitwise.left_shift(x, shift).numpy(),
                                  (x << shift).astype(np_dtype))


def test_in_a_graph_and_errors():
    @tf.function
    def f(a, b):
        return tf.bitwise.left_shift(tf.bitwise.bitwise_and(a, b), 1)

    assert f(tf.constant([12, 5]), tf.constant([10, 4])).numpy().tolist() == [16, 8]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Value for attr 'T' of float is not in the list of allowed values"):
        tf.bitwise.bitwise_and(tf.constant([1.0]), tf.constant([2.0]))
    with tf.Graph().as_default(), pytest.raises(
            TypeError, match="DataType float32 not in list of allowed values"):
        tf.bitwise.bitwise_and(tf.constant([1.0]), tf.constant([2.0]))
