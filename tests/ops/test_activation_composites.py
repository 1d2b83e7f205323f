"""tf.nn.gelu (exact and approximate), tf.nn.silu / swish and tf.math.cumulative_logsumexp
against NumPy float64 references (values checked with TF 2.21), gradients by finite
differences."""

import math

import numpy as np

import ndflow as tf
from tests.ops.harness import OpCase

rng = np.random.default_rng(12)
_X = rng.uniform(-3, 3, (3, 4))
_erfc = np.vectorize(math.erfc)


def _np_logcumsumexp(x, axis=0, exclusive=False, reverse=False):
    x = np.flip(x, axis) if reverse else x
    out = np.logaddexp.accumulate(x, axis=axis)
    if exclusive:
        pad = np.full_like(np.take(out, [0], axis=axis), -np.inf)
        out = np.concatenate([pad, np.delete(out, -1, axis=axis)], axis=axis)
    return np.flip(out, axis) if reverse else out


CASES = [
    OpCase("gelu", tf.nn.gelu, [_X], lambda x: 0.5 * x * _erfc(-x / math.sqrt(2))),
    OpCase("gelu_approximate", lambda x: tf.nn.gelu(x, approximate=True), [_X],
           lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    OpCase("silu", tf.nn.silu, [_X], lambda x: x / (1 + np.exp(-x))),
    OpCase("swish_beta", lambda x: tf.nn.swish(x, 2.0), [_X], lambda x: x / (1 + np.exp(-2 * x))),
    OpCase("cumulative_logsumexp", lambda x: tf.math.cumulative_logsumexp(x, axis=1), [_X],
           lambda x: _np_logcumsumexp(x, 1)),
    OpCase("cumulative_logsumexp_reverse", lambda x: tf.math.cumulative_logsumexp(
        x, reverse=True), [_X], lambda x: _np_logcumsumexp(x, 0, reverse=True)),
    OpCase("cumulative_logsumexp_exclusive", lambda x: tf.math.cumulative_logsumexp(
        x, axis=1, exclusive=True), [_X], lambda x: _np_logcumsumexp(x, 1, exclusive=True),
           grad=False),
]


def test_cumulative_logsumexp_does_not_overflow():
    out = tf.math.cumulative_logsumexp(tf.constant([1000.0, 1000.0], tf.float32)).numpy()
    np.testing.assert_allclose(out, [1000.0, 1000.0 + math.log(2)], rtol=1e-6)
