"""tf.function traces a SparseTensor argument by its SparseTensorSpec, as TF 2.21 does: the
placeholders are indices [None, rank], values [None], dense_shape [rank], so calls with any
number of values reuse one trace; another dense shape traces again."""

from __future__ import annotations

import numpy as np

import ndflow as tf


def _st(n, shape=(5, 2)):
    return tf.sparse.SparseTensor([[i, 0] for i in range(n)], list(range(1, n + 1)), shape)


def test_one_trace_for_any_number_of_values():
    traces = []

    @tf.function
    def f(s):
        traces.append(1)
        return tf.sparse.reduce_sum(s), s

    for n in (1, 2, 4):
        total, out = f(_st(n))
        assert total.numpy() == n * (n + 1) // 2
        assert isinstance(out, tf.sparse.SparseTensor)
        np.testing.assert_array_equal(out.values.numpy(), np.arange(1, n + 1))
    assert len(traces) == 1
    f(_st(1, (6, 2)))
    assert len(traces) == 2


def test_traced_outputs_have_the_relaxed_component_shapes():
    @tf.function
    def f(s):
        return tf.identity(s)

    out = f.get_concrete_function(_st(3)).structured_outputs
    assert isinstance(out, tf.sparse.SparseTensor)
    assert out.indices.shape.as_list() == [None, 2]
    assert out.values.shape.as_list() == [None]
    assert out.dense_shape.shape.as_list() == [2]
