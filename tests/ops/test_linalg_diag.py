"""MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3, MatrixBandPart, `tf.linalg.trace` and
`tf.linalg.adjoint`, table-driven (see harness.py), plus TF's shape errors and graph names.

The NumPy references walk the matrix element by element; the expected layouts were checked
against TensorFlow 2.21 (e.g. diag_part of arange(12).reshape(3, 4) with k=(-1, 2)).
"""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.ops import linalg_diag as ld
from ndflow.ops.apply import apply_op
from ndflow.ops.array_core import placeholder
from ndflow.ops.linalg_diag import (
    adjoint,
    band_part,
    matrix_diag,
    matrix_diag_part,
    matrix_set_diag,
    trace,
)
from tests.ops.harness import OpCase

rng = np.random.default_rng(11)


def _r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


def _slot(d, i, rows, cols, lo, hi, align):
    """(row in the stacked band, position) of the element i of diagonal d."""
    longest = min(rows + min(0, hi), cols - max(0, lo))
    length = min(rows + min(0, d), cols - max(0, d))
    side = align.split("_")[0 if d >= 0 else 1]
    return hi - d, i + (longest - length if side == "RIGHT" else 0)


def _np_diag_part(x, k=0, pad=0.0, align="RIGHT_LEFT"):
    lo, hi = (k, k) if np.isscalar(k) else k
    rows, cols = x.shape[-2:]
    longest = min(rows + min(0, hi), cols - max(0, lo))
    out = np.full(x.shape[:-2] + (hi - lo + 1, longest), pad, x.dtype)
    for r in range(rows):
        for c in range(cols):
            d = c - r
            if lo <= d <= hi:
                out[(..., *_slot(d, min(r, c), rows, cols, lo, hi, align))] = x[..., r, c]
    return out[..., 0, :] if lo == hi else out


def _np_set_diag(x, diag, k=0, align="RIGHT_LEFT"):
    lo, hi = (k, k) if np.isscalar(k) else k
    rows, cols = x.shape[-2:]
    stacked = diag[..., None, :] if lo == hi else diag
    out = x.copy()
    for r in range(rows):
        for c in range(cols):
            if lo <= c - r <= hi:
                out[..., r, c] = stacked[(..., *_slot(c - r, min(r, c), rows, cols, lo, hi,
                                                      align))]
    return out


def _raw(op, *inputs):
    return apply_op(op, list(inputs)).outputs[0]


def _np_band(x, lower, upper):
    rows, cols = x.shape[-2:]
    r, c = np.arange(rows)[:, None], np.arange(cols)[None, :]
    keep = ((lower < 0) | (r - c <= lower)) & ((upper < 0) | (c - r <= upper))
    return np.where(keep, x, 0.0)


