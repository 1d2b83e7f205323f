"""`keras.ops.linalg` (also at keras.ops.*): cholesky (+ inverse), det, eig, eigh, inv,
lu_factor, norm, qr, solve, solve_triangular, svd, lstsq, matrix_rank, pinv, jvp, as Keras 3
runs them on the TensorFlow backend (svd returns u, s, v^H; lu_factor the pivots as a
permutation's inverse; jvp by double backpropagation: ndflow has no forward accumulator)."""

from __future__ import annotations

import numpy as np

from ndflow.autodiff.tape import GradientTape
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.keras import docstrings, global_config
from ndflow.keras.ops import dtype_rules as rules
from ndflow.keras.ops import linalg_docs
from ndflow.keras.ops import numpy_array as arr
from ndflow.keras.ops.symbolic import keras_op
from ndflow.ops import (
    arithmetic,
    array_builders,
    array_core,
    array_fill,
    array_transpose,
    comparison,
    linalg,
    linalg_decomp,
    linalg_diag,
    linalg_lu,
    math,
    reduction,
    script_ops,
)
from ndflow.ops.cast import cast


def _la(name, **kwargs):
    return keras_op(name, "linalg", **kwargs)


def _matrix(x, square=True):
    x = rules.to_tensor(x)
    if x.shape.rank is not None and x.shape.rank < 2:
        raise ValueError(f"Expected input to have rank >= 2. Received input with shape "
                         f"{tuple(x.shape.as_list())}.")
    if square and x.shape[-1] is not None and x.shape[-2] is not None and \
            x.shape[-1] != x.shape[-2]:
        raise ValueError("Expected a square matrix. Received non-square input with shape "
                         f"{tuple(x.shape.as_list())}")
    return x


def _adjoint(x):
    return linalg_diag.adjoint(x)


@_la("cholesky")
def cholesky(x, upper=False):
    x = _matrix(x)
    try:
        out = linalg_decomp.cholesky(x)
        if not _all_finite(out):
            raise ValueError("Cholesky: the input is not positive definite (NaNs found)")
    except Exception as e:  # noqa: BLE001 - Keras reports every failure as a ValueError
        raise ValueError(f"Cholesky decomposition failed: {e}") from e
    return _adjoint(out) if upper else out


def _all_finite(t) -> bool:
    """Only checkable eagerly (in a graph the NaNs pass through)."""
    try:
        values = t.numpy()
    except (AttributeError, NotImplementedError, TypeError, ValueError):
        return True
    return bool(np.all(np.isfinite(values)))


@_la("cholesky_inverse")
def cholesky_inverse(x, upper=False):
    x = _matrix(x)
    eye = array_builders.eye(array_core.shape(x)[-1], dtype=x.dtype)
    inv_chol = linalg_decomp.matrix_triangular_solve(x, eye, lower=not upper)
    if upper:
        return linalg.matmul(inv_chol, inv_chol, transpose_b=True)
    return linalg.matmul(inv_chol, inv_chol, transpose_a=True)


@_la("det")
def det(x):
    return linalg_decomp.matrix_determinant(_matrix(x))


@_la("inv")
def inv(x):
    return linalg_decomp.matrix_inverse(_matrix(x))


@_la("eigh")
def eigh(x):
    return linalg_decomp.self_adjoint_eig(_matrix(x))


@_la("eig")
def eig(x):
    x = _matrix(x)
    out = "complex128" if x.dtype.name == "float64" else "complex64"

    def host(a):
        w, v = np.linalg.eig(a)
        return w.astype(out), v.astype(out)
    w, v = script_ops.numpy_function(host, [x], [out, out])
    return w, v


@_la("lu_factor")
def lu_factor(x):
    x = _matrix(x)
    lu, p = linalg_lu.lu(x)
    return lu, array_transpose.invert_permutation(p) if p.shape.rank == 1 else \
        _batched_inverse_permutation(p)


def _batched_inverse_permutation(p):
    flat = array_core.reshape(p, [-1, array_core.shape(p)[-1]])
    rows = array_core.unstack(flat, num=flat.shape[0])
    return array_core.reshape(array_core.stack([array_transpose.invert_permutation(r)
                                                for r in rows]), array_core.shape(p))


