"""tf.sparse ops against NumPy float64 dense equivalents: forward eagerly and in graphs, and
the values' (and dense operands') gradients by finite differences, and the pass pipeline
(the CASES table drives tests/ops/conftest.py's checks)."""

import numpy as np

import ndflow as tf
from tests.ops.harness import OpCase

IDX = np.array([[0, 1], [1, 0], [1, 3], [3, 2]], np.int64)     # row-major order
SHAPE = [4, 4]
SHUFFLED = np.array([[1, 3], [0, 1], [3, 2], [1, 0]], np.int64)
B_IDX = np.array([[0, 1], [2, 2], [3, 2]], np.int64)
VALS = np.array([1.5, -2.0, 3.0, 0.5])
B_VALS = np.array([0.25, 4.0, -1.0])


def _dense(idx, vals, shape=SHAPE):
    out = np.zeros(shape)
    out[tuple(np.asarray(idx).T)] = vals
    return out


def _sp(v, idx=IDX, shape=SHAPE):
    return tf.SparseTensor(idx, v, shape)


def _td(sp):
    return tf.sparse.to_dense(sp)


def _matmul_ref(adj_a, adj_b):
    def ref(v, b):
        a = _dense(IDX, v, [4, 4])
        return (a.T if adj_a else a) @ (b.T if adj_b else b)
    return ref


def _segment_ref(kind):
    data_idx, ids = np.array([0, 2, 2, 1]), np.array([0, 0, 2, 2])

    def ref(data):
        out = np.zeros((4, data.shape[1]))
        np.add.at(out, ids, data[data_idx])
        counts = np.maximum(np.bincount(ids, minlength=4), 1).reshape(-1, 1)
        return out if kind == "sum" else out / (counts if kind == "mean" else np.sqrt(counts))
    fn = getattr(tf.sparse, f"segment_{kind}")
    return OpCase(f"segment_{kind}", lambda d: fn(d, data_idx, ids, num_segments=4),
                  [np.arange(6.0).reshape(3, 2) - 2.5], ref, low_precision=False)


def _softmax_ref(v):
    out = np.zeros_like(v)
    for r in np.unique(IDX[:, 0]):
        m = IDX[:, 0] == r
        e = np.exp(v[m] - v[m].max())
        out[m] = e / e.sum()
    return out


