"""tensordot, matvec, matrix_transpose, norms and moments (TF composites), table-driven."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.graph import Graph
from ndflow.ops.array_core import placeholder
from ndflow.ops.linalg_extra import matrix_transpose, matvec, tensordot
from ndflow.ops.norms import (
    l2_normalize,
    log_sigmoid,
    norm,
    normalize,
    reduce_euclidean_norm,
    reduce_std,
    reduce_variance,
)
from tests.ops.harness import OpCase

rng = np.random.default_rng(5)


def _r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


def _pos(*shape):
    return rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)


_TOL = dict(rtol=1e-5, atol=1e-5)


def _l2n(x, axis, eps=1e-12):
    return x / np.sqrt(np.maximum(np.sum(x * x, axis=axis, keepdims=True), eps))


CASES = [
    OpCase("tensordot_int", lambda a, b: tensordot(a, b, 1), [_r(2, 3, 4), _r(4, 5)],
           lambda a, b: np.tensordot(a, b, 1), **_TOL),
    OpCase("tensordot_int2", lambda a, b: tensordot(a, b, 2), [_r(2, 3, 4), _r(3, 4, 2)],
           lambda a, b: np.tensordot(a, b, 2), **_TOL),
    OpCase("tensordot_outer", lambda a, b: tensordot(a, b, 0), [_r(2, 3), _r(4)],
           lambda a, b: np.tensordot(a, b, 0), **_TOL),
    OpCase("tensordot_lists", lambda a, b: tensordot(a, b, [[1, 2], [1, 0]]),
           [_r(2, 3, 4), _r(4, 3, 5)], lambda a, b: np.tensordot(a, b, [[1, 2], [1, 0]]),
           **_TOL),
    OpCase("tensordot_pair", lambda a, b: tensordot(a, b, (0, -1)), [_r(3, 2), _r(4, 3)],
           lambda a, b: np.tensordot(a, b, (0, 1)), **_TOL),
    OpCase("matvec", lambda a, b: matvec(a, b), [_r(3, 4), _r(4)], lambda a, b: a @ b, **_TOL),
    OpCase("matvec_batch_t", lambda a, b: matvec(a, b, transpose_a=True),
           [_r(2, 4, 3), _r(2, 4)], lambda a, b: np.einsum("bji,bj->bi", a, b), **_TOL),
    OpCase("matrix_transpose", lambda a: matrix_transpose(a), [_r(2, 3, 4)],
           lambda a: np.swapaxes(a, -1, -2)),
    OpCase("linalg_transpose_conj", lambda a: tf.compat.v1.linalg.transpose(a, conjugate=True),
           [_r(3, 4)], lambda a: a.T),
    OpCase("normalize_axis", lambda x: list(normalize(x, axis=1)), [_pos(3, 4)],
           lambda x: [x / np.linalg.norm(x, axis=1, keepdims=True),
                      np.linalg.norm(x, axis=1, keepdims=True)], **_TOL),
    OpCase("normalize_ord1", lambda x: list(normalize(x, ord=1)), [_pos(3, 4)],
           lambda x: [x / np.abs(x).sum(), np.abs(x).sum().reshape(1, 1)], **_TOL),
    OpCase("reduce_variance", lambda x: reduce_variance(x), [_r(3, 4)], np.var, **_TOL),
    OpCase("reduce_variance_axis", lambda x: reduce_variance(x, axis=1, keepdims=True),
           [_r(3, 4)], lambda x: np.var(x, axis=1, keepdims=True), **_TOL),
    OpCase("reduce_std_axes", lambda x: reduce_std(x, axis=[0, 2]), [_r(3, 4, 2)],
           lambda x: np.std(x, axis=(0, 2)), **_TOL),
    OpCase("norm_euclidean", lambda x: norm(x), [_r(3, 4)], np.linalg.norm, **_TOL),
    OpCase("norm_axis_keepdims", lambda x: norm(x, axis=1, keepdims=True), [_r(3, 4)],
           lambda x: np.linalg.norm(x, axis=1, keepdims=True), **_TOL),
    OpCase("norm_ord1", lambda x: norm(x, ord=1, axis=-1), [_pos(3, 4)],
           lambda x: np.linalg.norm(x, 1, axis=-1), **_TOL),
    OpCase("norm_ord2", lambda x: norm(x, ord=2, axis=0), [_r(3, 4)],
           lambda x: np.linalg.norm(x, 2, axis=0), **_TOL),
    OpCase("norm_ord3", lambda x: norm(x, ord=3, axis=0), [_pos(3, 4)],
           lambda x: np.linalg.norm(x, 3, axis=0), rtol=1e-5, atol=1e-5, grad_tol=1e-4),
    OpCase("norm_inf", lambda x: norm(x, ord=np.inf, axis=1), [_pos(3, 4)],
           lambda x: np.linalg.norm(x, np.inf, axis=1), **_TOL),
    OpCase("norm_fro", lambda x: norm(x, "fro", axis=(0, 2)), [_r(3, 2, 4)],
           lambda x: np.sqrt(np.sum(x * x, axis=(0, 2))), **_TOL),
    OpCase("norm_matrix_1", lambda x: norm(x, 1, axis=[0, 1]), [_pos(3, 4)],
           lambda x: np.linalg.norm(x, 1), **_TOL),
    OpCase("norm_matrix_inf", lambda x: norm(x, np.inf, axis=(-2, -1)), [_pos(3, 4)],
           lambda x: np.linalg.norm(x, np.inf), **_TOL),
    OpCase("l2_normalize", lambda x: l2_normalize(x, axis=1), [_r(3, 4)],
           lambda x: _l2n(x, 1), **_TOL),
    OpCase("nn_l2_normalize_all", lambda x: tf.nn.l2_normalize(x), [_r(3, 4)],
           lambda x: _l2n(x, None), **_TOL),
    OpCase("l2_normalize_eps", lambda x: l2_normalize(x, 0, epsilon=0.5), [_r(3) * 0.1],
           lambda x: _l2n(x, 0, 0.5), **_TOL),
    OpCase("reduce_euclidean_norm", lambda x: reduce_euclidean_norm(x, 1), [_r(3, 4)],
           lambda x: np.linalg.norm(x, axis=1), **_TOL),
    OpCase("reduce_max_keepdims_grad", lambda x: tf.reduce_max(x, 1, keepdims=True),
           [_pos(3, 4)], lambda x: np.max(x, 1, keepdims=True), **_TOL),
    OpCase("log_sigmoid", lambda x: log_sigmoid(x), [_r(3, 4) * 5],
           lambda x: -np.logaddexp(0, -x), **_TOL),
]



def test_graph_structure_and_names():
    with Graph().as_default():
        a, b = placeholder(tf.float32, [None, 3, 4]), placeholder(tf.float32, [4, 5])
        out = tensordot(a, b, 1)
        assert out.name == "Tensordot:0" and out.shape.as_list() == [None, 3, 5]
        assert out.op.type == "Reshape"
        assert l2_normalize(a, 1).name == "l2_normalize:0"
        assert log_sigmoid(a).op.type == "Neg"
        assert matvec(a, placeholder(tf.float32, [4])).shape.as_list() == [None, 3]
        assert matrix_transpose(placeholder(tf.float32, None)).shape.rank is None


def test_bad_arguments():
    x = tf.constant(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="'ord' must be a supported vector norm"):
        norm(x, ord=-1)
    with pytest.raises(ValueError, match="'ord' must be a supported matrix norm"):
        norm(x, ord=3, axis=(0, 1))
    with pytest.raises(ValueError, match="'axis' must be None, an integer, or a tuple"):
        norm(x, axis=(0, 0))
    with pytest.raises(ValueError, match="Different number of contraction axes"):
        tensordot(x, x, [[0, 1], [0]])
    with pytest.raises(ValueError, match="must not be larger than the number of dimensions"):
        tensordot(x, x, 3)
    with pytest.raises(TypeError, match="Input must be either real or complex"):
        reduce_variance(tf.constant([1, 2, 3]))
    with pytest.raises(ValueError, match="rank >= 2"):
        matrix_transpose(tf.constant([1.0, 2.0]))


def test_public_names():
    assert tf.tensordot is tensordot and tf.linalg.tensordot is tensordot
    assert tf.norm is norm and tf.linalg.norm is norm
    assert tf.linalg.matvec is matvec and tf.linalg.matrix_transpose is matrix_transpose
    assert tf.math.reduce_variance is reduce_variance and tf.math.reduce_std is reduce_std
    assert tf.nn.l2_normalize is l2_normalize and tf.math.l2_normalize is l2_normalize
    assert tf.math.log_sigmoid is log_sigmoid and tf.math.softplus is tf.nn.softplus
    assert tf.math.reduce_euclidean_norm is reduce_euclidean_norm
    assert tf.compat.v1.norm is norm and tf.compat.v1.tensordot is tensordot
    assert tf.compat.v1.nn.l2_normalize is l2_normalize
