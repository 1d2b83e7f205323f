"""Lu (`tf.linalg.lu`) and TF's composites on it (lu_solve, lu_matrix_inverse,
lu_reconstruct), table-driven (harness.py). The expected `p` of a 3x3 example is TF 2.21's."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.ops.array_core import placeholder
from ndflow.ops.linalg_lu import lu, lu_matrix_inverse, lu_reconstruct, lu_solve
from tests.ops.harness import OpCase

rng = np.random.default_rng(13)


def _r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


def _np_lu(a):
    """Doolittle with partial pivoting (LAPACK's choice: the first largest |pivot|)."""
    a = a.copy()
    n = a.shape[-1]
    perm = np.arange(n)
    for k in range(n):
        i = k + int(np.argmax(np.abs(a[k:, k])))
        a[[k, i]], perm[[k, i]] = a[[i, k]], perm[[i, k]]
        a[k + 1:, k] /= a[k, k]
        a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return a, perm.astype(np.int32)


def _np_lu_batch(a):
    outs = [_np_lu(m) for m in a.reshape(-1, *a.shape[-2:])]
    return [np.stack([o[0] for o in outs]).reshape(a.shape),
            np.stack([o[1] for o in outs]).reshape(a.shape[:-1])]


def _np_reconstruct(x, perm):
    out = np.empty_like(x)
    out[perm] = (np.tril(x, -1) + np.eye(x.shape[-1])) @ np.triu(x)
    return out


_TOL = dict(rtol=1e-5, atol=1e-5, low_precision=False)

CASES = [
    OpCase("lu", lambda a: list(lu(a)), [_r(4, 4)], lambda a: list(_np_lu(a)), grad=False,
           **_TOL),
    OpCase("lu_batch", lambda a: list(lu(a)), [_r(2, 3, 3)], _np_lu_batch, grad=False, **_TOL),
    OpCase("lu_reconstruct", lambda a: lu_reconstruct(*lu(a)), [_r(4, 4)], lambda a: a,
           grad=False, **_TOL),
    OpCase("lu_reconstruct_batch", lambda a: lu_reconstruct(*lu(a)), [_r(2, 3, 3)],
           lambda a: a, grad=False, **_TOL),
    OpCase("lu_matrix_inverse", lambda a: lu_matrix_inverse(*lu(a)), [_r(2, 3, 3) + 2 * np.eye(3)],
           np.linalg.inv, grad=False, **_TOL),
    OpCase("lu_solve", lambda a, b: lu_solve(*lu(a), b), [_r(3, 3) + 2 * np.eye(3), _r(3, 2)],
           np.linalg.solve, grad=(1,), **_TOL),
    OpCase("lu_solve_broadcast", lambda a, b: lu_solve(*lu(a), b),
           [_r(3, 3) + 2 * np.eye(3), _r(2, 3, 2)], np.linalg.solve, grad=(1,), **_TOL),
    OpCase("lu_reconstruct_grad", lambda x: lu_reconstruct(x, np.array([2, 0, 1], np.int32)),
           [_r(3, 3)], lambda x: _np_reconstruct(x, [2, 0, 1]), **_TOL),
]


def test_lu_as_tf():
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]])
    factors, p = lu(a)
    assert p.dtype == tf.int32 and p.numpy().tolist() == [2, 0, 1]
    assert lu(a, output_idx_type=tf.int64)[1].dtype == tf.int64
    with pytest.raises(InvalidArgumentError, match="Input is not invertible."):
        lu(np.zeros((2, 2)))
    assert tf.linalg.lu is lu and tf.linalg.lu_solve is lu_solve
    g = Graph()
    with g.as_default():
        out, perm = lu(placeholder(tf.float32, [None, 3, 3]))
        assert out.op.type == "Lu" and perm.shape.as_list() == [None, 3]
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
            lu(placeholder(tf.float32, [2, 3]))
