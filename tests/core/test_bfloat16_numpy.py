"""bfloat16 values cross to NumPy as ml_dtypes' bfloat16, as TensorFlow's do: `.numpy()`,
`as_numpy_dtype`, `as_dtype`, constants and feeds from such arrays, numpy_function results
and TensorProtos, each bit for bit."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ndflow as tf

BF16 = np.dtype(ml_dtypes.bfloat16)


def _finite_bf16(n: int, seed: int = 0) -> np.ndarray:
    """n bfloat16s from random bit patterns (NaNs excluded: their payloads may change),
    subnormals and both zeros included."""
    bits = np.random.default_rng(seed).integers(0, 1 << 16, n, dtype=np.uint16)
    bits[:4] = [0x0000, 0x8000, 0x0001, 0x807F]
    arr = bits.view(BF16)
    return arr[~np.isnan(arr.astype(np.float32))]


def _bits(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).view(np.uint16)


def test_numpy_is_ml_dtypes_bfloat16_with_the_tensors_bits():
    values = _finite_bf16(500)
    out = tf.cast(tf.constant(values.astype(np.float32)), tf.bfloat16)   # exact: bf16 values
    assert out.numpy().dtype == BF16
    assert np.array_equal(_bits(out.numpy()), _bits(values))
    scalar = out[0].numpy()
    assert isinstance(scalar, ml_dtypes.bfloat16) and _bits(np.array(scalar)) == _bits(values[:1])
    assert np.asarray(out).dtype == BF16


def test_dtype_conversions():
    assert tf.bfloat16.as_numpy_dtype is ml_dtypes.bfloat16
    assert tf.as_dtype(ml_dtypes.bfloat16) is tf.bfloat16
    assert tf.as_dtype(BF16) is tf.bfloat16
    assert tf.bfloat16 == ml_dtypes.bfloat16
    assert tf.zeros([2], dtype=ml_dtypes.bfloat16).dtype is tf.bfloat16


@pytest.mark.parametrize("graph", [False, True])
def test_constants_from_bfloat16_arrays_keep_their_bits(graph):
    values = _finite_bf16(300, seed=1)
    make = (lambda: tf.constant(values))
    t = tf.function(make)() if graph else make()
    assert t.dtype is tf.bfloat16
    assert np.array_equal(_bits(t.numpy()), _bits(values))
    widened = tf.constant(values, tf.float32).numpy()
    assert np.array_equal(widened, values.astype(np.float32))


def test_session_feeds_and_fetches_bfloat16_arrays():
    values = _finite_bf16(64, seed=2)
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.bfloat16, [None])
        out = tf.identity(p)
    with tf.compat.v1.Session(graph=g) as sess:
        got = sess.run(out, {p: values})
    assert got.dtype == BF16 and np.array_equal(_bits(got), _bits(values))


def test_numpy_function_takes_and_returns_bfloat16_arrays():
    values = _finite_bf16(32, seed=3)
    # (the function runs as TF's kernels do, subnormals flushed: kernels/denormals.py)
    values = values[np.abs(values.astype(np.float32)) >= np.finfo(np.float32).tiny]
    seen = []

    def twice(x):
        seen.append(x.dtype)
        return x * 2

    got = tf.numpy_function(twice, [tf.constant(values)], tf.bfloat16)
    assert seen == [BF16]
    assert np.array_equal(_bits(got.numpy()), _bits(values * 2))
    # a float32 result for a bfloat16 output is rounded to it
    got = tf.numpy_function(lambda x: x.astype(np.float32) + 0.5, [tf.constant(values)],
                            tf.bfloat16)
    want = (values.astype(np.float32) + 0.5).astype(BF16)
    assert np.array_equal(_bits(got.numpy()), _bits(want))


def test_tensor_protos_round_trip_bfloat16():
    values = _finite_bf16(40, seed=4)
    back = tf.make_ndarray(tf.make_tensor_proto(values))
    assert back.dtype == BF16 and np.array_equal(_bits(back), _bits(values))
    one = tf.make_ndarray(tf.make_tensor_proto(values[:1].reshape(())))
    assert one.dtype == BF16 and _bits(one) == _bits(values[:1])


def test_variables_assign_bfloat16_arrays():
    values = _finite_bf16(16, seed=5)
    v = tf.Variable(tf.zeros([values.size], tf.bfloat16))
    v.assign(values)
    assert np.array_equal(_bits(v.numpy()), _bits(values))
