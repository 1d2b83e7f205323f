"""`keras.ops` reductions and order statistics (ops.numpy): sum/mean/max/min/prod, std/var,
any/all, argmax/argmin, median/quantile/percentile, average, cumulative sums and products,
sort/argsort, count_nonzero, ptp and the NaN-ignoring variants, with Keras 3's result dtypes
(sums of small ints widen to int32/uint32, means of ints are floats, indices are int32)."""

from __future__ import annotations

import numpy as np

from ndflow.keras import docstrings
from ndflow.keras.ops import dtype_rules as rules
from ndflow.keras.ops import numpy_reduce_docs
from ndflow.keras.ops.symbolic import keras_op
from ndflow.ops import (
    arithmetic,
    array_core,
    array_fill,
    array_transpose,
    comparison,
    gather_batch,
    math,
    math_cumulative,
    reduction,
    sort,
)
from ndflow.ops.cast import cast


def _np(name):
    return keras_op(name, "numpy")


def _axis(axis):
    if isinstance(axis, list):
        return tuple(axis)
    return axis


def _sum_dtype(x, dtype=None) -> str:
    if dtype is not None:
        return rules.standardize(dtype)
    name = x.dtype.name
    # Keras gives uint32 for uint8 sums; ndflow has no uint32: int64 holds the same values
    # (and promotes with int32 as uint32 does)
    return {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "int64"}.get(name, name)


@_np("sum")
def sum(x, axis=None, keepdims=False):  # noqa: A001 - Keras' name
    x = rules.to_tensor(x)
    return reduction.reduce_sum(cast(x, _sum_dtype(x)), axis=_axis(axis), keepdims=keepdims)


@_np("prod")
def prod(x, axis=None, keepdims=False, dtype=None):
    x = rules.to_tensor(x)
    return reduction.reduce_prod(cast(x, _sum_dtype(x, dtype)), axis=_axis(axis),
                                 keepdims=keepdims)


def _mean_dtypes(x):
    """(compute, result): float32 at least for the arithmetic, ints' means are floats."""
    compute = rules.result_type(x.dtype.name, "float32")
    result = compute if not x.dtype.is_floating else x.dtype.name
    return compute, result


@_np("mean")
def mean(x, axis=None, keepdims=False):
    x = rules.to_tensor(x)
    compute, result = _mean_dtypes(x)
    out = reduction.reduce_mean(cast(x, compute), axis=_axis(axis), keepdims=keepdims)
    return cast(out, result)


@_np("var")
def var(x, axis=None, keepdims=False):
    x = rules.to_tensor(x)
    compute, _ = _mean_dtypes(x)
    result = rules.result_type(x.dtype.name, float)
    x = cast(x, compute)
    centered = x - reduction.reduce_mean(x, axis=_axis(axis), keepdims=True)
    out = reduction.reduce_mean(math.square(centered), axis=_axis(axis), keepdims=keepdims)
    return cast(out, result)


@_np("std")
def std(x, axis=None, keepdims=False):
    out = var(x, axis=axis, keepdims=keepdims)
    return cast(math.sqrt(cast(out, rules.result_type(out.dtype.name, "float32"))), out.dtype)


def _extremum(name, reduce, combine, bool_reduce, bool_combine):
    """keras.ops.max/min: `reduce` (`bool_reduce` for booleans), combined with `initial`."""
    def f(x, axis=None, keepdims=False, initial=None):
        x = rules.to_tensor(x)
        if x.dtype.name == "bool":
            out = bool_reduce(x, axis=_axis(axis), keepdims=keepdims)
            return out if initial is None else bool_combine(out, bool(initial))
        out = reduce(x, axis=_axis(axis), keepdims=keepdims)
        return out if initial is None else combine(out, cast(initial, x.dtype))
    f.__name__ = f.__qualname__ = name
    return _np(name)(f)


max = _extremum("max", reduction.reduce_max, arithmetic.maximum,  # noqa: A001
                reduction.reduce_any, comparison.logical_or)
min = _extremum("min", reduction.reduce_min, arithmetic.minimum,  # noqa: A001
                reduction.reduce_all, comparison.logical_and)