@_la("norm")
def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - Keras' name
    x = rules.to_tensor(x)
    ndim = x.shape.rank
    axes = tuple(range(ndim)) if axis is None else ((axis,) if isinstance(axis, int)
                                                    else tuple(axis))
    if any(a < -ndim or a >= ndim for a in axes):
        raise ValueError("All `axis` values must be in the range [-ndim, ndim). Received "
                         f"inputs with ndim={ndim}, while axis={axis}")
    x = cast(x, global_config.floatx() if x.dtype.name == "int64"
             else rules.result_type(x.dtype.name, float))
    if len(axes) == 1:
        a = axes[0]
        if ord is None or ord == 2:
            return math.sqrt(reduction.reduce_sum(math.square(x), axis=a, keepdims=keepdims))
        if ord == float("inf"):
            return reduction.reduce_max(math.abs(x), axis=a, keepdims=keepdims)
        if ord == float("-inf"):
            return reduction.reduce_min(math.abs(x), axis=a, keepdims=keepdims)
        if ord == 0:
            return reduction.reduce_sum(cast(comparison.not_equal(x, cast(0, x.dtype)),
                                             x.dtype), axis=a, keepdims=keepdims)
        if isinstance(ord, str):
            raise ValueError(f"Invalid `ord` argument for vector norm. Received: ord={ord}")
        p = cast(ord, x.dtype)
        total = reduction.reduce_sum(arithmetic.pow(math.abs(x), p), axis=a, keepdims=keepdims)
        return arithmetic.pow(total, cast(1.0 / ord, x.dtype))
    if len(axes) != 2:
        raise ValueError(f"Invalid axis values. Received: axis={axis}")
    row, col = (a % ndim for a in axes)
    if ord is None or ord == "fro":
        return math.sqrt(reduction.reduce_sum(math.square(x), axis=[row, col],
                                              keepdims=keepdims))
    if ord in (1, -1, float("inf"), float("-inf")):
        sum_axis, other = (row, col) if ord in (1, -1) else (col, row)
        if not keepdims and other > sum_axis:
            other -= 1
        pick = reduction.reduce_max if ord in (1, float("inf")) else reduction.reduce_min
        return pick(reduction.reduce_sum(math.abs(x), axis=sum_axis, keepdims=keepdims),
                    axis=other, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        s = linalg_decomp.svd(arr.moveaxis(x, (row, col), (-2, -1)), compute_uv=False)
        out = {2: reduction.reduce_max, -2: reduction.reduce_min,
               "nuc": reduction.reduce_sum}[ord](s, axis=-1)
        if keepdims:
            out = array_core.expand_dims(array_core.expand_dims(out, row), col)
        return out
    raise ValueError(f"Invalid `ord` argument for matrix norm. Received: ord={ord}")


@_la("qr")
def qr(x, mode="reduced"):
    if mode not in ("reduced", "complete"):
        raise ValueError("`mode` argument value not supported. Expected one of {'reduced', "
                         f"'complete'}}. Received: mode={mode}")
    x = _matrix(x, square=False)
    return tuple(linalg_decomp.qr(x, full_matrices=mode == "complete"))


def _vector_rhs(a, b, solve):
    if b.shape.rank == a.shape.rank - 1:
        return array_core.squeeze(solve(a, array_core.expand_dims(b, -1)), axis=[-1])
    return solve(a, b)


@_la("solve")
def solve(a, b):
    a, b = _matrix(a), rules.to_tensor(b)
    a, b = rules.promote(a, b)
    return _vector_rhs(a, b, linalg_decomp.matrix_solve)


@_la("solve_triangular")
def solve_triangular(a, b, lower=False):
    a, b = _matrix(a), rules.to_tensor(b)
    a, b = rules.promote(a, b)
    return _vector_rhs(a, b, lambda m, r: linalg_decomp.matrix_triangular_solve(
        m, r, lower=lower))


@_la("svd")
def svd(x, full_matrices=True, compute_uv=True):
    x = _matrix(x, square=False)
    if not compute_uv:
        return linalg_decomp.svd(x, full_matrices=full_matrices, compute_uv=False)
    s, u, v = linalg_decomp.svd(x, full_matrices=full_matrices, compute_uv=True)
    return u, s, _adjoint(v)


@_la("lstsq")
def lstsq(a, b, rcond=None):
    a, b = rules.to_tensor(a), rules.to_tensor(b)
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    vector = b.shape.rank == 1
    if vector:
        b = array_core.expand_dims(b, -1)
    if a.shape.rank != 2:
        raise TypeError(f"{a.shape.rank}-dimensional array given. Array must be "
                        "two-dimensional")
    if b.shape.rank != 2:
        raise TypeError(f"{b.shape.rank}-dimensional array given. Array must be one or "
                        "two-dimensional")
    m, n = a.shape.as_list()
    eps = float(np.finfo(a.dtype.as_numpy_dtype).eps)
    rcond = eps * max(m, n) if rcond is None else (eps if rcond < 0 else rcond)
    u, s, vt = svd(a, full_matrices=False)
    keep = comparison.greater_equal(s, cast(rcond, s.dtype) * s[0])
    safe = arithmetic.where(keep, s, array_fill.ones_like(s))
    s_inv = array_core.expand_dims(arithmetic.where(keep, 1.0 / safe,
                                                    array_fill.zeros_like(s)), -1)
    x = linalg.matmul(vt, s_inv * linalg.matmul(u, cast(b, a.dtype), transpose_a=True),
                      transpose_a=True)
    return array_core.reshape(x, [-1]) if vector else x


@_la("matrix_rank")
def matrix_rank(x, tol=None):
    return cast(linalg_decomp.matrix_rank(rules.to_tensor(x), tol=tol), "int32")


@_la("pinv")
def pinv(x, rcond=None):
    return linalg_decomp.pinv(rules.to_tensor(x), rcond=rcond)


@_la("jvp", symbolic=False)
def jvp(fun, primals, tangents, has_aux=False):
    flat_p = [rules.to_tensor(p) for p in flatten(primals)]
    flat_t = [cast(rules.to_tensor(t), p.dtype) for t, p in zip(flatten(tangents), flat_p)]
    primals = pack_sequence_as(primals, flat_p)
    with GradientTape(persistent=True) as outer:
        with GradientTape(persistent=True) as inner:
            for p in flat_p:
                inner.watch(p)
            result = fun(*primals)
            out, aux = result if has_aux else (result, None)
        flat_out = flatten(out)
        dummies = [array_fill.zeros_like(o) for o in flat_out]
        for d in dummies:
            outer.watch(d)
        vjps = inner.gradient(flat_out, flat_p, output_gradients=dummies)
        inner_product = None
        for g, t in zip(vjps, flat_t):
            if g is None:
                continue
            term = reduction.reduce_sum(g * t)
            inner_product = term if inner_product is None else inner_product + term
    if inner_product is None:
        tangents_out = [array_fill.zeros_like(o) for o in flat_out]
    else:
        tangents_out = [g if g is not None else array_fill.zeros_like(o) for g, o in zip(
            outer.gradient(inner_product, dummies), flat_out)]
    tangents_out = pack_sequence_as(out, tangents_out)
    return (out, tangents_out, aux) if has_aux else (out, tangents_out)


docstrings.attach(globals(), linalg_docs.DOCS)