CASES = [
    OpCase("reorder", lambda v: tf.sparse.reorder(_sp(v, SHUFFLED)).values, [VALS],
           lambda v: v[np.lexsort(SHUFFLED.T[::-1])], low_precision=False),
    OpCase("reshape", lambda v: _td(tf.sparse.reshape(_sp(v), [2, -1])), [VALS],
           lambda v: _dense(IDX, v).reshape(2, 8), low_precision=False,
           static_shape_exact=False),
    OpCase("add_sparse", lambda a, b: _td(tf.sparse.add(_sp(a), _sp(b, B_IDX))), [VALS, B_VALS],
           lambda a, b: _dense(IDX, a) + _dense(B_IDX, b), low_precision=False,
           static_shape_exact=False),
    OpCase("add_dense", lambda a, d: tf.sparse.add(_sp(a), d), [VALS, np.ones((4, 4)) * 0.5],
           lambda a, d: _dense(IDX, a) + d, low_precision=False),
    OpCase("slice", lambda v: _td(tf.sparse.slice(_sp(v), [1, 0], [3, 3])), [VALS],
           lambda v: _dense(IDX, v)[1:4, 0:3], low_precision=False, static_shape_exact=False),
    OpCase("fill_empty_rows",
           lambda v, d: _td(tf.sparse.fill_empty_rows(_sp(v), d)[0]), [VALS, np.array(7.0)],
           lambda v, d: _dense(np.vstack([IDX, [[2, 0]]]), np.append(v, d)),
           low_precision=False, static_shape_exact=False),
    OpCase("reduce_sum_axis1", lambda v: tf.sparse.reduce_sum(_sp(v), axis=1), [VALS],
           lambda v: _dense(IDX, v).sum(1), low_precision=False, static_shape_exact=False),
    OpCase("reduce_sum_keepdims", lambda v: tf.sparse.reduce_sum(_sp(v), 0, keepdims=True),
           [VALS], lambda v: _dense(IDX, v).sum(0, keepdims=True), low_precision=False,
           static_shape_exact=False),
    OpCase("reduce_sum_all", lambda v: tf.sparse.reduce_sum(_sp(v)), [VALS],
           lambda v: _dense(IDX, v).sum(), low_precision=False, static_shape_exact=False),
    OpCase("softmax", lambda v: tf.sparse.softmax(_sp(v)).values, [VALS], _softmax_ref,
           low_precision=False),
    _segment_ref("sum"), _segment_ref("mean"), _segment_ref("sqrt_n"),
    OpCase("mul_dense_row", lambda v, d: (_sp(v) * d).values,
           [VALS, np.array([0.5, -1.0, 2.0, 3.0])], lambda v, d: v * d[IDX[:, 1]],
           low_precision=False, static_shape_exact=False),
    OpCase("div_dense_column", lambda v, d: (_sp(v) / d).values,
           [VALS, np.array([[0.5], [-1.0], [2.0], [3.0]])], lambda v, d: v / d[IDX[:, 0], 0],
           low_precision=False, static_shape_exact=False),
    OpCase("sampled_addmm",
           lambda v, a, b: tf.sparse.sampled_addmm(IDX, v, [4, 4], a, b, beta=0.5,
                                                   alpha=2.0, output_type=a.dtype)[1],
           [VALS, np.arange(12.0).reshape(4, 3) / 5, np.arange(12.0).reshape(3, 4) / 7 - 1],
           lambda v, a, b: 2.0 * (a @ b)[tuple(IDX.T)] + 0.5 * v, low_precision=False,
           static_shape_exact=False),
] + [
    OpCase(f"matmul_adj{int(aa)}{int(ab)}",
           lambda v, b, aa=aa, ab=ab: tf.sparse.sparse_dense_matmul(_sp(v), b, aa, ab),
           [VALS, np.arange(12.0).reshape(4, 3).T.copy() if ab else
            np.arange(12.0).reshape(4, 3) / 7], _matmul_ref(aa, ab), low_precision=False)
    for aa in (False, True) for ab in (False, True)
]

CASES += [
    OpCase("reduce_max", lambda v: tf.sparse.reduce_max(_sp(v), axis=1), [VALS - 2],
           lambda v: np.array([v[0], max(v[1], v[2]), 0.0, v[3]]), low_precision=False,
           grad=False, static_shape_exact=False),
    OpCase("concat_axis1",
           lambda a, b: _td(tf.sparse.concat(1, [_sp(a), _sp(b, B_IDX)])), [VALS, B_VALS],
           lambda a, b: np.concatenate([_dense(IDX, a), _dense(B_IDX, b)], 1),
           low_precision=False, grad=False, static_shape_exact=False),
    OpCase("maximum", lambda a, b: _td(tf.sparse.maximum(_sp(a), _sp(b, B_IDX))),
           [VALS, B_VALS], lambda a, b: np.maximum(_dense(IDX, a), _dense(B_IDX, b)),
           low_precision=False, grad=False, static_shape_exact=False),
    OpCase("minimum", lambda a, b: _td(tf.sparse.minimum(_sp(a), _sp(b, B_IDX))),
           [VALS, B_VALS], lambda a, b: np.minimum(_dense(IDX, a), _dense(B_IDX, b)),
           low_precision=False, grad=False, static_shape_exact=False),
    OpCase("split", lambda v: [_td(s) for s in tf.sparse.split(_sp(v), 3, axis=1)], [VALS],
           lambda v: [_dense(IDX, v)[:, :2], _dense(IDX, v)[:, 2:3], _dense(IDX, v)[:, 3:]],
           low_precision=False, grad=False, static_shape_exact=False),
    OpCase("transpose", lambda v: _td(tf.sparse.transpose(_sp(v))), [VALS],
           lambda v: _dense(IDX, v).T, low_precision=False, grad=False,
           static_shape_exact=False),
]

