"""TF-NumPy's reductions and scans: sum/prod/mean/amax/amin/var/std/average, the nan-
reductions, ptp, count_nonzero, all/any, argmax/argmin, cumsum/cumprod, diff, trace."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops import np_dtypes
from ndflow.ops.numpy_ops.np_arrays import array, asarray, astype, cast, is_inexact, static_rank
from ndflow.ops.numpy_ops.np_math_ops import isnan

_TO_INT, _TO_FLOAT = 0, 1


def _export(name):
    return tf_export(f"experimental.numpy.{name}", v1=[])


def _reduce(fn, a, axis=None, dtype=None, keepdims=None, promote_int=_TO_INT, bool_fn=None,
            preserve_bool=False):
    if dtype:
        dtype = np_dtypes.result_type(dtype)
    keepdims = bool(keepdims)
    a = asarray(a, dtype=dtype)
    if bool_fn is not None and (dtype == dtypes.bool or (preserve_bool and
                                                         a.dtype == dtypes.bool)):
        return bool_fn(a, axis=axis, keepdims=keepdims)
    if dtype is None:
        np_type = np.dtype(a.dtype.as_numpy_dtype)
        if np.issubdtype(np_type, np.integer) or np_type == np.bool_:
            if promote_int == _TO_INT:
                signed = np_type == np.bool_ or np.issubdtype(np_type, np.signedinteger)
                bits = 8 if np_type == np.bool_ else np.iinfo(np_type).bits
                if bits < np.iinfo(np.int_).bits:  # NumPy sums small ints in its int
                    a = cast(a, np.int_ if signed else np.uint)
            elif promote_int == _TO_FLOAT:
                a = cast(a, np_dtypes.result_type(float))
    if isinstance(axis, Tensor) and axis.dtype not in (dtypes.int32, dtypes.int64):
        axis = cast(axis, dtypes.int64)
    return fn(a, axis=axis, keepdims=keepdims)


@_export("sum")
def sum(a, axis=None, dtype=None, keepdims=None):  # noqa: A001 - NumPy's name
    return _reduce(tfo.reduce_sum, a, axis, dtype, keepdims, bool_fn=tfo.reduce_any)


@_export("prod")
def prod(a, axis=None, dtype=None, keepdims=None):
    return _reduce(tfo.reduce_prod, a, axis, dtype, keepdims, bool_fn=tfo.reduce_all)


@_export("mean")
def mean(a, axis=None, dtype=None, out=None, keepdims=None):
    if out is not None:
        raise ValueError("Setting out is not supported.")
    return _reduce(tfo.reduce_mean, a, axis, dtype, keepdims, promote_int=_TO_FLOAT)


@_export("amax")
def amax(a, axis=None, out=None, keepdims=None):
    if out is not None:
        raise ValueError("Setting out is not supported.")
    return _reduce(tfo.reduce_max, a, axis, None, keepdims, promote_int=None,
                   bool_fn=tfo.reduce_any, preserve_bool=True)


@_export("amin")
def amin(a, axis=None, out=None, keepdims=None):
    if out is not None:
        raise ValueError("Setting out is not supported.")
    return _reduce(tfo.reduce_min, a, axis, None, keepdims, promote_int=None,
                   bool_fn=tfo.reduce_all, preserve_bool=True)


@_export("max")
def max(a, axis=None, keepdims=None):  # noqa: A001
    return amax(a, axis=axis, keepdims=keepdims)


@_export("min")
def min(a, axis=None, keepdims=None):  # noqa: A001
    return amin(a, axis=axis, keepdims=keepdims)


@_export("var")
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=None):
    if out is not None:
        raise ValueError("Setting out is not supported.")
    working = np_dtypes.result_type(a, dtype) if dtype else None
    if ddof != 0:
        def fn(t, axis, keepdims):
            centered = tfo.subtract(t, tfo.reduce_mean(t, axis=axis, keepdims=True))
            if t.dtype.is_complex:
                sq = cast(tfo.real(tfo.multiply(centered, tfo.conj(centered))), t.dtype)
            else:
                sq = tfo.square(centered)
            total = tfo.reduce_sum(sq, axis=axis, keepdims=keepdims)
            if axis is None:
                n = tfo.size(t)
            else:
                axes = np.atleast_1d(axis)
                n = tfo.reduce_prod(tfo.gather(tfo.shape(t), [int(x) % static_rank(t)
                                                               for x in axes]))
            # TF-NumPy casts to the caller's dtype here: None (no dtype) is TF's TypeError
            return tfo.cast(tfo.truediv(total, cast(tfo.subtract(n, ddof), t.dtype)), dtype)
    else:
        fn = tfo.reduce_variance
    result = _reduce(fn, a, axis, working, keepdims, promote_int=_TO_FLOAT)
    return cast(result, np_dtypes.result_type(dtype)) if dtype else result


@_export("std")
def std(a, axis=None, keepdims=None):
    return _reduce(tfo.reduce_std, a, axis, None, keepdims, promote_int=_TO_FLOAT)


@_export("ptp")
def ptp(a, axis=None, keepdims=None):
    return tfo.subtract(amax(a, axis=axis, keepdims=keepdims),
                        amin(a, axis=axis, keepdims=keepdims))


def _nan_reduction(name, reduction, init):
    def f(a, axis=None, dtype=None, keepdims=False):
        a = array(a, copy=False)
        v = array(init, dtype=a.dtype, copy=False)
        return reduction(tfo.where(isnan(a), tfo.broadcast_to(v, tfo.shape(a)), a),
                         axis=axis, dtype=dtype, keepdims=keepdims)
    f.__name__ = f.__qualname__ = name
    return _export(name)(f)


nansum = _nan_reduction("nansum", sum, 0)
nanprod = _nan_reduction("nanprod", prod, 1)


@_export("nanmean")
def nanmean(a, axis=None, dtype=None, keepdims=None):
    a = array(a, copy=False)
    if not is_inexact(a):
        return mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    not_nan = tfo.logical_not(isnan(a))
    dtype = dtype or a.dtype.as_numpy_dtype
    count = sum(not_nan, axis=axis, dtype=dtype, keepdims=keepdims)
    return tfo.truediv(nansum(a, axis=axis, dtype=dtype, keepdims=keepdims), count)


@_export("all")
def all(a, axis=None, keepdims=None):  # noqa: A001
    return tfo.reduce_all(asarray(a, dtype=bool), axis=axis, keepdims=bool(keepdims))


@_export("any")
def any(a, axis=None, keepdims=None):  # noqa: A001
    return tfo.reduce_any(asarray(a, dtype=bool), axis=axis, keepdims=bool(keepdims))


@_export("count_nonzero")
def count_nonzero(a, axis=None):
    return tfo.count_nonzero(array(a, copy=False), axis)


def _argminmax(fn, a, axis):
    a = array(a, copy=False)
    if axis is None:
        a = tfo.reshape(a, [-1])
        return fn(a, axis=0)
    if a.shape.rank == 0:
        a = tfo.reshape(a, [1])
    return fn(a, axis=axis)


@_export("argmax")
def argmax(a, axis=None):
    return _argminmax(tfo.argmax, a, axis)


@_export("argmin")
def argmin(a, axis=None):
    return _argminmax(tfo.argmin, a, axis)


def _scan(fn, a, axis, dtype):
    a = asarray(a, dtype=dtype)
    if dtype is None and a.dtype.is_integer:
        promoted = np.promote_types(a.dtype.as_numpy_dtype, int)
        if promoted != a.dtype.as_numpy_dtype:
            a = cast(a, promoted)
    if axis is None:
        a, axis = tfo.reshape(a, [-1]), 0
    elif axis < 0:
        axis += static_rank(a)
    return fn(a, axis)


@_export("cumsum")
def cumsum(a, axis=None, dtype=None):
    return _scan(tfo.cumsum, a, axis, dtype)


@_export("cumprod")
def cumprod(a, axis=None, dtype=None):
    return _scan(tfo.cumprod, a, axis, dtype)


@_export("average")
def average(a, axis=None, weights=None, returned=False):
    if axis is not None and not isinstance(axis, int):
        raise ValueError(f"Argument `axis` must be an integer. Received axis={axis} (of type "
                         f"{type(axis)})")
    a = array(a, copy=False)
    default_float = np_dtypes.result_type(float)
    if weights is None:
        if not is_inexact(a):
            a = astype(a, np_dtypes.result_type(a.dtype, default_float))
        avg = tfo.reduce_mean(a, axis=axis)
        if returned:
            n = tfo.size(a) if axis is None else tfo.shape(a)[axis]
            weights_sum = cast(n, a.dtype)
    else:
        out = np_dtypes.result_type(a.dtype, weights) if is_inexact(a) else \
            np_dtypes.result_type(a.dtype, weights, default_float)
        a, weights = array(a, out, copy=False), array(weights, out, copy=False)
        if axis is None or a.shape.rank == weights.shape.rank:
            if a.shape != weights.shape:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            weights_sum = tfo.reduce_sum(weights, axis=axis)
            avg = tfo.truediv(tfo.reduce_sum(tfo.multiply(a, weights), axis=axis), weights_sum)
        else:
            if weights.shape.rank != 1:
                raise ValueError("1D weights expected when shapes of a and weights differ.")
            weights_sum = tfo.reduce_sum(weights)
            avg = tfo.truediv(tfo.tensordot(a, weights, [[axis], [0]]), weights_sum)
    if returned:
        return avg, tfo.broadcast_to(weights_sum, tfo.shape(avg))
    return avg


@_export("diff")
def diff(a, n=1, axis=-1):
    a = asarray(a)
    nd = a.shape.rank
    if nd is None:
        raise ValueError("Function `diff` currently requires a known rank for input `a`. "
                         f"Received: a={a} (unknown rank)")
    if (axis + nd if axis < 0 else axis) >= nd:
        raise ValueError(f"Argument `axis` (received axis={axis}) is out of bounds for input "
                         f"{a} of rank {nd}.")
    if n < 0:
        raise ValueError(f"Argument `order` must be a non-negative integer. Received: axis={n}")
    hi, lo = [slice(None)] * nd, [slice(None)] * nd
    hi[axis], lo[axis] = slice(1, None), slice(None, -1)
    op = tfo.not_equal if a.dtype == dtypes.bool else tfo.subtract
    for _ in range(n):
        a = op(a[tuple(hi)], a[tuple(lo)])
    return a


@_export("trace")
def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    if dtype:
        dtype = np_dtypes.result_type(dtype)
    a = asarray(a, dtype)
    rank = a.shape.rank
    if offset == 0 and rank is not None and axis1 in (-2, rank - 2) and \
            axis2 in (-1, rank - 1):
        return tfo.trace(a)  # keeps a's dtype, as TF-NumPy's fast path
    from_diag = diagonal_(a, offset, axis1, axis2)
    return sum(from_diag, -1, dtype)


def diagonal_(a, offset=0, axis1=0, axis2=1):
    """The diagonals of `a` between `axis1` and `axis2`, last (NumPy's diagonal)."""
    a = asarray(a)
    rank = static_rank(a)
    ax1, ax2 = axis1 % rank, axis2 % rank
    perm = [i for i in range(rank) if i not in (ax1, ax2)] + [ax1, ax2]
    a = tfo.transpose(a, perm)
    rows, cols = a.shape.as_list()[-2:]
    if rows is not None and cols is not None and (offset <= -rows or offset >= cols):
        return tfo.zeros(a.shape.as_list()[:-2] + [0], dtype=a.dtype)
    return tfo.matrix_diag_part(a, k=offset)
