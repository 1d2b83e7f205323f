"""SparseToDense forward and its gradient (values and default) by finite differences."""

import numpy as np
import pytest

import ndflow as tf
from tests.ops.harness import OpCase, check_forward, check_gradients

INDICES = np.array([[0, 1], [1, 2], [2, 0]], np.int64)  # sorted: to_dense validates


def _ref(values, default):
    out = np.full((3, 3), default, np.float64)
    out[tuple(INDICES.T)] = values
    return out


CASES = [OpCase("sparse_to_dense",
                lambda v, d: tf.sparse.to_dense(tf.SparseTensor(INDICES, v, [3, 3]),
                                                default_value=d),
                [np.array([1.5, -2.0, 3.0]), np.array(0.25)], _ref, low_precision=False)]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_forward(case):
    check_forward(case)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradient(case):
    check_gradients(case)
