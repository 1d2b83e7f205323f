"""SparseTensor arguments of the unary APIs TF maps over the values (sparse_ops._UNARY_OPS,
cast, identity), the error other APIs give, and tf.print of a SparseTensor (TF 2.21's
behaviour and text)."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

import ndflow as tf

VALUES = np.array([0.25, 9.0, -4.0])


def _erf(x):
    return np.array([math.erf(v) for v in x])


def _i0e(x):
    return np.i0(x) * np.exp(-np.abs(x))


def _i1e(x):   # the power series of I1, float64
    terms = [(x / 2) ** (2 * k + 1) / (math.factorial(k) * math.factorial(k + 1))
             for k in range(40)]
    return np.sum(terms, axis=0) * np.exp(-np.abs(x))


def _st():
    return tf.sparse.SparseTensor(indices=[[0, 3], [1, 0], [2, 1]], values=VALUES.astype(
        np.float32), dense_shape=[3, 4])


@pytest.mark.parametrize("api, ref", [
    (tf.math.abs, np.abs), (tf.math.negative, np.negative), (tf.math.sign, np.sign),
    (tf.math.square, np.square), (tf.math.sqrt, np.sqrt), (tf.math.erf, _erf),
    (tf.math.tanh, np.tanh), (tf.math.bessel_i0e, _i0e),
    (tf.math.bessel_i1e, _i1e), (tf.math.sin, np.sin), (tf.math.tan, np.tan),
    (tf.math.atan, np.arctan), (tf.math.asinh, np.arcsinh), (tf.identity, lambda x: x)])
def test_unary_apis_map_the_values(api, ref):
    st = _st()
    with np.errstate(invalid="ignore"):
        want = ref(VALUES)
    out = api(st)
    assert isinstance(out, tf.sparse.SparseTensor)
    np.testing.assert_allclose(out.values.numpy(), want, rtol=1e-6, atol=1e-7)
    assert out.values.dtype == tf.float32
    np.testing.assert_array_equal(out.indices.numpy(), st.indices.numpy())
    np.testing.assert_array_equal(out.dense_shape.numpy(), [3, 4])


def test_keyword_argument_and_every_path_of_an_api():
    out = tf.math.abs(x=_st())
    np.testing.assert_array_equal(out.values.numpy(), np.abs(VALUES))
    assert tf.abs is tf.math.abs
    np.testing.assert_array_equal(tf.abs(_st()).values.numpy(), np.abs(VALUES))
    np.testing.assert_array_equal(tf.math.abs(tf.constant([-1, 2])).numpy(), [1, 2])


def test_cast_keeps_the_indices():
    out = tf.cast(_st(), tf.int32)
    assert isinstance(out, tf.sparse.SparseTensor)
    assert out.dtype == tf.int32
    np.testing.assert_array_equal(out.values.numpy(), [0, 9, -4])


def test_identity_in_a_function_keeps_a_sparse_tensor():
    @tf.function
    def f(s):
        return tf.identity(s)
    out = f(_st())
    assert isinstance(out, tf.sparse.SparseTensor)
    np.testing.assert_array_equal(out.values.numpy(), VALUES.astype(np.float32))


@pytest.mark.parametrize("api", [tf.math.exp, tf.math.cos, tf.nn.relu,
                                 lambda s: tf.math.add(s, s), tf.convert_to_tensor])
def test_other_apis_refuse_a_sparse_tensor(api):
    with pytest.raises(ValueError, match=r"(?s)Attempt to convert a value \(SparseTensor\(indices="
                       r".*with an unsupported type \(<class '.*SparseTensor'>\) to a Tensor"):
        api(_st())


def test_print_formats_the_three_components(capsys):
    tf.print("st:", _st(), output_stream=sys.stdout)
    assert capsys.readouterr().out == (
        "st: 'SparseTensor(indices=[[0 3]\n [1 0]\n [2 1]], values=[0.25 9 -4], "
        "shape=[3 4])'\n")


def test_print_of_a_sparse_tensor_in_a_list(capsys):
    st = tf.sparse.SparseTensor(indices=[[0]], values=[7], dense_shape=[2])
    tf.print([st, 1], output_stream=sys.stdout)
    assert capsys.readouterr().out == (
        "['SparseTensor(indices=[[0]], values=[7], shape=[2])', 1]\n")
