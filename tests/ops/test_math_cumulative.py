"""Cumsum / Cumprod (`tf.math.cumsum`, `tf.math.cumprod`) and DivNoNan, table-driven."""

import inspect

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.ops.arithmetic import div_no_nan
from ndflow.ops.math_cumulative import cumprod, cumsum
from tests.ops.harness import OpCase, run_plan

rng = np.random.default_rng(5)


def _r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


def _away(*shape):  # away from zero: Cumprod's gradient divides by x
    return rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)


def _np_scan(fn, ident, x, axis, exclusive=False, reverse=False):
    if reverse:
        x = np.flip(x, axis)
    out = fn(x, axis=axis)
    if exclusive:
        head = np.full_like(np.take(out, [0], axis=axis), ident)
        out = np.concatenate([head, np.take(out, np.arange(x.shape[axis] - 1), axis=axis)],
                             axis)
    return np.flip(out, axis) if reverse else out


def _cs(x, axis, **kw):
    return _np_scan(np.cumsum, 0, x, axis, **kw)


def _cp(x, axis, **kw):
    return _np_scan(np.cumprod, 1, x, axis, **kw)


CASES = []
for excl in (False, True):
    for rev in (False, True):
        tag = f"{'excl' if excl else 'incl'}_{'rev' if rev else 'fwd'}"
        CASES += [
            OpCase(f"cumsum_{tag}", lambda x, e=excl, r=rev: cumsum(x, 1, exclusive=e, reverse=r),
                   [_r(2, 4, 3)], lambda x, e=excl, r=rev: _cs(x, 1, exclusive=e, reverse=r)),
            OpCase(f"cumprod_{tag}",
                   lambda x, e=excl, r=rev: cumprod(x, -1, exclusive=e, reverse=r),
                   [_away(3, 4)], lambda x, e=excl, r=rev: _cp(x, -1, exclusive=e, reverse=r),
                   rtol=1e-5, grad_tol=1e-4),
        ]
CASES += [
    OpCase("cumsum_axis0_default", lambda x: cumsum(x), [_r(5, 2)], lambda x: _cs(x, 0)),
    OpCase("cumsum_int", lambda x: cumsum(x, 0), [np.array([[1, 2], [3, 4]], np.int32)],
           lambda x: np.cumsum(x, 0).astype(np.int32), grad=False),
    OpCase("cumsum_int64_axis", lambda x: cumsum(x, np.int64(1)), [_r(2, 3)],
           lambda x: _cs(x, 1)),
    OpCase("cumprod_empty_axis", lambda x: cumprod(x, 1, exclusive=True), [_r(2, 0)],
           lambda x: x, grad=False),
    OpCase("div_no_nan", lambda x, y: div_no_nan(x, y), [_r(2, 3), _away(3)],
           lambda x, y: x / y),
    OpCase("div_no_nan_zero", lambda x: div_no_nan(x, tf.constant([0.0, 2.0, 0.0], x.dtype)),
           [_r(2, 3)], lambda x: x * np.array([0.0, 0.5, 0.0])),
]



def test_cumprod_gradient_at_zero_is_tfs_div_no_nan():
    # TF divides by x with div_no_nan, so entries past a zero get 0 (not the true 8 at x[1]):
    # TF 2.21 gives [1. 0. 0.] for this input.
    x = tf.constant([2.0, 0.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = cumprod(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [1.0, 0.0, 0.0])


def test_names_and_exports():
    assert tf.cumsum is cumsum and tf.math.cumsum is cumsum and tf.math.cumprod is cumprod
    # the public object wraps it for RaggedTensor arguments (ops/ragged_dispatch.py)
    assert inspect.unwrap(tf.math.divide_no_nan) is div_no_nan
    with Graph().as_default():
        out = cumsum(tf.zeros([2, 3, 4]), axis=1)
        assert out.op.name == "Cumsum" and out.op.type == "Cumsum"
        assert out.shape.as_list() == [2, 3, 4]
        with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
            cumsum(tf.zeros([2]), axis=[0, 1])


def test_axis_out_of_range_eager_and_graph():
    msg = r"ScanOp: Expected scan axis in the range \[-2, 2\), but got 2"
    with pytest.raises(InvalidArgumentError, match=msg + r" \[Op:Cumsum\]"):
        cumsum(tf.zeros([5, 2]), axis=2)
    g = Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float64, None)
        out = cumprod(p, axis=2)
    with pytest.raises(InvalidArgumentError, match=msg) as info:
        run_plan(g, [p], [out], [np.zeros((5, 2))])
    assert info.value.op.type == "Cumprod"