@_np("amax")
def amax(x, axis=None, keepdims=False):
    return max(x, axis=axis, keepdims=keepdims)


@_np("amin")
def amin(x, axis=None, keepdims=False):
    return min(x, axis=axis, keepdims=keepdims)


@_np("any")
def any(x, axis=None, keepdims=False):  # noqa: A001
    return reduction.reduce_any(rules.to_tensor(x, "bool"), axis=_axis(axis),
                                keepdims=keepdims)


@_np("all")
def all(x, axis=None, keepdims=False):  # noqa: A001
    return reduction.reduce_all(rules.to_tensor(x, "bool"), axis=_axis(axis),
                                keepdims=keepdims)


@_np("ptp")
def ptp(x, axis=None, keepdims=False):
    return max(x, axis, keepdims) - min(x, axis, keepdims)


def _arg_extreme(fn, x, axis, keepdims):
    x = rules.to_tensor(x)
    rank = x.shape.rank
    flat = array_core.reshape(x, [-1]) if axis is None else x
    out = fn(flat, axis=0 if axis is None else axis, output_type="int32")
    if keepdims:
        out = array_core.reshape(out, [1] * rank) if axis is None else \
            array_core.expand_dims(out, axis)
    return out


@_np("argmax")
def argmax(x, axis=None, keepdims=False):
    return _arg_extreme(reduction.argmax, x, axis, keepdims)


@_np("argmin")
def argmin(x, axis=None, keepdims=False):
    return _arg_extreme(reduction.argmin, x, axis, keepdims)


@_np("count_nonzero")
def count_nonzero(x, axis=None):
    x = rules.to_tensor(x)
    nonzero = x if x.dtype.name == "bool" else comparison.not_equal(x, cast(0, x.dtype))
    return reduction.reduce_sum(cast(nonzero, "int32"), axis=_axis(axis))


def _flat_axis(x, axis):
    """`x` with the reduced axes moved last and merged into one (axis None: all of them)."""
    rank = x.shape.rank
    if axis is None:
        return array_core.reshape(x, [-1]), list(range(rank))
    axes = sorted(a % rank for a in ((axis,) if isinstance(axis, int) else axis))
    kept = [i for i in range(rank) if i not in axes]
    moved = array_transpose.transpose(x, kept + axes)
    return array_core.reshape(moved, _leading_shape(moved, len(kept)) + [-1]), axes


def _leading_shape(x, n):
    static = x.shape.as_list()[:n]
    if None not in static:
        return static
    dynamic = array_core.shape(x)
    return [dynamic[i] for i in range(n)]


_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(x, q, axis, method, keepdims, ignore_nan=False):
    """NumPy's quantiles: the sorted values along the reduced axes at q * (n - 1), where n
    counts the non-NaN values when `ignore_nan` (NaNs sort last)."""
    if method not in _METHODS:
        raise ValueError(f"Invalid value for argument `method`. Expected one of {_METHODS}. "
                         f"Received: method={method}")
    q = rules.to_tensor(q, x.dtype.name)
    q_shape = q.shape.as_list()
    flat, axes = _flat_axis(x, axis)
    last_axis = flat.shape.rank - 1
    if ignore_nan:
        nan = comparison.is_nan(flat)
        flat = arithmetic.where(nan, cast(np.inf, flat.dtype), flat)
        n = reduction.reduce_sum(cast(comparison.logical_not(nan), x.dtype), axis=-1,
                                 keepdims=True)
    else:
        n = array_fill.ones_like(flat[..., :1]) * cast(array_core.shape(flat)[-1], x.dtype)
    ordered = sort.sort(flat, axis=-1)
    pos = array_core.reshape(q, [1] * last_axis + [-1]) * (n - 1)     # [..., nq]
    lo, hi = math.floor(pos), math.ceil(pos)
    if method == "lower":
        hi = lo
    elif method == "higher":
        lo = hi
    elif method == "nearest":
        lo = hi = math.round(pos)
    top = cast(array_core.shape(flat)[-1] - 1, x.dtype)

    def at(i):
        i = cast(math.clip_by_value(i, cast(0, x.dtype), top), "int32")
        return gather_batch.gather(ordered, i, axis=last_axis, batch_dims=last_axis)
    a, b = at(lo), at(hi)
    if method == "midpoint":
        out = (a + b) / cast(2, x.dtype)
    elif method == "linear":
        out = a + (b - a) * (pos - lo)
    else:
        out = a
    if ignore_nan:
        out = arithmetic.where(comparison.equal(n, cast(0, x.dtype)), cast(np.nan, x.dtype),
                               out)
    out = array_transpose.transpose(out, [last_axis] + list(range(last_axis)))  # q first
    out = array_core.reshape(out, q_shape + _leading_shape(out, last_axis + 1)[1:])
    if keepdims:
        for a in axes:
            out = array_core.expand_dims(out, len(q_shape) + a)
    return out