CASES = [
    OpCase("diag_part", lambda x: matrix_diag_part(x), [_r(2, 3, 4)],
           lambda x: np.diagonal(x, axis1=-2, axis2=-1)),
    OpCase("diag_part_k1", lambda x: matrix_diag_part(x, k=1), [_r(4, 3)],
           lambda x: np.diagonal(x, 1)),
    OpCase("diag_part_k_neg", lambda x: matrix_diag_part(x, k=-2), [_r(4, 3)],
           lambda x: np.diagonal(x, -2)),
    OpCase("diag_part_band", lambda x: matrix_diag_part(x, k=(-1, 2)), [_r(2, 3, 4)],
           lambda x: _np_diag_part(x, (-1, 2))),
    OpCase("diag_part_band_left_right_pad",
           lambda x: matrix_diag_part(x, k=(-1, 2), padding_value=9, align="LEFT_RIGHT"),
           [_r(3, 4)], lambda x: _np_diag_part(x, (-1, 2), 9.0, "LEFT_RIGHT")),
    OpCase("diag_part_band_tall", lambda x: matrix_diag_part(x, k=(-3, 0), align="LEFT_LEFT"),
           [_r(5, 3)], lambda x: _np_diag_part(x, (-3, 0), 0.0, "LEFT_LEFT")),
    OpCase("diag", lambda d: matrix_diag(d), [_r(2, 3)],
           lambda d: np.stack([np.diag(v) for v in d])),
    OpCase("diag_k_rect", lambda d: matrix_diag(d, k=1, num_cols=5), [_r(3)],
           lambda d: _np_set_diag(np.zeros((3, 5)), d, 1)),
    OpCase("diag_band_pad", lambda d: matrix_diag(d, k=(-1, 0), num_cols=4, padding_value=7),
           [_r(2, 3)], lambda d: _np_set_diag(np.full((3, 4), 7.0), d, (-1, 0))),
    OpCase("diag_band_square", lambda d: matrix_diag(d, k=(-1, 1), align="RIGHT_RIGHT"),
           [_r(2, 3, 2)], lambda d: np.stack([_np_set_diag(np.zeros((2, 2)), v, (-1, 1),
                                                            "RIGHT_RIGHT") for v in d])),
    OpCase("set_diag", lambda x, d: matrix_set_diag(x, d), [_r(2, 3, 4), _r(2, 3)],
           lambda x, d: _np_set_diag(x, d)),
    OpCase("set_diag_band", lambda x, d: matrix_set_diag(x, d, k=(0, 1)), [_r(3, 4), _r(2, 3)],
           lambda x, d: _np_set_diag(x, d, (0, 1))),
    OpCase("set_diag_k_neg", lambda x, d: matrix_set_diag(x, d, k=-1, align="LEFT_LEFT"),
           [_r(2, 4, 3), _r(2, 3)], lambda x, d: _np_set_diag(x, d, -1, "LEFT_LEFT")),
    OpCase("band_part_lower", lambda x: band_part(x, -1, 0), [_r(2, 3, 4)],
           lambda x: _np_band(x, -1, 0)),
    OpCase("band_part_tridiag", lambda x: band_part(x, 1, 1), [_r(4, 4)],
           lambda x: _np_band(x, 1, 1)),
    OpCase("band_part_upper_int64", lambda x: band_part(x, np.int64(0), np.int64(-1)),
           [_r(3, 5)], lambda x: _np_band(x, 0, -1)),
    OpCase("MatrixDiagPartV2_band", lambda x: _raw(ld.MatrixDiagPartV2, x, [-1, 2], 0.0),
           [_r(2, 3, 4)], lambda x: _np_diag_part(x, (-1, 2), 0.0, "LEFT_LEFT")),
    OpCase("MatrixDiagV2_band", lambda d: _raw(ld.MatrixDiagV2, d, [0, 1], -1, 4, 0.0),
           [_r(2, 3)], lambda d: _np_set_diag(np.zeros((3, 4)), d, (0, 1), "LEFT_LEFT")),
    OpCase("MatrixSetDiagV2_band", lambda x, d: _raw(ld.MatrixSetDiagV2, x, d, [-1, 0]),
           [_r(3, 3), _r(2, 3)], lambda x, d: _np_set_diag(x, d, (-1, 0), "LEFT_LEFT")),
    OpCase("MatrixDiag_v1", lambda d: _raw(ld.MatrixDiag, d), [_r(2, 3)],
           lambda d: np.stack([np.diag(v) for v in d])),
    OpCase("MatrixDiagPart_v1", lambda x: _raw(ld.MatrixDiagPart, x), [_r(2, 4, 3)],
           lambda x: np.diagonal(x, axis1=-2, axis2=-1)),
    OpCase("MatrixSetDiag_v1", lambda x, d: _raw(ld.MatrixSetDiag, x, d), [_r(3, 4), _r(3)],
           lambda x, d: _np_set_diag(x, d)),
    OpCase("trace", lambda x: trace(x), [_r(2, 3, 3)],
           lambda x: np.trace(x, axis1=-2, axis2=-1)),
    OpCase("adjoint", lambda x: adjoint(x), [_r(2, 3, 4)], lambda x: np.swapaxes(x, -1, -2)),
]


def _impl(api):
    """The function behind a public name (LinearOperators install a dispatching wrapper on
    some of tf.linalg's, as TF's dispatch decorator wraps every API)."""
    return getattr(api, "_dispatch_original", api)


def test_public_names_v1_and_v2():
    assert _impl(tf.linalg.diag) is matrix_diag and _impl(tf.compat.v1.matrix_diag) is matrix_diag
    assert _impl(tf.compat.v1.matrix_diag_part) is matrix_diag_part
    assert _impl(tf.compat.v1.matrix_set_diag) is matrix_set_diag
    assert _impl(tf.compat.v1.matrix_band_part) is band_part
    assert _impl(tf.linalg.band_part) is band_part
    assert _impl(tf.compat.v1.trace) is trace and _impl(tf.linalg.trace) is trace
    assert not hasattr(tf, "trace")


