"""MatMul and BatchMatMulV2, table-driven (see harness.py), plus dispatch and shape errors."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.graph import Graph
from ndflow.ops.array_core import placeholder
from ndflow.ops.linalg import matmul
from tests.ops.harness import OpCase

rng = np.random.default_rng(3)


def _r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


_TOL = dict(rtol=1e-5, atol=1e-5)
_T = np.swapaxes

CASES = [
    OpCase("matmul", lambda a, b: matmul(a, b), [_r(3, 4), _r(4, 5)], np.matmul, **_TOL),
    OpCase("matmul_ta", lambda a, b: matmul(a, b, transpose_a=True), [_r(4, 3), _r(4, 5)],
           lambda a, b: a.T @ b, **_TOL),
    OpCase("matmul_tb", lambda a, b: matmul(a, b, transpose_b=True), [_r(3, 4), _r(5, 4)],
           lambda a, b: a @ b.T, **_TOL),
    OpCase("matmul_ta_tb", lambda a, b: matmul(a, b, transpose_a=True, transpose_b=True),
           [_r(4, 3), _r(5, 4)], lambda a, b: a.T @ b.T, **_TOL),
    OpCase("matmul_overload", lambda a, b: a @ b, [_r(2, 3), _r(3, 2)], np.matmul, **_TOL),
    OpCase("matmul_int", lambda a, b: matmul(a, b),
           [rng.integers(-5, 5, (3, 4)).astype(np.int32),
            rng.integers(-5, 5, (4, 2)).astype(np.int32)], np.matmul,
           dtypes=(tf.float32,), low_precision=False, grad=False),
    OpCase("batch_matmul", lambda a, b: matmul(a, b), [_r(2, 3, 4), _r(2, 4, 5)], np.matmul,
           **_TOL),
    OpCase("batch_matmul_broadcast", lambda a, b: matmul(a, b), [_r(2, 1, 3, 4), _r(3, 4, 2)],
           np.matmul, **_TOL),
    OpCase("batch_matmul_rank2_rhs", lambda a, b: matmul(a, b), [_r(2, 3, 4), _r(4, 5)],
           np.matmul, **_TOL),
    OpCase("batch_matmul_adj_x", lambda a, b: matmul(a, b, adjoint_a=True),
           [_r(2, 4, 3), _r(1, 4, 5)], lambda a, b: _T(a, -1, -2) @ b, **_TOL),
    OpCase("batch_matmul_adj_y", lambda a, b: matmul(a, b, transpose_b=True),
           [_r(3, 4), _r(2, 5, 4)], lambda a, b: a @ _T(b, -1, -2), **_TOL),
    OpCase("batch_matmul_adj_both", lambda a, b: matmul(a, b, adjoint_a=True, adjoint_b=True),
           [_r(2, 4, 3), _r(2, 5, 4)], lambda a, b: _T(a, -1, -2) @ _T(b, -1, -2), **_TOL),
]



def test_matmul_dispatch_and_errors():
    with Graph().as_default():
        a = placeholder(tf.float32, [2, 3])
        assert matmul(a, placeholder(tf.float32, [3, 4])).op.type == "MatMul"
        b = matmul(placeholder(tf.float32, [5, 2, 3]), placeholder(tf.float32, [3, 4]))
        assert b.op.type == "BatchMatMulV2" and b.op.name == "MatMul_1"
        assert b.shape.as_list() == [5, 2, 4]
        assert matmul(a, placeholder(tf.float32, None)).op.type == "BatchMatMulV2"
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 5 and 4"):
            matmul(placeholder(tf.float32, [5, 2, 3]), placeholder(tf.float32, [4, 3, 2]))
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
            matmul(a, placeholder(tf.float32, [4, 2]))
        with pytest.raises(ValueError, match="Only one of transpose_a and adjoint_a"):
            matmul(a, a, transpose_a=True, adjoint_a=True)