@_np("quantile")
def quantile(x, q, axis=None, method="linear", keepdims=False):
    x = rules.to_tensor(x)
    x = cast(x, rules.result_type(x.dtype.name, float))
    return _quantile(x, q, axis, method, keepdims)


@_np("percentile")
def percentile(x, q, axis=None, method="linear", keepdims=False):
    x = rules.to_tensor(x)
    x = cast(x, rules.result_type(x.dtype.name, float))
    return _quantile(x, rules.to_tensor(q, x.dtype.name) / cast(100, x.dtype), axis, method,
                     keepdims)


@_np("median")
def median(x, axis=None, keepdims=False):
    return quantile(x, 0.5, axis=axis, keepdims=keepdims)


@_np("nanquantile")
def nanquantile(x, q, axis=None, method="linear", keepdims=False):
    x = rules.to_tensor(x)
    x = cast(x, rules.result_type(x.dtype.name, float))
    return _quantile(x, q, axis, method, keepdims, ignore_nan=True)


@_np("nanpercentile")
def nanpercentile(x, q, axis=None, method="linear", keepdims=False):
    x = rules.to_tensor(x)
    x = cast(x, rules.result_type(x.dtype.name, float))
    return _quantile(x, rules.to_tensor(q, x.dtype.name) / cast(100, x.dtype), axis, method,
                     keepdims, ignore_nan=True)


@_np("nanmedian")
def nanmedian(x, axis=None, keepdims=False):
    return nanquantile(x, 0.5, axis=axis, keepdims=keepdims)


@_np("average")
def average(x, axis=None, weights=None):
    x = rules.to_tensor(x)
    if weights is None:
        dtype = rules.result_type(x.dtype.name, float)
        return reduction.reduce_mean(cast(x, dtype), axis=axis)
    weights = rules.to_tensor(weights)
    dtype = rules.result_type(x.dtype.name, weights.dtype.name, float)
    x, weights = cast(x, dtype), cast(weights, dtype)
    if axis is not None and weights.shape.rank == 1 and x.shape.rank > 1:
        shape = [1] * x.shape.rank
        shape[axis] = -1
        weights = array_core.reshape(weights, shape)
    return reduction.reduce_sum(x * weights, axis=axis) / \
        reduction.reduce_sum(weights * array_fill.ones_like(x), axis=axis)


def _cumulative(fn, x, axis, dtype):
    x = rules.to_tensor(x, dtype)
    if x.dtype.name == "bool":
        x = cast(x, "int32")
    if axis is None:
        x, axis = array_core.reshape(x, [-1]), 0
    return fn(x, axis=axis)


@_np("cumsum")
def cumsum(x, axis=None, dtype=None):
    return _cumulative(math_cumulative.cumsum, x, axis, dtype)


@_np("cumprod")
def cumprod(x, axis=None, dtype=None):
    return _cumulative(math_cumulative.cumprod, x, axis, dtype)


@_np("sort")
def sort_values(x, axis=-1):
    x = rules.to_tensor(x)
    if x.shape.rank == 0:
        return x
    if axis is None:
        x, axis = array_core.reshape(x, [-1]), 0
    if x.dtype.name == "bool":
        return cast(sort.sort(cast(x, "uint8"), axis=axis), "bool")
    return sort.sort(x, axis=axis)


