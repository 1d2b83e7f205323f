"""Math ops, table-driven (see harness.py)."""

import numpy as np
import pytest

import ndflow as tf
from tests.ops.harness import OpCase, check_forward, check_gradients, check_shapes

rng = np.random.default_rng(42)


def _r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


CASES = [
    OpCase("add", lambda x, y: tf.add(x, y), [_r(3, 4), _r(3, 4)], np.add),
    OpCase("add_broadcast", lambda x, y: tf.add(x, y), [_r(3, 4), _r(4)], np.add),
    OpCase("matmul", lambda a, b: tf.matmul(a, b), [_r(3, 4), _r(4, 5)], np.matmul,
           rtol=1e-5, atol=1e-5),
    OpCase("matmul_ta_tb", lambda a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
           [_r(4, 3), _r(5, 4)], lambda a, b: a.T @ b.T),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_forward(case):
    check_forward(case)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_shape_inference(case):
    check_shapes(case)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradient(case):
    check_gradients(case)