def test_graph_names_and_ops_as_tf():
    g = Graph()
    with g.as_default():
        x = placeholder(tf.float32, [None, 3, 4])
        d = matrix_diag_part(x, k=(-1, 1))
        assert d.op.type == "MatrixDiagPartV3" and d.op.name == "diag_part"
        assert d.shape.as_list() == [None, 3, 3]
        assert d.op.inputs[1].op.name == "diag_part/k"
        t = trace(x)
        assert t.op.name == "Trace" and t.op.inputs[0].op.name == "Trace/diag_part"
        m = matrix_diag(placeholder(tf.float32, [2, 3]), k=(0, 1), num_cols=5)
        assert m.op.type == "MatrixDiagV3" and m.shape.as_list() == [3, 5]
        assert band_part(x, 1, -1).op.inputs[1].dtype == tf.int32


def test_build_errors_as_tf():
    g = Graph()
    with g.as_default():
        with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
            matrix_diag_part(placeholder(tf.float32, [3]))
        with pytest.raises(ValueError, match="number of rows of `diagonal` doesn't match"):
            matrix_diag(placeholder(tf.float32, [2, 3]), k=(-1, 1))


def test_eager_errors():
    with pytest.raises(InvalidArgumentError):
        matrix_set_diag(np.zeros((3, 3)), np.ones(2))
    with pytest.raises(InvalidArgumentError, match="num_lower must be negative or less"):
        band_part(np.zeros((3, 3)), 4, 0)


_A = np.arange(9.0).reshape(3, 3)

# TF 2.21's eager (kernel) wording for each bad call.
EAGER_ERRORS = [
    (lambda: matrix_diag_part(_A, k=5), "lower_diag_index is out of bound: 5. It must be "
     "between -3 and 3"),
    (lambda: matrix_diag_part(_A, k=(0, 3)), "upper_diag_index is out of bound: 3 It must be "
     "between -3 and 3"),
    (lambda: matrix_diag_part(_A, k=(1, 0)), "lower_diag_index must not be larger than "
     "upper_diag_index: 1 > 0"),
    (lambda: matrix_diag_part(_A, k=[0, 1, 2]), "diag_index must have only one or two "
     "elements, received 3 elements."),
    (lambda: matrix_set_diag(_A, np.ones(2)), "Input shape: [3,3]\nDiagonal shape: [2]\n"
     "Expected diagonal shape: [3]"),
    (lambda: matrix_diag(np.ones(3), num_rows=2), "The number of rows is too small."),
    (lambda: matrix_diag(np.ones(3), num_cols=2), "The number of columns is too small."),
    (lambda: matrix_diag(np.ones((3, 3)), k=(0, 1)), "The number of diagonals provided in the "
     "input does not match the lower_diag_index and upper_diag_index range."),
    (lambda: matrix_diag(np.float32(1)), "diagonal must be at least 1-dim, received shape: []"),
    (lambda: band_part(np.ones(3), 0, 0), "input must be at least 2-dim, received shape: [3]"),
    (lambda: band_part(_A, 0, 4), "num_upper must be negative or less or equal to number of "
     "columns (3) got: 4"),
    (lambda: trace(np.ones(3)), "input must be at least 2-dim, received shape: [3]"),
]


@pytest.mark.parametrize("call,message", EAGER_ERRORS)
def test_eager_error_messages_as_tf(call, message):
    with pytest.raises(InvalidArgumentError) as info:
        call()
    assert message in str(info.value)


def test_graph_error_messages_as_tf():
    with Graph().as_default():
        p = placeholder(tf.float32, [3, 3])
        for call, message in [
                (lambda: matrix_diag_part(p, k=5), "lower_diag_index is out of bound. for"),
                (lambda: matrix_diag_part(p, k=(1, 0)),
                 "lower_diag_index is greater than upper_diag_index"),
                (lambda: matrix_diag_part(p, k=[0, 1, 2]),
                 "diag_index must be a vector with one or two elements. It has 3 elements."),
                (lambda: matrix_diag(np.ones(3, np.float32), num_rows=2), "num_rows is too small")]:
            with pytest.raises(ValueError) as info:
                call()
            assert message in str(info.value)