@_np("argsort")
def argsort(x, axis=-1):
    x = rules.to_tensor(x)
    if x.shape.rank == 0:
        return cast(rules.to_tensor([0]), "int32")
    if axis is None:
        x, axis = array_core.reshape(x, [-1]), 0
    if x.dtype.name == "bool":
        x = cast(x, "uint8")
    return sort.argsort(x, axis=axis, stable=True)


@_np("argpartition")
def argpartition(x, kth, axis=-1):
    return argsort(x, axis=axis)


def _nan_to(x, value):
    x = rules.to_tensor(x)
    if not x.dtype.is_floating:
        return x
    return arithmetic.where(comparison.is_nan(x), cast(value, x.dtype), x)


@_np("nansum")
def nansum(x, axis=None, keepdims=False):
    return sum(_nan_to(x, 0), axis=axis, keepdims=keepdims)


@_np("nanprod")
def nanprod(x, axis=None, keepdims=False):
    return prod(_nan_to(x, 1), axis=axis, keepdims=keepdims)


@_np("nanmax")
def nanmax(x, axis=None, keepdims=False):
    x = rules.to_tensor(x)
    out = max(_nan_to(x, -np.inf), axis=axis, keepdims=keepdims)
    if x.dtype.is_floating:
        allnan = all(comparison.is_nan(x), axis=axis, keepdims=keepdims)
        out = arithmetic.where(allnan, cast(np.nan, x.dtype), out)
    return out


@_np("nanmin")
def nanmin(x, axis=None, keepdims=False):
    x = rules.to_tensor(x)
    out = min(_nan_to(x, np.inf), axis=axis, keepdims=keepdims)
    if x.dtype.is_floating:
        allnan = all(comparison.is_nan(x), axis=axis, keepdims=keepdims)
        out = arithmetic.where(allnan, cast(np.nan, x.dtype), out)
    return out


def _not_nan_count(x, axis, keepdims, dtype):
    valid = comparison.logical_not(comparison.is_nan(x)) if x.dtype.is_floating else \
        array_fill.ones_like(x, dtype="bool")
    return reduction.reduce_sum(cast(valid, dtype), axis=_axis(axis), keepdims=keepdims)


@_np("nanmean")
def nanmean(x, axis=None, keepdims=False):
    x = rules.to_tensor(x)
    compute, result = _mean_dtypes(x)
    xc = cast(x, compute)
    total = reduction.reduce_sum(_nan_to(xc, 0), axis=_axis(axis), keepdims=keepdims)
    return cast(total / _not_nan_count(xc, axis, keepdims, compute), result)


@_np("nanvar")
def nanvar(x, axis=None, keepdims=False):
    x = rules.to_tensor(x)
    compute, _ = _mean_dtypes(x)
    result = rules.result_type(x.dtype.name, float)
    xc = cast(x, compute)
    centered = xc - nanmean(xc, axis=axis, keepdims=True)
    total = reduction.reduce_sum(_nan_to(math.square(centered), 0), axis=_axis(axis),
                                 keepdims=keepdims)
    return cast(total / _not_nan_count(xc, axis, keepdims, compute), result)


@_np("nanstd")
def nanstd(x, axis=None, keepdims=False):
    out = nanvar(x, axis=axis, keepdims=keepdims)
    return cast(math.sqrt(cast(out, rules.result_type(out.dtype.name, "float32"))), out.dtype)


@_np("nancumsum")
def nancumsum(x, axis=None, dtype=None):
    return cumsum(_nan_to(x, 0), axis=axis, dtype=dtype)


@_np("nancumprod")
def nancumprod(x, axis=None, dtype=None):
    return cumprod(_nan_to(x, 1), axis=axis, dtype=dtype)


def _nan_arg(fn, fill, x, axis, keepdims):
    x = rules.to_tensor(x)
    return fn(_nan_to(x, fill), axis=axis, keepdims=keepdims)


@_np("nanargmax")
def nanargmax(x, axis=None, keepdims=False):
    return _nan_arg(argmax, -np.inf, x, axis, keepdims)


@_np("nanargmin")
def nanargmin(x, axis=None, keepdims=False):
    return _nan_arg(argmin, np.inf, x, axis, keepdims)


docstrings.attach(globals(), numpy_reduce_docs.DOCS)
